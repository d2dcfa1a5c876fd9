-- bench/prefill.sql: the table state every write row of bench/run.sh starts from. ALL prefill SQL of the
-- benchmark is here, and it is the only file of the benchmark that knows the library's schema
-- (src/main/resources/db/postgresql/, schema version 1): the record table idempotency_record and, when it exists, the
-- quota table idempotency_record_quota (one row per caller and endpoint counting its stored records, one
-- per caller with endpoint '' counting its claims) and the give-backs idempotency_record_released (a caller's
-- claims less its give-backs are its PROCESSING records; filled here with none given back, so the claims
-- row holds the PROCESSING count). When that schema changes, change this file:
-- empty every library table, then fill them so that each caller's counters agree with its records.
--
-- Run with psql as a superuser on the benchmark's database, before each write row:
--   psql -v records=N -v heavy_keys=M -v heavy_user=NAME -v ref_records=R -f bench/prefill.sql
--   records     finished records of other callers ("filler-0" .. "filler-9999", endpoint bench.create)
--   heavy_keys  finished records held by the one caller heavy_user on endpoint bench.heavy
--   ref_records the same kind of records in the reference's table bench_ref_record (BASE_RECORDS, as
--               records is for every row that measures the reference)
-- The run then does VACUUM ANALYZE and CHECKPOINT. Records expire in 24 h (the shipped retention), so
-- nothing is purged during a run; their tenant is '' (the shipped idempotency.tenant=constant:).
\set ON_ERROR_STOP on

SELECT to_regclass('idempotency_record_quota') IS NOT NULL AS has_quota \gset
SELECT to_regclass('idempotency_record_released') IS NOT NULL AS has_released \gset
\if :has_released
TRUNCATE idempotency_record_released;
\endif
\if :has_quota
TRUNCATE bench_item, bench_ref_record, idempotency_record, idempotency_record_quota;
\else
TRUNCATE bench_item, bench_ref_record, idempotency_record;
\endif

-- Other callers' finished operations: the table's size, not any measured caller's quota.
INSERT INTO idempotency_record (scope_key, tenant, principal, endpoint, request_hash, status, resource_id,
    response_status, response_headers, response_body, body_encoding, owner_token, lease_until, attempts,
    created_at, updated_at, expires_at)
SELECT encode(sha256(convert_to('filler-' || i, 'UTF8')), 'hex'), '', 'filler-' || (i % 10000), 'bench.create',
       'v1:' || encode(sha256(convert_to('request-' || i, 'UTF8')), 'hex'), 'SUCCEEDED', NULL,
       201, '{"Content-Type":["application/json"],"Location":["http://127.0.0.1:8080/bench/api/idempotent/' || md5(i::text) || '"]}',
       convert_to('{"amount":12.50,"currency":"EUR","id":"' || md5(i::text) || '","name":"bench item","owner":"filler"}', 'UTF8'),
       'plain', md5('owner-' || i), NULL, 1,
       now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC', (now() AT TIME ZONE 'UTC') + interval '24 hours'
FROM generate_series(1, :records) AS i;

-- The keys one caller already holds on bench.heavy (its per-endpoint limit is raised by bench/wildfly.cli).
INSERT INTO idempotency_record (scope_key, tenant, principal, endpoint, request_hash, status, resource_id,
    response_status, response_headers, response_body, body_encoding, owner_token, lease_until, attempts,
    created_at, updated_at, expires_at)
SELECT encode(sha256(convert_to('heavy-' || i, 'UTF8')), 'hex'), '', :'heavy_user', 'bench.heavy',
       'v1:' || encode(sha256(convert_to('request-' || i, 'UTF8')), 'hex'), 'SUCCEEDED', NULL,
       201, '{"Content-Type":["application/json"],"Location":["http://127.0.0.1:8080/bench/api/heavy/' || md5(i::text) || '"]}',
       convert_to('{"amount":12.50,"currency":"EUR","id":"' || md5(i::text) || '","name":"bench item","owner":"heavy"}', 'UTF8'),
       'plain', md5('owner-' || i), NULL, 1,
       now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC', (now() AT TIME ZONE 'UTC') + interval '24 hours'
FROM generate_series(1, :heavy_keys) AS i;

\if :has_quota
-- Each caller's counters, as the library keeps them: its records per endpoint, and its PROCESSING ones.
INSERT INTO idempotency_record_quota (tenant, principal, endpoint, used)
SELECT tenant, principal, endpoint, count(*) FROM idempotency_record GROUP BY tenant, principal, endpoint;
INSERT INTO idempotency_record_quota (tenant, principal, endpoint, used)
SELECT tenant, principal, '', count(*) FILTER (WHERE status = 'PROCESSING') FROM idempotency_record
GROUP BY tenant, principal;
\endif

-- The reference's table starts as large as the library's does in the rows that compare the two.
INSERT INTO bench_ref_record (scope_key, owner_token, status, request_hash, response_status, location, response_body)
SELECT encode(sha256(convert_to('filler-' || i, 'UTF8')), 'hex'), md5('owner-' || i), 'SUCCEEDED',
       encode(sha256(convert_to('request-' || i, 'UTF8')), 'hex'), 201,
       'http://127.0.0.1:8080/bench/api/reference/' || md5(i::text),
       convert_to('{"amount":12.50,"currency":"EUR","id":"' || md5(i::text) || '","name":"bench item","owner":"filler"}', 'UTF8')
FROM generate_series(1, :ref_records) AS i;
