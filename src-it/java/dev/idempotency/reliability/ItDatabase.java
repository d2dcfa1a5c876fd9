package dev.idempotency.reliability;

import dev.idempotency.jdbc.Dialect;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/**
 * The database of a real-server run ({@code -Dit.db}) as the fault tests reach it: the URL each node's
 * datasource gets, and the checker's own connection. PostgreSQL is the tests' own cluster on port 5433
 * (src-it/it-postgres.sh), MariaDB the machine's service (database idem_it, recreated by src-it/provision.sh); H2 is an H2 TCP server in the test's JVM, so that
 * two nodes and the checker share one database.
 */
enum ItDatabase implements Checker.Database {
    POSTGRESQL("PostgreSQL", "postgresql", "jdbc:postgresql://127.0.0.1:5433/idem_it", "postgres", "postgres", Dialect.POSTGRESQL),
    MARIADB("MariaDB", "mariadb", "jdbc:mariadb://127.0.0.1:3306/idem_it", "root", "", Dialect.MARIADB),
    H2("H2 (TCP server)", "h2", "jdbc:h2:tcp://127.0.0.1:" + H2Server.PORT + "/mem:idem_it", "sa", "sa", Dialect.H2);

    final String title;
    /** As server-config names it (scripts/provision-wildfly.sh, configure.sh). */
    final String name;
    private final String url;
    private final String user;
    private final String password;
    final Dialect dialect;

    ItDatabase(String title, String name, String url, String user, String password, Dialect dialect) {
        this.title = title;
        this.name = name;
        this.url = url;
        this.user = user;
        this.password = password;
        this.dialect = dialect;
    }

    static ItDatabase current() {
        return valueOf(System.getProperty("it.db", "postgresql").toUpperCase(java.util.Locale.ROOT));
    }

    /** The datasource URL of node {@code n}; on PostgreSQL its connections carry ApplicationName=idem-node{n}. */
    String nodeUrl(int n) {
        return switch (this) {
            case POSTGRESQL -> url + "?ApplicationName=idem-node" + n;
            case MARIADB -> url;
            case H2 -> url + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000";
        };
    }

    /** Before the nodes start: H2 needs its server (the other two are the machine's). */
    void start() throws SQLException {
        if (this == H2) {
            H2Server.start();
        }
    }

    void stop() {
        if (this == H2) {
            H2Server.stop();
        }
    }

    @Override
    public Connection connect() throws SQLException {
        return DriverManager.getConnection(this == POSTGRESQL ? url + "?ApplicationName=idem-checker" : url, user, password);
    }

    /** The database's current UTC time, as an SQL expression (the store's own query). */
    @Override
    public String utcNow() {
        return "(" + dialect.utcNowQuery() + ")";
    }

    /** A TCP server on an in-memory H2, in this JVM, for as long as the fault test runs. */
    private static final class H2Server {
        static final int PORT = 9193;
        private static org.h2.tools.Server server;
        private static Connection keeper;

        static synchronized void start() throws SQLException {
            if (server == null) {
                server = org.h2.tools.Server.createTcpServer("-tcpPort", Integer.toString(PORT), "-ifNotExists").start();
                // The first connection creates the database and its user; the keeper holds it open in memory.
                keeper = DriverManager.getConnection(H2.url + ";DB_CLOSE_DELAY=-1", H2.user, H2.password);
            }
        }

        static synchronized void stop() {
            if (server != null) {
                try {
                    keeper.close();
                } catch (SQLException ignored) {
                    // the server goes anyway
                }
                server.stop();
                server = null;
            }
        }
    }
}
