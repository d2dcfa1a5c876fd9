package dev.idempotency.jdbc;

class MariaDbRecordStoreTest extends RecordStoreContract {
    @Override
    String database() {
        return "mariadb";
    }
}
