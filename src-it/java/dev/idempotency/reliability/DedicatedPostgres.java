package dev.idempotency.reliability;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A PostgreSQL cluster of the fault suite's own (pg_createcluster, port 5434, trust on localhost), for the
 * faults that must not touch the machine's shared database: crash (stop -m immediate), restart, drop.
 */
final class DedicatedPostgres implements Checker.Database, AutoCloseable {
    private static final String CLUSTER = "idemfault";
    static final int PORT = 5434;
    private final String version;

    private DedicatedPostgres(String version) {
        this.version = version;
    }

    /** A fresh cluster (an earlier run's is dropped), started, with an empty database idem_fault. */
    static DedicatedPostgres create() throws IOException, InterruptedException {
        String version = newestVersion();
        DedicatedPostgres db = new DedicatedPostgres(version);
        run(false, "pg_dropcluster", version, CLUSTER, "--stop");
        run(true, "pg_createcluster", version, CLUSTER, "--port", Integer.toString(PORT), "--",
                "--auth-local=trust", "--auth-host=trust");
        // Two-phase commit, for a message's XA transaction (the broker's branch and the datasource's).
        run(true, "pg_conftool", version, CLUSTER, "set", "max_prepared_transactions", "64");
        db.start();
        run(true, "psql", "-q", "-h", "127.0.0.1", "-p", Integer.toString(PORT), "-U", "postgres", "-d", "postgres",
                "-c", "CREATE DATABASE idem_fault");
        return db;
    }

    /**
     * The JDBC URL of node {@code n}'s datasource through {@code port} (its connections named idem-node{n}).
     * prepareThreshold=0: every statement goes out with its SQL text (no named server-side statements), so
     * that a proxy in between can tell the transactions apart by what they say.
     */
    String nodeUrl(int n, int port) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/idem_fault?ApplicationName=idem-node" + n + "&prepareThreshold=0";
    }

    /** Crash: the postmaster and its backends quit at once, no checkpoint; the next start recovers from the WAL. */
    void crash() throws IOException, InterruptedException {
        run(true, "pg_ctlcluster", version, CLUSTER, "stop", "-m", "immediate");
    }

    void start() throws IOException, InterruptedException {
        run(true, "pg_ctlcluster", version, CLUSTER, "start");
    }

    @Override
    public Connection connect() throws SQLException {
        return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + PORT + "/idem_fault?ApplicationName=idem-checker",
                "postgres", "");
    }

    @Override
    public String utcNow() {
        return "(now() AT TIME ZONE 'UTC')";
    }

    @Override
    public void close() {
        try {
            run(false, "pg_dropcluster", version, CLUSTER, "--stop");
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException("could not drop the dedicated cluster", e);
        }
    }

    /** The newest PostgreSQL server installed (the machine's shared PostgreSQL is one of its clusters). */
    static String newestVersion() throws IOException {
        try (var dirs = Files.list(Path.of("/usr/lib/postgresql"))) {
            return dirs.map(p -> p.getFileName().toString()).filter(v -> v.matches("\\d+"))
                    .max(Comparator.comparingInt(Integer::parseInt))
                    .orElseThrow(() -> new IllegalStateException("no PostgreSQL server in /usr/lib/postgresql"));
        }
    }

    /** A command of Debian's PostgreSQL tools (pg_createcluster, pg_ctlcluster...), with its output in the error. */
    static void run(boolean mustSucceed, String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException(String.join(" ", command) + " did not finish");
        }
        if (mustSucceed && p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed: " + output);
        }
    }
}
