package dev.idempotency.jdbc;

/**
 * The record store's statements for one table and its two counter tables. Every state change is conditional:
 * a takeover on the owner token and status it read, a finish on the owner token and PROCESSING, so an
 * executor that was taken over changes nothing. On PostgreSQL a claim, a takeover and a finish are each
 * one statement (data-modifying CTEs carry the counter changes along, and {@code ON CONFLICT DO NOTHING}
 * answers a duplicate without an error); H2 and MariaDB run the counter changes as statements of their own
 * in the same transaction (docs/adr/0005).
 *
 * <p>A caller's in-flight count is its charges ({@code <table>_quota}, endpoint '') minus its give-backs
 * ({@code <table>_released}, spread over {@link #STRIPES} rows by scope key). Both only grow. A finish adds
 * its give-back in the business transaction, so the row it locks is one of the stripes, never the row every
 * claim of the caller charges: one caller's claims do not wait for its finishes to commit. A claim reads the
 * give-backs without locking them; one not yet committed, or committed after the claim's snapshot, makes
 * the count higher than it is, never lower — the limit is never passed.
 */
final class RecordSql {
    private static final String COLUMNS = "scope_key, tenant, principal, endpoint, request_hash, status, resource_id,"
            + " response_status, response_headers, response_body, body_encoding, owner_token, lease_until, attempts,"
            + " created_at, updated_at, expires_at";
    private static final String VALUES = "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?";
    /** The quota row counting a caller's PROCESSING records over all endpoints (endpoint names are never empty). */
    static final String ALL_ENDPOINTS = "";
    /** Rows per caller among which give-backs spread: two finishes of one caller share one with odds 1/8. */
    static final int STRIPES = 8;

    final String insert;
    /** The claim in the business transaction, which charges nothing: PostgreSQL answers a duplicate without an error. */
    final String insertUncharged;
    final String find;
    final String takeOver;
    final String finish;
    final String renewLease;
    final String keepTaskInput;
    final String findTaskInput;
    final String findProcessing;
    final String listForAdministrator;
    final String expiredKeys;
    final String deleteExpired;

    // Quota rows: charge (one up, unless at the limit), creation, give-back, and reconciliation.
    final String charge;
    final String createQuota;
    /** MariaDB only: the counter row created at zero unless it exists, and locked either way. */
    final String ensureQuota;
    final String giveBackInFlight;
    final String giveBackInFlightCreate;
    final String sumReleased;
    final String readQuota;
    final String lockQuota;
    final String markChecked;
    final String releaseExpiredClaims;
    final String deleteExpiredOfCaller;
    final String countInFlightAndReleased;
    final String countKeys;
    final String setQuota;
    final String giveBackKeys;

    // During a rotation of the secret: the claim's lock on its caller's counter row, and the look for its aliases.
    final String lockCounter;
    final String createCounter;
    final String aliasExists;

    /** PostgreSQL only: claim, takeover and finish with their quota changes in one statement each. */
    final String claimInOneStatement;
    final String takeOverInOneStatement;
    final String finishInOneStatement;
    /** PostgreSQL only: the finish of a claim in the business transaction, with its key charge and no give-back. */
    final String finishChargedInOneStatement;

    RecordSql(String table, Dialect dialect) {
        String quota = table + "_quota";
        String released = table + "_released";
        insert = "INSERT INTO " + table + " (" + COLUMNS + ") VALUES (" + VALUES + ")";
        // An error would abort PostgreSQL's business transaction (and log an ERROR line); a lost race must not.
        insertUncharged = dialect == Dialect.POSTGRESQL ? insert + " ON CONFLICT (scope_key) DO NOTHING" : insert;
        find = "SELECT " + COLUMNS + " FROM " + table + " WHERE scope_key = ?";
        String takeOverSet = "UPDATE " + table + " SET request_hash = ?, status = 'PROCESSING', resource_id = NULL,"
                + " response_status = NULL, response_headers = NULL, response_body = NULL, body_encoding = NULL,"
                + " owner_token = ?, lease_until = ?, attempts = ?, created_at = ?, updated_at = ?, expires_at = ?"
                + " WHERE scope_key = ? AND owner_token = ? AND status = ?";
        takeOver = takeOverSet;
        // expires_at only grows: the claim set it past lease + retention, so an execution that ends within
        // its lease leaves the indexed column as it was (a HOT update on PostgreSQL).
        String finishSet = "UPDATE " + table + " SET status = ?, resource_id = ?, response_status = ?, response_headers = ?,"
                + " response_body = ?, body_encoding = ?, lease_until = NULL, updated_at = ?,"
                + " task_input = NULL, task_input_encoding = NULL,"
                + " expires_at = CASE WHEN expires_at < ? THEN ? ELSE expires_at END"
                + " WHERE scope_key = ? AND owner_token = ? AND status = 'PROCESSING'";
        finish = finishSet;
        // An accepted operation's input, kept by its claim's executor; the finish above clears it (docs/adr/0020).
        keepTaskInput = "UPDATE " + table + " SET task_input = ?, task_input_encoding = ? WHERE scope_key = ?"
                + " AND owner_token = ? AND status = 'PROCESSING'";
        findTaskInput = "SELECT task_input, task_input_encoding FROM " + table + " WHERE scope_key = ?"
                + " AND owner_token = ? AND status = 'PROCESSING' AND task_input IS NOT NULL";
        // Moves the indexed expiry too (not a HOT update), so that the settler meets the record when this lease
        // runs out; only executions that outlive half their lease are renewed.
        renewLease = "UPDATE " + table + " SET lease_until = ?, expires_at = CASE WHEN expires_at < ? THEN ?"
                + " ELSE expires_at END WHERE scope_key = ? AND owner_token = ?"
                + " AND status = 'PROCESSING' AND lease_until > ?";
        findProcessing = "SELECT " + COLUMNS + " FROM " + table + " WHERE status = 'PROCESSING' AND expires_at < ?"
                + " AND (expires_at > ? OR (expires_at = ? AND scope_key > ?)) ORDER BY expires_at, scope_key LIMIT ?";
        // Four statuses always (a filter of fewer repeats one), so that one statement serves every filter.
        listForAdministrator = "SELECT " + COLUMNS + " FROM " + table + " WHERE endpoint = ? AND status IN (?, ?, ?, ?)"
                + " AND created_at <= ? ORDER BY CASE WHEN status = 'PROCESSING' AND lease_until < ? THEN 0 ELSE 1 END,"
                + " created_at, scope_key LIMIT ?";
        expiredKeys = "SELECT scope_key, tenant, principal, endpoint FROM " + table
                + " WHERE expires_at < ? AND status <> 'PROCESSING' ORDER BY expires_at LIMIT ?";
        deleteExpired = "DELETE FROM " + table + " WHERE scope_key = ? AND expires_at < ? AND status <> 'PROCESSING'";

        // Parameters: tenant, principal, row, what was given back (in-flight; 0 for keys), limit.
        charge = "UPDATE " + quota + " SET used = used + 1 WHERE tenant = ? AND principal = ? AND endpoint = ?"
                + " AND used - ? < ?";
        createQuota = "INSERT INTO " + quota + " (tenant, principal, endpoint, used) VALUES (?, ?, ?, 1)";
        // On MariaDB an UPDATE that finds no row holds a gap lock until commit, and a burst of a new caller's
        // first claims, each holding one, all wait for each other's INSERT into that gap: deadlock after
        // deadlock, a livelock while retries keep arriving. An upsert takes no gap lock on a missing row (its
        // insert intention lets the others' pass) and an exclusive lock on an existing one: the claims queue.
        ensureQuota = "INSERT INTO " + quota + " (tenant, principal, endpoint, used) VALUES (?, ?, ?, 0)"
                + " ON DUPLICATE KEY UPDATE used = used";
        sumReleased = "SELECT COALESCE(SUM(released), 0) FROM " + released + " WHERE tenant = ? AND principal = ?";
        // The give-back of a finished record's caller (H2, MariaDB; PostgreSQL's is in its finish statement).
        // Parameters: stripe, scope key (H2's update: stripe, scope key, scope key).
        String callerOf = " FROM " + table + " WHERE scope_key = ?";
        giveBackInFlightCreate = "INSERT INTO " + released + " (tenant, principal, stripe, released)"
                + " SELECT tenant, principal, ?, 1" + callerOf;
        giveBackInFlight = dialect == Dialect.MARIADB
                ? giveBackInFlightCreate + " ON DUPLICATE KEY UPDATE released = released + 1"
                : "UPDATE " + released + " SET released = released + 1 WHERE stripe = ?"
                        + " AND tenant = (SELECT tenant" + callerOf + ") AND principal = (SELECT principal" + callerOf + ")";
        readQuota = "SELECT used, checked_at FROM " + quota + " WHERE tenant = ? AND principal = ? AND endpoint = ?";
        lockQuota = readQuota + " FOR UPDATE";
        markChecked = "UPDATE " + quota + " SET checked_at = ? WHERE tenant = ? AND principal = ? AND endpoint = ?";
        releaseExpiredClaims = "UPDATE " + table + " SET status = 'FAILED_RETRYABLE', lease_until = NULL, updated_at = ?"
                + " WHERE tenant = ? AND principal = ? AND status = 'PROCESSING' AND lease_until < ?";
        deleteExpiredOfCaller = "DELETE FROM " + table + " WHERE tenant = ? AND principal = ? AND endpoint = ?"
                + " AND expires_at < ? AND status <> 'PROCESSING'";
        // One statement, one snapshot: a finish changes its record and its give-back in one transaction.
        countInFlightAndReleased = "SELECT (SELECT COUNT(*) FROM " + table
                + " WHERE tenant = ? AND principal = ? AND status = 'PROCESSING'), (" + sumReleased + ")";
        countKeys = "SELECT COUNT(*) FROM " + table + " WHERE tenant = ? AND principal = ? AND endpoint = ?";
        setQuota = "UPDATE " + quota + " SET used = ?, checked_at = ? WHERE tenant = ? AND principal = ? AND endpoint = ?";
        giveBackKeys = "UPDATE " + quota + " SET used = CASE WHEN used > ? THEN used - ? ELSE 0 END"
                + " WHERE tenant = ? AND principal = ? AND endpoint = ?";

        lockCounter = "UPDATE " + quota + " SET used = used WHERE tenant = ? AND principal = ? AND endpoint = ?";
        createCounter = "INSERT INTO " + quota + " (tenant, principal, endpoint, used) VALUES (?, ?, ?, 0)";
        // MariaDB's REPEATABLE READ would answer a plain SELECT from a snapshot taken before the lock was granted
        // (the in-flight charge reads first); a locking read reads what is committed. PostgreSQL and H2 read
        // committed data with every statement, and a plain read there does not wait for others' uncommitted rows.
        aliasExists = "SELECT 1 FROM " + table + " WHERE scope_key = ?"
                + (dialect == Dialect.MARIADB ? " LOCK IN SHARE MODE" : "");

        String upsert = " ON CONFLICT (tenant, principal, endpoint) DO UPDATE SET used = " + quota + ".used + 1 WHERE ";
        String chargeInFlight = upsert + quota + ".used - (SELECT COALESCE(SUM(r.released), 0) FROM " + released
                + " r WHERE r.tenant = " + quota + ".tenant AND r.principal = " + quota + ".principal) < ? RETURNING 1";
        String chargeKey = upsert + quota + ".used < ? RETURNING 1";
        claimInOneStatement = withCharges("claimed", "INSERT INTO " + table + " (" + COLUMNS + ") VALUES (" + VALUES
                + ") ON CONFLICT (scope_key) DO NOTHING", quota, chargeInFlight, chargeKey);
        takeOverInOneStatement = withCharges("taken", takeOverSet, quota, chargeInFlight, chargeKey);
        finishChargedInOneStatement = withCharges("finished", finishSet, quota, chargeInFlight, chargeKey);
        // Parameters: the finish's, then the stripe.
        finishInOneStatement = "WITH finished AS (" + finishSet + " RETURNING tenant, principal),"
                + " freed AS (INSERT INTO " + released + " (tenant, principal, stripe, released)"
                + " SELECT tenant, principal, ?, 1 FROM finished ON CONFLICT (tenant, principal, stripe)"
                + " DO UPDATE SET released = " + released + ".released + 1 RETURNING 1)"
                + " SELECT COUNT(*) FROM finished";
    }

    /** The give-back row of a record: spread by scope key, so that a caller's finishes rarely share one. */
    static int stripe(String scopeKey) {
        return Math.floorMod(scopeKey.hashCode(), STRIPES);
    }

    /**
     * {@code change} (an INSERT or UPDATE of one record) with the caller's two counter charges carried along in
     * data-modifying CTEs; answers (records changed, in-flight charged, key charged). Parameters: the change's,
     * then for each charge whether it applies and its limit.
     */
    private static String withCharges(String name, String change, String quota, String chargeInFlight,
                                      String chargeKey) {
        return "WITH " + name + " AS (" + change + " RETURNING tenant, principal, endpoint),"
                + " in_flight AS (INSERT INTO " + quota + " (tenant, principal, endpoint, used)"
                + " SELECT tenant, principal, '" + ALL_ENDPOINTS + "', 1 FROM " + name + " WHERE ?" + chargeInFlight + "),"
                + " held AS (INSERT INTO " + quota + " (tenant, principal, endpoint, used)"
                + " SELECT tenant, principal, endpoint, 1 FROM " + name + " WHERE ?" + chargeKey + ")"
                + " SELECT (SELECT COUNT(*) FROM " + name + "), (SELECT COUNT(*) FROM in_flight), (SELECT COUNT(*) FROM held)";
    }
}
