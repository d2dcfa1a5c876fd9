package dev.idempotency.reliability;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * A Redis server of the fault suite's own (port 6390, no persistence), for the faults that must not touch the
 * machine's shared one (6379): kill -9, kill -STOP / -CONT, FLUSHALL, a restart empty.
 */
final class DedicatedRedis implements AutoCloseable {
    static final int PORT = 6390;
    private Process process;

    static DedicatedRedis start() throws IOException, InterruptedException {
        DedicatedRedis redis = new DedicatedRedis();
        redis.boot();
        return redis;
    }

    String url() {
        return "redis://127.0.0.1:" + PORT;
    }

    /** Starts it (again, empty) and waits until it answers PING. */
    void boot() throws IOException, InterruptedException {
        if (reply("PING").startsWith("+PONG")) {
            throw new IllegalStateException("something already answers on port " + PORT);
        }
        process = new ProcessBuilder("redis-server", "--port", Integer.toString(PORT), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            if (reply("PING").startsWith("+PONG")) {
                return;
            }
            TimeUnit.MILLISECONDS.sleep(20);
        }
        throw new IllegalStateException("redis-server on port " + PORT + " did not answer PING within 20 s");
    }

    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    void pause() throws IOException, InterruptedException {
        signal("STOP");
    }

    void resume() throws IOException, InterruptedException {
        signal("CONT");
    }

    void flushAll() {
        String reply = reply("FLUSHALL");
        if (!reply.startsWith("+OK")) {
            throw new IllegalStateException("FLUSHALL answered '" + reply + "'");
        }
    }

    /** How many entries it holds now (-1 when it does not answer). */
    long size() {
        String reply = reply("DBSIZE");
        return reply.startsWith(":") ? Long.parseLong(reply.substring(1)) : -1;
    }

    // One inline command's first reply line, or "" when nothing answers within 2 s.
    private static String reply(String command) {
        try (Socket socket = new Socket("127.0.0.1", PORT)) {
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
        if (new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start().waitFor() != 0) {
            throw new IllegalStateException("kill -" + name + " failed");
        }
    }

    @Override
    public void close() throws Exception {
        if (process != null && process.isAlive()) {
            resume();
            kill();
        }
    }
}
