package dev.idempotency.testing;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** One pool per database for the whole test run: H2, and the machine's real PostgreSQL and MariaDB. */
public final class Databases {
    private static final Map<String, TestDatabase> OPEN = new ConcurrentHashMap<>();

    private Databases() {
    }

    /** {@code h2}, {@code postgresql} or {@code mariadb}; a database that is down fails the test, never skips it. */
    public static TestDatabase named(String name) {
        return OPEN.computeIfAbsent(name, n -> switch (n) {
            case "h2" -> TestDatabase.h2("idempotency");
            case "postgresql" -> TestDatabase.postgresql();
            case "mariadb" -> TestDatabase.mariadb();
            default -> throw new IllegalArgumentException(n);
        });
    }
}
