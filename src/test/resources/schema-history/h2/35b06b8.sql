-- The DDL as shipped at commit 35b06b8, a fixture of SchemaMigrationsTest (tables of an earlier release).
-- idempotency-cdi record table, H2. Runnable as is; the library replaces idempotency_record by idempotency.table when it creates the schema.
CREATE TABLE IF NOT EXISTS idempotency_record (
  scope_key        CHAR(64)      NOT NULL PRIMARY KEY,
  tenant           VARCHAR(128)  NOT NULL,
  principal        VARCHAR(255)  NOT NULL,
  endpoint         VARCHAR(128)  NOT NULL,
  request_hash     VARCHAR(80)   NOT NULL,
  status           VARCHAR(20)   NOT NULL,
  resource_id      VARCHAR(255),
  response_status  INTEGER,
  response_headers CHARACTER LARGE OBJECT,
  response_body    BINARY LARGE OBJECT,
  body_encoding    VARCHAR(40),
  owner_token      CHAR(32)      NOT NULL,
  lease_until      TIMESTAMP(6),
  attempts         INTEGER       NOT NULL,
  created_at       TIMESTAMP(6)  NOT NULL,
  updated_at       TIMESTAMP(6)  NOT NULL,
  expires_at       TIMESTAMP(6)  NOT NULL
);
DROP INDEX IF EXISTS idempotency_record_in_flight;
DROP INDEX IF EXISTS idempotency_record_retained;
CREATE INDEX IF NOT EXISTS idempotency_record_caller ON idempotency_record (tenant, principal, endpoint);
CREATE INDEX IF NOT EXISTS idempotency_record_expiry ON idempotency_record (expires_at);
-- Exact per-caller limits at O(1): one row per caller (endpoint '') counting its PROCESSING records, and one
-- per caller and endpoint counting its stored records. Changed in the same transactions as the records.
CREATE TABLE IF NOT EXISTS idempotency_record_quota (
  tenant           VARCHAR(128)  NOT NULL,
  principal        VARCHAR(255)  NOT NULL,
  endpoint         VARCHAR(128)  NOT NULL,
  used             INTEGER       NOT NULL,
  checked_at       TIMESTAMP(6),
  PRIMARY KEY (tenant, principal, endpoint)
);
