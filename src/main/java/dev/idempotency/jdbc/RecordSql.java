package dev.idempotency.jdbc;

/**
 * The record store's statements for one table, in the SQL that H2, PostgreSQL and MariaDB share. Every
 * state change is conditional: a takeover on the owner token and status it read, a finish on the owner
 * token and PROCESSING, so an executor that was taken over changes nothing.
 */
final class RecordSql {
    private static final String COLUMNS = "scope_key, tenant, principal, endpoint, request_hash, status, resource_id,"
            + " response_status, response_headers, response_body, body_encoding, owner_token, lease_until, attempts,"
            + " created_at, updated_at, expires_at";

    final String insert;
    final String find;
    final String takeOver;
    final String finish;
    final String countInFlight;
    final String countRetained;
    final String expiredKeys;
    final String deleteExpired;

    RecordSql(String table) {
        insert = "INSERT INTO " + table + " (" + COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
        find = "SELECT " + COLUMNS + " FROM " + table + " WHERE scope_key = ?";
        takeOver = "UPDATE " + table + " SET request_hash = ?, status = 'PROCESSING', resource_id = NULL,"
                + " response_status = NULL, response_headers = NULL, response_body = NULL, body_encoding = NULL,"
                + " owner_token = ?, lease_until = ?, attempts = ?, created_at = ?, updated_at = ?, expires_at = ?"
                + " WHERE scope_key = ? AND owner_token = ? AND status = ?";
        finish = "UPDATE " + table + " SET status = ?, resource_id = ?, response_status = ?, response_headers = ?,"
                + " response_body = ?, body_encoding = ?, lease_until = NULL, updated_at = ?, expires_at = ?"
                + " WHERE scope_key = ? AND owner_token = ? AND status = 'PROCESSING'";
        countInFlight = "SELECT COUNT(*) FROM (SELECT 1 AS one FROM " + table + " WHERE tenant = ? AND principal = ?"
                + " AND status = 'PROCESSING' AND lease_until > ? LIMIT ?) counted";
        countRetained = "SELECT COUNT(*) FROM (SELECT 1 AS one FROM " + table + " WHERE tenant = ? AND principal = ?"
                + " AND endpoint = ? AND expires_at > ? LIMIT ?) counted";
        expiredKeys = "SELECT scope_key FROM " + table + " WHERE expires_at < ? AND status <> 'PROCESSING'"
                + " ORDER BY expires_at LIMIT ?";
        deleteExpired = "DELETE FROM " + table + " WHERE scope_key = ? AND expires_at < ? AND status <> 'PROCESSING'";
    }
}
