package dev.idempotency.jdbc;

class PostgreSqlRecordStoreTest extends RecordStoreContract {
    @Override
    String database() {
        return "postgresql";
    }
}
