-- The DDL as shipped at commit d66fcc8, a fixture of SchemaMigrationsTest (tables of an earlier release).
-- idempotency-cdi record table, MariaDB / MySQL (InnoDB). idempotency_record is replaced by idempotency.table.
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
  INDEX idempotency_record_in_flight (tenant, principal, status, lease_until),
  INDEX idempotency_record_retained (tenant, principal, endpoint, expires_at),
  INDEX idempotency_record_expiry (expires_at)
) ENGINE=InnoDB;
