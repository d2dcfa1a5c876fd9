-- liquibase formatted sql
-- changeset idempotency-cdi:2
-- idempotency-cdi schema version 2, H2: what an accepted asynchronous operation keeps with its claim, so that
-- another node runs it again when the node that accepted it dies (docs/adr/0020). Rolling: two nullable columns;
-- nodes of version 1 neither write nor read them.
ALTER TABLE idempotency_record ADD COLUMN IF NOT EXISTS task_input BINARY LARGE OBJECT;
ALTER TABLE idempotency_record ADD COLUMN IF NOT EXISTS task_input_encoding VARCHAR(40);
MERGE INTO idempotency_record_schema (version, compatible_from, script, applied_at) KEY (version)
  VALUES (2, 1, 'V0002__task_input.sql', CAST(CURRENT_TIMESTAMP AT TIME ZONE 'UTC' AS TIMESTAMP));
