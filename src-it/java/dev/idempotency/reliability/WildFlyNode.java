package dev.idempotency.reliability;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One WildFly node of a fault test, provisioned with server-config on the run's database and secret,
 * running the demo WAR. The test started it, so the test may crash, pause and resume it — always by the
 * pid of its own JVM, never by name.
 */
public final class WildFlyNode implements AutoCloseable {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final Path dir;
    private final Path home;
    private final int offset;
    private final int bytemanPort;
    /** The node's own system properties, given on the command line at every boot (-Dname=value). */
    private final java.util.List<String> commandLineProperties;
    private Process launcher;

    private WildFlyNode(Path dir, Path home, int offset, int bytemanPort, java.util.List<String> commandLineProperties) {
        this.dir = dir;
        this.home = home;
        this.offset = offset;
        this.bytemanPort = bytemanPort;
        this.commandLineProperties = commandLineProperties;
    }

    public static WildFlyNode start(int n, Map<String, String> extraProperties) throws IOException, InterruptedException {
        return start(n, extraProperties, false);
    }

    /**
     * Starts node {@code n} (port 8080 + 100 (n + 1); node 0, on 8180, is the two-node test's second node) on a fresh
     * copy of the run's node template ({@link #template}); with
     * {@code byteman}, Byteman's agent runs in the node's JVM and listens on port 9290 + n for rules.
     */
    static WildFlyNode start(int n, Map<String, String> extraProperties, boolean byteman)
            throws IOException, InterruptedException {
        return start(n, extraProperties, byteman, ItDatabase.current().nodeUrl(n), java.util.List.of());
    }

    /**
     * The general form: the node's datasource on {@code dbUrl} (a PostgreSQL or MariaDB URL, or the run's
     * database's), and management operations applied offline before the first start (e.g. the transaction timeout).
     */
    static WildFlyNode start(int n, Map<String, String> extraProperties, boolean byteman, String dbUrl,
                             java.util.List<String> operations) throws IOException, InterruptedException {
        return start(n, extraProperties, byteman, dbUrl, operations, Path.of(System.getProperty("it.war")));
    }

    /** Node {@code n} on the run's database, with {@code war} deployed instead of the demo this run built. */
    public static WildFlyNode start(int n, Map<String, String> extraProperties, Path war)
            throws IOException, InterruptedException {
        return start(n, extraProperties, false, ItDatabase.current().nodeUrl(n), java.util.List.of(), war);
    }

    private static WildFlyNode start(int n, Map<String, String> extraProperties, boolean byteman, String dbUrl,
                                     java.util.List<String> operations, Path war) throws IOException, InterruptedException {
        Path first = Path.of(System.getProperty("it.server.dir"));
        Path dir = first.resolveSibling(first.getFileName() + "-fault-node" + n);
        int offset = 100 * (n + 1);
        String db = dbUrl.startsWith("jdbc:postgresql:") ? "postgresql"
                : dbUrl.startsWith("jdbc:mariadb:") ? "mariadb" : ItDatabase.current().name;
        Path template = template(db, dbUrl);
        Process copy = new ProcessBuilder("sh", "-c", "rm -rf \"$1\" && cp -a \"$2\" \"$1\"", "copy", dir.toString(),
                template.toString()).inheritIO().start();
        if (copy.waitFor() != 0) {
            throw new IllegalStateException("could not copy " + template + " to " + dir);
        }
        Path home = dir.resolve("wildfly-" + System.getProperty("it.wildfly.version", "39.0.1.Final"));
        Files.copy(war, home.resolve("standalone/deployments/demo.war"),
                StandardCopyOption.REPLACE_EXISTING);
        int bytemanPort = 0;
        if (byteman) {
            bytemanPort = 9290 + n;
            // standalone.conf already makes org.jboss.byteman a system package for the modules.
            String agent = Path.of(org.jboss.byteman.agent.Main.class.getProtectionDomain().getCodeSource().getLocation()
                    .getPath()).toString();
            Files.writeString(home.resolve("bin/standalone.conf"), "\nJAVA_OPTS=\"$JAVA_OPTS -javaagent:" + agent
                    + "=listener:true,address:127.0.0.1,port:" + bytemanPort + "\"\n", StandardOpenOption.APPEND);
        }
        // What makes this node differ from the template: its database URL and the port the demo calls its acquirer on
        // (both expressions in the template, see parameterize), its own properties, and the caller's operations. A
        // property the configuration does not hold goes on the command line; one it holds is overwritten in the
        // configuration, and every operation applied, offline: by an embedded server, which takes 5-10 s.
        Map<String, String> commandLine = new java.util.LinkedHashMap<>();
        commandLine.put(NODE_DB_URL, dbUrl);
        commandLine.put(NODE_ACQUIRER_URL, "http://127.0.0.1:" + (8080 + offset) + "/demo/api");
        java.util.List<String> offline = new java.util.ArrayList<>(operations);
        String configuration = Files.readString(home.resolve("standalone/configuration/standalone-full.xml"));
        extraProperties.forEach((k, v) -> {
            if (configuration.contains("<property name=\"" + k + "\"")) {
                offline.add(setProperty(k, v));
            } else {
                commandLine.put(k, v);
            }
        });
        WildFlyNode node = new WildFlyNode(dir, home, offset, bytemanPort, commandLine.entrySet().stream()
                .map(e -> "-D" + e.getKey() + "=" + e.getValue()).toList());
        if (!offline.isEmpty()) {
            node.configureOffline(offline);
        }
        node.boot();
        return node;
    }

    private static final Map<String, Path> TEMPLATES = new java.util.HashMap<>();

    /**
     * The run's node configuration on database {@code db} (server-config with the run's secret and properties and the
     * demo's settings), never started: provisioning takes half a minute (unpacking, the driver module, three embedded
     * CLI runs) and every node differs from it in a few attributes only. The stage's server, copied by
     * src-it/provision.sh before its first start, where it is of the same database; else provisioned once per JVM.
     */
    private static synchronized Path template(String db, String dbUrl) throws IOException, InterruptedException {
        Path existing = TEMPLATES.get(db);
        if (existing != null) {
            return existing;
        }
        Path first = Path.of(System.getProperty("it.server.dir"));
        Path template = first.resolveSibling(first.getFileName() + "-node-template-" + db);
        // src-it/provision.sh copied the stage's own server here before it first ran: the same provisioning.
        if (Files.exists(template.resolve(".template"))) {
            parameterize(template, db);
            TEMPLATES.put(db, template);
            return template;
        }
        Path root = Path.of(System.getProperty("it.war")).getParent().getParent().getParent().getParent();
        ProcessBuilder provision = new ProcessBuilder(root.resolve("scripts/provision-wildfly.sh").toString(),
                template.toString(), db, "--demo").inheritIO();
        provision.environment().putAll(Map.of(
                "DB_URL", dbUrl,
                "IDEMPOTENCY_SECRET", Files.readString(Path.of(first + ".secret")).trim(),
                // The run's server properties (src-it/provision.sh); each node adds its own.
                "EXTRA_SYSTEM_PROPERTIES", Files.readString(Path.of(first + ".properties")).trim()));
        if (provision.start().waitFor() != 0) {
            throw new IllegalStateException("could not provision the nodes' template for " + db);
        }
        parameterize(template, db);
        TEMPLATES.put(db, template);
        return template;
    }

    /** The system properties a node is started with: its database URL and the URL the demo calls its acquirer on. */
    private static final String NODE_DB_URL = "idempotency.it.node.db-url";
    private static final String NODE_ACQUIRER_URL = "idempotency.it.node.acquirer-url";

    /**
     * Makes the two settings every node has of its own expressions of the node's command-line properties, once per
     * template: a node whose other properties the configuration does not hold then starts without an offline
     * reconfiguration.
     */
    private static void parameterize(Path template, String db) throws IOException, InterruptedException {
        Path done = template.resolve(".parameterized");
        if (Files.exists(done)) {
            return;
        }
        Path home = template.resolve("wildfly-" + System.getProperty("it.wildfly.version", "39.0.1.Final"));
        String url = "${" + NODE_DB_URL + "}";
        java.util.List<String> operations = java.util.List.of("postgresql".equals(db)
                // An XA datasource property is read-only: replaced.
                ? "/subsystem=datasources/xa-data-source=PaymentsDS/xa-datasource-properties=URL:remove\n"
                        + "/subsystem=datasources/xa-data-source=PaymentsDS/xa-datasource-properties=URL:add(value=\""
                        + url + "\")"
                : "/subsystem=datasources/data-source=PaymentsDS:write-attribute(name=connection-url, value=\"" + url + "\")",
                // A system property's expression must resolve where it is written: the embedded server resolves the
                // default, a node its command line's value.
                setProperty("demo.acquirer.url", "${" + NODE_ACQUIRER_URL + ":http://127.0.0.1:8080/demo/api}"));
        runOffline(home, template.resolve("parameterize.cli"), template.resolve("parameterize.out"), operations);
        // A node lives for minutes and boots up to nine times in a stage: with the client compiler only, a boot with
        // the demo took 11 s instead of 14-16 s (this machine kind, 2 cores); the tests measure no speed.
        Files.writeString(home.resolve("bin/standalone.conf"), "\nJAVA_OPTS=\"$JAVA_OPTS -XX:TieredStopAtLevel=1\"\n",
                StandardOpenOption.APPEND);
        Files.createFile(done);
    }

    // A system property set offline: added, or its value overwritten.
    private static String setProperty(String name, String value) {
        return "if (outcome == success) of /system-property=" + name + ":read-resource\n  /system-property=" + name
                + ":write-attribute(name=value, value=\"" + value + "\")\nelse\n  /system-property=" + name
                + ":add(value=\"" + value + "\")\nend-if";
    }

    public URI base() {
        return URI.create("http://127.0.0.1:" + (8080 + offset) + "/demo/");
    }

    /** MicroProfile Health's readiness on the node's management interface (server-config/wildfly/observability.cli). */
    URI readiness() {
        return URI.create("http://127.0.0.1:" + (9990 + offset) + "/health/ready");
    }

    /** Starts the server on its existing data (after a crash too) and waits until the demo answers. */
    void boot() throws IOException, InterruptedException {
        java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of(home.resolve("bin/standalone.sh").toString(),
                "-c", "standalone-full.xml", "-b", "127.0.0.1", "-Djboss.bind.address.management=127.0.0.1",
                "-Djboss.socket.binding.port-offset=" + offset));
        command.addAll(commandLineProperties);
        launcher = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("console.log").toFile())).start();
        awaitUp();
    }

    /** Returns once the node's demo answers (401 without credentials): started, or reloaded, and deployed. */
    private void awaitUp() {
        dev.idempotency.testing.Conditions.await("node " + offset + " up (see " + dir.resolve("console.log") + ")",
                java.time.Duration.ofSeconds(120), () -> {
                    if (!launcher.isAlive()) {
                        throw new IllegalStateException("node exited while starting; see " + dir.resolve("console.log"));
                    }
                    try {
                        return HTTP.send(HttpRequest.newBuilder(base().resolve("api/payments")).build(),
                                HttpResponse.BodyHandlers.discarding()).statusCode() == 401;
                    } catch (IOException notYet) {
                        return false; // not listening yet
                    }
                });
    }

    /**
     * A rolling change's step, as an operator applies one: sets server system properties (added, or overwritten; kept
     * in the configuration) over the running node's management interface, then reloads the server, which restarts
     * its services and redeploys the application with them on the same data. The JVM keeps running: a stop, an
     * offline change and a cold start took some 40 s, a reload takes a few.
     */
    void reloadWith(Map<String, String> properties) throws IOException, InterruptedException {
        StringBuilder cli = new StringBuilder();
        properties.forEach((k, v) -> cli.append(setProperty(k, v)).append('\n'));
        manage("configure", cli.toString());
        try (LogWatch log = watchLog()) {
            // The operation, not the CLI's reload command: that one gives up waiting for the server after some 6 s.
            // Its answer may be lost as the server restarts its services (the CLI then fails with a
            // CancellationException, seen in CI): the reload is proven by the server's log instead, its "started"
            // line (WFLYSRV0025), then by its demo answering again.
            request("reload", ":reload\n");
            log.await("WFLYSRV0025", 120);
        }
        awaitUp();
    }

    /**
     * Removes the connections of the demo's datasource ({@code PaymentsDS}) that its valid-connection checker finds
     * broken, now, as its background validation does every 5 s: a connection cut under a transaction stays idle in
     * the pool in a state the next transaction cannot use (pgjdbc's XA state) until one of the two removes it.
     */
    void flushInvalidConnections() throws IOException, InterruptedException {
        manage("flush", "/subsystem=datasources/xa-data-source=PaymentsDS:flush-invalid-connection-in-pool\n");
    }

    /** Runs management operations on the running node (jboss-cli, as an operator does); fails when one fails. */
    private void manage(String what, String operations) throws IOException, InterruptedException {
        if (!request(what, operations)) {
            throw new IllegalStateException("could not " + what + " " + dir + ": " + operations.trim() + "; see "
                    + what + ".out");
        }
    }

    /** Sends management operations to the running node; whether the CLI saw them all succeed. */
    private boolean request(String what, String operations) throws IOException, InterruptedException {
        Path script = dir.resolve(what + ".cli");
        Files.writeString(script, operations);
        Process cli = new ProcessBuilder(home.resolve("bin/jboss-cli.sh").toString(), "--connect",
                "--controller=127.0.0.1:" + (9990 + offset), "--file=" + script)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve(what + ".out").toFile())).start();
        if (!cli.waitFor(120, TimeUnit.SECONDS)) {
            cli.destroyForcibly();
            return false;
        }
        return cli.exitValue() == 0;
    }

    /** Management operations on the stopped node's configuration (an embedded server, as configure.sh does). */
    private void configureOffline(java.util.List<String> operations) throws IOException, InterruptedException {
        runOffline(home, dir.resolve("reconfigure.cli"), dir.resolve("console.log"), operations);
    }

    private static void runOffline(Path home, Path script, Path output, java.util.List<String> operations)
            throws IOException, InterruptedException {
        StringBuilder cli = new StringBuilder("embed-server --std-out=discard --server-config=standalone-full.xml\n");
        operations.forEach(o -> cli.append(o).append('\n'));
        cli.append("stop-embedded-server\n");
        Files.writeString(script, cli);
        Process reconfigure = new ProcessBuilder(home.resolve("bin/jboss-cli.sh").toString(), "--file=" + script)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(output.toFile())).start();
        if (reconfigure.waitFor() != 0) {
            throw new IllegalStateException("could not reconfigure " + home + "; see " + output);
        }
    }

    /** Loads Byteman rules into the running node (it was started with the agent). */
    void inject(String name, String rules) throws Exception {
        if (bytemanPort == 0) {
            throw new IllegalStateException("node started without Byteman");
        }
        String answer = new org.jboss.byteman.agent.submit.Submit("127.0.0.1", bytemanPort)
                .addScripts(java.util.List.of(new org.jboss.byteman.agent.submit.ScriptText(name, rules)));
        System.out.println("byteman: " + answer.trim());
    }

    /**
     * Holds the payments of {@code endpoint} right after their record update ({@code CompletionPhase.finish} in {@code Execution.run}),
     * before their transaction commits, for {@code millis}; each logs {@link #HELD_BEFORE_COMMIT} when it gets there.
     */
    void holdBeforeCommit(String endpoint, long millis) throws Exception {
        inject("before-commit", """
                RULE hold a payment after its record update, before its transaction commits
                CLASS dev.idempotency.core.Execution
                METHOD run
                AFTER INVOKE dev.idempotency.core.CompletionPhase.finish
                IF $1.operation().policy().endpoint().equals("%s")
                DO traceln("%s");
                   waitFor("idempotency-fault-test", %d)
                ENDRULE
                """.formatted(endpoint, HELD_BEFORE_COMMIT, millis));
    }

    static final String HELD_BEFORE_COMMIT = "idempotency-fault-test: held before commit";

    /** Waits until the node's log has {@code text} (a rule's traceln goes to the server's stdout), at most 30 s. */
    void awaitLog(String text) throws IOException, InterruptedException {
        try (LogWatch log = LogWatch.fromStart(home.resolve("standalone/log/server.log"), dir.resolve("console.log"))) {
            log.await(text, 30);
        }
    }

    /**
     * The node's log from now on, for a test that waits for the node to reach a point; started before the requests
     * whose lines it waits for.
     */
    LogWatch watchLog() throws IOException {
        // server.log only: the console gets the same lines, and a test counts them.
        return LogWatch.fromNow(home.resolve("standalone/log/server.log"));
    }

    /** The line the demo logs when a request reaches its {@code X-Demo-Delay-Ms} pause (DemoFaults.PAUSED). */
    static final String PAUSED = "DEMO-PAUSED";

    /** Unloads every rule. */
    void removeRules() throws Exception {
        new org.jboss.byteman.agent.submit.Submit("127.0.0.1", bytemanPort).deleteAllRules();
    }

    /** The server's log file so far (each line once: the console repeats it). */
    public String serverLog() throws IOException {
        Path serverLog = home.resolve("standalone/log/server.log");
        return Files.exists(serverLog) ? Files.readString(serverLog) : "";
    }

    /** The server's log and console output so far. */
    public String log() throws IOException {
        Path serverLog = home.resolve("standalone/log/server.log");
        return (Files.exists(serverLog) ? Files.readString(serverLog) : "") + Files.readString(dir.resolve("console.log"));
    }

    /** The server's JVM (standalone.sh is only its launcher). */
    ProcessHandle jvm() {
        Optional<ProcessHandle> java = launcher.descendants()
                .filter(p -> p.info().commandLine().map(c -> c.contains("jboss-modules")).orElse(false)).findFirst();
        return java.orElseThrow(() -> new IllegalStateException("no server JVM under " + launcher.pid()));
    }

    /** kill -9 of the server JVM: no shutdown hook, no rollback, connections dropped mid-transaction. */
    void crash() throws InterruptedException {
        ProcessHandle java = jvm();
        java.destroyForcibly();
        java.onExit().join();
        launcher.waitFor(30, TimeUnit.SECONDS);
    }

    /** Waits for the server JVM to end by itself (a fault rule halting it), at most {@code within}. */
    void awaitExit(java.time.Duration within) throws Exception {
        ProcessHandle java = jvm();
        java.onExit().get(within.toMillis(), TimeUnit.MILLISECONDS);
        launcher.waitFor(30, TimeUnit.SECONDS);
    }

    void pause() throws IOException, InterruptedException {
        signal("STOP");
    }

    void resume() throws IOException, InterruptedException {
        signal("CONT");
    }

    private void signal(String signal) throws IOException, InterruptedException {
        int exit = new ProcessBuilder("kill", "-" + signal, Long.toString(jvm().pid())).inheritIO().start().waitFor();
        if (exit != 0) {
            throw new IllegalStateException("kill -" + signal + " failed");
        }
    }

    @Override
    public void close() {
        if (launcher == null) {
            return;
        }
        launcher.descendants().forEach(ProcessHandle::destroy);
        launcher.destroy();
        try {
            if (!launcher.waitFor(30, TimeUnit.SECONDS)) {
                launcher.descendants().forEach(ProcessHandle::destroyForcibly);
                launcher.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
