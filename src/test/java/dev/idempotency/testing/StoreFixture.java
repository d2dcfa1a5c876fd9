package dev.idempotency.testing;

import dev.idempotency.jdbc.JdbcRecordStore;
import dev.idempotency.jta.JtaTransactions;

/**
 * A JDBC record store on a real JTA DataSource with Narayana, on a table of its own that is created
 * fresh by the dialect's shipped migrations.
 */
public final class StoreFixture {
    public final TestDatabase database;
    public final JdbcRecordStore store;
    public final JtaTransactions transactions;
    public final String table;

    public StoreFixture(TestDatabase database, String table) {
        this(database, table, true);
    }

    private StoreFixture(TestDatabase database, String table, boolean fresh) {
        this.database = database;
        this.table = table;
        this.transactions = new JtaTransactions(Narayana.transactionManager());
        if (fresh) {
            database.dropRecordTables(table);
        }
        this.store = JdbcRecordStore.forDataSource(database.dataSource(), table);
        store.schema().migrate();
    }

    /** A store on the table as it is (created when absent): another node's view of a fixture's table. */
    public static StoreFixture existing(TestDatabase database, String table) {
        return new StoreFixture(database, table, false);
    }

    /** The protocol on this store, with the system clock, as a concurrent server would run it. */
    public dev.idempotency.core.IdempotencyProtocol protocol() {
        return new dev.idempotency.core.IdempotencyProtocol(store, transactions, java.time.Clock.systemUTC(),
                new java.security.SecureRandom(), e -> { }, 4);
    }

    /** alice's (tenant acme) request with this key to payments.create, body {@code {}}, default policy. */
    public static dev.idempotency.core.Operation operation(String key) {
        return operation(key, PolicyBuilder.defaults().build());
    }

    /** The scope digest of the tests that make operations without a server: keyed with a test secret. */
    public static final dev.idempotency.core.ScopeDigest SCOPE_DIGEST = new dev.idempotency.core.ScopeDigest(
            "0123456789abcdef0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.UTF_8), java.util.List.of());

    /** alice's (tenant acme) request with this key, body {@code {}}, under that policy. */
    public static dev.idempotency.core.Operation operation(String key, dev.idempotency.core.EndpointPolicy policy) {
        return operation(key, policy, "{}");
    }

    /** alice's (tenant acme) request with this key and JSON body, under that policy. */
    public static dev.idempotency.core.Operation operation(String key, dev.idempotency.core.EndpointPolicy policy,
                                                           String body) {
        dev.idempotency.core.Fingerprinter fingerprinter = new dev.idempotency.core.Fingerprinter(
                "0123456789abcdef0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.UTF_8),
                java.util.List.of(), new dev.idempotency.json.JacksonCanonicalJson());
        return dev.idempotency.core.Operation.of(SCOPE_DIGEST, new dev.idempotency.Scope("acme", "alice", "payments.create", key),
                fingerprinter.fingerprint(new dev.idempotency.core.RequestFacts("POST", "/p", "application/json", "",
                        "acme/alice", body.getBytes(java.nio.charset.StandardCharsets.UTF_8)), java.util.Set.of(),
                        java.util.Map.of()),
                policy, java.util.Optional.empty());
    }

    public long rows(String where, Object... args) {
        return database.count("SELECT COUNT(*) FROM " + table + (where.isEmpty() ? "" : " WHERE " + where), args);
    }
}
