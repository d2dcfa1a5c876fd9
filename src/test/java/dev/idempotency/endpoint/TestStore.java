package dev.idempotency.endpoint;

import dev.idempotency.jdbc.JdbcRecordStore;
import dev.idempotency.spi.RecordStore;
import dev.idempotency.testing.Databases;
import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.inject.Produces;

/**
 * What a server would provide: the record store on its JTA DataSource (the runtime looks it up by JNDI
 * name in a real server; Java SE has no JNDI, so the test application provides the store as a bean).
 */
@Dependent
public class TestStore {
    static final String TABLE = "idempotency_record";

    // Dependent, so the runtime sees the JdbcRecordStore itself (not a proxy) and creates its schema.
    @Produces
    public RecordStore recordStore() {
        return JdbcRecordStore.forDataSource(Databases.named("h2").dataSource(), TABLE);
    }
}
