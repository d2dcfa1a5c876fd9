package dev.idempotency.jdbc;

import dev.idempotency.RecordStatus;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.DuplicateRecordException;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.QuotaCharge;
import dev.idempotency.spi.QuotaExceededException;
import dev.idempotency.spi.RecordStore;
import dev.idempotency.spi.StoreUnavailableException;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.logging.Logger;

/**
 * The {@link RecordStore} on a JTA DataSource: each method is one statement on a connection taken from
 * the DataSource, so it runs in whatever JTA transaction the protocol has begun (the claim's own, or
 * the business transaction). Timestamps are UTC {@code LocalDateTime}s truncated to microseconds, which
 * every supported database keeps exactly. It holds the statements of one operation's life; the quota accounting is
 * {@link QuotaAccounts}', the statements that look after the table as a whole {@link RecordMaintenance}'s, the row
 * mapping {@link RecordRows}', the SQL {@link RecordSql}'s, what a failed statement means {@link StoreFailures}'.
 */
public final class JdbcRecordStore implements RecordStore {
    private static final Logger LOG = Logger.getLogger(JdbcRecordStore.class.getName());

    private final DataSource dataSource;
    private final Dialect dialect;
    private final String table;
    private final RecordSql sql;
    private final QuotaAccounts quota;
    private final RecordMaintenance maintenance;
    private final StoreFailures failures;
    private final boolean galera;

    public JdbcRecordStore(DataSource dataSource, Dialect dialect, String table) {
        this(dataSource, dialect, table, false);
    }

    private JdbcRecordStore(DataSource dataSource, Dialect dialect, String table, boolean galera) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.dialect = Objects.requireNonNull(dialect, "dialect");
        this.table = Objects.requireNonNull(table, "table");
        this.sql = new RecordSql(table, dialect);
        this.quota = new QuotaAccounts(sql, dialect);
        this.maintenance = new RecordMaintenance(sql, quota);
        this.failures = new StoreFailures(dialect, table);
        this.galera = galera;
    }

    /**
     * A store on a DataSource whose database is recognised from its metadata. A node of a MariaDB Galera Cluster
     * must be read causally (docs/adr/0016): a read on one node right after a commit on another may otherwise
     * miss it, and a replay becomes a claim that can only lose.
     *
     * @throws StoreUnavailableException when no connection can be opened to read the metadata
     * @throws dev.idempotency.IdempotencyDefinitionException on a Galera node whose sessions do not read causally
     */
    public static JdbcRecordStore forDataSource(DataSource dataSource, String table) {
        try (Connection c = dataSource.getConnection()) {
            Dialect dialect = Dialect.of(c.getMetaData().getDatabaseProductName());
            boolean galera = dialect == Dialect.MARIADB && GaleraSession.of(c).map(GaleraSession::requireCausalReads)
                    .isPresent();
            if (dialect == Dialect.POSTGRESQL) {
                // Warned, not refused: replication can change after the deployment, and the risk is the operator's.
                PostgresReplication.of(c).map(PostgresReplication::risks).orElse(List.of())
                        .forEach(risk -> LOG.warning(risk));
            }
            return new JdbcRecordStore(dataSource, dialect, table, galera);
        } catch (SQLException e) {
            throw new StoreUnavailableException("IDEM-S003 could not read the database product of the DataSource", e,
                    false);
        }
    }

    /** Every one: claims in the business transaction, the admin resource's listing, accepted tasks' inputs. */
    @Override
    public java.util.Set<dev.idempotency.spi.StoreCapability> capabilities() {
        return java.util.EnumSet.allOf(dev.idempotency.spi.StoreCapability.class);
    }

    /**
     * False on a MariaDB Galera Cluster: a claim's uncommitted INSERT holds no lock on the other nodes, so two claims
     * of one key on two nodes both go on, and the loser learns it only at COMMIT — after its method ran.
     */
    @Override
    public boolean uncommittedClaimsBlock() {
        return !galera;
    }

    /** Whether the database is a node of a MariaDB Galera Cluster (wsrep_on). */
    public boolean galera() {
        return galera;
    }

    public Dialect dialect() {
        return dialect;
    }

    /** The time of this store's database, as seen through the local clock (refreshed every {@code refresh}). */
    public DatabaseClock databaseClock(java.time.Clock local, java.time.Duration refresh) {
        return new DatabaseClock(local, dataSource, dialect, refresh);
    }

    /** The version of this store's tables, and the scripts that create them or bring them to the library's. */
    public SchemaMigrations schema() {
        return new SchemaMigrations(dataSource, dialect, table, galera);
    }

    @Override
    public void insert(IdempotencyRecord record, QuotaCharge charge, List<String> aliasKeys) {
        insert(record, charge, aliasKeys, 0);
    }

    @Override
    public void insertInTransaction(IdempotencyRecord record, List<String> aliasKeys, int waitSeconds) {
        failures.waitingAtMost(() -> {
            insert(record, QuotaCharge.NONE, aliasKeys, StoreFailures.positive(waitSeconds));
            return null;
        });
    }

    // waitSeconds: the statement's query timeout, which ends its wait for a concurrent claim's row lock; 0: none.
    private void insert(IdempotencyRecord record, QuotaCharge charge, List<String> aliasKeys, int waitSeconds) {
        run(c -> {
            if (charge.equals(QuotaCharge.NONE)) {
                // Nothing to charge: the bare INSERT, without the counters' CTEs (a third of the claim's time).
                try (PreparedStatement ps = c.prepareStatement(sql.insertUncharged)) {
                    StoreFailures.boundWait(ps, waitSeconds);
                    RecordRows.setRecord(ps, 1, record);
                    if (ps.executeUpdate() == 0) {
                        throw new DuplicateRecordException("a record with this scope key exists", null);
                    }
                }
            } else if (dialect == Dialect.POSTGRESQL) {
                try (PreparedStatement ps = c.prepareStatement(sql.claimInOneStatement)) {
                    StoreFailures.boundWait(ps, waitSeconds);
                    int i = RecordRows.setRecord(ps, 1, record);
                    i = QuotaAccounts.setCharge(ps, i, charge);
                    int[] counts = RecordRows.counts(ps, 3);
                    if (counts[0] == 0) {
                        throw new DuplicateRecordException("a record with this scope key exists", null);
                    }
                    QuotaAccounts.refuseOverLimit(charge, counts[1] == 1, counts[2] == 1);
                }
            } else {
                try (PreparedStatement ps = c.prepareStatement(sql.insert)) {
                    StoreFailures.boundWait(ps, waitSeconds);
                    RecordRows.setRecord(ps, 1, record);
                    ps.executeUpdate();
                }
                quota.charge(c, record, charge);
            }
            if (!aliasKeys.isEmpty()) {
                quota.lockCaller(c, record);
                refuseIfAliasExists(c, aliasKeys);
            }
            return null;
        });
    }

    private void refuseIfAliasExists(Connection c, List<String> aliasKeys) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.aliasExists)) {
            for (String alias : aliasKeys) {
                ps.setString(1, alias);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        throw new DuplicateRecordException("the operation has a record under another accepted secret",
                                null);
                    }
                }
            }
        }
    }

    @Override
    public Optional<IdempotencyRecord> find(String scopeKey) {
        return run(c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.find)) {
                ps.setString(1, scopeKey);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(RecordRows.read(rs)) : Optional.empty();
                }
            }
        });
    }

    @Override
    public boolean takeOver(String scopeKey, String expectedOwnerToken, RecordStatus expectedStatus,
                            IdempotencyRecord replacement, QuotaCharge charge) {
        return takeOver(scopeKey, expectedOwnerToken, expectedStatus, replacement, charge, 0);
    }

    @Override
    public boolean takeOverInTransaction(String scopeKey, String expectedOwnerToken, RecordStatus expectedStatus,
                                         IdempotencyRecord replacement, int waitSeconds) {
        return failures.waitingAtMost(() -> takeOver(scopeKey, expectedOwnerToken, expectedStatus, replacement,
                QuotaCharge.NONE, StoreFailures.positive(waitSeconds)));
    }

    private boolean takeOver(String scopeKey, String expectedOwnerToken, RecordStatus expectedStatus,
                             IdempotencyRecord replacement, QuotaCharge charge, int waitSeconds) {
        return run(c -> {
            boolean onePostgres = dialect == Dialect.POSTGRESQL;
            try (PreparedStatement ps = c.prepareStatement(onePostgres ? sql.takeOverInOneStatement : sql.takeOver)) {
                StoreFailures.boundWait(ps, waitSeconds);
                int i = RecordRows.setTakeOver(ps, scopeKey, expectedOwnerToken, expectedStatus, replacement);
                if (onePostgres) {
                    QuotaAccounts.setCharge(ps, i, charge);
                    int[] counts = RecordRows.counts(ps, 3);
                    if (counts[0] == 1) {
                        QuotaAccounts.refuseOverLimit(charge, counts[1] == 1, counts[2] == 1);
                    }
                    return counts[0] == 1;
                }
                if (ps.executeUpdate() != 1) {
                    return false;
                }
            }
            quota.charge(c, replacement, charge);
            return true;
        });
    }

    @Override
    public boolean finish(String scopeKey, String ownerToken, Completion completion) {
        return run(c -> {
            boolean onePostgres = dialect == Dialect.POSTGRESQL;
            boolean finished;
            try (PreparedStatement ps = c.prepareStatement(onePostgres ? sql.finishInOneStatement : sql.finish)) {
                int i = RecordRows.setFinish(ps, scopeKey, ownerToken, completion);
                if (onePostgres) {
                    ps.setInt(i, RecordSql.stripe(scopeKey));
                }
                finished = onePostgres ? RecordRows.counts(ps, 1)[0] == 1 : ps.executeUpdate() == 1;
            }
            if (finished && !onePostgres) {
                quota.giveBackInFlight(c, scopeKey);
            }
            return finished;
        });
    }

    @Override
    public boolean finishInTransaction(IdempotencyRecord claimed, Completion completion, QuotaCharge charge) {
        if (charge.inFlight()) {
            throw new IllegalArgumentException("a claim in the business transaction takes no in-flight unit");
        }
        return run(c -> {
            boolean onePostgres = dialect == Dialect.POSTGRESQL;
            try (PreparedStatement ps = c.prepareStatement(onePostgres ? sql.finishChargedInOneStatement : sql.finish)) {
                int i = RecordRows.setFinish(ps, claimed.scopeKey(), claimed.ownerToken(), completion);
                if (onePostgres) {
                    QuotaAccounts.setCharge(ps, i, charge);
                    int[] counts = RecordRows.counts(ps, 3);
                    if (counts[0] == 1) {
                        QuotaAccounts.refuseOverLimit(charge, true, counts[2] == 1);
                    }
                    return counts[0] == 1;
                }
                if (ps.executeUpdate() != 1) {
                    return false;
                }
            }
            quota.charge(c, claimed, charge);
            return true;
        });
    }

    @Override
    public boolean keepTaskInput(String scopeKey, String ownerToken, dev.idempotency.spi.TaskInput input) {
        return run(c -> TaskInputRows.keep(c, sql, scopeKey, ownerToken, input));
    }

    @Override
    public Optional<dev.idempotency.spi.TaskInput> findTaskInput(String scopeKey, String ownerToken) {
        return run(c -> TaskInputRows.find(c, sql, scopeKey, ownerToken));
    }

    @Override
    public boolean renewLease(String scopeKey, String ownerToken, Instant now, Instant leaseUntil, Instant expiresAt) {
        return run(c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.renewLease)) {
                RecordRows.setInstant(ps, 1, leaseUntil);
                RecordRows.setInstant(ps, 2, expiresAt);
                RecordRows.setInstant(ps, 3, expiresAt);
                ps.setString(4, scopeKey);
                ps.setString(5, ownerToken);
                RecordRows.setInstant(ps, 6, now);
                return ps.executeUpdate() == 1;
            }
        });
    }

    @Override
    public List<IdempotencyRecord> findProcessing(Instant expiresFrom, String afterScopeKey, Instant expiresBefore,
                                                  int limit) {
        return run(c -> maintenance.findProcessing(c, expiresFrom, afterScopeKey, expiresBefore, limit));
    }

    @Override
    public List<IdempotencyRecord> list(String endpoint, java.util.Set<RecordStatus> statuses, Instant createdBefore,
                                        Instant now, int limit) {
        return statuses.isEmpty() ? List.of() : run(c -> maintenance.list(c, endpoint, statuses, createdBefore, now, limit));
    }

    @Override
    public boolean reconcile(QuotaExceededException.Limit limit, String tenant, String principal, String endpoint,
                             Instant now) {
        return run(c -> quota.reconcile(c, limit, tenant, principal, endpoint, now));
    }

    @Override
    public int purgeExpired(Instant now, int batchSize) {
        return run(c -> maintenance.purgeExpired(c, now, batchSize));
    }

    private <T> T run(SqlWork<T> work) {
        try (Connection c = dataSource.getConnection()) {
            return work.apply(c);
        } catch (SQLException e) {
            throw failures.translate(e);
        }
    }

    @FunctionalInterface
    private interface SqlWork<T> {
        T apply(Connection connection) throws SQLException;
    }
}
