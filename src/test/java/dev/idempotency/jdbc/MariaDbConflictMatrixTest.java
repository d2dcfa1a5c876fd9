package dev.idempotency.jdbc;

import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** MariaDB's conflicts: 1062, 1205, 1213 (the three-way duplicate-key deadlock), 1020 and KILL CONNECTION. */
class MariaDbConflictMatrixTest extends ConflictMatrixContract {
    @Override
    String database() {
        return "mariadb";
    }

    @Override
    void assertLockWaitTimeout(SQLException e) {
        assertThat(e.getErrorCode()).as("lock wait timeout exceeded").isEqualTo(1205);
    }

    @Override
    String lockWaitersSql() {
        return "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE ?";
    }

    @Test
    void twoInsertsWaitingOnARolledBackDuplicateDeadlock() throws Exception {
        Connection first = session();
        Connection second = session();
        Connection third = session();
        exec(first, "INSERT INTO idem_conflict_row (id, v) VALUES (3, 0)");
        // Each waiter holds a shared lock on the duplicate entry; when the first rolls back both want it
        // exclusively: a deadlock, one of them the victim.
        List<CompletableFuture<SQLException>> waiters = new ArrayList<>();
        for (Connection c : List.of(second, third)) {
            waiters.add(CompletableFuture.supplyAsync(() -> {
                try {
                    exec(c, "INSERT INTO idem_conflict_row (id, v) VALUES (3, 1)");
                    return null;
                } catch (SQLException e) {
                    return e;
                }
            }));
        }
        awaitLockWaiters("idem_conflict_row", 2);
        first.rollback();
        List<SQLException> errors = new ArrayList<>();
        for (CompletableFuture<SQLException> w : waiters) {
            SQLException e = w.get(30, TimeUnit.SECONDS);
            if (e != null) {
                errors.add(e);
            }
        }
        assertThat(errors).as("exactly one waiter is the victim").hasSize(1);
        assertThat(errors.get(0).getErrorCode()).isEqualTo(1213);
        record(errors.get(0), Dialect.Failure.CONTENTION);
    }

    @Test
    void anUpdateOfARowChangedSinceTheSnapshotUnderSnapshotIsolationIsRecordChanged() throws Exception {
        Connection reader = session();
        Connection writer = session();
        exec(reader, "SET SESSION innodb_snapshot_isolation = ON");
        exec(reader, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ");
        reader.commit();
        number(reader, "SELECT v FROM idem_conflict_row WHERE id = 1");
        exec(writer, "UPDATE idem_conflict_row SET v = v + 1 WHERE id = 1");
        writer.commit();
        SQLException e = failure(() -> exec(reader, "UPDATE idem_conflict_row SET v = v + 1 WHERE id = 1"));
        assertThat(e.getErrorCode()).as(e.toString()).isEqualTo(1020);
        record(e, Dialect.Failure.CONTENTION);
    }

    @Test
    void aKilledConnectionIsUnavailable() throws Exception {
        Connection victim = session();
        Connection admin = session();
        int id = number(victim, "SELECT CONNECTION_ID()");
        exec(admin, "KILL CONNECTION " + id);
        dev.idempotency.testing.Conditions.await("the killed connection gone", java.time.Duration.ofSeconds(20),
                () -> fixture.database.count("SELECT COUNT(*) FROM information_schema.processlist WHERE id = ?", id) == 0);
        SQLException e = failure(() -> exec(victim, "SELECT 1"));
        record(e, Dialect.Failure.UNAVAILABLE);
    }
}
