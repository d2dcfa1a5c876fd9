package dev.idempotency.jdbc;

import dev.idempotency.RecordStatus;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.testing.Databases;
import dev.idempotency.testing.TestDatabase;
import dev.idempotency.jta.JtaTransactions;
import dev.idempotency.testing.Narayana;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an operator runs from server-config/sql: the migrations create the tables the store works with at the
 * library's schema version, and the purge statement deletes expired finished records only, in a bounded batch.
 */
class ServerConfigSqlTest {
    private static final String TABLE = "idempotency_record";

    @ParameterizedTest
    @ValueSource(strings = {"h2", "postgresql", "mariadb"})
    void theOperatorsSchemaAndPurgeWorkWithTheStore(String name) throws Exception {
        TestDatabase db = Databases.named(name);
        db.dropRecordTables(TABLE);
        // Every migration of the dialect's folder, in order, as an operator (or Flyway) runs them.
        try (var scripts = Files.list(Path.of("server-config/sql/" + name))) {
            for (Path script : scripts.sorted().toList()) {
                run(db, script);
            }
        }
        assertThat(new SchemaMigrations(db.dataSource(), Dialect.valueOf(name.toUpperCase(java.util.Locale.ROOT)), TABLE,
                false).validate().version()).isEqualTo(SchemaMigrations.expected());
        JdbcRecordStore store = JdbcRecordStore.forDataSource(db.dataSource(), TABLE);
        JtaTransactions tx = new JtaTransactions(Narayana.transactionManager());
        Instant longAgo = Instant.now().minus(Duration.ofDays(3));
        for (int i = 0; i < 3; i++) {
            String key = "expired" + i;
            tx.requiresNew(() -> {
                store.insert(record(key, longAgo));
                return store.finish(scope(key), token(key), new Completion(RecordStatus.SUCCEEDED, Optional.empty(),
                        Optional.empty(), longAgo, longAgo.plus(Duration.ofDays(1))));
            });
        }
        tx.requiresNew(() -> {
            store.insert(record("stuck", longAgo));
            store.insert(record("fresh", Instant.now()));
            return null;
        });
        run(db, Path.of("server-config/sql/purge-" + name + ".sql"));
        assertThat(db.count("SELECT COUNT(*) FROM " + TABLE)).isEqualTo(2);
        assertThat(db.count("SELECT COUNT(*) FROM " + TABLE + " WHERE status = 'PROCESSING'")).isEqualTo(2);
        db.update("DROP TABLE " + TABLE);
        db.update("DROP TABLE " + TABLE + "_quota");
        db.update("DROP TABLE " + TABLE + "_released");
        db.update("DROP TABLE " + TABLE + "_schema");
    }

    private static void run(TestDatabase db, Path script) throws IOException, SQLException {
        String text = Files.readString(script);
        String[] statements = Arrays.stream(text.split("\n")).filter(line -> !line.strip().startsWith("--"))
                .reduce("", (a, b) -> a + b + "\n").split(";");
        try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
            for (String statement : statements) {
                if (!statement.isBlank()) {
                    s.execute(statement);
                }
            }
        }
    }

    private static IdempotencyRecord record(String key, Instant at) {
        return new IdempotencyRecord(scope(key), "acme", "alice", "payments", "v1:x", RecordStatus.PROCESSING,
                Optional.empty(), Optional.empty(), token(key), Optional.of(at.plusSeconds(30)), 1, at, at,
                at.plus(Duration.ofDays(1)));
    }

    private static String scope(String name) {
        return String.format("%64s", name).replace(' ', '0');
    }

    private static String token(String name) {
        return String.format("%32s", name).replace(' ', 'f');
    }
}
