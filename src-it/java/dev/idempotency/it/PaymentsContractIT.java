package dev.idempotency.it;

import com.fasterxml.jackson.databind.JsonNode;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.importer.ZipImporter;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.File;
import java.net.URISyntaxException;
import java.net.URL;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The payments demo's contract on a real server (WildFly or Payara, over H2, PostgreSQL or MariaDB),
 * through real HTTP: what a newcomer tries with curl.
 */
@ExtendWith(ArquillianExtension.class)
class PaymentsContractIT {

    @Deployment(testable = false)
    static WebArchive demo() {
        WebArchive demo = ShrinkWrap.create(ZipImporter.class, "demo.war").importFrom(new File(System.getProperty("it.war")))
                .as(WebArchive.class);
        // The demo keeps finished payments in the run's Redis (its WAR carries Jedis), by its own configuration: the
        // server's other deployments are left alone. -Dit.redis= (empty) runs the contract without it, and fails the
        // Redis test.
        if (!REDIS.isEmpty()) {
            demo.addAsResource(new org.jboss.shrinkwrap.api.asset.StringAsset("idempotency.redis.url=" + REDIS + "\n"),
                    "META-INF/microprofile-config.properties");
        }
        return demo;
    }

    /** The Redis the demo is configured with for this run (-Dit.redis; the pom's default is the machine's, database 3). */
    private static final String REDIS = System.getProperty("it.redis", "");

    // A payment's outcome goes to Redis after its commit and its retries are answered from there, judged as the
    // database's record: another body with the key is still 422. Redis emptied meanwhile changes no answer, and the
    // next replay (read from the database) puts the outcome back.
    @Test
    void withRedisConfiguredAFinishedPaymentIsReplayedFromItAndJudgedAsTheDatabasesRecord() throws Exception {
        assertThat(REDIS).as("-Dit.redis (the pom sets the machine's Redis, database 3)").isNotEmpty();
        RawRedis redis = RawRedis.of(REDIS);
        long before = redis.count();
        Metrics metricsBefore = Metrics.scrape();
        String key = key();
        String order = order("R");
        Api.Reply first = api.post("payments", payment(order, "10.00")).key(key).send();
        assertThat(first.status()).as(first.text()).isEqualTo(201);
        // The payment's outcome, and the demo acquirer's (an idempotent endpoint of its own) for the charge.
        assertThat(redis.count()).as("written after the commits").isGreaterThan(before);
        Api.Reply replay = api.post("payments", payment(order, "10.00")).key(key).send();
        assertThat(replay.body()).isEqualTo(first.body());
        assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
        Api.Reply misuse = api.post("payments", payment(order, "11.00")).key(key).send();
        assertThat(misuse.status()).as(misuse.text()).isEqualTo(422);
        redis.flush();
        Api.Reply fromDatabase = api.post("payments", payment(order, "10.00")).key(key).send();
        assertThat(fromDatabase.body()).isEqualTo(first.body());
        assertThat(redis.count()).as("read through: the payment's outcome, replayed from the database").isEqualTo(1);
        assertThat(payments(order)).hasSize(1);
        // What an operator sees: the first request and the one after the flush missed, the replay and the misuse hit.
        Metrics metrics = Metrics.scrape();
        assertThat(metrics.delta(metricsBefore, "idempotency_cache_reads_total", "payments.create", "result", "hit"))
                .isEqualTo(2);
        assertThat(metrics.delta(metricsBefore, "idempotency_cache_reads_total", "payments.create", "result", "miss"))
                .isEqualTo(2);
        assertThat(metrics.value("idempotency_cache_skipped", "")).as("Redis answers: not skipped").isEqualTo(0.0);
    }

    /** The test's view of the run's Redis database: its size, and FLUSHDB, over a socket (RESP inline commands). */
    private record RawRedis(String host, int port, int database) {
        static RawRedis of(String url) {
            java.net.URI uri = java.net.URI.create(url);
            String path = uri.getPath() == null ? "" : uri.getPath().replace("/", "");
            return new RawRedis(uri.getHost(), uri.getPort() < 0 ? 6379 : uri.getPort(),
                    path.isEmpty() ? 0 : Integer.parseInt(path));
        }

        long count() throws java.io.IOException {
            String reply = run("DBSIZE");
            return Long.parseLong(reply.substring(1));
        }

        void flush() throws java.io.IOException {
            assertThat(run("FLUSHDB")).isEqualTo("+OK");
        }

        private String run(String command) throws java.io.IOException {
            try (java.net.Socket socket = new java.net.Socket(host, port)) {
                socket.setSoTimeout(5000);
                java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(
                        socket.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
                java.io.OutputStream out = socket.getOutputStream();
                out.write(("SELECT " + database + "\r\n" + command + "\r\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
                out.flush();
                assertThat(in.readLine()).isEqualTo("+OK");
                return in.readLine();
            }
        }
    }

    @ArquillianResource
    URL base;
    private Api api;
    private String run;

    @BeforeEach
    void client() throws URISyntaxException {
        api = new Api(base.toURI());
        run = UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    void aPaymentIsCreatedOnceAndItsRetryGetsTheSameBytes() {
        String key = key();
        Api.Reply first = api.post("payments", payment(order("A"), "100.00")).key(key).send();
        assertThat(first.status()).as(first.text()).isEqualTo(201);
        JsonNode created = first.json();
        assertThat(first.header("Location")).endsWith("/demo/api/payments/" + created.get("id").asText());
        assertThat(first.header("Content-Type")).startsWith("application/json");
        assertThat(created.get("status").asText()).isEqualTo("CAPTURED");
        assertThat(created.get("amount").decimalValue()).isEqualByComparingTo("100.00");
        assertThat(created.get("chargeId").asText()).isNotBlank();
        assertThat(first.header("Idempotent-Replayed")).isNull();
        assertState(first, "applied;next=stop");

        Api.Reply replay = api.post("payments", payment(created.get("merchantOrderNo").asText(), "100.00")).key(key).send();
        assertState(replay, "applied;next=stop;expires=@");
        assertThat(replay.status()).isEqualTo(201);
        assertThat(replay.header("Location")).isEqualTo(first.header("Location"));
        assertThat(replay.header("Content-Type")).isEqualTo(first.header("Content-Type"));
        assertThat(replay.body()).isEqualTo(first.body());
        assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");

        String order = created.get("merchantOrderNo").asText();
        assertThat(payments(order)).hasSize(1);
        List<JsonNode> charges = charges(order);
        assertThat(charges).hasSize(1);
        assertThat(charges.get(0).get("idempotencyKey").asText()).as("a derived key, not the client's")
                .isNotEqualTo(key).hasSize(43);
        assertThat(api.get("payments/" + created.get("id").asText()).send().json().get("id").asText())
                .isEqualTo(created.get("id").asText());
    }

    @Test
    void anAsynchronousPaymentIs202AtOnceAndItsOperationAnswersWithThePaymentOnceItIsMade() {
        String key = key();
        String order = order("AS");
        // Held inside its transaction on the executor until the checks below are done: PROCESSING meanwhile.
        String hold = "async-" + key;
        String operation;
        try {
            Api.Reply accepted = api.post("payments/async", payment(order, "12.50")).key(key)
                    .header("X-Demo-Hold", hold).send();
            assertThat(accepted.status()).as(accepted.text()).isEqualTo(202);
            assertThat(Integer.parseInt(accepted.header("Retry-After"))).isPositive();
            String location = accepted.header("Location");
            assertThat(location).endsWith("/api/payments/operations/" + key);
            operation = location.substring(location.indexOf("/api/") + "/api/".length());
            assertThat(api.get(operation).send().status()).isEqualTo(202);
            Api.Reply duplicate = api.post("payments/async", payment(order, "12.50")).key(key).send();
            assertThat(duplicate.status()).isEqualTo(202);
            assertThat(duplicate.header("Location")).isEqualTo(location);
        } finally {
            api.release(hold);
        }

        // Instead of polling, the client prefers to wait for the outcome (RFC 7240): answered when the task ended.
        Api.Reply outcome = api.get(operation).header("Prefer", "wait=30").send();
        assertThat(outcome.status()).as(outcome.text()).isEqualTo(201);
        assertThat(outcome.header("Location")).contains("/api/payments/");
        assertThat(outcome.json().get("merchantOrderNo").asText()).isEqualTo(order);
        assertThat(outcome.json().get("status").asText()).isEqualTo("CAPTURED");
        Api.Reply replay = api.post("payments/async", payment(order, "12.50")).key(key).send();
        assertThat(replay.status()).isEqualTo(201);
        assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(replay.body()).isEqualTo(outcome.body());
        assertThat(payments(order)).hasSize(1);
        assertThat(charges(order)).hasSize(1);
    }

    @Test
    void aPaymentCommandSentTwiceToTheQueueMakesOnePaymentAndItsStatusSaysSo() {
        // Payara Micro has no broker: the demo answers its commands 503 there (below); WildFly consumes them.
        String commandId = "cmd-" + key();
        String order = order("MQ");
        String command = "{\"commandId\":\"" + commandId + "\"," + payment(order, "7.25").substring(1);
        Api.Reply first = api.post("payment-commands", command).send();
        if (!"wildfly".equals(System.getProperty("it.server"))) {
            assertProblem(first, 503, null);
            return;
        }
        assertThat(first.status()).as(first.text()).isEqualTo(202);
        String location = first.header("Location");
        assertThat(location).endsWith("/api/payment-commands/" + commandId);
        assertThat(api.post("payment-commands", command).send().status()).isEqualTo(202);

        Api.Reply done = api.get("payment-commands/" + commandId).header("Prefer", "wait=30").send();
        assertThat(done.status()).as(done.text()).isEqualTo(200);
        assertThat(done.json().get("state").asText()).isEqualTo("SUCCEEDED");
        assertThat(payments(order)).hasSize(1);
        assertThat(charges(order)).hasSize(1);
        assertThat(api.get("payment-commands/" + commandId).as("bob").send().status())
                .as("another user's command").isEqualTo(404);
        assertProblem(api.post("payment-commands", "{\"amount\":1}").send(), 400, null);
    }

    @Test
    void keyOrderWhitespaceNumberSpellingAndTraceIdDoNotChangeTheRequest() {
        String key = key();
        String order = order("B");
        assertThat(api.post("payments", payment(order, "100.00")).key(key).send().status()).isEqualTo(201);
        String respelled = "{ \"currency\" : \"EUR\",\n \"amount\" : 1E2, \"traceId\" : \"another\", \"merchantOrderNo\" : \""
                + order + "\" }";
        Api.Reply replay = api.post("payments", respelled).key(key).send();
        assertThat(replay.status()).isEqualTo(201);
        assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
        assertProblem(api.post("payments", payment(order + "-other", "100.00")).key(key).send(), 422, "fingerprint-mismatch");
        assertProblem(api.post("payments", payment(order, "100.01")).key(key).send(), 422, "fingerprint-mismatch");
        assertThat(payments(order)).hasSize(1);
    }

    @Test
    void theQuotedStructuredFieldFormIsTheSameKey() {
        String key = key();
        String order = order("C");
        api.post("payments", payment(order, "5")).key(key).send();
        assertThat(api.post("payments", payment(order, "5")).key("\"" + key + "\"").send().header("Idempotent-Replayed"))
                .isEqualTo("true");
    }

    @Test
    void aMissingOrMalformedKeyIs400Problem() {
        assertProblem(api.post("payments", payment(order("D"), "5")).send(), 400, "key-missing");
        assertState(api.post("payments", payment(order("D"), "5")).send(), "not-applied;next=stop");
        assertProblem(api.post("payments", payment(order("D"), "5")).key("has space").send(), 400, "key-invalid");
        assertProblem(api.post("payments", payment(order("D"), "5")).key("k".repeat(256)).send(), 400, "key-invalid");
        assertProblem(api.post("payments", payment(order("D"), "5")).key("\"unterminated").send(), 400, "key-invalid");
        assertProblem(api.post("payments", "{\"amount\":").key(key()).send(), 400, "body-malformed");
        assertProblem(api.post("payments", payment(order("D"), "\"five\"")).key(key()).send(), 400, null);
        assertThat(payments(order("D"))).isEmpty();
    }

    @Test
    void withoutCredentialsIs401Problem() {
        Api.Reply anonymous = api.post("payments", payment(order("E"), "5")).anonymous().key(key()).send();
        assertThat(anonymous.status()).isEqualTo(401);
        assertThat(anonymous.header("Content-Type")).startsWith("application/problem+json");
        assertThat(api.post("payments", payment(order("E"), "5")).as("alice", "wrong").key(key()).send().status())
                .isEqualTo(401);
    }

    // eve is in the server's realm but in no tenant: a clear 403 problem, nothing stored, never a 500.
    @Test
    void aUserWithoutATenantIs403Problem() {
        String order = order("T");
        Api.Reply idempotent = api.post("payments", payment(order, "5")).as("eve").key(key()).send();
        assertProblem(idempotent, 403, null);
        assertThat(idempotent.json().get("type").asText()).endsWith("/no-tenant");
        assertProblem(api.get("about").as("eve").send(), 403, null);
        assertThat(payments(order)).isEmpty();
    }

    @Test
    void theSameKeyOfAnotherUserOrTenantIsAnotherOperation() {
        String key = key();
        String order = order("F");
        Api.Reply alice = api.post("payments", payment(order, "7")).key(key).send();
        Api.Reply bob = api.post("payments", payment(order + "-bob", "7")).as("bob").key(key).send();
        Api.Reply carol = api.post("payments", payment(order, "7")).as("carol").key(key).send();
        assertThat(List.of(alice.status(), bob.status(), carol.status())).containsOnly(201);
        assertThat(bob.header("Idempotent-Replayed")).isNull();
        assertThat(carol.header("Idempotent-Replayed")).as("same order number, other tenant").isNull();
        assertThat(carol.json().get("id").asText()).isNotEqualTo(alice.json().get("id").asText());
    }

    @Test
    void anInvalidPaymentIsAFinalFailureReplayedForItsKey() {
        String key = key();
        Api.Reply first = api.post("payments", payment(order("G"), "-1")).key(key).send();
        assertProblem(first, 400, null);
        assertState(first, "not-applied;next=stop");
        Api.Reply replay = api.post("payments", payment(order("G"), "-1")).key(key).send();
        assertThat(replay.status()).isEqualTo(400);
        assertThat(replay.body()).isEqualTo(first.body());
        assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
        assertProblem(api.post("payments", payment(order("G"), "5").replace("EUR", "euro")).key(key()).send(), 400, null);
        assertState(replay, "not-applied;next=stop;expires=@");
    }

    @Test
    void anInvalidPaymentNamesEveryRuleItBreaks() {
        Api.Reply invalid = api.post("payments", "{\"merchantOrderNo\":\"\",\"amount\":1.001,\"currency\":\"eur\"}")
                .key(key()).send();
        assertProblem(invalid, 400, null);
        assertThat(invalid.json().get("detail").asText()).contains("merchantOrderNo must be 1 to 128 characters",
                "amount must be positive, below 1e9, with at most 2 decimals", "currency must be 3 upper-case letters");
        Api.Reply noBody = api.post("payments", "null").key(key()).send();
        assertProblem(noBody, 400, null);
    }

    @Test
    void anOrderPaidUnderAnotherKeyIs409NamingThePayment() {
        String order = order("H");
        String paid = api.post("payments", payment(order, "9")).key(key()).send().json().get("id").asText();
        Api.Reply again = api.post("payments", payment(order, "9")).key(key()).send();
        assertProblem(again, 409, null);
        assertState(again, "not-applied;next=stop");
        assertThat(again.json().get("paymentId").asText()).isEqualTo(paid);
        assertThat(again.json().get("detail").asText()).contains(paid);
        assertThat(payments(order)).hasSize(1);
        assertThat(charges(order)).hasSize(1);
    }

    @Test
    void aTransientFailureRollsBackAndTheRetryRunsAgainWithoutASecondCharge() {
        String key = key();
        String order = order("I");
        Api.Reply failed = api.post("payments", payment(order, "11")).key(key).header("X-Demo-Fail", "transient").send();
        assertProblem(failed, 503, null);
        assertThat(failed.header("Retry-After")).isNotNull();
        assertState(failed, "not-applied;next=same-key");
        assertThat(payments(order)).as("rolled back").isEmpty();
        assertThat(charges(order)).as("the acquirer charged once").hasSize(1);
        Api.Reply retry = api.post("payments", payment(order, "11")).key(key).send();
        assertThat(retry.status()).isEqualTo(201);
        assertThat(retry.header("Idempotent-Replayed")).isNull();
        assertThat(payments(order)).hasSize(1);
        assertThat(charges(order)).as("the retry's charge is the acquirer's replay").hasSize(1);
        assertThat(retry.json().get("chargeId").asText()).isEqualTo(charges(order).get(0).get("chargeId").asText());
        JsonNode status = api.get("idempotency/" + key).send().json();
        assertThat(status.get("state").asText()).isEqualTo("SUCCEEDED");
        assertThat(status.get("attempts").asInt()).isEqualTo(2);
    }

    @Test
    void aFailedCommitLeavesNeitherThePaymentNorASucceededRecord() {
        String key = key();
        String order = order("J");
        Api.Reply failed = api.post("payments", payment(order, "13")).key(key).header("X-Demo-Fail", "at-commit").send();
        assertThat(failed.status()).as(failed.text()).isEqualTo(503);
        assertState(failed, "not-applied;next=");
        assertThat(payments(order)).isEmpty();
        assertThat(api.get("idempotency/" + key).send().json().get("state").asText()).isEqualTo("FAILED_RETRYABLE");
        Api.Reply retry = api.post("payments", payment(order, "13")).key(key).send();
        assertThat(retry.status()).isEqualTo(201);
        assertThat(payments(order)).hasSize(1);
        assertThat(charges(order)).hasSize(1);
    }

    @Test
    void aDuplicateWhileTheFirstRunsGets409WithRetryAfter() throws Exception {
        String key = key();
        String order = order("K");
        String hold = "first-" + key;
        CompletableFuture<Api.Reply> first = CompletableFuture.supplyAsync(() ->
                api.post("payments", payment(order, "15")).key(key).header("X-Demo-Hold", hold).send());
        try {
            awaitState(key, "alice", "PROCESSING");
            Api.Reply duplicate = api.post("payments", payment(order, "15")).key(key).send();
            assertProblem(duplicate, 409, "request-in-flight");
            assertThat(Integer.parseInt(duplicate.header("Retry-After"))).isBetween(1, 5);
            assertState(duplicate, "in-progress;next=same-key");
        } finally {
            api.release(hold);
        }
        Api.Reply original = first.get(30, TimeUnit.SECONDS);
        assertThat(original.status()).isEqualTo(201);
        assertThat(api.post("payments", payment(order, "15")).key(key).send().body()).isEqualTo(original.body());
    }

    @Test
    void sixtyFourConcurrentSendsOfOneKeyExecuteItOnce() throws Exception {
        String key = key();
        String order = order("R");
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(64);
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        List<java.util.concurrent.Future<Api.Reply>> replies = new ArrayList<>();
        try {
            for (int i = 0; i < 64; i++) {
                replies.add(pool.submit(() -> {
                    go.await();
                    return api.post("payments", payment(order, "64")).key(key).send();
                }));
            }
            go.countDown();
            java.util.Set<String> successes = new java.util.HashSet<>();
            int created = 0;
            for (java.util.concurrent.Future<Api.Reply> f : replies) {
                Api.Reply reply = f.get(60, TimeUnit.SECONDS);
                // The claim race on the database's unique key: one runs, the others are told it is in flight
                // (or, once it finished, get its replay); never a 500, whatever the database answered them.
                assertThat(reply.status()).as(new String(reply.body(), java.nio.charset.StandardCharsets.UTF_8))
                        .isIn(201, 409);
                if (reply.status() == 201) {
                    created++;
                    successes.add(new String(reply.body(), java.nio.charset.StandardCharsets.UTF_8));
                } else {
                    assertProblem(reply, 409, "request-in-flight");
                }
            }
            assertThat(created).isPositive();
            assertThat(successes).as("every success is the same bytes").hasSize(1);
        } finally {
            pool.shutdownNow();
        }
        assertThat(payments(order)).hasSize(1);
        assertThat(charges(order)).hasSize(1);
    }

    @Test
    void aUserWithFiveOperationsInFlightGets429() throws Exception {
        // The five stay inside their transactions until released, however long the checks below take.
        String hold = "five-" + key();
        List<CompletableFuture<Api.Reply>> running = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        try {
            for (int i = 0; i < 5; i++) {
                String key = key();
                String order = order("L" + i);
                keys.add(key);
                running.add(CompletableFuture.supplyAsync(() ->
                        api.post("payments", payment(order, "1")).as("bob").key(key).header("X-Demo-Hold", hold).send()));
            }
            for (String key : keys) {
                awaitState(key, "bob", "PROCESSING");
            }
            Api.Reply limited = api.post("payments", payment(order("L5"), "1")).as("bob").key(key()).send();
            assertProblem(limited, 429, "too-many-in-flight");
            assertThat(limited.header("Retry-After")).isNotNull();
            assertThat(api.post("payments", payment(order("L6"), "1")).key(key()).send().status()).as("alice is served")
                    .isEqualTo(201);
        } finally {
            api.release(hold);
        }
        for (CompletableFuture<Api.Reply> r : running) {
            assertThat(r.get(30, TimeUnit.SECONDS).status()).isEqualTo(201);
        }
    }

    @Test
    void sixtyFourConcurrentNewOperationsOfOneUserRunExactlyFive() throws Exception {
        // The demo allows 5 operations in flight per user. Every admitted payment is held inside its transaction
        // until all the others have been answered, so all 64 overlap whatever the machine's speed: the limit is
        // counted in the claim's transaction, so exactly five run and the other 59 get 429 — never a sixth, and
        // never a 503 (a claim refused by the limit is an answer, not a failure).
        int senders = 64;
        int limit = 5;
        String hold = "carol-" + key();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(senders);
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        List<String> orders = new ArrayList<>();
        List<java.util.concurrent.Future<Api.Reply>> replies = new ArrayList<>();
        java.util.concurrent.CompletionService<Api.Reply> answered = new java.util.concurrent.ExecutorCompletionService<>(pool);
        int created = 0;
        try {
            for (int i = 0; i < senders; i++) {
                String order = order("Q" + i);
                orders.add(order);
                replies.add(answered.submit(() -> {
                    go.await();
                    return api.post("payments", payment(order, "1")).as("carol").key(key())
                            .header("X-Demo-Hold", hold).send();
                }));
            }
            go.countDown();
            // The refused ones answer at once; the admitted ones cannot answer before the release. Polled for less than
            // a request's own 60 s timeout, so that a sixth admitted payment fails here, with this message.
            for (int i = 0; i < senders - limit; i++) {
                java.util.concurrent.Future<Api.Reply> first = answered.poll(30, TimeUnit.SECONDS);
                assertThat(first).as("answer %d of the %d refusals expected while five are held", i + 1,
                        senders - limit).isNotNull();
                Api.Reply reply = first.get();
                assertProblem(reply, 429, "too-many-in-flight");
                assertThat(reply.header("Retry-After")).isNotNull();
            }
            assertThat(replies.stream().filter(java.util.concurrent.Future::isDone).count())
                    .as("five still held inside their transactions").isEqualTo(senders - limit);
        } finally {
            api.release(hold);
        }
        try {
            for (java.util.concurrent.Future<Api.Reply> f : replies) {
                Api.Reply reply = f.get(60, TimeUnit.SECONDS);
                if (reply.status() == 201) {
                    created++;
                }
            }
            assertThat(created).isEqualTo(limit);
            int paid = 0;
            for (String order : orders) {
                paid += api.get("payments?merchantOrderNo=" + order).as("carol").send().list().size();
            }
            assertThat(paid).as("one payment per 201, none for a 429").isEqualTo(limit);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void theStatusResourceShowsOnlyTheCallersOwnOperation() {
        String key = key();
        api.post("payments", payment(order("M"), "3")).key(key).send();
        Api.Reply own = api.get("idempotency/" + key).send();
        assertThat(own.status()).isEqualTo(200);
        assertThat(own.json().get("state").asText()).isEqualTo("SUCCEEDED");
        assertThat(own.json().get("resourceId").asText()).isNotBlank();
        assertProblem(api.get("idempotency/" + key).as("bob").send(), 404, "operation-not-found");
        assertProblem(api.get("idempotency/" + key).as("carol").send(), 404, "operation-not-found");
    }

    // Design guide §5/§6 (issue 11 item 1): a method that runs longer than its lease keeps it — the library
    // renews it on the server's managed scheduler — so every retry meets it in flight and it runs once. (Until
    // leases were renewed, this test showed the slow executor taken over after 3 s and fenced out.)
    @Test
    void anExecutionLongerThanItsLeaseKeepsItAndEveryRetryMeetsItInFlight() throws Exception {
        // The server sets idempotency.endpoints.payments.create.lease=PT3S (src-it/provision.sh); the method
        // runs until the test has seen two retries past that first lease, each after a renewal.
        String key = key();
        String order = order("N");
        String hold = "slow-" + key;
        CompletableFuture<Api.Reply> slow = CompletableFuture.supplyAsync(() ->
                api.post("payments", payment(order, "17")).key(key).header("X-Demo-Hold", hold).send());
        List<Api.Reply> pastTheLease = new ArrayList<>();
        try {
            awaitState(key, "alice", "PROCESSING");
            long claimed = System.nanoTime();
            // A retry after each renewal of the lease (the renewal moves the record's expiry with it) until one gets
            // the outcome.
            String expiresAt = status(key, "alice").get("expiresAt").asText();
            while (true) {
                Api.Reply retry = api.post("payments", payment(order, "17")).key(key).send();
                if (retry.status() != 409) {
                    assertThat(retry.status()).as(retry.text()).isEqualTo(201);
                    assertThat(retry.header("Idempotent-Replayed")).isEqualTo("true");
                    break;
                }
                assertProblem(retry, 409, "request-in-flight");
                if (System.nanoTime() - claimed > TimeUnit.MILLISECONDS.toNanos(3500)) {
                    pastTheLease.add(retry);
                }
                if (pastTheLease.size() == 2) {
                    api.release(hold);
                }
                assertThat(System.nanoTime() - claimed).as("the method runs until released")
                        .isLessThan(TimeUnit.SECONDS.toNanos(60));
                String seen = expiresAt;
                expiresAt = await(key, "alice", "a renewal or the outcome", json ->
                        !json.get("state").asText().equals("PROCESSING") || !json.get("expiresAt").asText().equals(seen))
                        .get("expiresAt").asText();
            }
        } finally {
            api.release(hold);
        }
        Api.Reply first = slow.get(60, TimeUnit.SECONDS);
        assertThat(first.status()).as(first.text()).isEqualTo(201);
        assertThat(pastTheLease).as("retries after the first lease would have run out").isNotEmpty();
        assertThat(payments(order)).hasSize(1);
        assertThat(charges(order)).hasSize(1);
        JsonNode status = api.get("idempotency/" + key).send().json();
        assertThat(status.get("state").asText()).isEqualTo("SUCCEEDED");
        assertThat(status.get("attempts").asInt()).as("never taken over").isEqualTo(1);
        Api.Reply replay = api.post("payments", payment(order, "17")).key(key).send();
        assertThat(replay.body()).isEqualTo(first.body());
    }

    @Test
    void theApplicationsOwnResourceIsWrittenByTheServersJsonB() {
        // The library carries Jackson relocated inside its jar: the demo's JSON stays JSON-B on every server.
        // Jackson (WildFly picks it for a WAR holding Jackson) ignores all three JSON-B annotations checked here.
        Api.Reply about = api.get("about").send();
        assertThat(about.status()).as(about.text()).isEqualTo(200);
        assertThat(about.header("Content-Type")).startsWith("application/json");
        JsonNode json = about.json();
        assertThat(fieldNames(json)).as(about.text())
                .containsExactly("name", "api_version", "user", "tenant", "clock");
        assertThat(json.get("api_version").asText()).as("@JsonbProperty").isEqualTo("1");
        assertThat(json.has("apiVersion")).as("@JsonbProperty renames, " + about.text()).isFalse();
        assertThat(json.has("server")).as("@JsonbTransient, " + about.text()).isFalse();
        assertThat(json.get("clock").asText()).as("@JsonbDateFormat: to the second, no fraction")
                .matches("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z");
        assertThat(json.get("user").asText()).isEqualTo("alice");
        assertThat(json.get("tenant").asText()).isEqualTo("acme");
        assertThat(api.get("about").anonymous().send().status()).isEqualTo(401);
    }

    @Test
    void aPaymentAnswerKeepsItsJsonBFieldNamesAndOrder() {
        List<String> paymentFields = List.of("id", "merchantOrderNo", "amount", "currency", "status", "chargeId");
        Api.Reply created = api.post("payments", payment(order("S"), "21.50")).key(key()).send();
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        assertThat(fieldNames(created.json())).as(created.text()).containsExactlyElementsOf(paymentFields);
        Api.Reply read = api.get("payments/" + created.json().get("id").asText()).send();
        assertThat(read.status()).as(read.text()).isEqualTo(200);
        assertThat(fieldNames(read.json())).as(read.text()).containsExactlyElementsOf(paymentFields);
        assertThat(read.json().get("amount").decimalValue()).isEqualByComparingTo("21.50");
    }

    private static List<String> fieldNames(JsonNode object) {
        List<String> names = new ArrayList<>();
        object.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private void awaitState(String key, String user, String state) throws InterruptedException {
        await(key, user, state, json -> json.get("state").asText().equals(state));
    }

    private JsonNode status(String key, String user) {
        Api.Reply status = api.get("idempotency/" + key).as(user).send();
        assertThat(status.status()).as(status.text()).isEqualTo(200);
        return status.json();
    }

    /** Polls the operation's status resource until it satisfies the condition; returns that status. */
    private JsonNode await(String key, String user, String what, java.util.function.Predicate<JsonNode> condition)
            throws InterruptedException {
        java.util.concurrent.atomic.AtomicReference<JsonNode> reached = new java.util.concurrent.atomic.AtomicReference<>();
        dev.idempotency.testing.Conditions.await("operation " + key + " reached " + what, java.time.Duration.ofSeconds(20),
                () -> {
                    Api.Reply status = api.get("idempotency/" + key).as(user).send();
                    if (status.status() == 200 && condition.test(status.json())) {
                        reached.set(status.json());
                    }
                    return reached.get() != null;
                });
        return reached.get();
    }

    private List<JsonNode> payments(String order) {
        return api.get("payments?merchantOrderNo=" + order).send().list();
    }

    // The run's secret (src-it/provision.sh) keys what the server derives: found again in the key the acquirer got, it
    // is the secret the library runs with; and it stands in clear in none of the server's configuration files, which
    // name WildFly's encrypted expression and hold Payara Server's password alias instead.
    @Test
    void theLibraryRunsWithTheSecretFromTheServersCredentialStoreWhichNoConfigurationFileHoldsInClear() throws Exception {
        java.nio.file.Path dir = java.nio.file.Path.of(System.getProperty("it.server.dir"));
        String secret = java.nio.file.Files.readString(java.nio.file.Path.of(dir + ".secret")).trim();
        String key = key();
        String order = order("S");
        assertThat(api.post("payments", payment(order, "3.00")).key(key).send().status()).isEqualTo(201);
        String scopeKey = new dev.idempotency.core.ScopeDigest(secret.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                List.of()).keys(new dev.idempotency.Scope("acme", "alice", "payments.create", key)).get(0);
        assertThat(charges(order)).singleElement().satisfies(charge -> assertThat(charge.get("idempotencyKey").asText())
                .isEqualTo(dev.idempotency.core.ScopeDigest.derive(scopeKey, "acquirer.charge")));

        switch (System.getProperty("it.server")) {
            case "wildfly" -> {
                String configuration = java.nio.file.Files.readString(dir.resolve("wildfly-"
                        + System.getProperty("it.wildfly.version") + "/standalone/configuration/standalone-full.xml"));
                assertThat(configuration).doesNotContain(secret)
                        .containsPattern("name=\"idempotency.secret\" value=\"\\$\\{ENC::idempotency:[^\"]+\\}\"");
            }
            case "payara-server" -> {
                java.nio.file.Path domain = dir.resolve("payara6/glassfish/domains/domain1/config");
                assertThat(java.nio.file.Files.readString(domain.resolve("domain.xml"))).doesNotContain(secret)
                        .doesNotContain("idempotency.secret");
                assertThat(domain.resolve("domain-passwords")).exists();
            }
            default -> {
                // Payara Micro has no password alias store: its secret comes from a system property or the environment.
            }
        }
    }

    private List<JsonNode> charges(String order) {
        return api.get("acquirer/charges?merchantOrderNo=" + order).send().list();
    }

    /**
     * The answer's Idempotency-State starts with {@code expected} (a state, its next step, and an expiry where one is
     * expected); the library's own problems say the same in their members.
     */
    static void assertState(Api.Reply reply, String expected) {
        String state = reply.header("Idempotency-State");
        assertThat(state).as("Idempotency-State of " + reply.status() + " " + reply.text()).startsWith(expected);
        String type = reply.header("Content-Type");
        if (type != null && type.startsWith("application/problem+json")
                && reply.json().path("type").asText().startsWith("https://idempotency.dev/problems/")) {
            String[] parts = state.split(";");
            assertThat(reply.json().path("idempotencyState").asText()).isEqualTo(parts[0]);
            assertThat("next=" + reply.json().path("idempotencyNext").asText()).isEqualTo(parts[1]);
        }
    }

    static void assertProblem(Api.Reply reply, int status, String librarySlug) {
        assertThat(reply.status()).as(reply.text()).isEqualTo(status);
        assertThat(reply.header("Content-Type")).startsWith("application/problem+json");
        JsonNode problem = reply.json();
        assertThat(problem.get("status").asInt()).isEqualTo(status);
        assertThat(problem.get("title").asText()).isNotBlank();
        assertThat(problem.get("detail").asText()).isNotBlank();
        if (librarySlug != null) {
            assertThat(problem.get("type").asText()).isEqualTo("https://idempotency.dev/problems/" + librarySlug);
        } else {
            assertThat(problem.get("type").asText()).startsWith("https://");
        }
    }

    private String order(String name) {
        return name + "-" + run;
    }

    private static String key() {
        return UUID.randomUUID().toString();
    }

    private static String payment(String order, String amount) {
        return "{\"merchantOrderNo\":\"" + order + "\",\"amount\":" + amount + ",\"currency\":\"EUR\",\"traceId\":\"t-1\"}";
    }
}
