package dev.idempotency.deployment;

import dev.idempotency.IdempotencyDefinitionException;
import dev.idempotency.config.IdempotencySettings;
import dev.idempotency.jdbc.JdbcRecordStore;
import dev.idempotency.jdbc.SchemaMigrations;
import dev.idempotency.testing.Databases;
import dev.idempotency.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What the deployment does with the JDBC store's tables, as idempotency.schema says. */
class StorageSetupTest {
    private static final String TABLE = "setup_schema";
    private final TestDatabase db = Databases.named("h2");
    private final JdbcRecordStore store = JdbcRecordStore.forDataSource(db.dataSource(), TABLE);

    @AfterEach
    void drop() {
        db.dropRecordTables(TABLE);
    }

    @Test
    void byDefaultAStoreWithoutItsTablesFailsTheDeploymentNamingWhatToRun() {
        drop();
        assertThatThrownBy(() -> assemble(Map.of())).isInstanceOf(IdempotencyDefinitionException.class)
                .hasMessageContaining("IDEM-D023").hasMessageContaining("db/h2/V0001__baseline.sql");
        assertThat(store.schema().read().recordTable()).as("validation changes nothing").isFalse();
    }

    @Test
    void migrateAndItsEarlierNamesCreateTheTablesAtTheLibrarysVersion() {
        for (Map<String, String> config : List.of(Map.of("idempotency.schema", "migrate"),
                Map.of("idempotency.schema", "create"), Map.of("idempotency.create-schema", "true"))) {
            drop();
            assemble(config);
            assertThat(store.schema().read().version()).as(config.toString()).isEqualTo(SchemaMigrations.expected());
            assemble(Map.of());
        }
    }

    @Test
    void noneLeavesTheTablesToTheOperator() {
        drop();
        assemble(Map.of("idempotency.schema", "none"));
        assertThat(store.schema().read().recordTable()).isFalse();
    }

    private void assemble(Map<String, String> config) {
        Map<String, String> all = new HashMap<>(config);
        all.put("idempotency.secret", "storage-setup-test-secret-0123456789abcdef");
        all.put("idempotency.clock", "jvm");
        IdempotencySettings settings = new IdempotencySettings(key -> Optional.ofNullable(all.get(key)));
        StorageSetup.assemble(settings, List.of(), Optional.of(store), Optional.empty(),
                Clock.systemUTC(), Optional.empty());
    }
}
