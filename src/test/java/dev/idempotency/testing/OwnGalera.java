package dev.idempotency.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A MariaDB Galera Cluster of a test's own: {@code n} local {@code mariadbd} instances from Debian's {@code galera-4},
 * each with its own data directory and its own SQL, group-communication, IST and SST ports, never the machine's
 * shared MariaDB (3306). The first node bootstraps the cluster; the others join it by a state transfer (rsync).
 * The servers run as the {@code mysql} user (the rsync transfer refuses root's files).
 */
public final class OwnGalera implements AutoCloseable {
    private static final String PROVIDER = "/usr/lib/galera/libgalera_smm.so";
    private static final long START_SECONDS = 90;

    private final Path base;
    private final List<Node> nodes = new ArrayList<>();

    private OwnGalera(Path base) {
        this.base = base;
    }

    private static OwnGalera shared;
    private static RuntimeException sharedFailed;

    /**
     * The test run's three-node cluster, started on first use and stopped when the JVM ends: for tests that leave
     * every node running and synced when they end (a node they isolate or kill, they bring back).
     */
    public static synchronized OwnGalera shared() {
        if (sharedFailed != null) {
            throw sharedFailed;
        }
        if (shared == null) {
            try {
                shared = start(3);
            } catch (IOException e) {
                sharedFailed = new IllegalStateException("could not start the test run's Galera cluster", e);
                throw sharedFailed;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while starting the Galera cluster", e);
            } catch (RuntimeException e) {
                sharedFailed = e;
                throw e;
            }
            OwnGalera started = shared;
            Runtime.getRuntime().addShutdownHook(new Thread(started::close, "galera-stop"));
        }
        return shared;
    }

    /** Whether this machine has the Galera provider (Debian's {@code galera-4}) and rsync for the state transfer. */
    public static boolean installed() {
        return Files.isExecutable(Path.of("/usr/bin/rsync")) && Files.exists(Path.of(PROVIDER));
    }

    /** Starts a cluster of {@code size} nodes and waits until each is synced and accepts connections. */
    public static OwnGalera start(int size) throws IOException, InterruptedException {
        if (!installed()) {
            throw new IllegalStateException("Galera is not installed: apt-get install galera-4 rsync"
                    + " (scripts/services.sh does it)");
        }
        Path base = Files.createTempDirectory("galera-");
        OwnGalera cluster = new OwnGalera(base);
        try {
            // Four ports a node (SQL, gcomm, IST, SST), all different: chosen while each is held open.
            java.util.Iterator<Integer> ports = freePorts(4 * size).iterator();
            for (int i = 1; i <= size; i++) {
                cluster.nodes.add(new Node(i, base.resolve("node" + i), ports.next(), ports.next(), ports.next(),
                        ports.next()));
            }
            String addresses = cluster.nodes.stream().map(n -> "127.0.0.1:" + n.gcommPort)
                    .collect(Collectors.joining(","));
            // The servers' own user must reach and own every directory (the temporary one is root's, mode 700).
            run(List.of("chmod", "755", base.toString()));
            for (Node node : cluster.nodes) {
                node.prepare(addresses);
            }
            for (Node node : cluster.nodes) {
                node.boot(node.number == 1);
            }
            cluster.node(1).sql("CREATE DATABASE IF NOT EXISTS test");
        } catch (java.sql.SQLException e) {
            cluster.close();
            throw new IOException("could not create the database test on the Galera cluster", e);
        } catch (IOException | InterruptedException | RuntimeException e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    private static void chown(Path dir) throws IOException, InterruptedException {
        run(List.of("chown", "-R", "mysql:mysql", dir.toString()));
    }

    // Ports free now and distinct: a socket closed before the next is opened may hand the same port out again (seen:
    // two nodes on one gcomm port, and the third could not bind it).
    private static List<Integer> freePorts(int count) throws IOException {
        List<ServerSocket> held = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                held.add(new ServerSocket(0));
            }
            return held.stream().map(ServerSocket::getLocalPort).toList();
        } finally {
            for (ServerSocket socket : held) {
                socket.close();
            }
        }
    }

    /** Node {@code number}, from 1. */
    public Node node(int number) {
        return nodes.get(number - 1);
    }

    public List<Node> nodes() {
        return List.copyOf(nodes);
    }

    /** A multi-host URL over every node, tried in order (Connector/J's {@code sequential} mode). */
    public String sequentialUrl(String parameters) {
        return "jdbc:mariadb:sequential://" + nodes.stream().map(n -> "127.0.0.1:" + n.sqlPort)
                .collect(Collectors.joining(",")) + "/test" + (parameters.isEmpty() ? "" : "?" + parameters);
    }

    @Override
    public void close() {
        for (Node node : nodes) {
            node.kill();
        }
        try {
            run(List.of("rm", "-rf", base.toString()));
        } catch (IOException | InterruptedException e) {
            // A temporary directory left behind.
        }
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed:\n" + output);
        }
        return output;
    }

    /** One {@code mariadbd} of the cluster. */
    public static final class Node {
        private final int number;
        private final Path dir;
        private final int sqlPort;
        private final int gcommPort;
        private final int istPort;
        private final int sstPort;
        private Process process;
        private BlockingQueue<String> log;
        private volatile boolean isolated;

        Node(int number, Path dir, int sqlPort, int gcommPort, int istPort, int sstPort) {
            this.number = number;
            this.dir = dir;
            this.sqlPort = sqlPort;
            this.gcommPort = gcommPort;
            this.istPort = istPort;
            this.sstPort = sstPort;
        }

        public int number() {
            return number;
        }

        public int sqlPort() {
            return sqlPort;
        }

        /** This node's JDBC URL on database {@code test}, with {@code parameters} (no leading '?'). */
        public String url(String parameters) {
            return "jdbc:mariadb://127.0.0.1:" + sqlPort + "/test" + (parameters.isEmpty() ? "" : "?" + parameters);
        }

        private String adminUrl() {
            return "jdbc:mariadb://127.0.0.1:" + sqlPort + "/";
        }

        private void prepare(String clusterAddresses) throws IOException, InterruptedException {
            Files.createDirectories(dir.resolve("data"));
            chown(dir);
            // A --defaults-file is read instead of /etc/mysql/my.cnf, so nothing of the shared server leaks in.
            Files.writeString(dir.resolve("my.cnf"), String.join("\n",
                    "[mysqld]",
                    "datadir=" + dir.resolve("data"),
                    "socket=" + dir.resolve("mysqld.sock"),
                    "pid-file=" + dir.resolve("mysqld.pid"),
                    "port=" + sqlPort,
                    "bind-address=127.0.0.1",
                    "user=mysql",
                    "binlog_format=ROW",
                    "default_storage_engine=InnoDB",
                    "innodb_autoinc_lock_mode=2",
                    "innodb_buffer_pool_size=64M",
                    "innodb_flush_log_at_trx_commit=2",
                    "max_connections=300",
                    "wsrep_on=ON",
                    "wsrep_provider=" + PROVIDER,
                    "wsrep_cluster_name=idempotency-test",
                    "wsrep_cluster_address=gcomm://" + clusterAddresses,
                    "wsrep_node_name=node" + number,
                    "wsrep_node_address=127.0.0.1:" + gcommPort,
                    "wsrep_sst_method=rsync",
                    "wsrep_sst_receive_address=127.0.0.1:" + sstPort,
                    // Galera's default IST port is the gcomm port + 1: on one host, another node's gcomm port.
                    // Short failure detection, so that a killed or cut-off node leaves the group in seconds.
                    "wsrep_provider_options=\"gmcast.listen_addr=tcp://127.0.0.1:" + gcommPort + ";ist.recv_addr=127.0.0.1:"
                            + istPort + ";evs.suspect_timeout=PT3S;evs.inactive_timeout=PT6S;evs.install_timeout=PT6S;"
                            + "gcache.size=64M\"",
                    ""));
            run(List.of("mariadb-install-db", "--no-defaults", "--datadir=" + dir.resolve("data"), "--user=mysql",
                    "--auth-root-authentication-method=normal", "--skip-test-db"));
        }

        private void boot(boolean newCluster) throws IOException, InterruptedException {
            List<String> command = new ArrayList<>(List.of("/usr/sbin/mariadbd", "--defaults-file=" + dir.resolve("my.cnf")));
            if (newCluster) {
                command.add("--wsrep-new-cluster");
            }
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
            log = new LinkedBlockingQueue<>();
            BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            Path logFile = dir.resolve("node.log");
            Thread reader = new Thread(() -> {
                try (var file = Files.newBufferedWriter(logFile, StandardCharsets.UTF_8,
                        java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND)) {
                    for (String line = out.readLine(); line != null; line = out.readLine()) {
                        log.add(line);
                        file.write(line);
                        file.newLine();
                        file.flush();
                    }
                } catch (IOException ended) {
                    // The process is gone.
                }
            }, "galera-log-" + number);
            reader.setDaemon(true);
            reader.start();
            // Both, in either order: a bootstrapping node syncs first, a joiner opens its port before it is synced.
            awaitLogs(List.of("Synchronized with group, ready for connections", "mariadbd: ready for connections"));
        }

        private void awaitLogs(List<String> texts) throws InterruptedException {
            java.util.Set<String> missing = new java.util.LinkedHashSet<>(texts);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_SECONDS);
            for (long left = deadline - System.nanoTime(); left > 0 && !missing.isEmpty();
                 left = deadline - System.nanoTime()) {
                String line = log.poll(left, TimeUnit.NANOSECONDS);
                if (line != null) {
                    missing.removeIf(line::contains);
                } else if (!process.isAlive()) {
                    break;
                }
            }
            if (!missing.isEmpty()) {
                throw new IllegalStateException("Galera node " + number + " never logged " + missing
                        + "; the end of its log:\n" + tail(dir.resolve("node.log"), 40));
            }
        }

        /** Starts it again after {@link #kill()}: it rejoins the running cluster by a state transfer. */
        public void restart() throws IOException, InterruptedException {
            chown(dir);
            boot(false);
        }

        /** Waits for a line of its log that contains {@code text}. */
        public String awaitLog(String text, long seconds) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            for (long left = deadline - System.nanoTime(); left > 0; left = deadline - System.nanoTime()) {
                String line = log.poll(left, TimeUnit.NANOSECONDS);
                if (line != null && line.contains(text)) {
                    return line;
                }
                if (line == null && !process.isAlive()) {
                    break;
                }
            }
            throw new IllegalStateException("Galera node " + number + " never logged '" + text + "'; the end of its log:\n"
                    + tail(dir.resolve("node.log"), 40));
        }

        private static String tail(Path file, int lines) {
            try {
                List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
                return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
            } catch (IOException e) {
                return "(unreadable: " + e + ")";
            }
        }

        /** Whether its process runs (it may still be joining). */
        public boolean running() {
            return process != null && process.isAlive();
        }

        /** kill -9. */
        public void kill() {
            if (process != null && process.isAlive()) {
                process.destroyForcibly();
                try {
                    process.waitFor(20, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /**
         * Cuts it off from the other nodes' group communication ({@code gmcast.isolate}) and waits until it has seen
         * itself alone (no primary component): it then refuses every query with 1047; {@link #rejoin()} ends it.
         */
        public void isolate() throws java.sql.SQLException, InterruptedException {
            sql("SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'");
            isolated = true;
            awaitLog("New COMPONENT: primary = no", START_SECONDS);
        }

        /** Ends {@link #isolate()} and waits until it is synced with the group again; nothing when not isolated. */
        public void rejoin() throws java.sql.SQLException, InterruptedException {
            if (!isolated) {
                return;
            }
            sql("SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'");
            isolated = false;
            awaitLog("Synchronized with group", START_SECONDS);
        }

        /** A global status variable's value ({@code wsrep_cluster_size}, {@code wsrep_local_state_comment}). */
        public String status(String variable) throws java.sql.SQLException {
            try (var c = java.sql.DriverManager.getConnection(adminUrl(), "root", "");
                 var ps = c.prepareStatement("SHOW GLOBAL STATUS LIKE ?")) {
                ps.setString(1, variable);
                try (var rs = ps.executeQuery()) {
                    return rs.next() ? rs.getString(2) : null;
                }
            }
        }

        /** One statement on a connection of its own, as root. */
        public void sql(String statement) throws java.sql.SQLException {
            try (var c = java.sql.DriverManager.getConnection(adminUrl(), "root", ""); var s = c.createStatement()) {
                s.execute(statement);
            }
        }
    }
}
