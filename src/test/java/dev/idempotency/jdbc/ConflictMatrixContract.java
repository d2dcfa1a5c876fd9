package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyException;
import dev.idempotency.RecordStatus;
import dev.idempotency.core.Admission;
import dev.idempotency.core.IdempotencyProtocol;
import dev.idempotency.core.Operation;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.testing.Databases;
import dev.idempotency.testing.Narayana;
import dev.idempotency.testing.StoreFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Each conflict the JDBC store must classify, produced for real on the database by two or three sessions
 * racing for the same row (issue 5, #2 and #3), and what the protocol makes of it: a re-read in a fresh
 * transaction that ends in a stable 409, or a 503 with Retry-After; never an unclassified failure (a 500).
 * Subclasses add the codes only their database has.
 */
abstract class ConflictMatrixContract {
    static final String TABLE = "idem_conflict_test";
    StoreFixture fixture;
    private final List<Connection> sessions = new ArrayList<>();
    private final ExecutorService holder = Executors.newSingleThreadExecutor();

    abstract String database();

    /** The state and code the database answers a session that waited too long for a row lock with. */
    abstract void assertLockWaitTimeout(SQLException e);

    /**
     * How many sessions wait for a lock in a statement on a table whose name matches the one parameter (a LIKE
     * pattern), as the database's own views show it.
     */
    abstract String lockWaitersSql();

    /** Returns once {@code sessions} sessions are seen waiting for a lock in a statement on {@code table}. */
    void awaitLockWaiters(String table, int sessions) {
        // Every 200 ms: InnoDB's lock views are refreshed only when not read for 0.1 s.
        dev.idempotency.testing.Conditions.await(sessions + " sessions waiting for a lock on " + table,
                Duration.ofSeconds(20), Duration.ofMillis(200),
                () -> fixture.database.count(lockWaitersSql(), "%" + table + "%") >= sessions);
    }

    @BeforeEach
    void freshTables() {
        fixture = new StoreFixture(Databases.named(database()), TABLE);
        fixture.database.update("DROP TABLE IF EXISTS idem_conflict_row");
        fixture.database.update("CREATE TABLE idem_conflict_row (id INT PRIMARY KEY, v INT NOT NULL)");
        fixture.database.update("INSERT INTO idem_conflict_row (id, v) VALUES (1, 0), (2, 0)");
    }

    @AfterEach
    void closeSessions() throws SQLException {
        for (Connection c : sessions) {
            if (!c.isClosed()) {
                c.rollback();
                c.close();
            }
        }
        holder.shutdownNow();
    }

    @Test
    void aSecondInsertOfTheSameKeyIsADuplicate() throws Exception {
        Connection first = session();
        Connection second = session();
        exec(first, "INSERT INTO idem_conflict_row (id, v) VALUES (3, 0)");
        first.commit();
        SQLException e = failure(() -> exec(second, "INSERT INTO idem_conflict_row (id, v) VALUES (3, 1)"));
        record(e, Dialect.Failure.DUPLICATE);
    }

    @Test
    void aSessionThatWaitsTooLongForARowLockIsContention() throws Exception {
        Connection holding = session();
        Connection waiting = shortWaitSession();
        exec(holding, "UPDATE idem_conflict_row SET v = v + 1 WHERE id = 1");
        SQLException e = failure(() -> exec(waiting, "UPDATE idem_conflict_row SET v = v + 1 WHERE id = 1"));
        assertLockWaitTimeout(e);
        record(e, Dialect.Failure.CONTENTION);
    }

    @Test
    void aClaimWaitingTooLongBehindAnotherUncommittedClaimIs503ThenA409() throws Exception {
        Operation op = StoreFixture.operation("held");
        Future<?> held = hold(op);
        held.get(10, TimeUnit.SECONDS);
        JdbcRecordStore impatient = JdbcRecordStore.forDataSource(
                Databases.named(database() + "-short-lock-waits").dataSource(), TABLE);
        IdempotencyProtocol protocol = new IdempotencyProtocol(impatient, fixture.transactions, Clock.systemUTC(),
                new SecureRandom(), e -> { }, 4);
        IdempotencyException refused = rejected(protocol, op);
        assertThat(refused.problem().status()).as(refused.problem().detail()).isEqualTo(503);
        assertThat(refused.problem().retryAfterSeconds()).isPresent();
        assertThat(fixture.rows("")).as("nothing committed while the first claim is open").isZero();
        release(true);
        IdempotencyException inFlight = rejected(protocol, op);
        assertThat(inFlight.problem().status()).as("the committed claim decides").isEqualTo(409);
    }

    @Test
    void threeClaimsOfOneKeyWhereTheFirstRollsBackLeaveOneExecutorAndStableAnswers() throws Exception {
        Operation op = StoreFixture.operation("three-way");
        hold(op).get(10, TimeUnit.SECONDS);
        IdempotencyProtocol protocol = fixture.protocol();
        ExecutorService claimants = Executors.newFixedThreadPool(2);
        try {
            List<Future<Integer>> answers = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                answers.add(claimants.submit(() -> {
                    try {
                        return protocol.admission().admit(op) instanceof Admission.Execute ? 0 : -1;
                    } catch (IdempotencyException e) {
                        return e.problem().status();
                    }
                }));
            }
            // Both wait on the first claim's uncommitted row; then it rolls back (MariaDB: the two waiters'
            // shared locks deadlock, 1213, and the victim re-reads).
            awaitLockWaiters(TABLE, 2);
            release(false);
            List<Integer> statuses = new ArrayList<>();
            for (Future<Integer> answer : answers) {
                statuses.add(answer.get(30, TimeUnit.SECONDS));
            }
            // The loser re-reads (after its duplicate key, or its deadlock) and finds the winner's live claim.
            assertThat(statuses).as("one executes (0), the other gets 409").containsExactlyInAnyOrder(0, 409);
        } finally {
            claimants.shutdownNow();
        }
        assertThat(fixture.rows("status = 'PROCESSING'")).isEqualTo(1);
    }

    /** A session of its own (not pooled, not in JTA), with autocommit off; rolled back and closed after the test. */
    Connection session() throws SQLException {
        Connection c = fixture.database.raw();
        c.setAutoCommit(false);
        sessions.add(c);
        return c;
    }

    Connection shortWaitSession() throws SQLException {
        Connection c = Databases.named(database() + "-short-lock-waits").raw();
        c.setAutoCommit(false);
        sessions.add(c);
        return c;
    }

    static void exec(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    static int number(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        }
    }

    static void exec(Connection c, String sql, Object... args) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            ps.execute();
        }
    }

    @FunctionalInterface
    interface Work {
        void run() throws Exception;
    }

    /** The SQLException the work must fail with. */
    static SQLException failure(Work work) throws Exception {
        try {
            work.run();
        } catch (SQLException e) {
            return e;
        }
        return fail("expected the database to refuse");
    }

    /** Asserts the store's classification of a real error, and prints the matrix line for the record. */
    void record(SQLException e, Dialect.Failure expected) {
        Dialect.Failure classified = fixture.store.dialect().classify(e);
        System.out.printf("conflict matrix: %-10s SQLState %-5s code %5d -> %-11s (%s)%n", fixture.database.name(),
                e.getSQLState(), e.getErrorCode(), classified, firstLine(e.getMessage()));
        assertThat(classified).as(e.toString()).isEqualTo(expected);
    }

    private static String firstLine(String message) {
        String m = String.valueOf(message);
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }

    /** Another node's claim of the operation, inserted in a JTA transaction that stays open on its own thread. */
    private Future<?> hold(Operation op) {
        return holder.submit(() -> {
            Narayana.transactionManager().begin();
            Instant now = Instant.now();
            fixture.store.insert(new IdempotencyRecord(op.scopeKey(), "acme", "alice", "payments.create",
                    op.fingerprint().value(), RecordStatus.PROCESSING, Optional.empty(), Optional.empty(),
                    "f".repeat(32), Optional.of(now.plusSeconds(30)), 1, now, now, now.plus(Duration.ofDays(1))));
            return null;
        });
    }

    private void release(boolean commit) throws Exception {
        holder.submit(() -> {
            if (commit) {
                Narayana.transactionManager().commit();
            } else {
                Narayana.transactionManager().rollback();
            }
            return null;
        }).get(30, TimeUnit.SECONDS);
    }

    private static IdempotencyException rejected(IdempotencyProtocol protocol, Operation op) {
        try {
            Admission admission = protocol.admission().admit(op);
            return fail("expected a rejection, got " + admission);
        } catch (IdempotencyException e) {
            return e;
        }
    }
}
