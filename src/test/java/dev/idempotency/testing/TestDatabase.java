package dev.idempotency.testing;

import io.agroal.api.AgroalDataSource;
import io.agroal.api.configuration.supplier.AgroalDataSourceConfigurationSupplier;
import io.agroal.api.security.NamePrincipal;
import io.agroal.api.security.SimplePassword;
import io.agroal.narayana.NarayanaTransactionIntegration;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A JTA DataSource as WildFly builds it: an Agroal pool enlisted in Narayana transactions, on H2 or
 * on the machine's real PostgreSQL or MariaDB. Outside a transaction its connections autocommit.
 */
public final class TestDatabase {
    private final String name;
    private final String url;
    private final String user;
    private final String password;
    private final AgroalDataSource dataSource;

    private TestDatabase(String name, String url, String user, String password) {
        this(name, url, user, password, 40, java.time.Duration.ofSeconds(20));
    }

    private TestDatabase(String name, String url, String user, String password, int poolSize,
                         java.time.Duration acquisitionTimeout) {
        this.name = name;
        this.url = url;
        this.user = user;
        this.password = password;
        try {
            AgroalDataSourceConfigurationSupplier config = new AgroalDataSourceConfigurationSupplier()
                    .connectionPoolConfiguration(pool -> pool
                            .maxSize(poolSize)
                            .acquisitionTimeout(acquisitionTimeout)
                            .transactionIntegration(new NarayanaTransactionIntegration(
                                    Narayana.transactionManager(), Narayana.registry()))
                            .connectionFactoryConfiguration(factory -> factory
                                    .jdbcUrl(url)
                                    .autoCommit(true)
                                    .principal(user == null ? null : new NamePrincipal(user))
                                    .credential(password == null ? null : new SimplePassword(password))));
            this.dataSource = AgroalDataSource.from(config);
        } catch (SQLException e) {
            throw new IllegalStateException("could not open " + name, e);
        }
    }

    public static TestDatabase h2(String database) {
        return new TestDatabase("H2", "jdbc:h2:mem:" + database + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000", "sa", "");
    }

    public static TestDatabase postgresql() {
        return new TestDatabase("PostgreSQL", "jdbc:postgresql://127.0.0.1:5432/test?ApplicationName=idempotency-tests",
                "postgres", "");
    }

    /** A PostgreSQL DataSource on a port where nothing listens: every connection attempt fails. */
    public static TestDatabase unreachable() {
        return new TestDatabase("unreachable", "jdbc:postgresql://127.0.0.1:1/test?connectTimeout=1", "postgres", "");
    }

    public static TestDatabase mariadb() {
        return new TestDatabase("MariaDB", "jdbc:mariadb://127.0.0.1:3306/test", "root", "");
    }

    /** A MariaDB of a test's own (a Galera node, a multi-host URL), as root without a password. */
    public static TestDatabase mariadb(String url) {
        return new TestDatabase("MariaDB", url, "root", "");
    }

    /** Closes its pool (a database of a test's own, before that database goes away). */
    public void close() {
        dataSource.close();
    }

    /**
     * The same database through a pool whose sessions give up waiting for a row lock after a fraction of
     * a second (PostgreSQL lock_timeout, MariaDB innodb_lock_wait_timeout, H2 LOCK_TIMEOUT).
     */
    public TestDatabase withShortLockWaits() {
        String shortWaits = switch (name) {
            case "H2" -> url.replace("LOCK_TIMEOUT=10000", "LOCK_TIMEOUT=300");
            case "PostgreSQL" -> url + "&options=-c%20lock_timeout=300";
            case "MariaDB" -> url + "?sessionVariables=innodb_lock_wait_timeout=1";
            default -> throw new IllegalStateException(name);
        };
        return new TestDatabase(name, shortWaits, user, password);
    }

    /** The same database through a pool of its own with {@code size} connections, waiting at most that long for one. */
    public TestDatabase withPool(int size, java.time.Duration acquisitionTimeout) {
        return new TestDatabase(name, url, user, password, size, acquisitionTimeout);
    }

    /** A connection of its own, outside the pool and outside any JTA transaction. */
    public Connection raw() throws SQLException {
        return java.sql.DriverManager.getConnection(url, user, password);
    }

    public String name() {
        return name;
    }

    public DataSource dataSource() {
        return dataSource;
    }

    /** Drops a record table and the tables beside it (counters, give-backs, schema history), where they exist. */
    public void dropRecordTables(String table) {
        for (String suffix : java.util.List.of("", "_quota", "_released", "_schema")) {
            update("DROP TABLE IF EXISTS " + table + suffix);
        }
    }

    /** Runs a statement outside any transaction. */
    public int update(String sql, Object... args) {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            return ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    /** Rows of a query as column-label maps (labels lower case), outside any transaction. */
    public List<Map<String, Object>> query(String sql, Object... args) {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                List<Map<String, Object>> rows = new ArrayList<>();
                int columns = rs.getMetaData().getColumnCount();
                while (rs.next()) {
                    Map<String, Object> row = new LinkedHashMap<>();
                    for (int i = 1; i <= columns; i++) {
                        Object value = rs.getObject(i);
                        if (value instanceof java.sql.Blob blob) {
                            value = blob.getBytes(1, (int) blob.length());
                        } else if (value instanceof java.sql.Clob clob) {
                            value = clob.getSubString(1, (int) clob.length());
                        }
                        row.put(rs.getMetaData().getColumnLabel(i).toLowerCase(java.util.Locale.ROOT), value);
                    }
                    rows.add(row);
                }
                return rows;
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    public long count(String sql, Object... args) {
        return ((Number) query(sql, args).get(0).values().iterator().next()).longValue();
    }
}
