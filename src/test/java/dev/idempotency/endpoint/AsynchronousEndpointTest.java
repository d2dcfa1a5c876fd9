package dev.idempotency.endpoint;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idempotency.IdempotencyEvent;
import dev.idempotency.RecordStatus;
import dev.idempotency.testing.Databases;
import dev.idempotency.testing.TestDatabase;
import jakarta.persistence.EntityManagerFactory;
import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An asynchronous endpoint ({@code @Idempotent(asynchronous = true)}, ADR 10) through the JAX-RS runtime: the
 * first request is answered 202 at once, the method runs on the executor's thread in its own transaction, and
 * its outcome is served by the status resource and replayed to retries.
 */
@EnableWeld
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AsynchronousEndpointTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PAYMENT = "{\"merchantOrderNo\":\"%s\",\"amount\":%s,\"currency\":\"EUR\"}";
    private static final dev.idempotency.core.ScopeDigest SCOPE_DIGEST = new dev.idempotency.core.ScopeDigest(
            EndpointFixture.SECRET.getBytes(StandardCharsets.UTF_8), java.util.List.of());

    @WeldSetup
    WeldInitiator weld = WeldInitiator.from(EndpointFixture.weld()).build();

    private EntityManagerFactory emf;
    private Http http;
    private EventLog events;
    private final TestDatabase h2 = Databases.named("h2");

    @BeforeAll
    void start() {
        emf = EndpointFixture.hibernate();
        weld.select(Payments.class).get().use(emf);
        http = EndpointFixture.http(weld.select(PaymentResource.class).get());
    }

    @AfterAll
    void stop() {
        emf.close();
    }

    @BeforeEach
    void clean() {
        EndpointFixture.emptyTables(h2);
        events = weld.select(EventLog.class).get();
        events.clear();
        PaymentResource.duringExecution = key -> { };
        TaskExecutor.refusing = false;
    }

    @AfterEach
    void releaseHeld() {
        PaymentResource.duringExecution = key -> { };
        TaskExecutor.refusing = false;
    }

    @Test
    void theFirstRequestIs202AtOnceAndTheTaskStoresAnOutcomeThatTheStatusResourceAndRetriesServe() throws Exception {
        String key = newKey();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread[] taskThread = new Thread[1];
        PaymentResource.duringExecution = k -> {
            taskThread[0] = Thread.currentThread();
            running.countDown();
            await(release);
        };

        Http.Reply accepted = http.post("payments/async", payment("AS-1", "10.00")).key(key).send();
        assertThat(accepted.status()).as(accepted.text()).isEqualTo(202);
        assertThat(accepted.header("Location")).isEqualTo(Http.BASE + "async-operations/" + key);
        assertThat(accepted.header("Retry-After")).isEqualTo("5");
        assertThat(JSON.readTree(accepted.body()).get("state").asText()).isEqualTo("PROCESSING");
        await(running);
        assertThat(taskThread[0].getName()).as("the method runs on the executor").startsWith("test-tasks");

        Http.Reply duplicate = http.post("payments/async", payment("AS-1", "10.00")).key(key).send();
        assertThat(duplicate.status()).isEqualTo(202);
        assertThat(duplicate.header("Location")).isEqualTo(accepted.header("Location"));
        Http.Reply polled = http.get("async-operations/" + key).send();
        assertThat(polled.status()).isEqualTo(202);
        assertThat(polled.header("Retry-After")).isEqualTo("5");
        assertThat(JSON.readTree(polled.body()).get("state").asText()).isEqualTo("PROCESSING");

        release.countDown();
        IdempotencyEvent.TaskEnded ended = events.await(IdempotencyEvent.TaskEnded.class, e -> true);
        assertThat(ended.status()).isEqualTo(RecordStatus.SUCCEEDED);
        Http.Reply outcome = http.get("async-operations/" + key).send();
        assertThat(outcome.status()).as(outcome.text()).isEqualTo(201);
        assertThat(outcome.header("Location")).startsWith(Http.BASE + "payments/");
        assertThat(outcome.header("Idempotent-Replayed")).isEqualTo("true");
        JsonNode body = JSON.readTree(outcome.body());
        assertThat(body.get("merchantOrderNo").asText()).isEqualTo("AS-1");
        assertThat(body.get("chargeKey").asText()).as("derived in the task, from its operation").isNotBlank();
        assertThat(body.get("attempt").asInt()).isEqualTo(1);

        Http.Reply replay = http.post("payments/async", payment("AS-1", "10.00")).key(key).send();
        assertThat(replay.status()).isEqualTo(201);
        assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(replay.header("Location")).isEqualTo(outcome.header("Location"));
        assertThat(replay.body()).isEqualTo(outcome.body());
        assertThat(payments("AS-1")).as("one execution").isEqualTo(1);
        assertThat(record(key)).isEqualTo("SUCCEEDED");
    }

    @Test
    void aStatusRequestThatPrefersToWaitIsAnsweredWithTheOutcomeOnceTheTaskHasEnded() throws Exception {
        String key = newKey();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        PaymentResource.duringExecution = k -> {
            running.countDown();
            await(release);
        };
        assertThat(http.post("payments/async", payment("AS-8", "10.00")).key(key).send().status()).isEqualTo(202);
        await(running);
        java.util.concurrent.CompletableFuture<Http.Reply> waiting = java.util.concurrent.CompletableFuture.supplyAsync(
                () -> http.get("async-operations/" + key).header("Prefer", "wait=10").send());
        assertThat(http.get("async-operations/" + key).send().status()).as("without the preference").isEqualTo(202);
        release.countDown();
        Http.Reply outcome = waiting.get(15, TimeUnit.SECONDS);
        assertThat(outcome.status()).as(outcome.text()).isEqualTo(201);
        assertThat(JSON.readTree(outcome.body()).get("merchantOrderNo").asText()).isEqualTo("AS-8");
    }

    @Test
    void aFinalFailureOfTheTaskIsRenderedByTheApplicationsMapperAndStored() throws Exception {
        String key = newKey();
        // amount 0: the method throws PaymentRejected on the executor's thread, mapped by the application to 400.
        assertThat(http.post("payments/async", payment("AS-2", "0")).key(key).send().status()).isEqualTo(202);
        assertThat(events.await(IdempotencyEvent.TaskEnded.class, e -> true).status())
                .isEqualTo(RecordStatus.FAILED_FINAL);
        Http.Reply outcome = http.get("async-operations/" + key).send();
        assertThat(outcome.status()).isEqualTo(400);
        assertThat(outcome.header("Content-Type")).startsWith("application/problem+json");
        assertThat(JSON.readTree(outcome.body()).get("detail").asText()).isEqualTo("amount must be positive");
        Http.Reply replay = http.post("payments/async", payment("AS-2", "0")).key(key).send();
        assertThat(replay.status()).isEqualTo(400);
        assertThat(replay.body()).isEqualTo(outcome.body());
        assertThat(record(key)).isEqualTo("FAILED_FINAL");
    }

    @Test
    void aRetryableFailureGivesTheClaimBackAndARetryOfTheKeyRunsTheTaskAgain() throws Exception {
        String key = newKey();
        // AcquirerUnavailable after the payment was written: mapped to 503, so nothing of it stays.
        assertThat(http.post("payments/async", payment("AS-3", "10.00")).key(key).header("X-Fail", "transient")
                .send().status()).isEqualTo(202);
        assertThat(events.await(IdempotencyEvent.TaskEnded.class, e -> true).status())
                .isEqualTo(RecordStatus.FAILED_RETRYABLE);
        Http.Reply state = http.get("async-operations/" + key).send();
        assertThat(state.status()).isEqualTo(200);
        assertThat(JSON.readTree(state.body()).get("state").asText()).isEqualTo("FAILED_RETRYABLE");
        assertThat(payments("AS-3")).as("rolled back").isZero();

        events.clear();
        assertThat(http.post("payments/async", payment("AS-3", "10.00")).key(key).send().status()).isEqualTo(202);
        assertThat(events.await(IdempotencyEvent.TaskEnded.class, e -> true).status())
                .isEqualTo(RecordStatus.SUCCEEDED);
        Http.Reply outcome = http.get("async-operations/" + key).send();
        assertThat(outcome.status()).isEqualTo(201);
        assertThat(JSON.readTree(outcome.body()).get("attempt").asInt()).isEqualTo(2);
        assertThat(payments("AS-3")).isEqualTo(1);
    }

    // What a crash of the task's node leaves: a task whose lease ran out (here one still running, so that its
    // end is seen too). A retry takes the operation over and runs it as a task of its own; the first task,
    // released afterwards, records nothing (fenced: the record has another owner token) and commits nothing
    // (its payment meets the unique order of the second's): one payment, made by the second attempt.
    @Test
    void aTaskWhoseLeaseRanOutIsTakenOverByARetryAndFencedOutWhenItFinishes() throws Exception {
        String key = newKey();
        CountDownLatch releaseFirst = new CountDownLatch(1);
        CountDownLatch firstRunning = holdFirstRun(releaseFirst);
        assertThat(http.post("payments/async", payment("AS-7", "10.00")).key(key).send().status()).isEqualTo(202);
        await(firstRunning);
        // No lease renewal without a managed scheduler here: past the lease, the operation can be taken over.
        weld.select(dev.idempotency.testing.MutableClock.class).get().advance(java.time.Duration.ofSeconds(31));

        assertThat(http.post("payments/async", payment("AS-7", "10.00")).key(key).send().status()).isEqualTo(202);
        assertThat(events.await(IdempotencyEvent.TaskEnded.class, e -> true).status()).isEqualTo(RecordStatus.SUCCEEDED);
        assertThat(events.events()).anyMatch(e -> e instanceof IdempotencyEvent.TakenOver);
        releaseFirst.countDown();
        events.await(IdempotencyEvent.Fenced.class, e -> true);
        assertThat(events.await(IdempotencyEvent.TaskEnded.class, e -> true, 2)).as("the first task ended").isNotNull();

        Http.Reply outcome = http.get("async-operations/" + key).send();
        assertThat(outcome.status()).isEqualTo(201);
        assertThat(JSON.readTree(outcome.body()).get("attempt").asInt()).isEqualTo(2);
        assertThat(payments("AS-7")).as("the fenced-out first task committed nothing").isEqualTo(1);
    }

    // A 202 is a promise kept (docs/adr/0020): the node that accepted the operation "dies" — its task hangs, its lease
    // runs out, nobody renews it — and no client sends the key again. The pass that a managed scheduler runs every
    // 5 s takes the operation over from the input its claim kept and runs the method again here, through the bean;
    // pollers of the status resource see 202, then the outcome. The hung first task, released, is fenced out.
    @Test
    void anAcceptedOperationWhoseNodeDiedIsRunAgainFromItsKeptInputWithoutAnyClientSendingItAgain() throws Exception {
        String key = newKey();
        CountDownLatch releaseFirst = new CountDownLatch(1);
        CountDownLatch firstRunning = holdFirstRun(releaseFirst);
        assertThat(http.post("payments/async", payment("AS-9", "10.00")).key(key).header("X-Fail", "none").send()
                .status()).isEqualTo(202);
        await(firstRunning);
        assertThat(h2.count("SELECT COUNT(*) FROM " + TestStore.TABLE + " WHERE scope_key = ? AND task_input IS NOT NULL",
                scopeKey(key))).as("the claim keeps the task's input").isEqualTo(1);
        dev.idempotency.IdempotencyMaintenance maintenance = weld.select(dev.idempotency.IdempotencyMaintenance.class).get();
        assertThat(maintenance.resumeAccepted()).as("its lease has not run out").isZero();

        weld.select(dev.idempotency.testing.MutableClock.class).get().advance(java.time.Duration.ofSeconds(31));
        assertThat(http.get("async-operations/" + key).send().status()).as("a poller, before the pass").isEqualTo(202);
        assertThat(maintenance.resumeAccepted()).isEqualTo(1);
        IdempotencyEvent.TaskEnded resumed = events.await(IdempotencyEvent.TaskEnded.class, e -> true);
        assertThat(resumed.status()).isEqualTo(RecordStatus.SUCCEEDED);
        assertThat(events.events()).anyMatch(e -> e instanceof IdempotencyEvent.TakenOver t && t.attempt() == 2);
        assertThat(maintenance.resumeAccepted()).as("nothing left to run").isZero();

        Http.Reply outcome = http.get("async-operations/" + key).send();
        assertThat(outcome.status()).as(outcome.text()).isEqualTo(201);
        assertThat(outcome.header("Location")).startsWith(Http.BASE + "payments/");
        JsonNode body = JSON.readTree(outcome.body());
        assertThat(body.get("merchantOrderNo").asText()).as("the kept entity").isEqualTo("AS-9");
        assertThat(body.get("amount").decimalValue()).isEqualByComparingTo("10.00");
        assertThat(body.get("attempt").asInt()).isEqualTo(2);
        assertThat(h2.count("SELECT COUNT(*) FROM " + TestStore.TABLE + " WHERE scope_key = ? AND task_input IS NULL",
                scopeKey(key))).as("the finish clears the input").isEqualTo(1);

        releaseFirst.countDown();
        events.await(IdempotencyEvent.Fenced.class, e -> true);
        assertThat(events.await(IdempotencyEvent.TaskEnded.class, e -> true, 2)).as("the first task ended").isNotNull();
        assertThat(payments("AS-9")).as("the fenced-out first task committed nothing").isEqualTo(1);
        Http.Reply replay = http.post("payments/async", payment("AS-9", "10.00")).key(key).send();
        assertThat(replay.status()).isEqualTo(201);
        assertThat(replay.body()).isEqualTo(outcome.body());
    }

    // The kept input is checked against the record before it runs: a body changed in the table no longer has the
    // record's fingerprint, and an operation that has run the most times allowed is no longer run again (one that
    // kills its node each time must not take every node down); both are left to the settler, and said once.
    @Test
    void aKeptInputThatIsNotTheRecordsRequestOrHasRunTooOftenIsNotRunAgain() throws Exception {
        String key = newKey();
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch running = holdFirstRun(release);
        assertThat(http.post("payments/async", payment("AS-10", "10.00")).key(key).send().status()).isEqualTo(202);
        await(running);
        String scopeKey = scopeKey(key);
        byte[] keptBytes = (byte[]) h2.query("SELECT task_input AS v FROM " + TestStore.TABLE + " WHERE scope_key = ?",
                scopeKey).get(0).get("v");
        dev.idempotency.core.KeptRequest kept = dev.idempotency.core.KeptRequest.decode(keptBytes);
        dev.idempotency.core.KeptRequest changed = new dev.idempotency.core.KeptRequest(kept.key(), kept.method(),
                kept.path(), kept.query(), kept.contentType(), kept.apiVersion(), kept.baseUri(),
                payment("AS-10", "99999.00").getBytes(StandardCharsets.UTF_8), kept.arguments());
        h2.update("UPDATE " + TestStore.TABLE + " SET task_input = ? WHERE scope_key = ?", changed.encode(), scopeKey);
        weld.select(dev.idempotency.testing.MutableClock.class).get().advance(java.time.Duration.ofSeconds(31));
        dev.idempotency.IdempotencyMaintenance maintenance = weld.select(dev.idempotency.IdempotencyMaintenance.class).get();
        assertThat(maintenance.resumeAccepted()).as("a changed input").isZero();
        assertThat(attempts(scopeKey)).isEqualTo(1);

        h2.update("UPDATE " + TestStore.TABLE + " SET task_input = ?, attempts = 3 WHERE scope_key = ?", keptBytes,
                scopeKey);
        assertThat(maintenance.resumeAccepted()).as("three attempts already").isZero();
        assertThat(attempts(scopeKey)).isEqualTo(3);
        h2.update("UPDATE " + TestStore.TABLE + " SET attempts = 2 WHERE scope_key = ?", scopeKey);
        assertThat(maintenance.resumeAccepted()).as("the same input, as kept, at attempt 2").isEqualTo(1);
        assertThat(events.await(IdempotencyEvent.TaskEnded.class, e -> e.status() == RecordStatus.SUCCEEDED)).isNotNull();
        release.countDown();
        events.await(IdempotencyEvent.Fenced.class, e -> true);
        assertThat(events.await(IdempotencyEvent.TaskEnded.class, e -> true, 2)).as("the first task ended").isNotNull();
        assertThat(payments("AS-10")).isEqualTo(1);
    }

    @Test
    void aTaskThatMarksItsTransactionRollbackOnlyCommitsNothingAndIsRetryable() throws Exception {
        String key = newKey();
        assertThat(http.post("payments/async", payment("AS-4", "10.00")).key(key).header("X-Fail", "rollback-only")
                .send().status()).isEqualTo(202);
        assertThat(events.await(IdempotencyEvent.TaskEnded.class, e -> true).status())
                .isEqualTo(RecordStatus.FAILED_RETRYABLE);
        assertThat(payments("AS-4")).isZero();
        assertThat(record(key)).isEqualTo("FAILED_RETRYABLE");
    }

    @Test
    void aTaskTheExecutorRefusesIs503TaskNotAcceptedAndLeavesTheKeyFreeForARetry() throws Exception {
        String key = newKey();
        TaskExecutor.refusing = true;
        Http.Reply refused = http.post("payments/async", payment("AS-5", "10.00")).key(key).send();
        assertThat(refused.status()).isEqualTo(503);
        assertThat(refused.header("Retry-After")).isEqualTo("5");
        assertThat(JSON.readTree(refused.body()).get("type").asText()).endsWith("/task-not-accepted");
        assertThat(record(key)).isEqualTo("FAILED_RETRYABLE");

        TaskExecutor.refusing = false;
        assertThat(http.post("payments/async", payment("AS-5", "10.00")).key(key).send().status()).isEqualTo(202);
        assertThat(events.await(IdempotencyEvent.TaskEnded.class, e -> e.status() == RecordStatus.SUCCEEDED))
                .isNotNull();
        assertThat(payments("AS-5")).isEqualTo(1);
    }

    @Test
    void anotherCallersKeyIsNotFoundByTheStatusResource() throws Exception {
        String key = newKey();
        assertThat(http.post("payments/async", payment("AS-6", "10.00")).key(key).send().status()).isEqualTo(202);
        events.await(IdempotencyEvent.TaskEnded.class, e -> true);
        assertThat(http.get("async-operations/" + key).user("bob").send().status()).isEqualTo(404);
    }

    // Holds the first run of the next task inside the method until release; later runs (a takeover's) go through.
    private static CountDownLatch holdFirstRun(CountDownLatch release) {
        CountDownLatch running = new CountDownLatch(1);
        PaymentResource.duringExecution = k -> {
            if (running.getCount() > 0) {
                running.countDown();
                await(release);
            }
        };
        return running;
    }

    private static String scopeKey(String key) {
        return SCOPE_DIGEST.of(new dev.idempotency.Scope("", "alice", "payments.async", key));
    }

    private long attempts(String scopeKey) {
        return h2.count("SELECT attempts FROM " + TestStore.TABLE + " WHERE scope_key = ?", scopeKey);
    }

    private String record(String key) {
        String scopeKey = scopeKey(key);
        var rows = h2.query("SELECT status AS v FROM " + TestStore.TABLE + " WHERE scope_key = ?", scopeKey);
        return rows.isEmpty() ? null : String.valueOf(rows.get(0).get("v"));
    }

    private long payments(String order) {
        return h2.count("SELECT COUNT(*) FROM test_payment WHERE merchant_order_no = ?", order);
    }

    private static String payment(String order, String amount) {
        return String.format(PAYMENT, order, amount);
    }

    private static String newKey() {
        return UUID.randomUUID().toString();
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
