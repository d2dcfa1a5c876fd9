package dev.idempotency.testing;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** One pool per database for the whole test run: H2, and the machine's real PostgreSQL and MariaDB. */
public final class Databases {
    private static final Map<String, TestDatabase> OPEN = new ConcurrentHashMap<>();

    private Databases() {
    }

    /**
     * {@code h2}, {@code postgresql} or {@code mariadb} (with {@code -short-lock-waits}: the same database through a
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
            default -> throw new IllegalArgumentException(n);
        });
    }
}
