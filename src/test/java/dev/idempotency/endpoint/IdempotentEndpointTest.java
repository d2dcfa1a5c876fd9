package dev.idempotency.endpoint;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idempotency.IdempotencyEvent;
import dev.idempotency.testing.Databases;
import dev.idempotency.testing.MutableClock;
import dev.idempotency.testing.TestDatabase;
import jakarta.persistence.EntityManagerFactory;
import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The library as an application uses it: an {@code @Idempotent} JAX-RS method on a CDI bean, its business
 * row written through Hibernate in the same JTA transaction as the record (H2, Narayana).
 */
@EnableWeld
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class IdempotentEndpointTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PAYMENT = "{\"merchantOrderNo\":\"%s\",\"amount\":100.00,\"currency\":\"EUR\",\"traceId\":\"t-1\"}";

    @WeldSetup
    WeldInitiator weld = WeldInitiator.from(EndpointFixture.weld()).build();

    private EntityManagerFactory emf;
    private Http http;
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
        weld.select(EventLog.class).get().clear();
        PaymentResource.duringExecution = key -> { };
    }

    @Test
    void aReplayIsAnsweredBeforeTheEntityIsRead() {
        String key = newKey();
        assertThat(http.post("payments", payment("E-1")).key(key).send().status()).isEqualTo(201);
        int reads = EntityReads.COUNT.get();
        Http.Reply replay = http.post("payments", payment("E-1")).key(key).send();
        assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
        Http.Reply mismatch = http.post("payments", payment("E-2")).key(key).send();
        assertThat(mismatch.status()).isEqualTo(422);
        assertThat(EntityReads.COUNT.get()).as("no entity parsed for a replay or a rejection").isEqualTo(reads);
        assertThat(http.post("payments", payment("E-3")).key(newKey()).send().status()).isEqualTo(201);
        assertThat(EntityReads.COUNT.get()).as("a new operation's entity is read").isEqualTo(reads + 1);
    }

    @Test
    void theFirstRequestRunsAndARetryGetsTheSameBytesBack() {
        String key = newKey();
        Http.Reply first = http.post("payments", payment("A-1")).key(key).send();
        assertThat(first.status()).isEqualTo(201);
        assertThat(first.header("Location")).startsWith(Http.BASE + "payments/");
        assertThat(first.header("Idempotent-Replayed")).isNull();
        Http.Reply replay = http.post("payments", payment("A-1")).key(key).send();
        assertThat(replay.status()).isEqualTo(201);
        assertThat(replay.header("Location")).isEqualTo(first.header("Location"));
        assertThat(replay.header("Content-Type")).isEqualTo(first.header("Content-Type"));
        assertThat(replay.body()).isEqualTo(first.body());
        assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(replay.header("X-Payment-Region")).as("a configured replayed header").isEqualTo("eu");
        assertThat(replay.header("Set-Cookie")).isNull();
        assertThat(payments("A-1")).isEqualTo(1);
        assertThat(record(key, "status")).isEqualTo("SUCCEEDED");
        assertThat(weld.select(EventLog.class).get().events()).anyMatch(e -> e instanceof IdempotencyEvent.Replayed);
    }

    @Test
    void equivalentJsonIsARetryAndTraceIdDoesNotCount() {
        String key = newKey();
        assertThat(http.post("payments", payment("A-2")).key(key).send().status()).isEqualTo(201);
        String respelled = "{ \"currency\":\"EUR\", \"amount\": 1E2, \"merchantOrderNo\":\"A-2\", \"traceId\":\"other\" }";
        Http.Reply replay = http.post("payments", respelled).key(key).send();
        assertThat(replay.status()).isEqualTo(201);
        assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(payments("A-2")).isEqualTo(1);
    }

    @Test
    void aQuotedKeyIsTheSameKey() {
        String key = newKey();
        http.post("payments", payment("A-3")).key(key).send();
        Http.Reply replay = http.post("payments", payment("A-3")).key("\"" + key + "\"").send();
        assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
    }

    @Test
    void aMissingOrMalformedKeyIs400ProblemAndLeavesNothing() throws Exception {
        Http.Reply missing = http.post("payments", payment("A-4")).send();
        assertProblem(missing, 400, "key-missing");
        assertProblem(http.post("payments", payment("A-4")).key("has space").send(), 400, "key-invalid");
        assertProblem(http.post("payments", payment("A-4")).key("x".repeat(256)).send(), 400, "key-invalid");
        assertProblem(http.post("payments", payment("A-4")).key("a").key("b").send(), 400, "key-invalid");
        assertThat(payments("A-4")).isZero();
        assertThat(h2.count("SELECT COUNT(*) FROM " + TestStore.TABLE)).isZero();
    }

    @Test
    void malformedJsonIs400ProblemBeforeAnythingRuns() throws Exception {
        assertProblem(http.post("payments", "{\"amount\":1,\"amount\":2}").key(newKey()).send(), 400, "body-malformed");
        assertProblem(http.post("payments", "{\"amount\":").key(newKey()).send(), 400, "body-malformed");
        assertThat(h2.count("SELECT COUNT(*) FROM " + TestStore.TABLE)).isZero();
    }

    @Test
    void theSameKeyWithAnotherQueryStringIs422AndRespelledParametersReplay() throws Exception {
        String key = newKey();
        assertThat(http.post("payments?b=2&a=1", payment("Q-1")).key(key).send().status()).isEqualTo(201);
        assertThat(http.post("payments?a=1&b=%32", payment("Q-1")).key(key).send().header("Idempotent-Replayed"))
                .isEqualTo("true");
        assertProblem(http.post("payments?a=1&b=2&dryRun=true", payment("Q-1")).key(key).send(), 422, "fingerprint-mismatch");
        assertProblem(http.post("payments", payment("Q-1")).key(key).send(), 422, "fingerprint-mismatch");
        assertThat(payments("Q-1")).isEqualTo(1);
    }

    // Design guide §6: a secret of the first response is not copied into the idempotency table; the client
    // gets it once, and replays show it masked.
    @Test
    void aRedactedFieldReachesTheClientOnceAndIsNeverStored() throws Exception {
        String key = newKey();
        Http.Reply first = http.post("payments/redacted", payment("R-1")).key(key).send();
        assertThat(first.status()).isEqualTo(201);
        String chargeKey = JSON.readTree(first.body()).get("chargeKey").asText();
        assertThat(chargeKey).isNotBlank().isNotEqualTo("***");
        assertThat(record(key, "response_body")).doesNotContain(chargeKey).contains("\"chargeKey\":\"***\"");
        Http.Reply replay = http.post("payments/redacted", payment("R-1")).key(key).send();
        assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
        JsonNode replayed = JSON.readTree(replay.body());
        assertThat(replayed.get("chargeKey").asText()).isEqualTo("***");
        assertThat(replayed.get("id")).isEqualTo(JSON.readTree(first.body()).get("id"));
        assertThat(replay.header("Location")).isEqualTo(first.header("Location"));
    }

    @Test
    void theSameKeyWithAnotherBodyIs422() throws Exception {
        String key = newKey();
        http.post("payments", payment("A-5")).key(key).send();
        Http.Reply other = http.post("payments", payment("A-5").replace("100.00", "200.00")).key(key).send();
        assertProblem(other, 422, "fingerprint-mismatch");
        assertThat(payments("A-5")).isEqualTo(1);
    }

    @Test
    void anotherUserOrTenantWithTheSameKeyIsAnotherOperation() {
        String key = newKey();
        assertThat(http.post("payments", payment("A-6")).key(key).send().status()).isEqualTo(201);
        Http.Reply bob = http.post("payments", payment("B-6")).key(key).user("bob").send();
        assertThat(bob.status()).isEqualTo(201);
        assertThat(bob.header("Idempotent-Replayed")).isNull();
        Http.Reply otherTenant = http.post("payments", payment("C-6")).key(key).header("X-Tenant", "globex").send();
        assertThat(otherTenant.status()).isEqualTo(201);
        assertThat(otherTenant.header("Idempotent-Replayed")).isNull();
        assertThat(h2.count("SELECT COUNT(*) FROM " + TestStore.TABLE)).isEqualTo(3);
        assertThat(h2.query("SELECT tenant, principal, endpoint FROM " + TestStore.TABLE + " ORDER BY principal, tenant"))
                .extracting(r -> r.get("tenant") + "/" + r.get("principal") + "/" + r.get("endpoint"))
                .containsExactly("/alice/payments.create", "globex/alice/payments.create", "/bob/payments.create");
    }

    @Test
    void anAnonymousCallIs401Problem() throws Exception {
        assertProblem(http.post("payments", payment("A-7")).without("X-User").key(newKey()).send(), 401, "principal-required");
    }

    @Test
    void aFinalFailureIsStoredAndReplayed() {
        String key = newKey();
        String invalid = payment("A-8").replace("100.00", "-1");
        Http.Reply first = http.post("payments", invalid).key(key).send();
        assertThat(first.status()).isEqualTo(400);
        Http.Reply replay = http.post("payments", invalid).key(key).send();
        assertThat(replay.status()).isEqualTo(400);
        assertThat(replay.body()).isEqualTo(first.body());
        assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(record(key, "status")).isEqualTo("FAILED_FINAL");
    }

    @Test
    void aBeanValidationFailureIsFinalWhateverItsStatus() {
        String key = newKey();
        String invalid = payment("A-31").replace("\"EUR\"", "\"euro\"");
        Http.Reply first = http.post("payments", invalid).key(key).send();
        assertThat(first.status()).isGreaterThanOrEqualTo(400);
        assertThat(record(key, "status")).isEqualTo("FAILED_FINAL");
        Http.Reply replay = http.post("payments", invalid).key(key).send();
        assertThat(replay.status()).isEqualTo(first.status());
        assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
    }

    @Test
    void aRetryableFailureRollsBackAndARetryRunsAgain() throws Exception {
        String key = newKey();
        Http.Reply failed = http.post("payments", payment("A-9")).key(key).header("X-Fail", "transient").send();
        assertThat(failed.status()).isEqualTo(503);
        assertThat(payments("A-9")).as("the business write rolled back").isZero();
        assertThat(record(key, "status")).isEqualTo("FAILED_RETRYABLE");
        Http.Reply retry = http.post("payments", payment("A-9")).key(key).send();
        assertThat(retry.status()).isEqualTo(201);
        assertThat(retry.header("Idempotent-Replayed")).isNull();
        assertThat(JSON.readTree(retry.body()).get("attempt").asInt()).isEqualTo(2);
        assertThat(payments("A-9")).isEqualTo(1);
        assertThat(record(key, "attempts")).isEqualTo("2");
    }

    @Test
    void theDerivedDownstreamKeyIsTheSameOnEveryAttempt() throws Exception {
        String key = newKey();
        http.post("payments", payment("A-10")).key(key).header("X-Fail", "transient").send();
        Http.Reply retry = http.post("payments", payment("A-10")).key(key).send();
        String charge = JSON.readTree(retry.body()).get("chargeKey").asText();
        assertThat(charge).matches("[A-Za-z0-9_-]{43}").doesNotContain(key);
        Http.Reply otherKey = http.post("payments", payment("A-11")).key(newKey()).send();
        assertThat(JSON.readTree(otherKey.body()).get("chargeKey").asText()).isNotEqualTo(charge);
    }

    @Test
    void aBusinessConstraintViolationRollsBackAndIsAFinalFailure() {
        assertThat(http.post("payments", payment("A-12")).key(newKey()).send().status()).isEqualTo(201);
        String key = newKey();
        Http.Reply duplicate = http.post("payments", payment("A-12")).key(key).send();
        assertThat(duplicate.status()).isEqualTo(409);
        assertThat(payments("A-12")).isEqualTo(1);
        assertThat(record(key, "status")).isEqualTo("FAILED_FINAL");
    }

    @Test
    void aFencedExecutorCannotCommitItsBusinessWork() throws Exception {
        String key = newKey();
        // Another node takes the operation over while this one runs (its lease had ended).
        PaymentResource.duringExecution = k -> h2.update("UPDATE " + TestStore.TABLE
                + " SET owner_token = 'ffffffffffffffffffffffffffffffff', attempts = 2");
        Http.Reply fenced = http.post("payments", payment("A-13")).key(key).send();
        assertProblem(fenced, 409, "superseded");
        assertThat(payments("A-13")).as("the fenced executor's payment rolled back").isZero();
        assertThat(record(key, "status")).isEqualTo("PROCESSING");
        assertThat(weld.select(EventLog.class).get().events()).anyMatch(e -> e instanceof IdempotencyEvent.Fenced);
    }

    @Test
    void theRecordAndTheBusinessRowCommitTogetherInTheApplicationsTransaction() throws Exception {
        String key = newKey();
        Http.Reply joined = http.post("payments/joined", payment("A-14")).key(key).send();
        assertThat(joined.status()).isEqualTo(201);
        assertThat(payments("A-14")).isEqualTo(1);
        assertThat(record(key, "status")).isEqualTo("SUCCEEDED");
        assertThat(http.post("payments/joined", payment("A-14")).key(key).send().body()).isEqualTo(joined.body());

        String failing = newKey();
        assertThat(http.post("payments/joined", payment("A-15")).key(failing).header("X-Fail", "transient").send().status())
                .isEqualTo(503);
        assertThat(payments("A-15")).isZero();
        assertThat(record(failing, "status")).isNotEqualTo("SUCCEEDED");
    }

    // The application marked its transaction rollback-only and still returned 201: nothing committed, so the
    // client must not read it as done, and the retry must run (design guide §5: the record follows the business).
    @Test
    void aSuccessFromATransactionMarkedRollbackOnlyIs500RolledBackAndTheRetryRuns() throws Exception {
        for (String path : java.util.List.of("payments", "payments/joined")) {
            String key = newKey();
            String order = "RB-" + path.length();
            Http.Reply first = http.post(path, payment(order)).key(key).header("X-Fail", "rollback-only").send();
            assertProblem(first, 500, "rolled-back");
            assertThat(payments(order)).as(path).isZero();
            assertThat(record(key, "status")).as(path).isNotEqualTo("SUCCEEDED");
            Http.Reply retry = http.post(path, payment(order)).key(key).send();
            assertThat(retry.status()).as(path).isEqualTo(201);
            assertThat(retry.header("Idempotent-Replayed")).as(path).isNull();
            assertThat(payments(order)).as(path).isEqualTo(1);
        }
    }

    // @Transactional(dontRollbackOn), a checked exception under @Transactional, @ApplicationException(rollback =
    // false) in the library's own transaction: the application keeps its work, so the record of the outcome
    // (what its mapper renders) commits with it, final: a retry replays the 402 and never pays again.
    @Test
    void anExceptionDeclaredAsNotRollingBackCommitsItsWorkAndItsRecordTogether() throws Exception {
        for (String path : java.util.List.of("payments/declined", "payments/expired", "payments/flagged")) {
            String key = newKey();
            String order = "D-" + path.substring("payments/".length());
            Http.Reply first = http.post(path, payment(order)).key(key).send();
            assertThat(first.status()).as(path + ": " + first.text()).isEqualTo(402);
            assertThat(payments(order)).as(path + ": the declined attempt is kept").isEqualTo(1);
            assertThat(record(key, "status")).as(path).isEqualTo("FAILED_FINAL");
            Http.Reply retry = http.post(path, payment(order)).key(key).send();
            assertThat(retry.status()).as(path).isEqualTo(402);
            assertThat(retry.header("Idempotent-Replayed")).as(path).isEqualTo("true");
            assertThat(retry.body()).as(path).isEqualTo(first.body());
            assertThat(payments(order)).as(path).isEqualTo(1);
        }
    }

    // ClaimMode.IN_TRANSACTION: while the method runs nobody sees a record (the claim is in the business
    // transaction); once it commits, the record is SUCCEEDED and the retry replays the first bytes.
    @Test
    void aClaimInTheBusinessTransactionIsInvisibleWhileItRunsAndCommitsWithThePayment() throws Exception {
        for (String path : java.util.List.of("payments/in-transaction", "payments/in-transaction-joined")) {
            String key = newKey();
            String order = "IT-" + path.length();
            java.util.concurrent.atomic.AtomicLong recordsSeenWhileRunning = new java.util.concurrent.atomic.AtomicLong(-1);
            long recordsBefore = h2.count("SELECT COUNT(*) FROM " + TestStore.TABLE);
            // On a connection of its own, outside the request's transaction: what another node would see.
            PaymentResource.duringExecution = k -> {
                try (java.sql.Connection other = h2.raw(); java.sql.ResultSet rs = other.createStatement()
                        .executeQuery("SELECT COUNT(*) FROM " + TestStore.TABLE)) {
                    rs.next();
                    recordsSeenWhileRunning.set(rs.getLong(1));
                } catch (java.sql.SQLException e) {
                    throw new IllegalStateException(e);
                }
            };
            Http.Reply first = http.post(path, payment(order)).key(key).send();
            assertThat(first.status()).as(path + ": " + first.text()).isEqualTo(201);
            assertThat(recordsSeenWhileRunning.get()).as(path + ": records another connection saw while it ran")
                    .isEqualTo(recordsBefore);
            assertThat(record(key, "status")).as(path).isEqualTo("SUCCEEDED");
            Http.Reply retry = http.post(path, payment(order)).key(key).send();
            assertThat(retry.status()).as(path).isEqualTo(201);
            assertThat(retry.header("Idempotent-Replayed")).as(path).isEqualTo("true");
            assertThat(retry.body()).as(path).isEqualTo(first.body());
            assertThat(payments(order)).as(path).isEqualTo(1);
            assertProblem(http.post(path, payment(order + "-other")).key(key).send(), 422, "fingerprint-mismatch");
        }
    }

    @Test
    void aDuplicateOfAClaimInTheBusinessTransactionWaitsItsBoundThenGets409AndTheRetryReplays() throws Exception {
        String key = newKey();
        HeldExecution held = new HeldExecution(key);
        CompletableFuture<Http.Reply> first = CompletableFuture.supplyAsync(() ->
                http.post("payments/in-transaction", payment("IT-W")).key(key).send());
        held.awaitRunning();
        // Its INSERT waits on the first's uncommitted row for in-flight-wait (PT1S here), then it is told to come back.
        Http.Reply duplicate = http.post("payments/in-transaction", payment("IT-W")).key(key).send();
        assertProblem(duplicate, 409, "request-in-flight");
        assertThat(duplicate.header("Retry-After")).isNotNull();
        held.release();
        assertThat(first.get(10, TimeUnit.SECONDS).status()).isEqualTo(201);
        Http.Reply retry = http.post("payments/in-transaction", payment("IT-W")).key(key).send();
        assertThat(retry.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(payments("IT-W")).isEqualTo(1);
    }

    // A rollback takes the claim with it: nothing to give back, the retry runs at once. A final failure is kept as
    // a record of its own (the business transaction rolled back), and replayed.
    @Test
    void aClaimInTheBusinessTransactionGoesBackWithARollbackAndAFinalFailureIsStillReplayed() throws Exception {
        String key = newKey();
        Http.Reply rolledBack = http.post("payments/in-transaction", payment("IT-R")).key(key)
                .header("X-Fail", "rollback-only").send();
        assertProblem(rolledBack, 500, "rolled-back");
        assertThat(recordOrNull(key)).as("the claim rolled back with the payment").isNull();
        assertThat(payments("IT-R")).isZero();
        Http.Reply retry = http.post("payments/in-transaction", payment("IT-R")).key(key).send();
        assertThat(retry.status()).isEqualTo(201);
        assertThat(retry.header("Idempotent-Replayed")).isNull();
        assertThat(payments("IT-R")).isEqualTo(1);

        String failing = newKey();
        Http.Reply failed = http.post("payments/in-transaction", payment("IT-F")).key(failing)
                .header("X-Fail", "transient").send();
        assertThat(failed.status()).as(failed.text()).isGreaterThanOrEqualTo(400).isLessThan(600);
        assertThat(payments("IT-F")).isZero();
        assertThat(record(failing, "status")).isEqualTo("FAILED_FINAL");
        Http.Reply replayed = http.post("payments/in-transaction", payment("IT-F")).key(failing).send();
        assertThat(replayed.status()).isEqualTo(failed.status());
        assertThat(replayed.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(payments("IT-F")).isZero();
    }

    @Test
    void aCommitOfAClaimInTheBusinessTransactionReportedUnknownIsSettledByReadingTheRecord() {
        String key = newKey();
        // The owned commit throws a heuristic hazard although it committed: the record exists under the claim's
        // token, so the first response goes out, and the retry replays it.
        Http.Reply first = http.post("payments/in-transaction", payment("IT-U")).key(key)
                .header("X-Fail", "commit-unknown").send();
        assertThat(first.status()).as(first.text()).isEqualTo(201);
        assertThat(record(key, "status")).isEqualTo("SUCCEEDED");
        Http.Reply retry = http.post("payments/in-transaction", payment("IT-U")).key(key).send();
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(payments("IT-U")).isEqualTo(1);
    }

    @Test
    void aJoinedCommitReportedUnknownButDoneAnswersTheFirstResponseAndNeverRunsAgain() {
        String key = newKey();
        // The application's commit throws (heuristic hazard) and its mapper answers 500; the fenced update
        // finds the record committed, so the first response goes out instead.
        Http.Reply first = http.post("payments/joined", payment("A-40")).key(key).header("X-Fail", "commit-unknown").send();
        assertThat(first.status()).isEqualTo(201);
        assertThat(payments("A-40")).isEqualTo(1);
        assertThat(record(key, "status")).isEqualTo("SUCCEEDED");
        Http.Reply retry = http.post("payments/joined", payment("A-40")).key(key).send();
        assertThat(retry.status()).isEqualTo(201);
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(record(key, "attempts")).isEqualTo("1");
    }

    @Test
    void aConcurrentDuplicateGets409WithRetryAfter() throws Exception {
        String key = newKey();
        // The first execution is held inside its method until the duplicate has been answered: the duplicate
        // meets it running, however slow the machine.
        HeldExecution held = new HeldExecution(key);
        CompletableFuture<Http.Reply> first = CompletableFuture.supplyAsync(() ->
                http.post("payments", payment("A-16")).key(key).send());
        held.awaitRunning();
        Http.Reply duplicate = http.post("payments", payment("A-16")).key(key).send();
        held.release();
        assertProblem(duplicate, 409, "request-in-flight");
        assertThat(Integer.parseInt(duplicate.header("Retry-After"))).isBetween(1, 5);
        assertThat(first.get(10, TimeUnit.SECONDS).status()).isEqualTo(201);
        assertThat(payments("A-16")).isEqualTo(1);
    }

    @Test
    void aWaitingDuplicateGetsTheFirstOutcome() throws Exception {
        String key = newKey();
        HeldExecution held = new HeldExecution(key);
        CompletableFuture<Http.Reply> first = CompletableFuture.supplyAsync(() ->
                http.post("payments/waiting", payment("A-17")).key(key).send());
        held.awaitRunning();
        CompletableFuture<Http.Reply> waiting = CompletableFuture.supplyAsync(() ->
                http.post("payments/waiting", payment("A-17")).key(key).send());
        // The first ends only once the duplicate is seen waiting for it: the answer comes out of the wait.
        weld.select(EventLog.class).get().await(IdempotencyEvent.WaitingForOutcome.class, e -> true);
        assertThat(waiting).as("the duplicate waits while the first runs").isNotDone();
        held.release();
        Http.Reply duplicate = waiting.get(10, TimeUnit.SECONDS);
        Http.Reply original = first.get(10, TimeUnit.SECONDS);
        assertThat(duplicate.status()).isEqualTo(201);
        assertThat(duplicate.body()).isEqualTo(original.body());
        assertThat(duplicate.header("Idempotent-Replayed")).isEqualTo("true");
    }

    // Design guide §5/§6: a method that outlives its lease keeps it (the keeper renews it off the request
    // thread), so a retry after the first lease would have run out still meets it in flight: one execution.
    @Test
    void anExecutionLongerThanItsLeaseKeepsItAndARetryMeetsItInFlight() throws Exception {
        String key = newKey();
        HeldExecution held = new HeldExecution(key);
        CompletableFuture<Http.Reply> first = CompletableFuture.supplyAsync(() ->
                http.post("payments", payment("A-50")).key(key).send());
        held.awaitRunning();
        MutableClock clock = weld.select(MutableClock.class).get();
        dev.idempotency.deployment.Assembly assembly =
                weld.select(dev.idempotency.deployment.Assembly.class).get();
        assertThat(assembly.leases().held()).isEqualTo(1);
        clock.advance(Duration.ofSeconds(16));
        assembly.leases().renewDue();
        clock.advance(Duration.ofSeconds(20));
        Http.Reply retry = http.post("payments", payment("A-50")).key(key).send();
        held.release();
        assertProblem(retry, 409, "request-in-flight");
        assertThat(first.get(10, TimeUnit.SECONDS).status()).isEqualTo(201);
        assertThat(payments("A-50")).isEqualTo(1);
        assertThat(record(key, "attempts")).isEqualTo("1");
        assertThat(assembly.leases().held()).as("released when the method returned").isZero();
    }

    // A lease that could not be renewed before it ran out (the database was unreachable, say): a retry may
    // be taking the operation over, so nothing of this run commits; the operation is given back for the retry.
    @Test
    void anExecutionThatLostItsLeaseCommitsNothingAndGivesTheOperationBack() throws Exception {
        String key = newKey();
        HeldExecution held = new HeldExecution(key);
        CompletableFuture<Http.Reply> first = CompletableFuture.supplyAsync(() ->
                http.post("payments", payment("A-51")).key(key).send());
        held.awaitRunning();
        dev.idempotency.deployment.Assembly assembly =
                weld.select(dev.idempotency.deployment.Assembly.class).get();
        weld.select(MutableClock.class).get().advance(Duration.ofSeconds(31));
        assembly.leases().renewDue();
        assertThat(assembly.leases().held()).isZero();
        assertThat(weld.select(EventLog.class).get().events()).anyMatch(e -> e instanceof IdempotencyEvent.LeaseLost);
        held.release();
        assertProblem(first.get(10, TimeUnit.SECONDS), 409, "superseded");
        assertThat(payments("A-51")).isZero();
        assertThat(record(key, "status")).isEqualTo("FAILED_RETRYABLE");
        PaymentResource.duringExecution = k -> { };
        assertThat(http.post("payments", payment("A-51")).key(key).send().status()).isEqualTo(201);
        assertThat(payments("A-51")).isEqualTo(1);
    }

    @Test
    void anAcceptedDuplicateGets202WithTheStatusLocation() throws Exception {
        String key = newKey();
        HeldExecution held = new HeldExecution(key);
        CompletableFuture<Http.Reply> first = CompletableFuture.supplyAsync(() ->
                http.post("payments/accepted", payment("A-18")).key(key).send());
        held.awaitRunning();
        Http.Reply duplicate = http.post("payments/accepted", payment("A-18")).key(key).send();
        held.release();
        assertThat(duplicate.status()).isEqualTo(202);
        assertThat(duplicate.header("Location")).isEqualTo(Http.BASE + "idempotency/" + key);
        assertThat(duplicate.header("Retry-After")).isNotNull();
        assertThat(JSON.readTree(duplicate.body()).get("state").asText()).isEqualTo("PROCESSING");
        first.get(10, TimeUnit.SECONDS);
    }

    @Test
    void tooManyInFlightKeysOfOneUserGet429() throws Exception {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(3);
        PaymentResource.duringExecution = k -> {
            if (k.startsWith("hold-")) {
                started.countDown();
                await(release);
            }
        };
        CompletableFuture<?>[] running = new CompletableFuture<?>[3];
        for (int i = 0; i < 3; i++) {
            String order = "L-" + i;
            String key = "hold-" + newKey();
            running[i] = CompletableFuture.supplyAsync(() -> http.post("payments", payment(order)).key(key).send());
        }
        await(started);
        Http.Reply limited = http.post("payments", payment("L-4")).key(newKey()).send();
        assertProblem(limited, 429, "too-many-in-flight");
        assertThat(limited.header("Retry-After")).isNotNull();
        assertThat(http.post("payments", payment("L-5")).key(newKey()).user("bob").send().status()).isEqualTo(201);
        release.countDown();
        CompletableFuture.allOf(running).get(10, TimeUnit.SECONDS);
    }

    @Test
    void aBusinessFieldCanBeTheKey() {
        Http.Reply first = http.post("payments/by-order", payment("A-19")).without("Idempotency-Key").send();
        assertThat(first.status()).isEqualTo(201);
        Http.Reply again = http.post("payments/by-order", payment("A-19")).send();
        assertThat(again.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(again.body()).isEqualTo(first.body());
    }

    @Test
    void encryptedStorageKeepsNoPlaintextAndReplaysTheSameBytes() {
        String key = newKey();
        Http.Reply first = http.post("payments/sealed", payment("SECRET-ORDER-20")).key(key).send();
        byte[] stored = (byte[]) h2.query("SELECT response_body FROM " + TestStore.TABLE).get(0).get("response_body");
        assertThat(new String(stored, StandardCharsets.ISO_8859_1)).doesNotContain("SECRET-ORDER-20");
        assertThat(record(key, "body_encoding")).isEqualTo("aes-gcm:k1");
        Http.Reply replay = http.post("payments/sealed", payment("SECRET-ORDER-20")).key(key).send();
        assertThat(replay.body()).isEqualTo(first.body());
    }

    @Test
    void minimalStorageKeepsNoBodyAndRebuildsItOnReplay() throws Exception {
        String key = newKey();
        Http.Reply first = http.post("payments/minimal", payment("A-21")).key(key).send();
        assertThat(h2.query("SELECT response_body FROM " + TestStore.TABLE).get(0).get("response_body"))
                .satisfies(body -> assertThat(body == null || ((byte[]) body).length == 0).isTrue());
        Http.Reply replay = http.post("payments/minimal", payment("A-21")).key(key).send();
        assertThat(replay.status()).isEqualTo(201);
        assertThat(replay.header("Location")).isEqualTo(first.header("Location"));
        JsonNode rebuilt = JSON.readTree(replay.body());
        assertThat(rebuilt.get("id").asText()).isEqualTo(JSON.readTree(first.body()).get("id").asText());
    }

    @Test
    void secretsAndCookiesAreNotStoredOrReplayed() {
        String key = newKey();
        Http.Reply first = http.post("payments", payment("A-22")).key(key).send();
        assertThat(first.header("Set-Cookie")).as("the application's own first response keeps its cookie").isNotNull();
        assertThat(record(key, "response_headers")).doesNotContain("Set-Cookie").doesNotContain("secret");
        assertThat(http.post("payments", payment("A-22")).key(key).send().header("Set-Cookie")).isNull();
    }

    @Test
    void theStatusResourceShowsOnlyTheCallersOwnOperation() throws Exception {
        String key = newKey();
        http.post("payments", payment("A-23")).key(key).send();
        Http.Reply own = http.get("idempotency/" + key).send();
        assertThat(own.status()).isEqualTo(200);
        JsonNode status = JSON.readTree(own.body());
        assertThat(status.get("state").asText()).isEqualTo("SUCCEEDED");
        assertThat(status.get("responseStatus").asInt()).isEqualTo(201);
        assertThat(own.text()).doesNotContain("v1:").doesNotContain("owner");
        assertProblem(http.get("idempotency/" + key).user("bob").send(), 404, "operation-not-found");
        assertProblem(http.get("idempotency/" + newKey()).send(), 404, "operation-not-found");
    }

    @Test
    void anExpiredLeaseIsTakenOverByTheRetry() throws Exception {
        String key = newKey();
        // A node crashed after its claim: the record stays PROCESSING with a lease.
        PaymentResource.duringExecution = k -> {
            throw new IllegalStateException("crash");
        };
        try {
            http.post("payments", payment("A-24")).key(key).send();
        } catch (RuntimeException expected) {
            // unmapped: the container would answer 500
        }
        PaymentResource.duringExecution = k -> { };
        MutableClock clock = weld.select(MutableClock.class).get();
        h2.update("UPDATE " + TestStore.TABLE + " SET status = 'PROCESSING', lease_until = ?",
                java.time.LocalDateTime.ofInstant(clock.instant().plusSeconds(30), java.time.ZoneOffset.UTC));
        assertProblem(http.post("payments", payment("A-24")).key(key).send(), 409, "request-in-flight");
        clock.advance(Duration.ofSeconds(31));
        Http.Reply takeover = http.post("payments", payment("A-24")).key(key).send();
        assertThat(takeover.status()).isEqualTo(201);
        assertThat(payments("A-24")).isEqualTo(1);
    }

    @Test
    void configuredExceptionTypesDecideFinalOrRetryable() {
        String finalKey = newKey();
        Http.Reply unavailable = http.post("payments/classified", payment("A-25")).key(finalKey).header("X-Fail", "transient").send();
        assertThat(unavailable.status()).isEqualTo(503);
        assertThat(record(finalKey, "status")).as("finalOn wins over the 5xx status").isEqualTo("FAILED_FINAL");
        assertThat(http.post("payments/classified", payment("A-25")).key(finalKey).send().header("Idempotent-Replayed"))
                .isEqualTo("true");
        String retryKey = newKey();
        String invalid = payment("A-26").replace("100.00", "0");
        assertThat(http.post("payments/classified", invalid).key(retryKey).send().status()).isEqualTo(400);
        assertThat(record(retryKey, "status")).as("retryOn wins over the 4xx status").isEqualTo("FAILED_RETRYABLE");
    }

    @Test
    void theApiVersionIsPartOfTheFingerprint() throws Exception {
        String key = newKey();
        assertThat(http.post("payments/versioned", payment("A-27")).key(key).header("Api-Version", "1").send().status())
                .isEqualTo(201);
        assertThat(http.post("payments/versioned", payment("A-27")).key(key).header("Api-Version", "1").send()
                .header("Idempotent-Replayed")).isEqualTo("true");
        assertProblem(http.post("payments/versioned", payment("A-27")).key(key).header("Api-Version", "2").send(), 422,
                "fingerprint-mismatch");
    }

    @Test
    void aBodyOverTheLimitIsRefusedWithNothingStoredAndOneAtTheLimitRuns() throws Exception {
        int limit = 1 << 20; // idempotency.max-request-bytes, its default
        String json = payment("A-40");
        String atLimit = json + " ".repeat(limit - json.getBytes(java.nio.charset.StandardCharsets.UTF_8).length);
        String overKey = newKey();

        // Without a Content-Length (chunked), and with one that says so before a byte is read.
        assertProblem(http.post("payments", atLimit + " ").key(overKey).send(), 413, "body-too-large");
        assertProblem(http.post("payments", atLimit + " ").key(overKey)
                .header("Content-Length", String.valueOf(limit + 1)).send(), 413, "body-too-large");
        assertThat(payments("A-40")).isZero();
        assertThat(recordOrNull(overKey, "status")).isNull();

        String key = newKey();
        assertThat(http.post("payments", atLimit).key(key).header("Content-Length", String.valueOf(limit)).send()
                .status()).isEqualTo(201);
        assertThat(http.post("payments", atLimit).key(key).send().header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(payments("A-40")).isEqualTo(1);
    }

    @Test
    void aResponseTooLargeToKeepRollsBackAndStoresNothing() throws Exception {
        String key = newKey();
        Http.Reply tooLarge = http.post("payments/large", payment("A-28")).key(key).send();
        assertProblem(tooLarge, 500, "response-too-large");
        assertThat(payments("A-28")).isZero();
        assertThat(record(key, "status")).isEqualTo("FAILED_RETRYABLE");
    }

    // The default: a business operation that succeeded is not undone for the size of its answer. The client
    // gets the whole body once; the record keeps status and headers, and a retry never runs it again.
    @Test
    void aResponseTooLargeToKeepIsSentWholeAndKeptWithoutItsBody() throws Exception {
        String key = newKey();
        Http.Reply first = http.post("payments/large-kept", payment("L-29")).key(key).send();
        assertThat(first.status()).isEqualTo(201);
        assertThat(first.text()).hasSize(5000);
        assertThat(payments("L-29")).isEqualTo(1);
        assertThat(record(key, "status")).isEqualTo("SUCCEEDED");
        assertThat(record(key, "body_encoding")).isEqualTo("omitted");
        Http.Reply replay = http.post("payments/large-kept", payment("L-29")).key(key).send();
        assertThat(replay.status()).isEqualTo(201);
        assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(replay.header("Location")).isEqualTo(first.header("Location"));
        assertThat(replay.body()).isEmpty();
        assertThat(payments("L-29")).isEqualTo(1);
    }

    @Test
    void theDerivedKeyFilterSendsTheOperationsDownstreamKey() throws Exception {
        JsonNode answer = JSON.readTree(http.post("payments/downstream", payment("A-29")).key(newKey()).send().body());
        assertThat(answer.get("sentKey").asText()).isEqualTo(answer.get("chargeKey").asText()).hasSize(43);
    }

    @Test
    void expiredRecordsArePurgedThroughTheMaintenanceApi() {
        String key = newKey();
        http.post("payments", payment("A-30")).key(key).send();
        dev.idempotency.IdempotencyMaintenance maintenance = weld.select(dev.idempotency.IdempotencyMaintenance.class).get();
        assertThat(maintenance.purgeExpired()).isZero();
        weld.select(MutableClock.class).get().advance(Duration.ofHours(25));
        assertThat(maintenance.purgeExpired()).isEqualTo(1);
        assertThat(recordOrNull(key)).isNull();
        assertThat(payments("A-30")).as("business rows are never purged").isEqualTo(1);
        assertThat(weld.select(EventLog.class).get().events()).anyMatch(e -> e instanceof IdempotencyEvent.Purged);
    }

    private void assertProblem(Http.Reply reply, int status, String slug) throws Exception {
        assertThat(reply.status()).as(reply.text()).isEqualTo(status);
        assertThat(reply.header("Content-Type")).startsWith("application/problem+json");
        JsonNode problem = JSON.readTree(reply.body());
        assertThat(problem.get("type").asText()).isEqualTo("https://idempotency.dev/problems/" + slug);
        assertThat(problem.get("status").asInt()).isEqualTo(status);
        assertThat(problem.get("title").asText()).isNotBlank();
        assertThat(problem.get("detail").asText()).isNotBlank();
    }

    private String record(String key, String column) {
        String value = recordOrNull(key, column);
        assertThat(value).as("record column " + column).isNotNull();
        return value;
    }

    private String recordOrNull(String key) {
        return recordOrNull(key, "status");
    }

    // Records are found by the key's scope digest, as the library computes it (tenant "", user alice).
    private static final dev.idempotency.core.ScopeDigest SCOPE_DIGEST = new dev.idempotency.core.ScopeDigest(
            EndpointFixture.SECRET.getBytes(StandardCharsets.UTF_8), java.util.List.of());

    private String recordOrNull(String key, String column) {
        for (String endpoint : java.util.List.of("payments.create", "payments.joined", "payments.sealed",
                "payments.minimal", "payments.waiting", "payments.accepted", "payments.classified",
                "payments.versioned", "payments.large", "payments.downstream", "payments.declined",
                "payments.expired", "payments.flagged", "payments.redacted", "payments.large-kept",
                "payments.in-transaction", "payments.in-transaction-joined")) {
            String scopeKey = SCOPE_DIGEST.of(new dev.idempotency.Scope("", "alice", endpoint, key));
            var rows = h2.query("SELECT " + column + " AS v FROM " + TestStore.TABLE + " WHERE scope_key = ?", scopeKey);
            if (!rows.isEmpty()) {
                Object v = rows.get(0).get("v");
                return v instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(v);
            }
        }
        return null;
    }

    private long payments(String order) {
        return h2.count("SELECT COUNT(*) FROM test_payment WHERE merchant_order_no = ?", order);
    }

    private static String payment(String order) {
        return String.format(PAYMENT, order);
    }

    private static String newKey() {
        return UUID.randomUUID().toString();
    }

    private static void await(java.util.concurrent.CountDownLatch latch) {
        HeldExecution.await(latch);
    }
}
