package dev.idempotency.it;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A second WildFly node on the first one's database (port offset 100), provisioned with the same
 * server-config and the same idempotency secret, running the same demo WAR. Started and stopped by the
 * test, by its own process handle.
 */
final class SecondWildFly implements AutoCloseable {
    static final int PORT_OFFSET = 100;
    private final Process process;
    private final URI base;

    private SecondWildFly(Process process, URI base) {
        this.process = process;
        this.base = base;
    }

    /** Started with the first node's server properties, plus {@code extraProperties} ("name=value" each). */
    static SecondWildFly start(String... extraProperties) throws IOException, InterruptedException {
        Path firstDir = Path.of(System.getProperty("it.server.dir"));
        Path dir = firstDir.resolveSibling(firstDir.getFileName() + "-node2");
        Path root = Path.of(System.getProperty("it.war")).getParent().getParent().getParent().getParent();
        String db = System.getProperty("it.db");
        int port = 8080 + PORT_OFFSET;
        String databaseUrl = "postgresql".equals(db) ? "jdbc:postgresql://127.0.0.1:5433/idem_it"
                : "jdbc:mariadb://127.0.0.1:3306/idem_it";
        ProcessBuilder provision = new ProcessBuilder(root.resolve("scripts/provision-wildfly.sh").toString(),
                dir.toString(), db, "--demo").inheritIO();
        provision.environment().putAll(Map.of(
                "DB_URL", databaseUrl,
                "HTTP_PORT", Integer.toString(port),
                "IDEMPOTENCY_SECRET", Files.readString(Path.of(firstDir + ".secret")).trim(),
                "EXTRA_SYSTEM_PROPERTIES", (Files.readString(Path.of(firstDir + ".properties")).trim() + " "
                        + String.join(" ", extraProperties)).trim()));
        if (provision.start().waitFor() != 0) {
            throw new IllegalStateException("could not provision the second WildFly");
        }
        Path home = dir.resolve("wildfly-" + System.getProperty("it.wildfly.version", "39.0.1.Final"));
        Files.copy(Path.of(System.getProperty("it.war")), home.resolve("standalone/deployments/demo.war"));
        Process server = new ProcessBuilder(home.resolve("bin/standalone.sh").toString(), "-c", "standalone-full.xml", "-b", "127.0.0.1",
                "-Djboss.bind.address.management=127.0.0.1", "-Djboss.socket.binding.port-offset=" + PORT_OFFSET)
                .redirectErrorStream(true).redirectOutput(dir.resolve("console.log").toFile()).start();
        SecondWildFly node = new SecondWildFly(server, URI.create("http://127.0.0.1:" + port + "/demo/"));
        Path deployed = home.resolve("standalone/deployments/demo.war.deployed");
        try {
            dev.idempotency.testing.Conditions.await("the second WildFly deployed the demo", java.time.Duration.ofSeconds(120),
                    () -> {
                        if (!server.isAlive() || Files.exists(home.resolve("standalone/deployments/demo.war.failed"))) {
                            throw new IllegalStateException("the demo failed to deploy");
                        }
                        return Files.exists(deployed);
                    });
        } catch (RuntimeException | AssertionError e) {
            node.close();
            throw new IllegalStateException("the second WildFly did not deploy the demo; see " + dir.resolve("console.log"), e);
        }
        node.awaitHttp();
        return node;
    }

    URI base() {
        return base;
    }

    private void awaitHttp() throws IOException, InterruptedException {
        HttpClient client = HttpClient.newHttpClient();
        dev.idempotency.testing.Conditions.await("the second WildFly answers on " + base, java.time.Duration.ofSeconds(10),
                () -> {
                    try {
                        return client.send(HttpRequest.newBuilder(base.resolve("api/payments")).build(),
                                HttpResponse.BodyHandlers.discarding()).statusCode() == 401;
                    } catch (IOException notYet) {
                        return false; // the listener is not open yet
                    }
                });
    }

    @Override
    public void close() {
        // standalone.sh runs the server as its child: stop both, by handle, never by name.
        process.descendants().forEach(ProcessHandle::destroy);
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
