-- Purge of expired idempotency records an operator may schedule instead of the built-in purge
-- (idempotency.purge.interval=PT0S). Never PROCESSING records, never unexpired ones; in bounded
-- batches by primary key. Business tables keep their own unique constraints.
DELETE FROM idempotency_record
 WHERE scope_key IN (SELECT scope_key FROM idempotency_record
                      WHERE expires_at < (now() AT TIME ZONE 'UTC') AND status <> 'PROCESSING'
                      ORDER BY expires_at LIMIT 500);
