package dev.idempotency.jdbc;

import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** PostgreSQL's conflicts: 23505, 55P03, 40001, 40P01 and 57P01, each produced by real sessions. */
class PostgreSqlConflictMatrixTest extends ConflictMatrixContract {
    @Override
    String database() {
        return "postgresql";
    }

    @Override
    void assertLockWaitTimeout(SQLException e) {
        assertThat(e.getSQLState()).as("lock_not_available").isEqualTo("55P03");
    }

    @Override
    String lockWaitersSql() {
        return "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
                + " AND query ILIKE ?";
    }

    @Test
    void aRepeatableReadUpdateOfARowChangedSinceItsSnapshotIsASerializationFailure() throws Exception {
        Connection reader = session();
        Connection writer = session();
        exec(reader, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
        number(reader, "SELECT v FROM idem_conflict_row WHERE id = 1");
        exec(writer, "UPDATE idem_conflict_row SET v = v + 1 WHERE id = 1");
        writer.commit();
        SQLException e = failure(() -> exec(reader, "UPDATE idem_conflict_row SET v = v + 1 WHERE id = 1"));
        assertThat(e.getSQLState()).isEqualTo("40001");
        record(e, Dialect.Failure.CONTENTION);
    }

    @Test
    void twoSessionsLockingTwoRowsInOppositeOrderDeadlock() throws Exception {
        Connection first = session();
        Connection second = session();
        exec(first, "UPDATE idem_conflict_row SET v = v + 1 WHERE id = 1");
        exec(second, "UPDATE idem_conflict_row SET v = v + 1 WHERE id = 2");
        CompletableFuture<SQLException> firstWaits = CompletableFuture.supplyAsync(() -> {
            try {
                exec(first, "UPDATE idem_conflict_row SET v = v + 1 WHERE id = 2");
                return null;
            } catch (SQLException e) {
                return e;
            }
        });
        awaitLockWaiters("idem_conflict_row", 1);
        SQLException inSecond = null;
        try {
            exec(second, "UPDATE idem_conflict_row SET v = v + 1 WHERE id = 1");
        } catch (SQLException e) {
            inSecond = e;
        }
        SQLException inFirst = firstWaits.get(30, TimeUnit.SECONDS);
        SQLException victim = inSecond != null ? inSecond : inFirst;
        assertThat(victim != null).as("one of the two is chosen as the deadlock victim").isTrue();
        assertThat(victim.getSQLState()).isEqualTo("40P01");
        record(victim, Dialect.Failure.CONTENTION);
    }

    @Test
    void aSessionTerminatedByTheAdministratorIsUnavailable() throws Exception {
        Connection victim = session();
        Connection admin = session();
        int pid = number(victim, "SELECT pg_backend_pid()");
        exec(admin, "SELECT pg_terminate_backend(?)", pid);
        admin.commit();
        dev.idempotency.testing.Conditions.await("the terminated session gone", java.time.Duration.ofSeconds(20),
                () -> fixture.database.count("SELECT count(*) FROM pg_stat_activity WHERE pid = ?", pid) == 0);
        SQLException e = failure(() -> exec(victim, "SELECT 1"));
        assertThat(e.getSQLState()).as(e.toString()).isIn("57P01", "08006");
        record(e, Dialect.Failure.UNAVAILABLE);
    }
}
