package dev.idempotency.testing;

import dev.idempotency.jdbc.JdbcRecordStore;
import dev.idempotency.jta.JtaTransactions;

/**
 * A JDBC record store on a real JTA DataSource with Narayana, on a table of its own that is created
 * fresh from the dialect's shipped DDL script.
 */
public final class StoreFixture {
    public final TestDatabase database;
    public final JdbcRecordStore store;
    public final JtaTransactions transactions;
    public final String table;

    public StoreFixture(TestDatabase database, String table) {
        this.database = database;
        this.table = table;
        this.transactions = new JtaTransactions(Narayana.transactionManager());
        database.update("DROP TABLE IF EXISTS " + table);
        this.store = JdbcRecordStore.forDataSource(database.dataSource(), table);
        transactions.requiresNew(() -> {
            store.createSchema();
            return null;
        });
    }

    public long rows(String where, Object... args) {
        return database.count("SELECT COUNT(*) FROM " + table + (where.isEmpty() ? "" : " WHERE " + where), args);
    }
}
