-- liquibase formatted sql
-- changeset idempotency-cdi:2
-- idempotency-cdi schema version 2, MariaDB: what an accepted asynchronous operation keeps with its claim, so that
-- another node runs it again when the node that accepted it dies (docs/adr/0020). Rolling: two nullable columns
-- added in place (ALGORITHM=INSTANT on InnoDB: no copy, no lock held over the table), no index (the settler finds
-- the records on the expiry index); nodes of version 1 neither write nor read them.
ALTER TABLE idempotency_record ADD COLUMN IF NOT EXISTS task_input LONGBLOB;
ALTER TABLE idempotency_record ADD COLUMN IF NOT EXISTS task_input_encoding VARCHAR(40) CHARACTER SET ascii COLLATE ascii_bin;
INSERT IGNORE INTO idempotency_record_schema (version, compatible_from, script, applied_at)
  VALUES (2, 1, 'V0002__task_input.sql', UTC_TIMESTAMP(6));
