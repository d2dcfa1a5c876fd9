-- The DDL as shipped at commit d66fcc8, a fixture of SchemaMigrationsTest (tables of an earlier release).
-- idempotency-cdi record table, H2. idempotency_record is replaced by idempotency.table.
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
CREATE INDEX IF NOT EXISTS idempotency_record_in_flight ON idempotency_record (tenant, principal, status, lease_until);
CREATE INDEX IF NOT EXISTS idempotency_record_retained ON idempotency_record (tenant, principal, endpoint, expires_at);
CREATE INDEX IF NOT EXISTS idempotency_record_expiry ON idempotency_record (expires_at);
