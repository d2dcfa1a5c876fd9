-- liquibase formatted sql
-- changeset idempotency-cdi:2
-- idempotency-cdi schema version 2, PostgreSQL: what an accepted asynchronous operation keeps with its claim, so that
-- another node runs it again when the node that accepted it dies (docs/adr/0020). Rolling: two nullable columns, no
-- rewrite and no index (the settler finds the records on the expiry index); nodes of version 1 neither write nor read
-- them and keep working while it runs and after it.
ALTER TABLE idempotency_record ADD COLUMN IF NOT EXISTS task_input BYTEA;
ALTER TABLE idempotency_record ADD COLUMN IF NOT EXISTS task_input_encoding VARCHAR(40);
INSERT INTO idempotency_record_schema (version, compatible_from, script, applied_at)
  VALUES (2, 1, 'V0002__task_input.sql', CAST(CURRENT_TIMESTAMP AT TIME ZONE 'UTC' AS TIMESTAMP))
  ON CONFLICT (version) DO NOTHING;
