package dev.idempotency.jdbc;

/**
 * The record store's statements for one table and its quota table. Every state change is conditional: a
 * takeover on the owner token and status it read, a finish on the owner token and PROCESSING, so an
 * executor that was taken over changes nothing. On PostgreSQL a claim, a takeover and a finish are each
 * one statement (data-modifying CTEs carry the quota change along, and {@code ON CONFLICT DO NOTHING}
 * answers a duplicate without an error); H2 and MariaDB run the quota change as a second statement in the
 * same transaction (docs/adr/0004).
 */
final class RecordSql {
    private static final String COLUMNS = "scope_key, tenant, principal, endpoint, request_hash, status, resource_id,"
            + " response_status, response_headers, response_body, body_encoding, owner_token, lease_until, attempts,"
            + " created_at, updated_at, expires_at";
    private static final String VALUES = "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?";
    /** The quota row counting a caller's PROCESSING records over all endpoints (endpoint names are never empty). */
    static final String ALL_ENDPOINTS = "";

    final String insert;
    final String find;
    final String takeOver;
    final String finish;
    final String expiredKeys;
    final String deleteExpired;

    // Quota rows: charge (one up, unless at the limit), creation, give-back, and reconciliation.
    final String charge;
    final String createQuota;
    final String giveBackInFlight;
    final String readQuota;
    final String lockQuota;
    final String markChecked;
    final String releaseExpiredClaims;
    final String deleteExpiredOfCaller;
    final String countInFlight;
    final String countKeys;
    final String setQuota;
    final String giveBackKeys;

    /** PostgreSQL only: claim, takeover and finish with their quota changes in one statement each. */
    final String claimInOneStatement;
    final String takeOverInOneStatement;
    final String finishInOneStatement;

    RecordSql(String table) {
        String quota = table + "_quota";
        insert = "INSERT INTO " + table + " (" + COLUMNS + ") VALUES (" + VALUES + ")";
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
                + " expires_at = CASE WHEN expires_at < ? THEN ? ELSE expires_at END"
                + " WHERE scope_key = ? AND owner_token = ? AND status = 'PROCESSING'";
        finish = finishSet;
        expiredKeys = "SELECT scope_key, tenant, principal, endpoint FROM " + table
                + " WHERE expires_at < ? AND status <> 'PROCESSING' ORDER BY expires_at LIMIT ?";
        deleteExpired = "DELETE FROM " + table + " WHERE scope_key = ? AND expires_at < ? AND status <> 'PROCESSING'";

        charge = "UPDATE " + quota + " SET used = used + 1 WHERE tenant = ? AND principal = ? AND endpoint = ? AND used < ?";
        createQuota = "INSERT INTO " + quota + " (tenant, principal, endpoint, used) VALUES (?, ?, ?, 1)";
        giveBackInFlight = "UPDATE " + quota + " SET used = used - 1 WHERE used > 0 AND endpoint = '" + ALL_ENDPOINTS
                + "' AND tenant = (SELECT tenant FROM " + table + " WHERE scope_key = ?)"
                + " AND principal = (SELECT principal FROM " + table + " WHERE scope_key = ?)";
        readQuota = "SELECT used, checked_at FROM " + quota + " WHERE tenant = ? AND principal = ? AND endpoint = ?";
        lockQuota = readQuota + " FOR UPDATE";
        markChecked = "UPDATE " + quota + " SET checked_at = ? WHERE tenant = ? AND principal = ? AND endpoint = ?";
        releaseExpiredClaims = "UPDATE " + table + " SET status = 'FAILED_RETRYABLE', lease_until = NULL, updated_at = ?"
                + " WHERE tenant = ? AND principal = ? AND status = 'PROCESSING' AND lease_until < ?";
        deleteExpiredOfCaller = "DELETE FROM " + table + " WHERE tenant = ? AND principal = ? AND endpoint = ?"
                + " AND expires_at < ? AND status <> 'PROCESSING'";
        countInFlight = "SELECT COUNT(*) FROM " + table + " WHERE tenant = ? AND principal = ? AND status = 'PROCESSING'";
        countKeys = "SELECT COUNT(*) FROM " + table + " WHERE tenant = ? AND principal = ? AND endpoint = ?";
        setQuota = "UPDATE " + quota + " SET used = ?, checked_at = ? WHERE tenant = ? AND principal = ? AND endpoint = ?";
        giveBackKeys = "UPDATE " + quota + " SET used = CASE WHEN used > ? THEN used - ? ELSE 0 END"
                + " WHERE tenant = ? AND principal = ? AND endpoint = ?";

        String upsertCharge = " ON CONFLICT (tenant, principal, endpoint) DO UPDATE SET used = " + quota + ".used + 1"
                + " WHERE " + quota + ".used < ? RETURNING 1";
        claimInOneStatement = withCharges("claimed", "INSERT INTO " + table + " (" + COLUMNS + ") VALUES (" + VALUES
                + ") ON CONFLICT (scope_key) DO NOTHING", quota, upsertCharge);
        takeOverInOneStatement = withCharges("taken", takeOverSet, quota, upsertCharge);
        finishInOneStatement = "WITH finished AS (" + finishSet + " RETURNING tenant, principal),"
                + " freed AS (UPDATE " + quota + " q SET used = q.used - 1 FROM finished f WHERE q.tenant = f.tenant"
                + " AND q.principal = f.principal AND q.endpoint = '" + ALL_ENDPOINTS + "' AND q.used > 0 RETURNING 1)"
                + " SELECT COUNT(*) FROM finished";
    }

    /**
     * {@code change} (an INSERT or UPDATE of one record) with the caller's two counter charges carried along in
     * data-modifying CTEs; answers (records changed, in-flight charged, key charged). Parameters: the change's,
     * then for each charge whether it applies and its limit.
     */
    private static String withCharges(String name, String change, String quota, String upsertCharge) {
        return "WITH " + name + " AS (" + change + " RETURNING tenant, principal, endpoint),"
                + " in_flight AS (INSERT INTO " + quota + " (tenant, principal, endpoint, used)"
                + " SELECT tenant, principal, '" + ALL_ENDPOINTS + "', 1 FROM " + name + " WHERE ?" + upsertCharge + "),"
                + " held AS (INSERT INTO " + quota + " (tenant, principal, endpoint, used)"
                + " SELECT tenant, principal, endpoint, 1 FROM " + name + " WHERE ?" + upsertCharge + ")"
                + " SELECT (SELECT COUNT(*) FROM " + name + "), (SELECT COUNT(*) FROM in_flight), (SELECT COUNT(*) FROM held)";
    }
}
