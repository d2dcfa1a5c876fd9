-- The benchmark application's own tables (not the library's: it creates idempotency_record itself,
-- idempotency.create-schema=true). Run by bench/run.sh as the application's role before the deployment.

-- The business row every write endpoint inserts (dev.idempotency.bench.Item).
CREATE TABLE bench_item (
  id        VARCHAR(36)   NOT NULL PRIMARY KEY,
  owner     VARCHAR(255)  NOT NULL,
  name      VARCHAR(128)  NOT NULL,
  amount    NUMERIC(19,2) NOT NULL,
  currency  CHAR(3)       NOT NULL
);

-- The hand-written reference's records (dev.idempotency.bench.ReferenceRecords): the protocol's minimum.
-- No index besides the primary key, so that the fenced finish can be a HOT update.
CREATE TABLE bench_ref_record (
  scope_key        CHAR(64)     NOT NULL PRIMARY KEY,
  owner_token      CHAR(32)     NOT NULL,
  status           VARCHAR(20)  NOT NULL,
  request_hash     CHAR(64)     NOT NULL,
  response_status  INTEGER,
  location         VARCHAR(512),
  response_body    BYTEA,
  created_at       TIMESTAMP(6) NOT NULL DEFAULT (now() AT TIME ZONE 'UTC')
);
