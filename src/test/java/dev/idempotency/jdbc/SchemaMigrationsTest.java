package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyDefinitionException;
import dev.idempotency.IdempotencyException;
import dev.idempotency.RecordStatus;
import dev.idempotency.core.Admission;
import dev.idempotency.core.Claim;
import dev.idempotency.core.IdempotencyProtocol;
import dev.idempotency.core.Operation;
import dev.idempotency.spi.StoredResponse;
import dev.idempotency.testing.Databases;
import dev.idempotency.testing.StoreFixture;
import dev.idempotency.testing.TestDatabase;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The schema's version on real databases (H2, PostgreSQL, MariaDB, a Galera node): tables as every earlier release
 * created them, with records in them, are refused by validation with what to run, migrated with their records (still
 * replayed byte for byte, their counters right), and validated; a migration runs once when two nodes start together.
 */
class SchemaMigrationsTest {
    private static final String TABLE = "schema_mig";
    private static final StoredResponse CREATED = new StoredResponse(201,
            Map.of("Location", List.of("http://127.0.0.1/demo/api/payments/p-1"),
                    "Content-Type", List.of("application/json")),
            "{\"id\":\"p-1\",\"amount\":100,\"note\":\"caf\u00e9 \u2713\"}".getBytes(StandardCharsets.UTF_8),
            StoredResponse.PLAIN);

    // The DDL of three earlier releases: the first one (three indexes, no counters), the first counters (an INT
    // counter), the last one before schema versions.
    static Stream<Arguments> earlierReleases() {
        List<Arguments> all = new ArrayList<>();
        for (String database : List.of("h2", "postgresql", "mariadb", "galera")) {
            for (String release : List.of("d66fcc8", "35b06b8", "1b7527b")) {
                all.add(Arguments.of(database, release));
            }
        }
        return all.stream();
    }

    @ParameterizedTest(name = "{0}, tables of {1}")
    @MethodSource("earlierReleases")
    void tablesOfAnEarlierReleaseAreRefusedThenMigratedWithTheirRecords(String database, String release)
            throws Exception {
        TestDatabase db = Databases.named(database);
        // Records written as the library writes them, copied into the earlier release's table (the record's columns
        // have not changed since the first release).
        Operation paid = StoreFixture.operation("paid");
        Operation running = StoreFixture.operation("running");
        writePaidAndRunning(db, paid, running);
        drop(db);
        for (String statement : historicStatements(Dialect.valueOf(dialectOf(database)), release)) {
            db.update(statement);
        }
        db.update("INSERT INTO " + TABLE + " (" + VERSION_ONE_COLUMNS + ") SELECT " + VERSION_ONE_COLUMNS + " FROM "
                + TABLE + "_src");

        JdbcRecordStore store = JdbcRecordStore.forDataSource(db.dataSource(), TABLE);
        assertThatThrownBy(() -> store.schema().validate()).isInstanceOf(IdempotencyDefinitionException.class)
                .hasMessageContaining("IDEM-D023")
                .hasMessageContaining("has no schema version")
                .hasMessageContaining("works with version " + SchemaMigrations.expected())
                .hasMessageContaining("db/" + dialectOf(database).toLowerCase(Locale.ROOT) + "/V0001__baseline.sql")
                .hasMessageContaining("idempotency.schema=migrate");

        assertThat(store.schema().migrate()).extracting(
                SchemaMigrations.Migration::version).containsExactlyElementsOf(allVersions());
        assertThat(store.schema().validate().version()).isEqualTo(SchemaMigrations.expected());
        assertThat(store.schema().migrate()).as("nothing left to apply").isEmpty();
        if (!database.equals("h2")) {
            assertThat(db.query("SELECT " + (database.equals("postgresql") ? "data_type" : "DATA_TYPE")
                    + " AS t FROM information_schema.columns WHERE table_name = '" + TABLE + "_quota' AND "
                    + "column_name = 'used'" + (database.equals("postgresql") ? "" : " AND table_schema = DATABASE()"))
                    .get(0).values().iterator().next().toString().toLowerCase(Locale.ROOT)).as("the counter")
                    .isEqualTo("bigint");
        }

        StoreFixture migrated = StoreFixture.existing(db, TABLE);
        IdempotencyProtocol protocol = migrated.protocol();
        Admission replay = protocol.admission().admit(paid);
        assertThat(replay).isInstanceOf(Admission.Replay.class);
        StoredResponse replayed = ((Admission.Replay) replay).record().response().orElseThrow();
        assertThat(replayed.status()).isEqualTo(201);
        assertThat(replayed.body()).isEqualTo(CREATED.body());
        assertThat(replayed.headers()).isEqualTo(CREATED.headers());
        assertThatThrownBy(() -> protocol.admission().admit(running)).isInstanceOf(IdempotencyException.class)
                .satisfies(e -> assertThat(((IdempotencyException) e).problem().status()).isEqualTo(409));
        // The counters count the records the table held before it had counters, and go on from there.
        Claim next = ((Admission.Execute) protocol.admission().admit(StoreFixture.operation("next"))).claim();
        assertThat(migrated.transactions.requiresNew(() -> protocol.completion().finish(next, RecordStatus.SUCCEEDED,
                Optional.of(CREATED), Optional.of("p-2")))).isTrue();
        assertThat(db.count("SELECT used FROM " + TABLE + "_quota WHERE endpoint = 'payments.create'"))
                .as("stored keys of the caller").isEqualTo(3);
        assertThat(db.count("SELECT used FROM " + TABLE + "_quota WHERE endpoint = ''")
                - db.count("SELECT COALESCE(SUM(released), 0) FROM " + TABLE + "_released"))
                .as("the caller's claims in flight").isEqualTo(1);
        drop(db);
        db.dropRecordTables(TABLE + "_src");
    }

    @ParameterizedTest
    @ValueSource(strings = {"h2", "postgresql", "mariadb"})
    void twoNodesMigratingAtOnceApplyEachScriptOnce(String database) throws Exception {
        TestDatabase db = Databases.named(database);
        drop(db);
        JdbcRecordStore one = JdbcRecordStore.forDataSource(db.dataSource(), TABLE);
        JdbcRecordStore two = JdbcRecordStore.forDataSource(db.dataSource(), TABLE);
        assertThatThrownBy(() -> one.schema().validate()).hasMessageContaining("IDEM-D023")
                .hasMessageContaining("'" + TABLE + "' does not exist");
        CyclicBarrier together = new CyclicBarrier(2);
        ExecutorService nodes = Executors.newFixedThreadPool(2);
        try {
            List<Future<List<SchemaMigrations.Migration>>> runs = new ArrayList<>();
            for (JdbcRecordStore node : List.of(one, two)) {
                runs.add(nodes.submit(() -> {
                    together.await(30, TimeUnit.SECONDS);
                    return node.schema().migrate();
                }));
            }
            List<Integer> applied = new ArrayList<>();
            for (Future<List<SchemaMigrations.Migration>> run : runs) {
                run.get(120, TimeUnit.SECONDS).forEach(m -> applied.add(m.version()));
            }
            assertThat(applied).as("scripts applied by both nodes together").containsExactlyElementsOf(allVersions());
            assertThat(db.count("SELECT COUNT(*) FROM " + TABLE + "_schema")).isEqualTo(SchemaMigrations.ALL.size());
            assertThat(two.schema().validate().version()).isEqualTo(SchemaMigrations.expected());
        } finally {
            nodes.shutdownNow();
            drop(db);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"h2", "postgresql", "mariadb"})
    void aNewerSchemaIsUsedWhileItsScriptsKeepThisVersionWorkingAndRefusedOnceOneDoesNot(String database) {
        TestDatabase db = Databases.named(database);
        drop(db);
        StoreFixture fixture = new StoreFixture(db, TABLE);
        db.update("INSERT INTO " + TABLE + "_schema (version, compatible_from, script, applied_at) VALUES (?, ?, ?, ?)",
                SchemaMigrations.expected() + 1, SchemaMigrations.expected(), "V9999__rolling.sql",
                java.sql.Timestamp.valueOf("2027-01-01 00:00:00"));
        assertThat(fixture.store.schema().validate().version()).isEqualTo(SchemaMigrations.expected() + 1);
        db.update("UPDATE " + TABLE + "_schema SET compatible_from = ? WHERE version = ?",
                SchemaMigrations.expected() + 1, SchemaMigrations.expected() + 1);
        assertThatThrownBy(() -> fixture.store.schema().validate()).isInstanceOf(IdempotencyDefinitionException.class)
                .hasMessageContaining("IDEM-D024").hasMessageContaining("V9999__rolling.sql")
                .hasMessageContaining("Deploy the newer release");
        drop(db);
    }

    @ParameterizedTest
    @ValueSource(strings = {"h2", "postgresql", "mariadb"})
    void aSchemaQualifiedTableIsMigratedInItsSchemaWithItsIndexesThere(String database) {
        TestDatabase db = Databases.named(database);
        db.update(database.equals("mariadb") ? "CREATE DATABASE IF NOT EXISTS idem_s" : "CREATE SCHEMA IF NOT EXISTS idem_s");
        String qualified = "idem_s." + TABLE;
        StoreFixture fixture = new StoreFixture(db, qualified);
        assertThat(fixture.store.schema().validate().version()).isEqualTo(SchemaMigrations.expected());
        IdempotencyProtocol protocol = fixture.protocol();
        Claim claim = ((Admission.Execute) protocol.admission().admit(StoreFixture.operation("qualified"))).claim();
        assertThat(fixture.transactions.requiresNew(() -> protocol.completion().finish(claim, RecordStatus.SUCCEEDED,
                Optional.of(CREATED), Optional.of("p-1")))).isTrue();
        assertThat(fixture.store.schema().migrate()).as("nothing left to apply").isEmpty();
        db.dropRecordTables(qualified);
    }

    @ParameterizedTest
    @ValueSource(strings = {"h2", "postgresql", "mariadb"})
    void insideACallersTransactionOnlyPostgreSqlMigratesAndThenWithThatTransaction(String database) {
        TestDatabase db = Databases.named(database);
        drop(db);
        JdbcRecordStore store = JdbcRecordStore.forDataSource(db.dataSource(), TABLE);
        dev.idempotency.jta.JtaTransactions transactions = new dev.idempotency.jta.JtaTransactions(
                dev.idempotency.testing.Narayana.transactionManager());
        if (database.equals("postgresql")) {
            assertThatThrownBy(() -> transactions.requiresNew(() -> {
                assertThat(store.schema().migrate()).extracting(SchemaMigrations.Migration::version)
                        .containsExactlyElementsOf(allVersions());
                throw new IllegalStateException("the caller's transaction fails");
            })).hasMessageContaining("the caller's transaction fails");
            assertThat(store.schema().read().recordTable()).as("rolled back with the caller's transaction").isFalse();
            assertThat(transactions.requiresNew(() -> store.schema().migrate())).hasSize(SchemaMigrations.ALL.size());
            assertThat(store.schema().validate().version()).isEqualTo(SchemaMigrations.expected());
        } else {
            assertThatThrownBy(() -> transactions.requiresNew(() -> store.schema().migrate()))
                    .hasMessageContaining("IDEM-S014");
            assertThat(store.schema().read().recordTable()).as("nothing ran").isFalse();
        }
        drop(db);
    }

    @org.junit.jupiter.api.Test
    void everyMigrationIsShippedForEveryDialectInTheJarAndInServerConfig() throws IOException {
        for (Dialect dialect : Dialect.values()) {
            List<String> expected = SchemaMigrations.ALL.stream().map(SchemaMigrations.Migration::fileName).toList();
            for (java.nio.file.Path folder : List.of(java.nio.file.Path.of("src/main/resources", dialect.scripts()),
                    java.nio.file.Path.of("server-config/sql", dialect.scripts().substring("db/".length())))) {
                try (Stream<java.nio.file.Path> files = java.nio.file.Files.list(folder)) {
                    assertThat(files.map(f -> f.getFileName().toString()).sorted().toList()).as(folder.toString())
                            .isEqualTo(expected);
                }
            }
            for (SchemaMigrations.Migration migration : SchemaMigrations.ALL) {
                assertThat(new SchemaMigrations(null, dialect, TABLE, false).statements(migration)).as("%s %s",
                        dialect, migration.fileName()).isNotEmpty().last().asString()
                        .contains(TABLE + "_schema").contains("'" + migration.fileName() + "'");
            }
        }
    }

    // Version 2 (docs/adr/0020) adds what accepted operations keep with their claims: tables of version 1 with records
    // in them, finished and running, are refused by validation, migrated in place, and serve those records; the
    // script keeps version 1 working (a rolling change), and a record claimed before keeps nothing.
    @ParameterizedTest
    @ValueSource(strings = {"h2", "postgresql", "mariadb"})
    void tablesOfVersionOneWithRecordsInThemAreMigratedToVersionTwoAsARollingChange(String database) {
        TestDatabase db = Databases.named(database);
        Operation paid = StoreFixture.operation("paid-v1");
        Operation running = StoreFixture.operation("running-v1");
        Claim held = writePaidAndRunning(db, paid, running);
        drop(db);
        JdbcRecordStore store = JdbcRecordStore.forDataSource(db.dataSource(), TABLE);
        for (String statement : store.schema().statements(SchemaMigrations.ALL.get(0))) {
            db.update(statement);
        }
        db.update("INSERT INTO " + TABLE + " (" + VERSION_ONE_COLUMNS + ") SELECT " + VERSION_ONE_COLUMNS + " FROM "
                + TABLE + "_src");
        assertThatThrownBy(() -> store.schema().validate()).isInstanceOf(IdempotencyDefinitionException.class)
                .hasMessageContaining("IDEM-D023").hasMessageContaining("V0002__task_input.sql");

        assertThat(store.schema().migrate()).extracting(SchemaMigrations.Migration::version).containsExactly(2);
        assertThat(store.schema().validate().version()).isEqualTo(2);
        assertThat(db.count("SELECT compatible_from FROM " + TABLE + "_schema WHERE version = 2"))
                .as("nodes of version 1 keep working").isEqualTo(1);
        StoreFixture migrated = StoreFixture.existing(db, TABLE);
        assertThat(migrated.protocol().admission().admit(paid)).isInstanceOf(Admission.Replay.class);
        assertThat(migrated.store.findTaskInput(held.operation().scopeKey(), held.ownerToken())).isEmpty();
        assertThat(migrated.store.keepTaskInput(held.operation().scopeKey(), held.ownerToken(),
                new dev.idempotency.spi.TaskInput(new byte[] {1, 2, 3}, "plain"))).isTrue();
        assertThat(migrated.store.findTaskInput(held.operation().scopeKey(), held.ownerToken()).orElseThrow().data())
                .containsExactly(1, 2, 3);
        assertThat(migrated.store.keepTaskInput(held.operation().scopeKey(), "0".repeat(32),
                new dev.idempotency.spi.TaskInput(new byte[] {4}, "plain"))).as("another owner's claim").isFalse();
        assertThat(migrated.transactions.requiresNew(() -> migrated.protocol().completion().finish(held,
                RecordStatus.SUCCEEDED, Optional.of(CREATED), Optional.of("p-2")))).isTrue();
        assertThat(db.count("SELECT COUNT(*) FROM " + TABLE + " WHERE task_input IS NOT NULL"))
                .as("the finish clears what the claim kept").isZero();
        drop(db);
        db.dropRecordTables(TABLE + "_src");
    }

    // Records as the library writes them, in a table of their own (TABLE_src) to be copied into older shapes: one
    // operation finished (201), one running; the running one's claim.
    private static Claim writePaidAndRunning(TestDatabase db, Operation paid, Operation running) {
        StoreFixture written = new StoreFixture(db, TABLE + "_src");
        IdempotencyProtocol writer = written.protocol();
        Claim first = ((Admission.Execute) writer.admission().admit(paid)).claim();
        assertThat(written.transactions.requiresNew(() -> writer.completion().finish(first, RecordStatus.SUCCEEDED,
                Optional.of(CREATED), Optional.of("p-1")))).isTrue();
        return ((Admission.Execute) writer.admission().admit(running)).claim();
    }

    private static List<Integer> allVersions() {
        return SchemaMigrations.ALL.stream().map(SchemaMigrations.Migration::version).toList();
    }

    // The record table's columns of schema version 1 (and of every release before it).
    private static final String VERSION_ONE_COLUMNS = "scope_key, tenant, principal, endpoint, request_hash, status,"
            + " resource_id, response_status, response_headers, response_body, body_encoding, owner_token, lease_until,"
            + " attempts, created_at, updated_at, expires_at";

    private static String dialectOf(String database) {
        return database.equals("galera") ? "MARIADB" : database.toUpperCase(Locale.ROOT);
    }

    private static List<String> historicStatements(Dialect dialect, String release) throws IOException {
        String resource = "schema-history/" + dialect.name().toLowerCase(Locale.ROOT) + "/" + release + ".sql";
        try (InputStream in = SchemaMigrationsTest.class.getClassLoader().getResourceAsStream(resource)) {
            return SchemaMigrations.split(new String(in.readAllBytes(), StandardCharsets.UTF_8), TABLE);
        }
    }

    private static void drop(TestDatabase db) {
        db.dropRecordTables(TABLE);
    }
}
