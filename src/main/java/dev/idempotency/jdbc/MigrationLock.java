package dev.idempotency.jdbc;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The lock that lets one node at a time migrate a record table's schema (docs/adr/0018): PostgreSQL's
 * transaction-scoped advisory lock, MariaDB's named lock ({@code GET_LOCK}, a session's, held across the implicit
 * commits of DDL; none on Galera, where it is per node), H2's in this JVM.
 */
final class MigrationLock {
    // H2 runs inside one JVM here: its deployments wait for each other on this lock (per database and table).
    private static final Map<String, ReentrantLock> H2_LOCKS = new ConcurrentHashMap<>();
    // How long a MariaDB node waits for another node's migration (GET_LOCK).
    private static final int LOCK_WAIT_SECONDS = 600;

    private final Dialect dialect;
    private final boolean galera;
    private final String table;
    private final String name;

    MigrationLock(Dialect dialect, boolean galera, String table) {
        this.dialect = dialect;
        this.galera = galera;
        this.table = table;
        this.name = "idempotency-cdi schema " + table;
    }

    void acquire(Connection c) throws SQLException {
        switch (dialect) {
            case POSTGRESQL -> {
                // Released with the transaction, once the DDL and the history row committed with it.
                try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_xact_lock(?)")) {
                    ps.setLong(1, lockKey(name));
                    ps.execute();
                }
            }
            case MARIADB -> {
                if (!galera) {
                    try (PreparedStatement ps = c.prepareStatement("SELECT GET_LOCK(?, ?)")) {
                        ps.setString(1, name);
                        ps.setInt(2, LOCK_WAIT_SECONDS);
                        try (ResultSet rs = ps.executeQuery()) {
                            if (!rs.next() || rs.getInt(1) != 1) {
                                throw new IllegalStateException("IDEM-S012 another node's migration of the record"
                                        + " table '" + table + "' held its lock for " + LOCK_WAIT_SECONDS + " s");
                            }
                        }
                    }
                }
            }
            case H2 -> H2_LOCKS.computeIfAbsent(c.getMetaData().getURL() + " " + name, n -> new ReentrantLock()).lock();
        }
    }

    void release(Connection c) throws SQLException {
        switch (dialect) {
            case POSTGRESQL -> {
                // Released with the transaction.
            }
            case MARIADB -> {
                if (!galera) {
                    try (PreparedStatement ps = c.prepareStatement("SELECT RELEASE_LOCK(?)")) {
                        ps.setString(1, name);
                        ps.execute();
                    }
                }
            }
            case H2 -> H2_LOCKS.get(c.getMetaData().getURL() + " " + name).unlock();
        }
    }

    // PostgreSQL's advisory locks are numbers: the first 8 bytes of the name's SHA-256.
    static long lockKey(String name) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(name.getBytes(StandardCharsets.UTF_8));
            long key = 0;
            for (int i = 0; i < 8; i++) {
                key = (key << 8) | (digest[i] & 0xff);
            }
            return key;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
