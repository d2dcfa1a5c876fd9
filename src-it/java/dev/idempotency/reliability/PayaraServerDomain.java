package dev.idempotency.reliability;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The Payara Server domain of the run (src-it/provision.sh payara-server, started by the Arquillian container), as
 * its operator reaches it: its JVM by the pid file the domain writes, {@code asadmin start-domain}, its server log.
 */
final class PayaraServerDomain {
    private final Path domain;
    private final Path asadmin;

    PayaraServerDomain() {
        Path payara = Path.of(System.getProperty("it.server.dir"), "payara6");
        this.domain = payara.resolve("glassfish/domains/domain1");
        this.asadmin = payara.resolve("bin/asadmin");
    }

    URI base() {
        return URI.create("http://127.0.0.1:8080/demo/");
    }

    /** The domain's log from now on, for a test that waits for the server to reach a point. */
    LogWatch watchLog() throws IOException {
        return LogWatch.fromNow(domain.resolve("logs/server.log"));
    }

    /** kill -9 of the domain's JVM: no shutdown hook, no rollback, connections dropped mid-transaction. */
    void crash() throws IOException {
        long pid = Long.parseLong(Files.readString(domain.resolve("config/pid")).trim());
        ProcessHandle java = ProcessHandle.of(pid).orElseThrow(() -> new IllegalStateException(
                "the domain's pid file names " + pid + ", which is not running"));
        java.destroyForcibly();
        java.onExit().join();
    }

    /**
     * {@code asadmin start-domain}, then the demo loaded: start-domain returns once the server listens, some 10 s
     * before its applications are loaded (their requests meanwhile get 404).
     */
    void start() throws IOException, InterruptedException {
        Path answer = Files.createTempFile("asadmin", ".out");
        try (LogWatch log = watchLog()) {
            Process start = new ProcessBuilder(asadmin.toString(), "start-domain", "domain1").redirectErrorStream(true)
                    .redirectOutput(answer.toFile()).start();
            if (!start.waitFor(300, TimeUnit.SECONDS) || start.exitValue() != 0) {
                start.destroyForcibly();
                throw new IllegalStateException("asadmin start-domain failed: " + Files.readString(answer));
            }
            log.await("Loading application [demo] at [/demo]", 1, 300);
        } finally {
            Files.deleteIfExists(answer);
        }
    }
}
