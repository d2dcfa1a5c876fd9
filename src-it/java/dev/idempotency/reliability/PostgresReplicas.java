package dev.idempotency.reliability;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;

/**
 * A PostgreSQL primary and its streaming standby, two clusters of the fault suite's own (pg_createcluster on ports
 * 5437 and 5438, trust on localhost; the machine's 5432 and the other suites' clusters are not touched). Either may
 * be the primary: after a failover the promoted standby stays the primary and the dead one is rebuilt as its standby
 * ({@link #ready}), so that the applications' multi-host URL ({@link #url}) stays the same for every scenario.
 */
final class PostgresReplicas implements Checker.Database, AutoCloseable {
    private static final String DATABASE = "idem_it";
    private static final int[] PORTS = {5437, 5438};
    private static final String[] NAMES = {"idemrepl1", "idemrepl2"};
    private static final long WAIT_SECONDS = 60;
    private final String version;
    private int primary;
    private boolean standbyUp;
    private boolean synchronous;

    private PostgresReplicas(String version) {
        this.version = version;
    }

    /** A fresh primary (an earlier run's clusters are dropped) with an empty database, and its standby streaming. */
    static PostgresReplicas create(boolean synchronous) throws IOException, InterruptedException, SQLException {
        String version = DedicatedPostgres.newestVersion();
        PostgresReplicas replicas = new PostgresReplicas(version);
        for (String name : NAMES) {
            DedicatedPostgres.run(false, "pg_dropcluster", version, name, "--stop");
        }
        replicas.primary = 0;
        replicas.createCluster(0);
        DedicatedPostgres.run(true, "pg_ctlcluster", version, NAMES[0], "start");
        replicas.execute(PORTS[0], "CREATE DATABASE " + DATABASE);
        replicas.ready(synchronous);
        return replicas;
    }

    /**
     * The URL every node's datasource gets: both clusters, the connection goes to whichever is the primary now
     * (pgjdbc's {@code targetServerType=primary}); a host found a standby is tried again after one second, not ten,
     * so that a promoted standby is taken as soon as it is one.
     */
    String url(int node) {
        return "jdbc:postgresql://127.0.0.1:" + PORTS[0] + ",127.0.0.1:" + PORTS[1] + "/" + DATABASE
                + "?targetServerType=primary&hostRecheckSeconds=1&ApplicationName=idem-node" + node;
    }

    /**
     * Before a scenario: the standby streams from the primary (rebuilt by {@code pg_basebackup -R} if it died or was
     * promoted away), and the primary waits for it at every commit when {@code synchronous}
     * ({@code synchronous_standby_names = '*'}, {@code synchronous_commit = on}, the default), or does not (asynchronous
     * replication: a commit is acknowledged before the standby has it).
     */
    void ready(boolean synchronous) throws IOException, InterruptedException, SQLException {
        int standby = 1 - primary;
        // Also after a scenario that failed half-way (its standby stopped, say): rebuilt from the primary.
        if (!standbyUp || count("SELECT COUNT(*) FROM pg_stat_replication WHERE state = 'streaming'") == 0) {
            // Not synchronous while there is no standby (nothing would commit), nor when it connects: the log line
            // awaited below must come after this method's own change.
            setStandbyNames("");
            this.synchronous = false;
            DedicatedPostgres.run(false, "pg_dropcluster", version, NAMES[standby], "--stop");
            createCluster(standby);
            Path data = Path.of("/var/lib/postgresql", version, NAMES[standby]);
            DedicatedPostgres.run(true, "sh", "-c", "rm -rf \"$1\"/*", "clear", data.toString());
            // -R: standby.signal and primary_conninfo in the copy; -X stream: the WAL written meanwhile comes along;
            // a fast checkpoint, not a spread one (minutes after the CREATE DATABASE).
            DedicatedPostgres.run(true, "runuser", "-u", "postgres", "--", "pg_basebackup", "-h", "127.0.0.1", "-p",
                    Integer.toString(PORTS[primary]), "-U", "postgres", "-D", data.toString(), "-R", "-X", "stream",
                    "--checkpoint=fast");
            try (LogWatch log = LogWatch.fromNow(logFile(standby))) {
                DedicatedPostgres.run(true, "pg_ctlcluster", version, NAMES[standby], "start");
                log.await("started streaming WAL from primary", WAIT_SECONDS);
            }
            standbyUp = true;
        }
        try (LogWatch log = LogWatch.fromNow(logFile(primary))) {
            setStandbyNames(synchronous ? "*" : "");
            if (synchronous && !this.synchronous) {
                log.await("is now a synchronous standby", WAIT_SECONDS);
            }
        }
        this.synchronous = synchronous;
    }

    /** A setting for every new session of the database ({@code ALTER DATABASE ... SET}), replicated to the standby. */
    void setForEverySession(String parameter, String value) throws SQLException {
        execute(PORTS[primary], "ALTER DATABASE " + DATABASE + " SET " + parameter + " = '" + value + "'");
    }

    /** Crash of the primary: postmaster and backends quit at once (stop -m immediate), nothing more reaches the standby. */
    void killPrimary() throws IOException, InterruptedException {
        DedicatedPostgres.run(true, "pg_ctlcluster", version, NAMES[primary], "stop", "-m", "immediate");
    }

    /** Failover: the standby becomes the primary (pg_ctl promote waits until it accepts writes). */
    void promoteStandby() throws IOException, InterruptedException, SQLException {
        int standby = 1 - primary;
        DedicatedPostgres.run(true, "pg_ctlcluster", version, NAMES[standby], "promote");
        DedicatedPostgres.run(false, "pg_dropcluster", version, NAMES[primary], "--stop");
        primary = standby;
        standbyUp = false;
        // The promoted copy has the old primary's synchronous_standby_names and no standby yet: every commit would wait.
        // A failover tool does the same (Patroni's non-strict synchronous mode) until a standby streams again.
        setStandbyNames("");
        synchronous = false;
    }

    private void setStandbyNames(String names) throws SQLException {
        execute(PORTS[primary], "ALTER SYSTEM SET synchronous_standby_names = '" + names + "'");
        execute(PORTS[primary], "SELECT pg_reload_conf()");
    }

    /** The standby stops (fast shutdown); with synchronous replication every commit on the primary waits for it. */
    void stopStandby() throws IOException, InterruptedException {
        DedicatedPostgres.run(true, "pg_ctlcluster", version, NAMES[1 - primary], "stop");
    }

    /** Starts the stopped standby again; it replays its WAL and streams again from whatever primary it finds. */
    void startStandby() throws IOException, InterruptedException {
        DedicatedPostgres.run(true, "pg_ctlcluster", version, NAMES[1 - primary], "start");
    }

    /** Waits until at least {@code n} backends of the primary wait in their COMMIT for the standby (wait event SyncRep). */
    void awaitCommitsWaitingForTheStandby(int n) throws SQLException, InterruptedException {
        dev.idempotency.testing.Conditions.await(n + " commits waiting for the standby",
                java.time.Duration.ofSeconds(WAIT_SECONDS), () -> commitsWaitingForTheStandby() >= n);
    }

    int commitsWaitingForTheStandby() throws SQLException {
        return count("SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'");
    }

    /**
     * pg_cancel_backend on every backend waiting in its COMMIT for the standby: PostgreSQL ends the wait with only a
     * WARNING ("committed locally, but might not have been replicated") and the client sees a successful commit.
     *
     * @return the backends cancelled
     */
    int cancelCommitsWaitingForTheStandby() throws SQLException {
        return count("SELECT COUNT(pg_cancel_backend(pid)) FROM pg_stat_activity WHERE wait_event = 'SyncRep'");
    }

    private int count(String sql) throws SQLException {
        try (Connection c = connectTo(primary); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /** The checker reads the primary of the moment. */
    @Override
    public Connection connect() throws SQLException {
        return connectTo(primary);
    }

    @Override
    public String utcNow() {
        return "(now() AT TIME ZONE 'UTC')";
    }

    private Connection connectTo(int cluster) throws SQLException {
        return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + PORTS[cluster] + "/" + DATABASE
                + "?ApplicationName=idem-checker", "postgres", "");
    }

    private void execute(int port, String sql) throws SQLException {
        String database = sql.startsWith("CREATE DATABASE") ? "postgres" : DATABASE;
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/" + database,
                "postgres", ""); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private void createCluster(int n) throws IOException, InterruptedException {
        DedicatedPostgres.run(true, "pg_createcluster", version, NAMES[n], "--port", Integer.toString(PORTS[n]), "--",
                "--auth-local=trust", "--auth-host=trust");
        // Two-phase commit for a message's XA transaction; a hot standby needs at least the primary's value.
        DedicatedPostgres.run(true, "pg_conftool", version, NAMES[n], "set", "max_prepared_transactions", "64");
    }

    private Path logFile(int n) {
        return Path.of("/var/log/postgresql/postgresql-" + version + "-" + NAMES[n] + ".log");
    }

    @Override
    public void close() {
        try {
            for (String name : NAMES) {
                DedicatedPostgres.run(false, "pg_dropcluster", version, name, "--stop");
            }
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException("could not drop the replicated clusters", e);
        }
    }
}
