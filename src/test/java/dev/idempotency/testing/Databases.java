package dev.idempotency.testing;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** One pool per database for the whole test run: H2, and the machine's real PostgreSQL and MariaDB. */
public final class Databases {
    private static final Map<String, TestDatabase> OPEN = new ConcurrentHashMap<>();
    /** The connection parameters of a Galera node's DataSource: reads wait for what the cluster committed. */
    public static final String GALERA_SESSION = "sessionVariables=wsrep_sync_wait=1";

    private Databases() {
    }

    /**
     * {@code h2}, {@code postgresql}, {@code mariadb}, or {@code galera} and {@code galera-node2} (two nodes of one
     * cluster of the run's own) (with {@code -short-lock-waits}: the same database through a
     * pool of its own whose sessions stop waiting for row locks early); a database that is down fails the test.
     */
    public static TestDatabase named(String name) {
        if (name.endsWith("-short-lock-waits")) {
            TestDatabase same = named(name.substring(0, name.indexOf('-')));
            return OPEN.computeIfAbsent(name, n -> same.withShortLockWaits());
        }
        return OPEN.computeIfAbsent(name, n -> switch (n) {
            case "h2" -> TestDatabase.h2("idempotency");
            case "postgresql" -> TestDatabase.postgresql();
            case "mariadb" -> TestDatabase.mariadb();
            // Nodes 1 and 2 of the run's own Galera cluster, read causally as the README's datasource settings say.
            case "galera" -> TestDatabase.mariadb(OwnGalera.shared().node(1).url(GALERA_SESSION));
            case "galera-node2" -> TestDatabase.mariadb(OwnGalera.shared().node(2).url(GALERA_SESSION));
            default -> throw new IllegalArgumentException(n);
        });
    }
}
