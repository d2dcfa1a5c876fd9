-- liquibase formatted sql
-- changeset idempotency-cdi:1
-- idempotency-cdi schema version 1, MariaDB / MySQL (InnoDB): the record table, its counters, and the schema's
-- history. Runnable as is (mariadb client, Flyway, Liquibase), on an empty database and on the tables of any earlier
-- release, which it brings to version 1; every statement may run again (each DDL statement commits on its own).
-- The library runs it itself with idempotency.schema=migrate, with idempotency_record replaced by idempotency.table.
-- Rolling: nodes of the release before keep working while it runs and after it.
-- DATETIME(6), not TIMESTAMP: no session time zone conversion and no 2038 limit; values are UTC.
CREATE TABLE IF NOT EXISTS idempotency_record (
  scope_key        CHAR(64)      CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
  tenant           VARCHAR(128)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  principal        VARCHAR(255)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  endpoint         VARCHAR(128)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  request_hash     VARCHAR(80)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  status           VARCHAR(20)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  resource_id      VARCHAR(255)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
  response_status  INT,
  response_headers MEDIUMTEXT    CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
  response_body    LONGBLOB,
  body_encoding    VARCHAR(40)   CHARACTER SET ascii COLLATE ascii_bin,
  owner_token      CHAR(32)      CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  lease_until      DATETIME(6),
  attempts         INT           NOT NULL,
  created_at       DATETIME(6)   NOT NULL,
  updated_at       DATETIME(6)   NOT NULL,
  expires_at       DATETIME(6)   NOT NULL,
  INDEX idempotency_record_caller (tenant, principal, endpoint),
  INDEX idempotency_record_expiry (expires_at)
) ENGINE=InnoDB;
-- The first release's indexes (tables created by d66fcc8 or 95810e0); the caller index replaces them. On such a table
-- the index builds in place, writes go on.
DROP INDEX IF EXISTS idempotency_record_in_flight ON idempotency_record;
DROP INDEX IF EXISTS idempotency_record_retained ON idempotency_record;
CREATE INDEX IF NOT EXISTS idempotency_record_caller ON idempotency_record (tenant, principal, endpoint);
CREATE INDEX IF NOT EXISTS idempotency_record_expiry ON idempotency_record (expires_at);
-- Exact per-caller limits at O(1): one row per caller and endpoint counting its stored records, and one per
-- caller (endpoint '') counting its claims; its PROCESSING records are those claims less the give-backs in
-- idempotency_record_released. Changed in the same transactions as the records.
CREATE TABLE IF NOT EXISTS idempotency_record_quota (
  tenant           VARCHAR(128)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  principal        VARCHAR(255)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  endpoint         VARCHAR(128)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  used             BIGINT        NOT NULL,
  checked_at       DATETIME(6),
  PRIMARY KEY (tenant, principal, endpoint)
) ENGINE=InnoDB;
-- The counter was INT in tables created by 35b06b8: widened there (a copy of this small
-- table, writes to it wait); where it is BIGINT already, the statement changes nothing.
ALTER TABLE idempotency_record_quota MODIFY used BIGINT NOT NULL;
-- A caller's finished claims, spread over 8 rows (stripe) so that its finishes, which hold the row until
-- their business transaction commits, seldom wait on each other and never hold up its claims.
CREATE TABLE IF NOT EXISTS idempotency_record_released (
  tenant           VARCHAR(128)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  principal        VARCHAR(255)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  stripe           SMALLINT      NOT NULL,
  released         BIGINT        NOT NULL,
  PRIMARY KEY (tenant, principal, stripe)
) ENGINE=InnoDB;
-- Records of a table that had no counters yet (created by d66fcc8 or 95810e0) are counted once, here: their stored
-- keys per endpoint, and their PROCESSING ones as the caller's claims. Nothing where any counter exists.
INSERT IGNORE INTO idempotency_record_quota (tenant, principal, endpoint, used)
  SELECT tenant, principal, endpoint, COUNT(*) FROM idempotency_record
    WHERE NOT EXISTS (SELECT 1 FROM idempotency_record_quota) GROUP BY tenant, principal, endpoint
  UNION ALL
  SELECT tenant, principal, '', COUNT(*) FROM idempotency_record
    WHERE status = 'PROCESSING' AND NOT EXISTS (SELECT 1 FROM idempotency_record_quota) GROUP BY tenant, principal;
-- The schema's history: one row per script applied, written by the script itself, so that the library reads the
-- version whoever ran it. compatible_from: the oldest schema version whose library still works on the tables
-- after this script (0: the releases from before schema versions).
CREATE TABLE IF NOT EXISTS idempotency_record_schema (
  version          INT           NOT NULL PRIMARY KEY,
  compatible_from  INT           NOT NULL,
  script           VARCHAR(200)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  applied_at       DATETIME(6)   NOT NULL
) ENGINE=InnoDB;
INSERT IGNORE INTO idempotency_record_schema (version, compatible_from, script, applied_at)
  VALUES (1, 0, 'V0001__baseline.sql', UTC_TIMESTAMP(6));
