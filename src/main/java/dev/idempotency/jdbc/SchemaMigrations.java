package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyDefinitionException;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The version of the store's tables and the numbered scripts that bring them to the library's (docs/adr/0018): each
 * script {@code db/<dialect>/V<nnnn>__<what>.sql} in the jar (and in server-config/sql) writes its own row into the
 * schema's history table {@code <table>_schema}, so the version reads the same whether the library, Flyway,
 * Liquibase or an operator's shell applied it. {@link #validate} refuses tables that are not at a version this library
 * works with; {@link #migrate} applies the missing scripts, under a lock that makes a second node starting at the same
 * moment wait and then find nothing to do.
 */
public final class SchemaMigrations {
    private static final Logger LOG = Logger.getLogger(SchemaMigrations.class.getName());
    // The shipped scripts name the default table, so that an operator can run them as they are.
    static final String DEFAULT_TABLE = "idempotency_record";

    /**
     * One numbered script. Its last statement writes its history row, with the oldest schema version whose library
     * still works on the tables after it ({@code compatible_from}: below its own version for a rolling change).
     *
     * @param version     the schema version it brings the tables to
     * @param description its name after the version, as in the file name
     */
    public record Migration(int version, String description) {
        /** {@code V0001__baseline.sql}: Flyway's versioned name, zero-padded so that Liquibase sorts it too. */
        public String fileName() {
            return String.format(Locale.ROOT, "V%04d__%s.sql", version, description);
        }
    }

    /** Every migration of this library, in order; the last one's version is the one it works with. */
    public static final List<Migration> ALL = List.of(
            new Migration(1, "baseline"),
            new Migration(2, "task_input"));

    /** One row of the schema's history: a script applied to the tables. */
    public record Applied(int version, int compatibleFrom, String script) {
    }

    /**
     * What the database holds.
     *
     * @param recordTable whether the record table exists
     * @param history     the schema history's rows (empty: no history table, or an empty one)
     */
    public record Found(boolean recordTable, List<Applied> history) {
        /** The tables' version: the highest one applied; 0 for none. */
        public int version() {
            return history.stream().mapToInt(Applied::version).max().orElse(0);
        }
    }

    private final DataSource dataSource;
    private final Dialect dialect;
    private final String table;
    private final boolean galera;

    SchemaMigrations(DataSource dataSource, Dialect dialect, String table, boolean galera) {
        this.dataSource = dataSource;
        this.dialect = dialect;
        this.table = table;
        this.galera = galera;
    }

    /** The schema version this library works with. */
    public static int expected() {
        return ALL.get(ALL.size() - 1).version();
    }

    /** The class-path resource of a migration for this dialect ({@code db/postgresql/V0001__baseline.sql}). */
    public String resource(Migration migration) {
        return dialect.scripts() + migration.fileName();
    }

    /** The tables' state as the database has it now. */
    public Found read() {
        return connected(this::read);
    }

    /**
     * Passes when the tables are at this library's version, or at a later one whose scripts all keep it working (a
     * newer node migrated them during a rolling upgrade).
     *
     * @throws IdempotencyDefinitionException naming the version found, the one expected and what to run
     */
    public Found validate() {
        Found found = read();
        int version = found.version();
        if (version < expected()) {
            throw new IdempotencyDefinitionException("IDEM-D023 " + describe(found) + "; this library works with"
                    + " version " + expected() + ". Apply " + missing(version) + " (in the library's jar, and in its"
                    + " server-config/sql/" + dialect.scripts().substring("db/".length()) + "), or set"
                    + " idempotency.schema=migrate to have the deployment apply it");
        }
        List<Applied> newer = found.history().stream().filter(m -> m.version() > expected()
                && m.compatibleFrom() > expected()).toList();
        if (!newer.isEmpty()) {
            throw new IdempotencyDefinitionException("IDEM-D024 " + describe(found) + ", written by a newer release:"
                    + " after " + newer.get(0).script() + " only a library of schema version "
                    + newer.get(0).compatibleFrom() + " or later works on them, and this one is of version "
                    + expected() + ". Deploy the newer release");
        }
        if (version > expected()) {
            LOG.info("IDEM-I015 " + describe(found) + ", newer than this library's " + expected()
                    + ": every later script keeps this version working");
        }
        return found;
    }

    /**
     * Applies the scripts the tables lack, in order, under a database lock (PostgreSQL: a transaction-scoped advisory
     * lock, the whole migration one transaction; MariaDB: a named lock, held while each statement commits on its own;
     * H2: a lock in this JVM). Called outside any transaction (on PostgreSQL also inside one, which it then joins).
     * On a Galera cluster no lock spans the nodes (GET_LOCK is per node): two nodes migrating at once both run the
     * scripts, whose statements may all run twice, and their history rows are written once.
     *
     * @return the migrations applied by this call (none when another node was first)
     */
    public List<Migration> migrate() {
        return connected(c -> {
            // Outside any transaction: on MariaDB and H2 each statement commits on its own, the history row too, before
            // the lock is released; on PostgreSQL the migration is a transaction of its own, committed here (inside a
            // caller's transaction, it commits with that one, and the lock is held until then).
            boolean own = c.getAutoCommit();
            if (!own && dialect != Dialect.POSTGRESQL) {
                throw new IllegalStateException("IDEM-S014 the record table's schema must be migrated outside a"
                        + " transaction on " + dialect + ", where every DDL statement commits on its own");
            }
            if (own && dialect == Dialect.POSTGRESQL) {
                c.setAutoCommit(false);
            }
            MigrationLock lock = new MigrationLock(dialect, galera, table);
            try {
                lock.acquire(c);
                try {
                    List<Migration> applied = applyMissing(c);
                    if (own && dialect == Dialect.POSTGRESQL) {
                        c.commit();
                    }
                    return applied;
                } finally {
                    lock.release(c);
                }
            } catch (SQLException | RuntimeException e) {
                if (own && dialect == Dialect.POSTGRESQL) {
                    c.rollback();
                }
                throw e;
            } finally {
                if (own && dialect == Dialect.POSTGRESQL) {
                    c.setAutoCommit(true);
                }
            }
        });
    }

    private List<Migration> applyMissing(Connection c) throws SQLException {
        int found = read(c).version();
        List<Migration> applied = new ArrayList<>();
        for (Migration migration : ALL) {
            if (migration.version() > found) {
                try (Statement s = c.createStatement()) {
                    for (String statement : statements(migration)) {
                        s.execute(statement);
                    }
                }
                applied.add(migration);
                LOG.info("IDEM-I014 applied " + resource(migration) + " to the record table '" + table
                        + "': schema version " + migration.version());
            }
        }
        return applied;
    }

    /** A migration's statements for this store's table, in order. */
    public List<String> statements(Migration migration) {
        String script;
        try (InputStream in = SchemaMigrations.class.getClassLoader().getResourceAsStream(resource(migration))) {
            if (in == null) {
                throw new IllegalStateException("IDEM-S004 " + resource(migration) + " is missing from the jar");
            }
            script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("IDEM-S004 could not read " + resource(migration), e);
        }
        return split(script, table);
    }

    // A script's statements for a table: each ends with a line ending in ';'; comment lines are left out. An index
    // is named after the table without its schema where the databases want a bare name: in CREATE INDEX (the index
    // goes to its table's schema), in MariaDB's DROP INDEX ... ON and in an index defined in CREATE TABLE (an index
    // belongs to its table there).
    static List<String> split(String script, String table) {
        List<String> statements = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : script.split("\n")) {
            if (line.strip().startsWith("--")) {
                continue;
            }
            current.append(line).append('\n');
            if (line.strip().endsWith(";")) {
                String statement = current.toString().strip();
                statements.add(forTable(statement.substring(0, statement.length() - 1), table));
                current.setLength(0);
            }
        }
        return statements;
    }

    private static final Pattern BARE_INDEX_NAME = Pattern.compile("(CREATE INDEX IF NOT EXISTS |DROP INDEX IF EXISTS (?="
            + DEFAULT_TABLE + "\\w* ON )|\\bINDEX (?=" + DEFAULT_TABLE + "\\w* \\())" + DEFAULT_TABLE);

    private static String forTable(String statement, String table) {
        String bare = table.substring(table.indexOf('.') + 1);
        Matcher index = BARE_INDEX_NAME.matcher(statement);
        StringBuilder named = new StringBuilder();
        int from = 0;
        while (index.find()) {
            named.append(statement, from, index.start()).append(index.group(1)).append('\u0000');
            from = index.end();
        }
        named.append(statement.substring(from));
        return named.toString().replace(DEFAULT_TABLE, table).replace("\u0000", bare);
    }

    private String describe(Found found) {
        if (!found.recordTable()) {
            return "the record table '" + table + "' does not exist";
        }
        if (found.history().isEmpty()) {
            return "the record table '" + table + "' has no schema version (created by a release from before schema"
                    + " versions)";
        }
        return "the record table '" + table + "' is at schema version " + found.version();
    }

    private String missing(int version) {
        return ALL.stream().filter(m -> m.version() > version).map(this::resource)
                .collect(Collectors.joining(", then "));
    }

    private Found read(Connection c) throws SQLException {
        boolean recordTable = exists(c, table);
        List<Applied> history = new ArrayList<>();
        if (exists(c, table + "_schema")) {
            try (Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT version, compatible_from, script FROM " + table + "_schema"
                         + " ORDER BY version")) {
                while (rs.next()) {
                    history.add(new Applied(rs.getInt(1), rs.getInt(2), rs.getString(3)));
                }
            }
        }
        return new Found(recordTable, List.copyOf(history));
    }

    // Asked of the catalog, so that an absent table is an answer, not an error (which would end a PostgreSQL
    // transaction); a schema-qualified name is looked up in its schema, a plain one where the session resolves it.
    private boolean exists(Connection c, String name) throws SQLException {
        String query = switch (dialect) {
            case POSTGRESQL -> "SELECT COUNT(*) FROM (SELECT to_regclass(?) AS t) r WHERE r.t IS NOT NULL";
            case MARIADB -> "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = COALESCE(?, DATABASE())"
                    + " AND TABLE_NAME = ?";
            case H2 -> "SELECT COUNT(*) FROM INFORMATION_SCHEMA.TABLES WHERE UPPER(TABLE_SCHEMA) = UPPER(COALESCE(?,"
                    + " SCHEMA())) AND UPPER(TABLE_NAME) = UPPER(?)";
        };
        try (PreparedStatement ps = c.prepareStatement(query)) {
            if (dialect == Dialect.POSTGRESQL) {
                ps.setString(1, name);
            } else {
                int dot = name.indexOf('.');
                ps.setString(1, dot < 0 ? null : name.substring(0, dot));
                ps.setString(2, name.substring(dot + 1));
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1) > 0;
            }
        }
    }

    private <T> T connected(SqlWork<T> work) {
        try (Connection c = dataSource.getConnection()) {
            return work.apply(c);
        } catch (SQLException e) {
            throw new IllegalStateException("IDEM-S013 the schema of the record table '" + table + "' could not be"
                    + " read or migrated (SQLState " + e.getSQLState() + ", code " + e.getErrorCode() + "): "
                    + e.getMessage(), e);
        }
    }

    @FunctionalInterface
    private interface SqlWork<T> {
        T apply(Connection connection) throws SQLException;
    }
}
