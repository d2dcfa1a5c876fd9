package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyDefinitionException;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;

/**
 * A session of the DataSource on a MariaDB Galera Cluster node, as the store finds it at start-up: whether its reads
 * wait for the cluster's causality ({@code wsrep_sync_wait}, bit 1 for reads). Without it a node answers a read from
 * what it has applied so far, which may lack a record another node committed a moment before (seen here 4 times in
 * 1000 reads right after such a commit).
 */
record GaleraSession(int syncWait) {
    private static final int READS = 1;

    /** The session's Galera settings; empty when the database is no Galera node (wsrep off, or MySQL). */
    static Optional<GaleraSession> of(Connection c) {
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT @@global.wsrep_on, @@session.wsrep_sync_wait")) {
            if (!rs.next() || !rs.getBoolean(1)) {
                return Optional.empty();
            }
            return Optional.of(new GaleraSession(rs.getInt(2)));
        } catch (SQLException noSuchVariable) {
            // MySQL, or a MariaDB built without wsrep: 1193 unknown system variable.
            return Optional.empty();
        }
    }

    /**
     * @throws IdempotencyDefinitionException when the session's reads are not causal
     */
    GaleraSession requireCausalReads() {
        if ((syncWait & READS) == 0) {
            throw new IdempotencyDefinitionException("IDEM-D021 the record store's DataSource is a MariaDB Galera Cluster"
                    + " node whose sessions read without waiting for the cluster (wsrep_sync_wait=" + syncWait + "): a"
                    + " replay on one node could miss a record just committed on another. Add"
                    + " sessionVariables=wsrep_sync_wait=1 to the connection URL (or run SET SESSION wsrep_sync_wait=1"
                    + " as the pool's new-connection SQL)");
        }
        return this;
    }
}
