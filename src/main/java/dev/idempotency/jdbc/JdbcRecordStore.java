package dev.idempotency.jdbc;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idempotency.RecordStatus;
import dev.idempotency.json.JacksonCanonicalJson;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.DuplicateRecordException;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.QuotaCharge;
import dev.idempotency.spi.QuotaExceededException;
import dev.idempotency.spi.RecordStore;
import dev.idempotency.spi.StoreUnavailableException;
import dev.idempotency.spi.StoredResponse;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.logging.Logger;

/**
 * The {@link RecordStore} on a JTA DataSource: each method is one statement on a connection taken from
 * the DataSource, so it runs in whatever JTA transaction the protocol has begun (the claim's own, or
 * the business transaction). Timestamps are UTC {@code LocalDateTime}s truncated to microseconds, which
 * every supported database keeps exactly.
 */
public final class JdbcRecordStore implements RecordStore {
    private static final Logger LOG = Logger.getLogger(JdbcRecordStore.class.getName());
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<LinkedHashMap<String, List<String>>> HEADERS = new TypeReference<>() {
    };

    // The shipped scripts name the default table, so that an operator can run them as they are.
    private static final String DEFAULT_TABLE = "idempotency_record";
    // How often a caller at a limit may have its records scanned to make room.
    private static final java.time.Duration RECONCILE_INTERVAL = java.time.Duration.ofSeconds(1);

    private final DataSource dataSource;
    private final Dialect dialect;
    private final String table;
    private final RecordSql sql;
    private final boolean galera;

    public JdbcRecordStore(DataSource dataSource, Dialect dialect, String table) {
        this(dataSource, dialect, table, false);
    }

    private JdbcRecordStore(DataSource dataSource, Dialect dialect, String table, boolean galera) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.dialect = Objects.requireNonNull(dialect, "dialect");
        this.table = Objects.requireNonNull(table, "table");
        this.sql = new RecordSql(table, dialect);
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

    /** Creates the table and its indexes when absent, from the dialect's script shipped in the jar. */
    public void createSchema() {
        run(c -> {
            try (Statement s = c.createStatement()) {
                for (String statement : schemaStatements()) {
                    s.execute(statement);
                }
            }
            return null;
        });
    }

    /** The dialect's DDL for this table, statement by statement. */
    public List<String> schemaStatements() {
        String script;
        try (InputStream in = JdbcRecordStore.class.getClassLoader().getResourceAsStream(dialect.script())) {
            if (in == null) {
                throw new IllegalStateException("IDEM-S004 " + dialect.script() + " is missing from the jar");
            }
            script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("IDEM-S004 could not read " + dialect.script(), e);
        }
        List<String> statements = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : script.split("\n")) {
            if (line.strip().startsWith("--")) {
                continue;
            }
            current.append(line).append('\n');
            if (line.strip().endsWith(";")) {
                String statement = current.toString().strip();
                statements.add(statement.substring(0, statement.length() - 1).replace(DEFAULT_TABLE, table));
                current.setLength(0);
            }
        }
        return statements;
    }

    @Override
    public void insert(IdempotencyRecord record, QuotaCharge charge, List<String> aliasKeys) {
        insert(record, charge, aliasKeys, 0);
    }

    @Override
    public void insertInTransaction(IdempotencyRecord record, List<String> aliasKeys, int waitSeconds) {
        waitingAtMost(() -> {
            insert(record, QuotaCharge.NONE, aliasKeys, positive(waitSeconds));
            return null;
        });
    }

    // waitSeconds: the statement's query timeout, which ends its wait for a concurrent claim's row lock; 0: none.
    private void insert(IdempotencyRecord record, QuotaCharge charge, List<String> aliasKeys, int waitSeconds) {
        run(c -> {
            if (charge.equals(QuotaCharge.NONE)) {
                // Nothing to charge: the bare INSERT, without the counters' CTEs (a third of the claim's time).
                try (PreparedStatement ps = c.prepareStatement(sql.insertUncharged)) {
                    boundWait(ps, waitSeconds);
                    setRecord(ps, 1, record);
                    if (ps.executeUpdate() == 0) {
                        throw new DuplicateRecordException("a record with this scope key exists", null);
                    }
                }
            } else if (dialect == Dialect.POSTGRESQL) {
                try (PreparedStatement ps = c.prepareStatement(sql.claimInOneStatement)) {
                    boundWait(ps, waitSeconds);
                    int i = setRecord(ps, 1, record);
                    i = setCharge(ps, i, charge);
                    int[] counts = counts(ps, 3);
                    if (counts[0] == 0) {
                        throw new DuplicateRecordException("a record with this scope key exists", null);
                    }
                    refuseOverLimit(charge, counts[1] == 1, counts[2] == 1);
                }
            } else {
                try (PreparedStatement ps = c.prepareStatement(sql.insert)) {
                    boundWait(ps, waitSeconds);
                    setRecord(ps, 1, record);
                    ps.executeUpdate();
                }
                charge(c, record, charge);
            }
            if (!aliasKeys.isEmpty()) {
                lockCaller(c, record);
                refuseIfAliasExists(c, aliasKeys);
            }
            return null;
        });
    }

    // The caller's counter row of the endpoint, locked until commit (the key charge may have done so already);
    // created at zero when no charge ever made it. Taken after the record, as every path takes them.
    private void lockCaller(Connection c, IdempotencyRecord record) throws SQLException {
        if (dialect == Dialect.MARIADB) {
            try (PreparedStatement ensure = c.prepareStatement(sql.ensureQuota)) {
                setAll(ensure, record.tenant(), record.principal(), record.endpoint());
                ensure.executeUpdate();
                return;
            }
        }
        try (PreparedStatement touch = c.prepareStatement(sql.lockCounter)) {
            setAll(touch, record.tenant(), record.principal(), record.endpoint());
            if (touch.executeUpdate() == 1) {
                return;
            }
            try (PreparedStatement create = c.prepareStatement(sql.createCounter)) {
                setAll(create, record.tenant(), record.principal(), record.endpoint());
                create.executeUpdate();
            } catch (SQLException e) {
                if (dialect.classify(e) != Dialect.Failure.DUPLICATE) {
                    throw e;
                }
                touch.executeUpdate();
            }
        }
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
                    return rs.next() ? Optional.of(read(rs)) : Optional.empty();
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
        return waitingAtMost(() -> takeOver(scopeKey, expectedOwnerToken, expectedStatus, replacement,
                QuotaCharge.NONE, positive(waitSeconds)));
    }

    private boolean takeOver(String scopeKey, String expectedOwnerToken, RecordStatus expectedStatus,
                             IdempotencyRecord replacement, QuotaCharge charge, int waitSeconds) {
        return run(c -> {
            boolean onePostgres = dialect == Dialect.POSTGRESQL;
            try (PreparedStatement ps = c.prepareStatement(onePostgres ? sql.takeOverInOneStatement : sql.takeOver)) {
                boundWait(ps, waitSeconds);
                int i = 1;
                ps.setString(i++, replacement.requestHash());
                ps.setString(i++, replacement.ownerToken());
                setInstant(ps, i++, replacement.leaseUntil().orElse(null));
                ps.setInt(i++, replacement.attempts());
                setInstant(ps, i++, replacement.createdAt());
                setInstant(ps, i++, replacement.updatedAt());
                setInstant(ps, i++, replacement.expiresAt());
                ps.setString(i++, scopeKey);
                ps.setString(i++, expectedOwnerToken);
                ps.setString(i++, expectedStatus.name());
                if (onePostgres) {
                    setCharge(ps, i, charge);
                    int[] counts = counts(ps, 3);
                    if (counts[0] == 1) {
                        refuseOverLimit(charge, counts[1] == 1, counts[2] == 1);
                    }
                    return counts[0] == 1;
                }
                if (ps.executeUpdate() != 1) {
                    return false;
                }
            }
            charge(c, replacement, charge);
            return true;
        });
    }

    @Override
    public boolean finish(String scopeKey, String ownerToken, Completion completion) {
        return run(c -> {
            boolean onePostgres = dialect == Dialect.POSTGRESQL;
            boolean finished;
            try (PreparedStatement ps = c.prepareStatement(onePostgres ? sql.finishInOneStatement : sql.finish)) {
                int i = setFinish(ps, scopeKey, ownerToken, completion);
                if (onePostgres) {
                    ps.setInt(i, RecordSql.stripe(scopeKey));
                }
                finished = onePostgres ? counts(ps, 1)[0] == 1 : ps.executeUpdate() == 1;
            }
            if (finished && !onePostgres) {
                giveBackInFlight(c, scopeKey);
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
                int i = setFinish(ps, claimed.scopeKey(), claimed.ownerToken(), completion);
                if (onePostgres) {
                    setCharge(ps, i, charge);
                    int[] counts = counts(ps, 3);
                    if (counts[0] == 1) {
                        refuseOverLimit(charge, true, counts[2] == 1);
                    }
                    return counts[0] == 1;
                }
                if (ps.executeUpdate() != 1) {
                    return false;
                }
            }
            charge(c, claimed, charge);
            return true;
        });
    }

    @Override
    public boolean renewLease(String scopeKey, String ownerToken, Instant now, Instant leaseUntil, Instant expiresAt) {
        return run(c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.renewLease)) {
                setInstant(ps, 1, leaseUntil);
                setInstant(ps, 2, expiresAt);
                setInstant(ps, 3, expiresAt);
                ps.setString(4, scopeKey);
                ps.setString(5, ownerToken);
                setInstant(ps, 6, now);
                return ps.executeUpdate() == 1;
            }
        });
    }

    @Override
    public List<IdempotencyRecord> findProcessing(Instant expiresFrom, String afterScopeKey, Instant expiresBefore,
                                                  int limit) {
        return run(c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.findProcessing)) {
                setInstant(ps, 1, expiresBefore);
                setInstant(ps, 2, expiresFrom);
                setInstant(ps, 3, expiresFrom);
                ps.setString(4, afterScopeKey);
                ps.setInt(5, limit);
                List<IdempotencyRecord> found = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        found.add(read(rs));
                    }
                }
                return found;
            }
        });
    }

    @Override
    public List<IdempotencyRecord> list(String endpoint, java.util.Set<RecordStatus> statuses, Instant createdBefore,
                                        Instant now, int limit) {
        if (statuses.isEmpty()) {
            return List.of();
        }
        List<RecordStatus> four = new ArrayList<>(statuses);
        while (four.size() < 4) {
            four.add(four.get(0));
        }
        return run(c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.listForAdministrator)) {
                ps.setString(1, endpoint);
                for (int i = 0; i < 4; i++) {
                    ps.setString(2 + i, four.get(i).name());
                }
                setInstant(ps, 6, createdBefore);
                setInstant(ps, 7, now);
                ps.setInt(8, limit);
                List<IdempotencyRecord> found = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        found.add(read(rs));
                    }
                }
                return found;
            }
        });
    }

    // H2 and MariaDB: the finished record's give-back, in the finish's transaction. MariaDB's is one upsert; H2
    // updates, creates the row when it was missing, and updates again when a concurrent finish created it.
    private void giveBackInFlight(Connection c, String scopeKey) throws SQLException {
        int stripe = RecordSql.stripe(scopeKey);
        try (PreparedStatement update = c.prepareStatement(sql.giveBackInFlight)) {
            update.setInt(1, stripe);
            update.setString(2, scopeKey);
            if (dialect == Dialect.MARIADB) {
                update.executeUpdate();
                return;
            }
            update.setString(3, scopeKey);
            if (update.executeUpdate() == 1) {
                return;
            }
            try (PreparedStatement create = c.prepareStatement(sql.giveBackInFlightCreate)) {
                create.setInt(1, stripe);
                create.setString(2, scopeKey);
                create.executeUpdate();
                return;
            } catch (SQLException e) {
                if (dialect.classify(e) != Dialect.Failure.DUPLICATE) {
                    throw e;
                }
            }
            update.executeUpdate();
        }
    }

    @Override
    public boolean reconcile(QuotaExceededException.Limit limit, String tenant, String principal, String endpoint,
                             Instant now) {
        String row = limit == QuotaExceededException.Limit.IN_FLIGHT ? RecordSql.ALL_ENDPOINTS : endpoint;
        return run(c -> {
            // A plain read first: a caller that was checked a moment ago is refused without another scan.
            try (PreparedStatement ps = c.prepareStatement(sql.readQuota)) {
                setAll(ps, tenant, principal, row);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        return false;
                    }
                    Instant checked = instant(rs, "checked_at");
                    if (checked != null && checked.isAfter(now.minus(RECONCILE_INTERVAL))) {
                        return false;
                    }
                }
            }
            // Records before the quota row, as every other path locks them, so that no two transactions wait
            // on each other.
            if (limit == QuotaExceededException.Limit.IN_FLIGHT) {
                try (PreparedStatement ps = c.prepareStatement(sql.releaseExpiredClaims)) {
                    setInstant(ps, 1, now);
                    ps.setString(2, tenant);
                    ps.setString(3, principal);
                    setInstant(ps, 4, now);
                    ps.executeUpdate();
                }
            } else {
                try (PreparedStatement ps = c.prepareStatement(sql.deleteExpiredOfCaller)) {
                    setAll(ps, tenant, principal, endpoint);
                    setInstant(ps, 4, now);
                    ps.executeUpdate();
                }
            }
            long charged;
            try (PreparedStatement ps = c.prepareStatement(sql.lockQuota)) {
                setAll(ps, tenant, principal, row);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        return false;
                    }
                    charged = rs.getLong(1);
                }
            }
            // Counted after the lock, in a statement of its own: it sees every change committed before the
            // lock was granted, and every later one changes the row relative to this count. In flight: the
            // charges become the records running plus what was given back, read in the same snapshot.
            long counted;
            long givenBack = 0;
            boolean inFlight = limit == QuotaExceededException.Limit.IN_FLIGHT;
            try (PreparedStatement ps = c.prepareStatement(inFlight ? sql.countInFlightAndReleased : sql.countKeys)) {
                setAll(ps, tenant, principal, inFlight ? tenant : endpoint);
                if (inFlight) {
                    ps.setString(4, principal);
                }
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    counted = rs.getLong(1);
                    if (inFlight) {
                        givenBack = rs.getLong(2);
                    }
                }
            }
            try (PreparedStatement ps = c.prepareStatement(sql.setQuota)) {
                ps.setLong(1, counted + givenBack);
                setInstant(ps, 2, now);
                setAll(ps, 3, tenant, principal, row);
                ps.executeUpdate();
            }
            return counted < charged - givenBack;
        });
    }

    @Override
    public int purgeExpired(Instant now, int batchSize) {
        // Select the keys, then delete by primary key with the conditions checked again: no range delete,
        // so MariaDB takes no gap locks that would block concurrent claims. Each deleted record is given
        // back to its caller's count of stored records, after the records, as every path orders its locks.
        return run(c -> {
            List<String[]> found = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(sql.expiredKeys)) {
                setInstant(ps, 1, now);
                ps.setInt(2, batchSize);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        found.add(new String[] {rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4)});
                    }
                }
            }
            if (found.isEmpty()) {
                return 0;
            }
            Map<List<String>, Integer> freed = new LinkedHashMap<>();
            try (PreparedStatement ps = c.prepareStatement(sql.deleteExpired)) {
                for (String[] key : found) {
                    ps.setString(1, key[0]);
                    setInstant(ps, 2, now);
                    ps.addBatch();
                }
                int[] results = ps.executeBatch();
                for (int k = 0; k < results.length; k++) {
                    int n = results[k] == Statement.SUCCESS_NO_INFO ? 1 : results[k];
                    if (n > 0) {
                        freed.merge(List.of(found.get(k)[1], found.get(k)[2], found.get(k)[3]), n, Integer::sum);
                    }
                }
            }
            int deleted = 0;
            if (!freed.isEmpty()) {
                try (PreparedStatement ps = c.prepareStatement(sql.giveBackKeys)) {
                    for (Map.Entry<List<String>, Integer> e : freed.entrySet()) {
                        ps.setInt(1, e.getValue());
                        ps.setInt(2, e.getValue());
                        setAll(ps, 3, e.getKey().get(0), e.getKey().get(1), e.getKey().get(2));
                        ps.addBatch();
                        deleted += e.getValue();
                    }
                    ps.executeBatch();
                }
            }
            return deleted;
        });
    }

    /** H2 and MariaDB: the claim's charge as statements of their own, in the claim's transaction. */
    private void charge(Connection c, IdempotencyRecord record, QuotaCharge charge) throws SQLException {
        boolean inFlight = !charge.inFlight()
                || chargeOne(c, record.tenant(), record.principal(), RecordSql.ALL_ENDPOINTS, charge.maxInFlight());
        boolean key = !charge.key() || !inFlight
                || chargeOne(c, record.tenant(), record.principal(), record.endpoint(), charge.maxKeys());
        refuseOverLimit(charge, inFlight, key);
    }

    // One up unless at the limit; the row is created by the first charge (a concurrent creator wins the
    // primary key, and the update is tried again on its row), on MariaDB before it.
    private boolean chargeOne(Connection c, String tenant, String principal, String row, int limit)
            throws SQLException {
        // In flight, with a limit: less what was given back, read without a lock (one not yet visible only
        // makes the count higher).
        long givenBack = 0;
        if (limit != 0 && RecordSql.ALL_ENDPOINTS.equals(row)) {
            try (PreparedStatement sum = c.prepareStatement(sql.sumReleased)) {
                setAll(sum, tenant, principal);
                try (ResultSet rs = sum.executeQuery()) {
                    rs.next();
                    givenBack = rs.getLong(1);
                }
            }
        }
        boolean rowExists = false;
        if (dialect == Dialect.MARIADB) {
            // Created first where missing (RecordSql.ensureQuota): the update below then finds its row.
            try (PreparedStatement ensure = c.prepareStatement(sql.ensureQuota)) {
                setAll(ensure, tenant, principal, row);
                ensure.executeUpdate();
                rowExists = true;
            }
        }
        try (PreparedStatement update = c.prepareStatement(sql.charge)) {
            setAll(update, tenant, principal, row);
            update.setLong(4, givenBack);
            update.setLong(5, limit == 0 ? Long.MAX_VALUE : limit);
            if (update.executeUpdate() == 1) {
                return true;
            }
            if (rowExists) {
                return false;
            }
            try (PreparedStatement create = c.prepareStatement(sql.createQuota)) {
                setAll(create, tenant, principal, row);
                create.executeUpdate();
                return true;
            } catch (SQLException e) {
                if (dialect.classify(e) != Dialect.Failure.DUPLICATE) {
                    throw e;
                }
            }
            return update.executeUpdate() == 1;
        }
    }

    private static void refuseOverLimit(QuotaCharge charge, boolean inFlightCharged, boolean keyCharged) {
        if (charge.inFlight() && !inFlightCharged) {
            throw new QuotaExceededException(QuotaExceededException.Limit.IN_FLIGHT);
        }
        if (charge.key() && !keyCharged) {
            throw new QuotaExceededException(QuotaExceededException.Limit.KEYS);
        }
    }

    private static int setRecord(PreparedStatement ps, int start, IdempotencyRecord record) throws SQLException {
        int i = start;
        ps.setString(i++, record.scopeKey());
        ps.setString(i++, record.tenant());
        ps.setString(i++, record.principal());
        ps.setString(i++, record.endpoint());
        ps.setString(i++, record.requestHash());
        ps.setString(i++, record.status().name());
        i = setOutcome(ps, i, record.resourceId(), record.response());
        ps.setString(i++, record.ownerToken());
        setInstant(ps, i++, record.leaseUntil().orElse(null));
        ps.setInt(i++, record.attempts());
        setInstant(ps, i++, record.createdAt());
        setInstant(ps, i++, record.updatedAt());
        setInstant(ps, i++, record.expiresAt());
        return i;
    }

    // The parameters of RecordSql's finish (the same first ones in its PostgreSQL forms); answers the next index.
    private static int setFinish(PreparedStatement ps, String scopeKey, String ownerToken, Completion completion)
            throws SQLException {
        int i = 1;
        ps.setString(i++, completion.status().name());
        i = setOutcome(ps, i, completion.resourceId(), completion.response());
        setInstant(ps, i++, completion.updatedAt());
        setInstant(ps, i++, completion.expiresAt());
        setInstant(ps, i++, completion.expiresAt());
        ps.setString(i++, scopeKey);
        ps.setString(i++, ownerToken);
        return i;
    }

    private static int setCharge(PreparedStatement ps, int start, QuotaCharge charge) throws SQLException {
        int i = start;
        ps.setBoolean(i++, charge.inFlight());
        ps.setInt(i++, charge.maxInFlight() == 0 ? Integer.MAX_VALUE : charge.maxInFlight());
        ps.setBoolean(i++, charge.key());
        ps.setInt(i++, charge.maxKeys() == 0 ? Integer.MAX_VALUE : charge.maxKeys());
        return i;
    }

    private static void setAll(PreparedStatement ps, String... values) throws SQLException {
        setAll(ps, 1, values);
    }

    private static void setAll(PreparedStatement ps, int start, String... values) throws SQLException {
        for (int i = 0; i < values.length; i++) {
            ps.setString(start + i, values[i]);
        }
    }

    // The first row of a query answering counts.
    private static int[] counts(PreparedStatement ps, int columns) throws SQLException {
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            int[] counts = new int[columns];
            for (int i = 0; i < columns; i++) {
                counts[i] = rs.getInt(i + 1);
            }
            return counts;
        }
    }

    private static int setOutcome(PreparedStatement ps, int start, Optional<String> resourceId,
                                  Optional<StoredResponse> response) throws SQLException {
        int i = start;
        ps.setString(i++, resourceId.orElse(null));
        if (response.isPresent()) {
            StoredResponse r = response.get();
            ps.setInt(i++, r.status());
            ps.setString(i++, headersJson(r.headers()));
            ps.setBytes(i++, r.body());
            ps.setString(i++, r.bodyEncoding());
        } else {
            ps.setNull(i++, Types.INTEGER);
            ps.setNull(i++, Types.VARCHAR);
            ps.setNull(i++, Types.VARBINARY);
            ps.setNull(i++, Types.VARCHAR);
        }
        return i;
    }

    private static IdempotencyRecord read(ResultSet rs) throws SQLException {
        Optional<StoredResponse> response = Optional.empty();
        int status = rs.getInt("response_status");
        if (!rs.wasNull()) {
            byte[] body = rs.getBytes("response_body");
            response = Optional.of(new StoredResponse(status, headers(rs.getString("response_headers")),
                    body == null ? new byte[0] : body, rs.getString("body_encoding")));
        }
        return new IdempotencyRecord(rs.getString("scope_key"), rs.getString("tenant"), rs.getString("principal"),
                rs.getString("endpoint"), rs.getString("request_hash"), RecordStatus.valueOf(rs.getString("status")),
                Optional.ofNullable(rs.getString("resource_id")), response, rs.getString("owner_token"),
                Optional.ofNullable(instant(rs, "lease_until")), rs.getInt("attempts"), instant(rs, "created_at"),
                instant(rs, "updated_at"), instant(rs, "expires_at"));
    }

    // {"name":["value",...],...}, written by hand with the canonical form's string writer: the finish of every
    // first execution writes it, and a general serializer cost more than the rest of the record's parameters
    // together (JFR). Read back by Jackson, which also reads what earlier versions wrote with it.
    static String headersJson(Map<String, List<String>> headers) {
        StringBuilder out = new StringBuilder(64 + 32 * headers.size()).append('{');
        for (Map.Entry<String, List<String>> header : headers.entrySet()) {
            if (out.length() > 1) {
                out.append(',');
            }
            JacksonCanonicalJson.writeString(header.getKey(), out);
            out.append(":[");
            List<String> values = header.getValue();
            for (int i = 0; i < values.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                JacksonCanonicalJson.writeString(values.get(i), out);
            }
            out.append(']');
        }
        return out.append('}').toString();
    }

    static Map<String, List<String>> headers(String json) {
        if (json == null || json.isEmpty()) {
            return Map.of();
        }
        try {
            return JSON.readValue(json, HEADERS);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("IDEM-S005 stored response headers are not valid JSON", e);
        }
    }

    private static void setInstant(PreparedStatement ps, int index, Instant instant) throws SQLException {
        if (instant == null) {
            ps.setNull(index, Types.TIMESTAMP);
        } else {
            ps.setObject(index, LocalDateTime.ofInstant(instant.truncatedTo(ChronoUnit.MICROS), ZoneOffset.UTC));
        }
    }

    private static Instant instant(ResultSet rs, String column) throws SQLException {
        LocalDateTime value = rs.getObject(column, LocalDateTime.class);
        return value == null ? null : value.toInstant(ZoneOffset.UTC);
    }

    // Only where a claim in the business transaction asks for it: a timeout an operator set on the datasource (WildFly's
    // query-timeout, for one) stays on every other statement.
    private static void boundWait(PreparedStatement ps, int waitSeconds) throws SQLException {
        if (waitSeconds > 0) {
            ps.setQueryTimeout(waitSeconds);
        }
    }

    private static int positive(int waitSeconds) {
        if (waitSeconds < 1) {
            throw new IllegalArgumentException("a claim in the business transaction waits at least one second");
        }
        return waitSeconds;
    }

    private <T> T run(SqlWork<T> work) {
        try (Connection c = dataSource.getConnection()) {
            return work.apply(c);
        } catch (SQLException e) {
            throw translate(e);
        }
    }

    // The query timeout of a claim in the business transaction, or the database's lock timeout, ended its wait:
    // another transaction holds the row. Elsewhere a cancelled statement stays what it was (unavailable).
    private <T> T waitingAtMost(java.util.function.Supplier<T> claim) {
        try {
            return claim.get();
        } catch (StoreUnavailableException e) {
            if (e.getCause() instanceof SQLException sql && dialect.waitEnded(sql)) {
                throw new StoreUnavailableException("IDEM-S011 the wait for a concurrent claim of the record ran out"
                        + " (SQLState " + sql.getSQLState() + ", code " + sql.getErrorCode() + ")", sql, true);
            }
            throw e;
        }
    }

    private RuntimeException translate(SQLException e) {
        return switch (dialect.classify(e)) {
            case DUPLICATE -> new DuplicateRecordException("a record with this scope key exists", e);
            case CONTENTION -> new StoreUnavailableException("IDEM-S006 contention on the record (SQLState "
                    + e.getSQLState() + ", code " + e.getErrorCode() + ")", e, true);
            case UNAVAILABLE -> new StoreUnavailableException("IDEM-S007 the record store is unavailable (SQLState "
                    + e.getSQLState() + ", code " + e.getErrorCode() + ")", e, false);
            case MISCONFIGURED -> new IllegalStateException("IDEM-S008 the record table '" + table
                    + "' does not match the library's schema (SQLState " + e.getSQLState() + "); create it from "
                    + dialect.script() + " or set idempotency.create-schema=true", e);
        };
    }

    @FunctionalInterface
    private interface SqlWork<T> {
        T apply(Connection connection) throws SQLException;
    }
}
