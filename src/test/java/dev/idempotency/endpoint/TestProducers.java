package dev.idempotency.endpoint;

import dev.idempotency.jdbc.JdbcRecordStore;
import dev.idempotency.spi.RecordStore;
import dev.idempotency.testing.Databases;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;

/** What a server would provide: the record store on its JTA DataSource (found by JNDI in a real server). */
@ApplicationScoped
public class TestProducers {
    static final String TABLE = "idempotency_record";

    // Dependent, so the runtime sees the JdbcRecordStore itself (not a proxy) and creates its schema.
    @Produces
    RecordStore recordStore() {
        return JdbcRecordStore.forDataSource(Databases.named("h2").dataSource(), TABLE);
    }
}
