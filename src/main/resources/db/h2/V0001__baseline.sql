-- liquibase formatted sql
-- changeset idempotency-cdi:1
-- idempotency-cdi schema version 1, H2: the record table, its counters, and the schema's history. Runnable as is, on
-- an empty database and on the tables of any earlier release, which it brings to version 1; every statement may run
-- again (each DDL statement commits on its own). The library runs it itself with idempotency.schema=migrate, with
-- idempotency_record replaced by idempotency.table.
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
-- The first release's indexes (tables created by d66fcc8 or 95810e0); the caller index replaces them.
DROP INDEX IF EXISTS idempotency_record_in_flight;
DROP INDEX IF EXISTS idempotency_record_retained;
CREATE INDEX IF NOT EXISTS idempotency_record_caller ON idempotency_record (tenant, principal, endpoint);
CREATE INDEX IF NOT EXISTS idempotency_record_expiry ON idempotency_record (expires_at);
-- Exact per-caller limits at O(1): one row per caller and endpoint counting its stored records, and one per
-- caller (endpoint '') counting its claims; its PROCESSING records are those claims less the give-backs in
-- idempotency_record_released. Changed in the same transactions as the records.
CREATE TABLE IF NOT EXISTS idempotency_record_quota (
  tenant           VARCHAR(128)  NOT NULL,
  principal        VARCHAR(255)  NOT NULL,
  endpoint         VARCHAR(128)  NOT NULL,
  used             BIGINT        NOT NULL,
  checked_at       TIMESTAMP(6),
  PRIMARY KEY (tenant, principal, endpoint)
);
-- The counter was INTEGER in tables created by 35b06b8: widened there.
ALTER TABLE idempotency_record_quota ALTER COLUMN used SET DATA TYPE BIGINT;
-- A caller's finished claims, spread over 8 rows (stripe) so that its finishes, which hold the row until
-- their business transaction commits, seldom wait on each other and never hold up its claims.
CREATE TABLE IF NOT EXISTS idempotency_record_released (
  tenant           VARCHAR(128)  NOT NULL,
  principal        VARCHAR(255)  NOT NULL,
  stripe           SMALLINT      NOT NULL,
  released         BIGINT        NOT NULL,
  PRIMARY KEY (tenant, principal, stripe)
);
-- Records of a table that had no counters yet (created by d66fcc8 or 95810e0) are counted once, here: their stored
-- keys per endpoint, and their PROCESSING ones as the caller's claims. Nothing where any counter exists.
INSERT INTO idempotency_record_quota (tenant, principal, endpoint, used)
  SELECT tenant, principal, endpoint, COUNT(*) FROM idempotency_record
    WHERE NOT EXISTS (SELECT 1 FROM idempotency_record_quota) GROUP BY tenant, principal, endpoint
  UNION ALL
  SELECT tenant, principal, '', COUNT(*) FROM idempotency_record
    WHERE status = 'PROCESSING' AND NOT EXISTS (SELECT 1 FROM idempotency_record_quota) GROUP BY tenant, principal;
-- The schema's history: one row per script applied, written by the script itself, so that the library reads the
-- version whoever ran it. compatible_from: the oldest schema version whose library still works on the tables
-- after this script (0: the releases from before schema versions).
CREATE TABLE IF NOT EXISTS idempotency_record_schema (
  version          INTEGER       NOT NULL PRIMARY KEY,
  compatible_from  INTEGER       NOT NULL,
  script           VARCHAR(200)  NOT NULL,
  applied_at       TIMESTAMP(6)  NOT NULL
);
MERGE INTO idempotency_record_schema (version, compatible_from, script, applied_at) KEY (version)
  VALUES (1, 0, 'V0001__baseline.sql', CAST(CURRENT_TIMESTAMP AT TIME ZONE 'UTC' AS TIMESTAMP));
