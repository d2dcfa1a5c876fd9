package dev.idempotency.reliability;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A rolling upgrade of the tables' schema as an operator runs one, on the run's database (docs/adr/0018): a node of
 * the previous release ({@code it.previous-release}, built from its sources, in this run's demo) serves the demo on
 * tables it created itself at its schema version; two nodes of this release start at once with
 * {@code idempotency.schema=migrate}. Each script the previous release lacks runs once, the old node answers every
 * request while it runs, and afterwards the demo's contract holds on the old node and on the new ones, and across
 * them. (Tables of the releases before schema versions are migrated by {@code SchemaMigrationsTest}, on the three
 * databases.)
 */
class SchemaUpgradeIT {
    private static final String TABLE = "it_upgrade";
    // The scripts of this release that the previous one (it.previous-release) lacks; bumped with it.
    private static final List<String> NEW_SCRIPTS = List.of("V0002__task_input.sql");
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void aNodeOfThePreviousReleaseServesWhileTwoNewNodesMigrateItsTablesOnce() throws Exception {
        dropTables();
        Path previousWar = previousReleaseWar();
        Map<String, String> onTable = Map.of("idempotency.table", TABLE, "idempotency.schema", "migrate");
        try (WildFlyNode old = WildFlyNode.start(1, onTable, previousWar)) {
            assertThat(count("SELECT COUNT(*) FROM " + TABLE)).as("the old release created its table").isZero();
            int before = (int) count("SELECT COUNT(*) FROM " + TABLE + "_schema");
            assertThat(before).as("the previous release's tables are at schema version 1").isEqualTo(1);
            String run = UUID.randomUUID().toString().substring(0, 8);
            // The old node under load for as long as the new ones start and migrate.
            AtomicBoolean loading = new AtomicBoolean(true);
            Map<Integer, AtomicInteger> oldStatuses = new ConcurrentHashMap<>();
            ExecutorService pool = Executors.newFixedThreadPool(3);
            Future<?> load = pool.submit(() -> {
                for (int i = 0; loading.get(); i++) {
                    int status = post(old.base(), "bob", "load-" + run + "-" + i, payment("L" + i + "-" + run, 7))
                            .statusCode();
                    oldStatuses.computeIfAbsent(status, s -> new AtomicInteger()).incrementAndGet();
                }
                return null;
            });
            List<WildFlyNode> fresh = new ArrayList<>();
            try {
                Map<String, String> migrating = Map.of("idempotency.table", TABLE, "idempotency.schema", "migrate");
                Future<WildFlyNode> second = pool.submit(() -> WildFlyNode.start(2, migrating));
                Future<WildFlyNode> third = pool.submit(() -> WildFlyNode.start(3, migrating));
                fresh.add(second.get(5, TimeUnit.MINUTES));
                fresh.add(third.get(5, TimeUnit.MINUTES));
                loading.set(false);
                load.get(1, TimeUnit.MINUTES);
                assertThat(oldStatuses.keySet()).as("the old node's answers while the new ones migrated: %s",
                        oldStatuses).containsOnly(201);

                for (String script : NEW_SCRIPTS) {
                    int applied = 0;
                    for (WildFlyNode node : fresh) {
                        applied += occurrences(node.serverLog(), "IDEM-I014 applied db/postgresql/" + script
                                + " to the record table '" + TABLE + "'");
                    }
                    assertThat(applied).as(script + " applied by the two new nodes together").isEqualTo(1);
                }
                for (WildFlyNode node : fresh) {
                    assertThat(node.serverLog()).as("what the previous release applied").doesNotContain(
                            "IDEM-I014 applied db/postgresql/V0001__baseline.sql");
                }
                assertThat(count("SELECT COUNT(*) FROM " + TABLE + "_schema")).isEqualTo(before + NEW_SCRIPTS.size());

                List<WildFlyNode> all = List.of(old, fresh.get(0), fresh.get(1));
                for (int n = 0; n < all.size(); n++) {
                    WildFlyNode first = all.get(n);
                    WildFlyNode other = all.get((n + 1) % all.size());
                    String key = "upgrade-" + run + "-" + n;
                    String body = payment("U" + n + "-" + run, 10 + n);
                    HttpResponse<byte[]> created = post(first.base(), "alice", key, body);
                    assertThat(created.statusCode()).as(text(created)).isEqualTo(201);
                    assertThat(created.headers().firstValue("Location")).isPresent();
                    for (WildFlyNode replaying : List.of(first, other)) {
                        HttpResponse<byte[]> replay = post(replaying.base(), "alice", key, body);
                        assertThat(replay.statusCode()).isEqualTo(201);
                        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
                        assertThat(replay.body()).as("the first answer, byte for byte").isEqualTo(created.body());
                        assertThat(replay.headers().firstValue("Location")).isEqualTo(created.headers()
                                .firstValue("Location"));
                    }
                    assertThat(post(other.base(), "alice", key, payment("U" + n + "-" + run, 99)).statusCode())
                            .as("the key reused for another payment").isEqualTo(422);
                    assertThat(post(first.base(), "alice", null, body).statusCode()).as("no key").isEqualTo(400);
                    assertThat(post(first.base(), null, "anon-" + run, body).statusCode()).as("no caller")
                            .isEqualTo(401);
                }
                assertThat(count("SELECT COUNT(*) FROM " + TABLE + " WHERE principal = 'alice' AND status ="
                        + " 'SUCCEEDED'")).as("one record per payment").isEqualTo(3);
            } finally {
                loading.set(false);
                pool.shutdownNow();
                fresh.forEach(WildFlyNode::close);
            }
        } finally {
            dropTables();
        }
    }

    // The demo WAR of this run with the previous release's library in place of this one's.
    private static Path previousReleaseWar() throws IOException, InterruptedException {
        Path root = Path.of(System.getProperty("it.root"));
        Path dir = root.resolve("target/previous-release");
        Process build = new ProcessBuilder(root.resolve("scripts/library-at.sh").toString(),
                System.getProperty("it.previous-release"), dir.resolve("src").toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String jar = new String(build.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(build.waitFor()).as("scripts/library-at.sh").isZero();
        Path war = dir.resolve("demo.war");
        boolean replaced = false;
        try (ZipFile demo = new ZipFile(System.getProperty("it.war"));
             ZipOutputStream out = new ZipOutputStream(Files.newOutputStream(war))) {
            for (ZipEntry entry : java.util.Collections.list(demo.entries())) {
                boolean library = entry.getName().matches("WEB-INF/lib/idempotency-cdi-[^/]*\\.jar");
                out.putNextEntry(new ZipEntry(entry.getName()));
                try (InputStream in = library ? Files.newInputStream(Path.of(jar)) : demo.getInputStream(entry)) {
                    in.transferTo(out);
                }
                out.closeEntry();
                replaced |= library;
            }
        }
        assertThat(replaced).as("the demo holds the library").isTrue();
        return war;
    }

    private static String payment(String order, int amount) {
        return "{\"merchantOrderNo\":\"" + order + "\",\"amount\":" + amount + ",\"currency\":\"EUR\"}";
    }

    private static HttpResponse<byte[]> post(URI base, String user, String key, String body)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve("api/payments"))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (user != null) {
            request.header("Authorization", "Basic " + Base64.getEncoder().encodeToString(
                    (user + ":" + user).getBytes(StandardCharsets.UTF_8)));
        }
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static String text(HttpResponse<byte[]> response) {
        return new String(response.body(), StandardCharsets.UTF_8);
    }

    private static int occurrences(String text, String line) {
        Matcher m = Pattern.compile(Pattern.quote(line)).matcher(text);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    private static long count(String sql) throws Exception {
        try (Connection c = ItDatabase.current().connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void dropTables() throws Exception {
        try (Connection c = ItDatabase.current().connect(); Statement s = c.createStatement()) {
            for (String suffix : List.of("", "_quota", "_released", "_schema")) {
                s.execute("DROP TABLE IF EXISTS " + TABLE + suffix);
            }
        }
    }
}
