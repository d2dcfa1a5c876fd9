package dev.idempotency.jdbc;

class H2RecordStoreTest extends RecordStoreContract {
    @Override
    String database() {
        return "h2";
    }
}
