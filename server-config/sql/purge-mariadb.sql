-- Purge of expired idempotency records for MariaDB/MySQL (see purge-postgresql.sql). MariaDB does not take
-- LIMIT in an IN subquery, and a range DELETE would take gap locks that block claims: delete by key.
CREATE TEMPORARY TABLE IF NOT EXISTS idempotency_purge (scope_key CHAR(64) CHARACTER SET ascii PRIMARY KEY);
DELETE FROM idempotency_purge;
INSERT INTO idempotency_purge
  SELECT scope_key FROM idempotency_record
   WHERE expires_at < UTC_TIMESTAMP(6) AND status <> 'PROCESSING' ORDER BY expires_at LIMIT 500;
DELETE r FROM idempotency_record r JOIN idempotency_purge p ON p.scope_key = r.scope_key
 WHERE r.expires_at < UTC_TIMESTAMP(6) AND r.status <> 'PROCESSING';
