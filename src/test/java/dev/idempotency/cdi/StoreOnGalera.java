package dev.idempotency.cdi;

import dev.idempotency.jdbc.JdbcRecordStore;
import dev.idempotency.spi.RecordStore;
import dev.idempotency.testing.Databases;
import jakarta.enterprise.inject.Produces;

/** The JDBC store on a node of the run's own MariaDB Galera Cluster, read causally. */
public class StoreOnGalera {

    @Produces
    public RecordStore recordStore() {
        return JdbcRecordStore.forDataSource(Databases.named("galera").dataSource(), "idempotency_record");
    }
}
