-- Purge of expired idempotency records for H2 (see purge-postgresql.sql).
DELETE FROM idempotency_record
 WHERE scope_key IN (SELECT scope_key FROM idempotency_record
                      WHERE expires_at < CAST(CURRENT_TIMESTAMP AT TIME ZONE 'UTC' AS TIMESTAMP) AND status <> 'PROCESSING'
                      ORDER BY expires_at LIMIT 500);
