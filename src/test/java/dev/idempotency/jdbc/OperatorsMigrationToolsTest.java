package dev.idempotency.jdbc;

import dev.idempotency.testing.Databases;
import dev.idempotency.testing.TestDatabase;
import liquibase.Liquibase;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import liquibase.resource.DirectoryResourceAccessor;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shipped migrations run by the tools operators already use, as they are (server-config/sql/&lt;dialect&gt;/):
 * Flyway, over a database that holds other tables, and Liquibase's includeAll of the folder. Either way the tables
 * end at the library's schema version, which the library then reads, and a second run applies nothing.
 */
class OperatorsMigrationToolsTest {
    private static final String TABLE = SchemaMigrations.DEFAULT_TABLE;

    @ParameterizedTest
    @ValueSource(strings = {"h2", "postgresql", "mariadb"})
    void flywayAppliesTheScriptsAndTheLibraryReadsTheirVersion(String name) {
        TestDatabase db = Databases.named(name);
        drop(db, "idem_flyway_history");
        Flyway flyway = Flyway.configure().dataSource(db.dataSource())
                .locations("filesystem:server-config/sql/" + name).table("idem_flyway_history")
                .baselineOnMigrate(true).baselineVersion("0").load();
        assertThat(flyway.migrate().migrationsExecuted).isEqualTo(SchemaMigrations.ALL.size());
        assertThat(schema(db, name).validate().version()).isEqualTo(SchemaMigrations.expected());
        assertThat(flyway.migrate().migrationsExecuted).isZero();
        drop(db, "idem_flyway_history");
    }

    @ParameterizedTest
    @ValueSource(strings = {"h2", "postgresql", "mariadb"})
    void liquibaseIncludesTheFolderAndTheLibraryReadsTheVersion(String name) throws Exception {
        TestDatabase db = Databases.named(name);
        drop(db, "idem_lb_changelog", "idem_lb_changelog_lock");
        Path root = Path.of("").toAbsolutePath();
        Path master = root.resolve("target/liquibase-" + name + ".xml");
        Files.createDirectories(master.getParent());
        Files.writeString(master, "<databaseChangeLog xmlns=\"http://www.liquibase.org/xml/ns/dbchangelog\""
                + " xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:schemaLocation=\""
                + "http://www.liquibase.org/xml/ns/dbchangelog"
                + " http://www.liquibase.org/xml/ns/dbchangelog/dbchangelog-latest.xsd\">\n"
                + "  <includeAll path=\"src/main/resources/db/" + name + "/\"/>\n</databaseChangeLog>\n");
        for (int run = 0; run < 2; run++) {
            try (Connection c = db.dataSource().getConnection()) {
                Database database = DatabaseFactory.getInstance().findCorrectDatabaseImplementation(new JdbcConnection(c));
                database.setDatabaseChangeLogTableName("idem_lb_changelog");
                database.setDatabaseChangeLogLockTableName("idem_lb_changelog_lock");
                try (Liquibase liquibase = new Liquibase(root.relativize(master).toString(),
                        new DirectoryResourceAccessor(root), database)) {
                    liquibase.update("");
                }
            }
        }
        assertThat(schema(db, name).validate().version()).isEqualTo(SchemaMigrations.expected());
        assertThat(db.count("SELECT COUNT(*) FROM idem_lb_changelog")).as("each script once")
                .isEqualTo(SchemaMigrations.ALL.size());
        drop(db, "idem_lb_changelog", "idem_lb_changelog_lock");
    }

    private static SchemaMigrations schema(TestDatabase db, String name) {
        return new SchemaMigrations(db.dataSource(), Dialect.valueOf(name.toUpperCase(Locale.ROOT)), TABLE, false);
    }

    private static void drop(TestDatabase db, String... toolTables) {
        db.dropRecordTables(TABLE);
        for (String table : toolTables) {
            db.update("DROP TABLE IF EXISTS " + table);
        }
    }
}
