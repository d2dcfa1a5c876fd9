package dev.idempotency.jdbc;

import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.Locale;
import java.util.Set;

/**
 * What differs between the databases the JDBC store supports: the folder of its migration scripts in the jar, and how
 * an error is recognised — a unique violation (the claim lost), contention on the same row (deadlock,
 * lock timeout, serialization failure: a re-read may settle it), or an unavailable database (retry later).
 * Recognised by SQLState and vendor code, never by message text.
 */
public enum Dialect {
    H2("db/h2/", "SELECT CAST(CURRENT_TIMESTAMP AT TIME ZONE 'UTC' AS TIMESTAMP)",
            Set.of("23505"), Set.of(), Set.of("40001", "90131", "HYT00"), Set.of(50200, 90131),
            Set.of("HYT00", "57014"), Set.of(50200, 57014)),
    POSTGRESQL("db/postgresql/", "SELECT CAST(clock_timestamp() AT TIME ZONE 'UTC' AS TIMESTAMP)",
            Set.of("23505"), Set.of(), Set.of("40001", "40P01", "55P03"), Set.of(),
            Set.of("57014", "55P03"), Set.of()),
    // MariaDB and MySQL answer a duplicate key with SQLState 23000 (shared with other integrity errors):
    // the vendor code 1062 tells it apart. 1213 deadlock, 1205 lock wait timeout, 1020 record changed
    // (innodb_snapshot_isolation=ON).
    // A wait ended by the query timeout: 1969 max_statement_time (how MariaDB Connector/J times out), 3024 MySQL's.
    MARIADB("db/mariadb/", "SELECT UTC_TIMESTAMP(6)", Set.of(), Set.of(1062), Set.of("40001"), Set.of(1213, 1205, 1020),
            Set.of("70100"), Set.of(1205, 1969, 3024));

    /** How an {@link SQLException} counts for the protocol. */
    public enum Failure {
        /** The unique primary key rejected an insert: another claim exists. */
        DUPLICATE,
        /** Another transaction holds or changed the same row; the record's current state decides. */
        CONTENTION,
        /** The database cannot answer now (connection lost, shut down, pool exhausted); retry later. */
        UNAVAILABLE,
        /** The statement itself is wrong for this database (no table, a value too long): a setup error. */
        MISCONFIGURED
    }

    private final String scripts;
    private final String utcNowQuery;
    private final Set<String> duplicateStates;
    private final Set<Integer> duplicateCodes;
    private final Set<String> contentionStates;
    private final Set<Integer> contentionCodes;
    private final Set<String> waitEndedStates;
    private final Set<Integer> waitEndedCodes;

    Dialect(String scripts, String utcNowQuery, Set<String> duplicateStates, Set<Integer> duplicateCodes,
            Set<String> contentionStates, Set<Integer> contentionCodes, Set<String> waitEndedStates,
            Set<Integer> waitEndedCodes) {
        this.scripts = scripts;
        this.utcNowQuery = utcNowQuery;
        this.duplicateStates = duplicateStates;
        this.duplicateCodes = duplicateCodes;
        this.contentionStates = contentionStates;
        this.contentionCodes = contentionCodes;
        this.waitEndedStates = waitEndedStates;
        this.waitEndedCodes = waitEndedCodes;
    }

    /** The class-path folder of the migration scripts ({@code db/postgresql/}), written for the default table name. */
    public String scripts() {
        return scripts;
    }

    /** A query answering the database's current UTC time as one TIMESTAMP (statement time, not transaction time). */
    public String utcNowQuery() {
        return utcNowQuery;
    }

    /**
     * The dialect of a database by its JDBC product name.
     *
     * @throws IllegalArgumentException for a database the store does not support
     */
    public static Dialect of(String productName) {
        String name = productName.toLowerCase(Locale.ROOT);
        if (name.contains("h2")) {
            return H2;
        }
        if (name.contains("postgres")) {
            return POSTGRESQL;
        }
        if (name.contains("mariadb") || name.contains("mysql")) {
            return MARIADB;
        }
        throw new IllegalArgumentException("IDEM-S002 unsupported database '" + productName
                + "': the JDBC store supports H2, PostgreSQL and MariaDB/MySQL; provide your own RecordStore bean");
    }

    /** Classifies an error by the SQLState and vendor code of the exception and its chain. */
    public Failure classify(SQLException error) {
        for (SQLException e = error; e != null; e = e.getNextException()) {
            Failure found = classifyOne(e);
            if (found != null) {
                return found;
            }
            if (e.getCause() instanceof SQLException cause && cause != e.getNextException()) {
                found = classifyOne(cause);
                if (found != null) {
                    return found;
                }
            }
        }
        return Failure.UNAVAILABLE;
    }

    /**
     * Whether a statement given a query timeout (or the database's lock timeout) was ended while it waited for a
     * lock: for a claim in the business transaction, a concurrent claim that has not ended yet.
     */
    public boolean waitEnded(SQLException error) {
        for (Throwable e = error; e != null; e = e.getCause() == e ? null : e.getCause()) {
            if (e instanceof SQLException sql && (waitEndedStates.contains(String.valueOf(sql.getSQLState()))
                    || waitEndedCodes.contains(sql.getErrorCode()) || e instanceof java.sql.SQLTimeoutException)) {
                return true;
            }
        }
        return false;
    }

    private Failure classifyOne(SQLException e) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        int code = e.getErrorCode();
        if (duplicateStates.contains(state) || duplicateCodes.contains(code)) {
            return Failure.DUPLICATE;
        }
        if (contentionStates.contains(state) || contentionCodes.contains(code)) {
            return Failure.CONTENTION;
        }
        // Class 42: syntax error or access rule (no such table); class 22: data exception (value too long).
        if (state.startsWith("42") || state.startsWith("22")) {
            return Failure.MISCONFIGURED;
        }
        if (state.startsWith("08") || state.startsWith("57") || state.startsWith("53")
                || e instanceof SQLTransientException || e instanceof SQLRecoverableException) {
            return Failure.UNAVAILABLE;
        }
        return null;
    }
}
