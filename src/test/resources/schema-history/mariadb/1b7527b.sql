-- The DDL as shipped at commit 1b7527b, a fixture of SchemaMigrationsTest (tables of an earlier release).
-- idempotency-cdi record table, MariaDB / MySQL (InnoDB). Runnable as is; the library replaces idempotency_record by idempotency.table when it creates the schema.
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
DROP INDEX IF EXISTS idempotency_record_in_flight ON idempotency_record;
DROP INDEX IF EXISTS idempotency_record_retained ON idempotency_record;
CREATE INDEX IF NOT EXISTS idempotency_record_caller ON idempotency_record (tenant, principal, endpoint);
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
-- A caller's finished claims, spread over 8 rows (stripe) so that its finishes, which hold the row until
-- their business transaction commits, seldom wait on each other and never hold up its claims.
CREATE TABLE IF NOT EXISTS idempotency_record_released (
  tenant           VARCHAR(128)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  principal        VARCHAR(255)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  stripe           SMALLINT      NOT NULL,
  released         BIGINT        NOT NULL,
  PRIMARY KEY (tenant, principal, stripe)
) ENGINE=InnoDB;
