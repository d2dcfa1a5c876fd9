package dev.idempotency.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * A Redis server of a test's own, on a free port and without persistence, for what must never happen to the
 * machine's shared one (6379): {@code kill -9}, {@code kill -STOP}, {@code FLUSHALL}, a restart empty.
 */
public final class OwnRedis implements AutoCloseable {
    private final int port;
    private final java.util.List<String> command;
    private Process process;
    private java.util.concurrent.BlockingQueue<String> log;

    private OwnRedis(int port, java.util.List<String> command) {
        this.port = port;
        this.command = command;
    }

    public static OwnRedis start() throws IOException, InterruptedException {
        return start(freePort());
    }

    /** A replica of {@code master}, on a port of its own. */
    public static OwnRedis replicaOf(OwnRedis master) throws IOException, InterruptedException {
        return start(freePort(), "--replicaof", "127.0.0.1", Integer.toString(master.port));
    }

    /**
     * A Sentinel watching {@code master} under the name {@code name}, deciding alone (quorum 1) and fast: the master
     * is down after 500 ms without an answer.
     */
    public static OwnRedis sentinel(OwnRedis master, String name) throws IOException, InterruptedException {
        int port = freePort();
        java.nio.file.Path config = java.nio.file.Files.createTempFile("sentinel-", ".conf");
        java.nio.file.Files.writeString(config, String.join("\n", "port " + port, "bind 127.0.0.1",
                "sentinel monitor " + name + " 127.0.0.1 " + master.port + " 1",
                "sentinel down-after-milliseconds " + name + " 500", "sentinel failover-timeout " + name + " 2000", ""));
        OwnRedis sentinel = new OwnRedis(port, java.util.List.of("redis-server", config.toString(), "--sentinel"));
        sentinel.boot();
        return sentinel;
    }

    /** A master for a Redis Cluster, alone until {@link #joinCluster} (its node file in a directory of its own). */
    public static OwnRedis clusterNode() throws IOException, InterruptedException {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("redis-cluster-");
        dir.toFile().deleteOnExit();
        return start(freePort(), "--cluster-enabled", "yes", "--cluster-config-file",
                dir.resolve("nodes.conf").toString(), "--cluster-node-timeout", "1000");
    }

    /**
     * Makes one cluster of {@code masters} (their slots shared out, no replicas) with {@code redis-cli --cluster create},
     * and waits until each has logged that the cluster's state is ok.
     */
    public static void joinCluster(java.util.List<OwnRedis> masters) throws IOException, InterruptedException {
        java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of("redis-cli", "--cluster", "create"));
        masters.forEach(m -> command.add("127.0.0.1:" + m.port));
        command.addAll(java.util.List.of("--cluster-replicas", "0", "--cluster-yes"));
        Process create = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(create.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!create.waitFor(60, TimeUnit.SECONDS) || create.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed:\n" + output);
        }
        for (OwnRedis master : masters) {
            master.awaitLog("Cluster state changed: ok");
        }
    }

    private static OwnRedis start(int port, String... extra) throws IOException, InterruptedException {
        java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of("redis-server", "--port",
                Integer.toString(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "no"));
        command.addAll(java.util.List.of(extra));
        OwnRedis redis = new OwnRedis(port, command);
        redis.boot();
        return redis;
    }

    private static int freePort() throws IOException {
        try (ServerSocket free = new ServerSocket(0)) {
            return free.getLocalPort();
        }
    }

    public int port() {
        return port;
    }

    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    /**
     * Starts it (again, empty) and waits for its log to say it is ready ("Ready to accept connections"; a Sentinel's,
     * that it monitors its master).
     */
    public void boot() throws IOException, InterruptedException {
        process = new ProcessBuilder(command).redirectErrorStream(true).start();
        log = new java.util.concurrent.LinkedBlockingQueue<>();
        java.io.BufferedReader out = new java.io.BufferedReader(new java.io.InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8));
        Thread reader = new Thread(() -> {
            try {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    log.add(line);
                }
            } catch (IOException ended) {
                // The process is gone.
            }
        }, "redis-log-" + port);
        reader.setDaemon(true);
        reader.start();
        awaitLog(command.contains("--sentinel") ? "+monitor master" : "Ready to accept connections");
    }

    /** Waits (20 s at most) for a line of its log that contains {@code text}, such as a Sentinel's +switch-master. */
    public String awaitLog(String text) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        for (long left = deadline - System.nanoTime(); left > 0; left = deadline - System.nanoTime()) {
            String line = log.poll(left, TimeUnit.NANOSECONDS);
            if (line != null && line.contains(text)) {
                return line;
            }
        }
        throw new IllegalStateException("redis-server on port " + port + " never logged '" + text + "'");
    }

    /** kill -9. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** kill -STOP: it accepts connections (the kernel does) and answers nothing. */
    public void pause() throws IOException, InterruptedException {
        signal("STOP");
    }

    /** kill -CONT. */
    public void resume() throws IOException, InterruptedException {
        signal("CONT");
    }

    public void flushAll() throws IOException {
        String reply = answers("FLUSHALL");
        if (!reply.startsWith("+OK")) {
            throw new IllegalStateException("FLUSHALL answered " + reply);
        }
    }

    /** How many entries it holds now (-1 when it does not answer). */
    public long size() {
        String reply = answers("DBSIZE");
        return reply.startsWith(":") ? Long.parseLong(reply.substring(1)) : -1;
    }

    /** One inline command's first reply line, or "" when it cannot be sent or read. */
    public String answers(String command) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(2000);
            OutputStream out = socket.getOutputStream();
            out.write((command + "\r\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = socket.getInputStream();
            StringBuilder line = new StringBuilder();
            for (int c = in.read(); c != -1 && c != '\n'; c = in.read()) {
                line.append((char) c);
            }
            return line.toString().trim();
        } catch (IOException e) {
            return "";
        }
    }

    private void signal(String name) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
        if (kill.waitFor() != 0) {
            throw new IllegalStateException("kill -" + name + " failed");
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            try {
                resume();
            } catch (IOException | RuntimeException ignored) {
                // Killed below either way.
            }
            kill();
        }
    }
}
