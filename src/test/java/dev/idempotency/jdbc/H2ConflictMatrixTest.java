package dev.idempotency.jdbc;

import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.SQLException;

import static org.assertj.core.api.Assertions.assertThat;

/** H2's conflicts: 23505, 50200 (lock timeout, also after 90131 concurrent update) and 40001. */
class H2ConflictMatrixTest extends ConflictMatrixContract {
    @Override
    String database() {
        return "h2";
    }

    @Override
    void assertLockWaitTimeout(SQLException e) {
        assertThat(e.getErrorCode()).as(e.toString()).isEqualTo(50200);
    }

    // H2 retries a write that meets an uncommitted row until its lock timeout: such a session is still executing it.
    @Override
    String lockWaitersSql() {
        return "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE (BLOCKER_ID IS NOT NULL OR EXECUTING_STATEMENT"
                + " IS NOT NULL) AND LOWER(EXECUTING_STATEMENT) LIKE LOWER(?)";
    }

    @Test
    void anUpdateOfARowChangedSinceARepeatableReadSnapshotIsRefusedAsADeadlock() throws Exception {
        Connection reader = session();
        Connection writer = session();
        reader.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        number(reader, "SELECT v FROM idem_conflict_row WHERE id = 1");
        exec(writer, "UPDATE idem_conflict_row SET v = v + 1 WHERE id = 1");
        writer.commit();
        SQLException e = failure(() -> exec(reader, "UPDATE idem_conflict_row SET v = v + 1 WHERE id = 1"));
        // H2 2.x reports this write-write conflict as 40001 "Deadlock detected" and rolls the transaction back.
        assertThat(e.getErrorCode()).as(e.toString()).isEqualTo(40001);
        record(e, Dialect.Failure.CONTENTION);
    }

    @Test
    void anInsertOfTheRowKeyOfAnUncommittedRowIsAConcurrentUpdateRetriedUntilTheLockTimeout() throws Exception {
        Connection first = session();
        Connection second = shortWaitSession();
        exec(first, "INSERT INTO idem_conflict_row (id, v) VALUES (3, 0)");
        SQLException e = failure(() -> exec(second, "INSERT INTO idem_conflict_row (id, v) VALUES (3, 1)"));
        // H2 raises 90131 inside and retries the statement until LOCK_TIMEOUT; the client sees 50200 caused by it.
        assertThat(e.getErrorCode()).isEqualTo(50200);
        boolean concurrentUpdate = false;
        for (Throwable t = e; t != null; t = t.getCause()) {
            concurrentUpdate |= t instanceof SQLException s && s.getErrorCode() == 90131;
        }
        assertThat(concurrentUpdate).as("caused by 90131: " + e).isTrue();
        record(e, Dialect.Failure.CONTENTION);
    }
}
