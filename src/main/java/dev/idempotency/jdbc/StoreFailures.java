package dev.idempotency.jdbc;

import dev.idempotency.spi.DuplicateRecordException;
import dev.idempotency.spi.StoreUnavailableException;

import java.sql.SQLException;
import java.util.function.Supplier;

/** What a failed statement on the record table means for the protocol, as the database's dialect classifies it. */
final class StoreFailures {
    private final Dialect dialect;
    private final String table;

    StoreFailures(Dialect dialect, String table) {
        this.dialect = dialect;
        this.table = table;
    }

    /** The SPI's exception for {@code e}: a duplicate key, contention, an unavailable store, or a table that does not fit. */
    RuntimeException translate(SQLException e) {
        return switch (dialect.classify(e)) {
            case DUPLICATE -> new DuplicateRecordException("a record with this scope key exists", e);
            case CONTENTION -> new StoreUnavailableException("IDEM-S006 contention on the record (SQLState "
                    + e.getSQLState() + ", code " + e.getErrorCode() + ")", e, true);
            case UNAVAILABLE -> new StoreUnavailableException("IDEM-S007 the record store is unavailable (SQLState "
                    + e.getSQLState() + ", code " + e.getErrorCode() + ")", e, false);
            case MISCONFIGURED -> new IllegalStateException("IDEM-S008 the record table '" + table
                    + "' does not match the library's schema (SQLState " + e.getSQLState() + "); create it with the scripts"
                    + " of " + dialect.scripts() + " or set idempotency.schema=migrate", e);
        };
    }

    /**
     * Runs a claim in the business transaction: when the query timeout of its statement, or the database's lock
     * timeout, ended its wait, another transaction holds the row (contention). Elsewhere a cancelled statement stays
     * what it was (unavailable).
     */
    <T> T waitingAtMost(Supplier<T> claim) {
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

    // Only where a claim in the business transaction asks for it: a timeout an operator set on the datasource (WildFly's
    // query-timeout, for one) stays on every other statement.
    static void boundWait(java.sql.PreparedStatement ps, int waitSeconds) throws java.sql.SQLException {
        if (waitSeconds > 0) {
            ps.setQueryTimeout(waitSeconds);
        }
    }

    static int positive(int waitSeconds) {
        if (waitSeconds < 1) {
            throw new IllegalArgumentException("a claim in the business transaction waits at least one second");
        }
        return waitSeconds;
    }
}
