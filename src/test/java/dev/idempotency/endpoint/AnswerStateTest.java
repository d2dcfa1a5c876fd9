package dev.idempotency.endpoint;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idempotency.IdempotencyState;
import dev.idempotency.testing.Databases;
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

import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every answer of an idempotent endpoint says what happened to its operation and what the client may do next
 * ({@code Idempotency-State}, and the same as members of the library's problems: docs/adr/0019), derived from the
 * record and how the business transaction ended — one test per row of README "Status codes".
 */
@EnableWeld
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AnswerStateTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PAYMENT = "{\"merchantOrderNo\":\"%s\",\"amount\":100.00,\"currency\":\"EUR\"}";

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
        PaymentResource.duringExecution = key -> { };
    }

    @Test
    void aCommittedAnswerIsAppliedAndItsReplaysSayWhenTheKeyIsNewAgain() throws Exception {
        String key = newKey();
        Http.Reply first = http.post("payments", payment("S-1")).key(key).send();
        assertThat(first.status()).isEqualTo(201);
        assertThat(first.header(IdempotencyState.HEADER)).isEqualTo("applied;next=stop");
        Http.Reply replay = http.post("payments", payment("S-1")).key(key).send();
        assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
        Instant expires = Instant.parse(JSON.readTree(http.get("idempotency/" + key).send().body())
                .get("expiresAt").asText());
        assertThat(replay.header(IdempotencyState.HEADER))
                .isEqualTo("applied;next=stop;expires=@" + expires.getEpochSecond());
        assertThat(replay.body()).as("the application's body is untouched").isEqualTo(first.body());
    }

    @Test
    void aFinalFailureWhoseWorkRolledBackIsNotAppliedAndFinal() throws Exception {
        String key = newKey();
        String invalid = payment("S-2").replace("100.00", "-1");
        Http.Reply first = http.post("payments", invalid).key(key).send();
        assertThat(first.status()).isEqualTo(400);
        assertThat(first.header(IdempotencyState.HEADER)).isEqualTo("not-applied;next=stop");
        assertThat(JSON.readTree(first.body()).has(IdempotencyState.STATE_MEMBER))
                .as("the application's own problem is left as it wrote it").isFalse();
        Http.Reply replay = http.post("payments", invalid).key(key).send();
        assertThat(replay.header(IdempotencyState.HEADER)).startsWith("not-applied;next=stop;expires=@");
    }

    @Test
    void aFinalFailureWhoseWorkCommittedIsApplied() {
        for (String path : List.of("payments/declined", "payments/flagged")) {
            String key = newKey();
            Http.Reply first = http.post(path, payment("S-3-" + path.length())).key(key).send();
            assertThat(first.status()).as(path).isEqualTo(402);
            assertThat(first.header(IdempotencyState.HEADER)).as(path).isEqualTo("applied;next=stop");
            Http.Reply replay = http.post(path, payment("S-3-" + path.length())).key(key).send();
            assertThat(replay.header(IdempotencyState.HEADER)).as(path).startsWith("applied;next=stop;expires=@");
        }
    }

    @Test
    void aRetryableFailureSaysANewKeyIsSafeOnlyWhereNothingCouldHaveActedUnderThisKey() {
        String untouched = newKey();
        Http.Reply early = http.post("payments", payment("S-4")).key(untouched)
                .header("X-Fail", "unavailable-before-any-key").send();
        assertThat(early.status()).isEqualTo(503);
        assertThat(early.header(IdempotencyState.HEADER))
                .as("first attempt, rolled back, the key never handed out").isEqualTo("not-applied;next=new-key");
        Http.Reply second = http.post("payments", payment("S-4")).key(untouched)
                .header("X-Fail", "unavailable-before-any-key").send();
        assertThat(second.header(IdempotencyState.HEADER))
                .as("the second attempt cannot know what the first did downstream").isEqualTo("not-applied;next=same-key");

        Http.Reply owner = http.post("payments", payment("S-4b")).key(newKey())
                .header("X-Fail", "unavailable-after-owner").send();
        assertThat(owner.header(IdempotencyState.HEADER)).as("the tenant and principal hand no key out")
                .isEqualTo("not-applied;next=new-key");
        Http.Reply scope = http.post("payments", payment("S-4c")).key(newKey())
                .header("X-Fail", "unavailable-after-scope").send();
        assertThat(scope.header(IdempotencyState.HEADER)).as("the scope holds the key")
                .isEqualTo("not-applied;next=same-key");

        Http.Reply derived = http.post("payments", payment("S-5")).key(newKey()).header("X-Fail", "transient").send();
        assertThat(derived.status()).isEqualTo(503);
        assertThat(derived.header(IdempotencyState.HEADER))
                .as("a downstream key was derived before it failed").isEqualTo("not-applied;next=same-key");

        Http.Reply inTransaction = http.post("payments/in-transaction-joined", payment("S-6")).key(newKey())
                .header("X-Fail", "unavailable-before-any-key").send();
        assertThat(inTransaction.status()).isEqualTo(503);
        assertThat(inTransaction.header(IdempotencyState.HEADER))
                .as("a claim that rolls back leaves no count of earlier attempts").isEqualTo("not-applied;next=same-key");
        assertThat(payments("S-4") + payments("S-5") + payments("S-6")).isZero();

        Http.Reply declaredFinal = http.post("payments/in-transaction", payment("S-6b")).key(newKey())
                .header("X-Fail", "unavailable-before-any-key").send();
        assertThat(declaredFinal.header(IdempotencyState.HEADER))
                .as("the endpoint declares this failure final (finalOn)").isEqualTo("not-applied;next=stop");
    }

    @Test
    void aSuccessFromATransactionThatRolledBackSaysSoInTheHeaderAndTheProblem() throws Exception {
        for (String path : List.of("payments", "payments/joined")) {
            Http.Reply rolledBack = http.post(path, payment("S-7-" + path.length())).key(newKey())
                    .header("X-Fail", "rollback-only").send();
            assertThat(rolledBack.status()).as(path).isEqualTo(500);
            assertThat(rolledBack.header(IdempotencyState.HEADER)).as(path).isEqualTo("not-applied;next=same-key");
            JsonNode problem = JSON.readTree(rolledBack.body());
            assertThat(problem.get(IdempotencyState.STATE_MEMBER).asText()).as(path).isEqualTo("not-applied");
            assertThat(problem.get(IdempotencyState.NEXT_MEMBER).asText()).as(path).isEqualTo("same-key");
        }
    }

    @Test
    void aDuplicateOfARunningOperationIsInProgress() throws Exception {
        for (String path : List.of("payments", "payments/accepted")) {
            String key = newKey();
            HeldExecution held = new HeldExecution(key);
            CompletableFuture<Http.Reply> first = CompletableFuture.supplyAsync(() ->
                    http.post(path, payment("S-8-" + path.length())).key(key).send());
            held.awaitRunning();
            Http.Reply duplicate = http.post(path, payment("S-8-" + path.length())).key(key).send();
            held.release();
            assertThat(duplicate.status()).as(path).isIn(409, 202);
            assertThat(duplicate.header(IdempotencyState.HEADER)).as(path).isEqualTo("in-progress;next=same-key");
            if (duplicate.status() == 409) {
                assertThat(JSON.readTree(duplicate.body()).get(IdempotencyState.STATE_MEMBER).asText())
                        .isEqualTo("in-progress");
            }
            assertThat(first.get(10, TimeUnit.SECONDS).header(IdempotencyState.HEADER)).isEqualTo("applied;next=stop");
        }
    }

    @Test
    void aRefusalBeforeAnythingRanSaysNothingWasAppliedAndWhetherTheRequestCanEverSucceed() throws Exception {
        Http.Reply noKey = http.post("payments", payment("S-9")).send();
        assertThat(noKey.status()).isEqualTo(400);
        assertThat(noKey.header(IdempotencyState.HEADER)).isEqualTo("not-applied;next=stop");
        assertThat(JSON.readTree(noKey.body()).get(IdempotencyState.NEXT_MEMBER).asText()).isEqualTo("stop");

        String key = newKey();
        assertThat(http.post("payments", payment("S-10")).key(key).send().status()).isEqualTo(201);
        Http.Reply mismatch = http.post("payments", payment("S-11")).key(key).send();
        assertThat(mismatch.status()).isEqualTo(422);
        assertThat(mismatch.header(IdempotencyState.HEADER))
                .as("this request was not applied; its key belongs to another").isEqualTo("not-applied;next=new-key");
        assertThat(payments("S-11")).isZero();

        Http.Reply anonymous = http.post("payments", payment("S-12")).key(newKey()).without("X-User").send();
        assertThat(anonymous.status()).isEqualTo(401);
        assertThat(anonymous.header(IdempotencyState.HEADER)).isEqualTo("not-applied;next=stop");
    }

    @Test
    void aFencedExecutorSaysTheOperationRunsElsewhere() {
        String key = newKey();
        PaymentResource.duringExecution = k -> h2.update("UPDATE " + TestStore.TABLE
                + " SET owner_token = 'ffffffffffffffffffffffffffffffff', attempts = 2");
        Http.Reply fenced = http.post("payments", payment("S-13")).key(key).send();
        assertThat(fenced.status()).isEqualTo(409);
        assertThat(fenced.header(IdempotencyState.HEADER)).isEqualTo("in-progress;next=same-key");
        assertThat(payments("S-13")).isZero();
    }

    @Test
    void aCommitReportedUnknownIsAnsweredAsTheRecordSettlesIt() {
        Http.Reply joined = http.post("payments/joined", payment("S-14")).key(newKey())
                .header("X-Fail", "commit-unknown").send();
        assertThat(joined.status()).isEqualTo(201);
        assertThat(joined.header(IdempotencyState.HEADER)).as("the fenced update found it committed")
                .isEqualTo("applied;next=stop");
        assertThat(payments("S-14")).isEqualTo(1);
    }

    @Test
    void theStatusResourceSaysWhatTheRecordSaysAndUntilWhen() throws Exception {
        String key = newKey();
        http.post("payments", payment("S-15")).key(key).send();
        Http.Reply status = http.get("idempotency/" + key).send();
        Instant expires = Instant.parse(JSON.readTree(status.body()).get("expiresAt").asText());
        assertThat(status.header(IdempotencyState.HEADER)).isEqualTo("applied;next=stop;expires=@" + expires.getEpochSecond());

        String failed = newKey();
        http.post("payments", payment("S-16")).key(failed).header("X-Fail", "transient").send();
        assertThat(http.get("idempotency/" + failed).send().header(IdempotencyState.HEADER))
                .startsWith("not-applied;next=same-key;expires=@");

        Http.Reply unknown = http.get("idempotency/" + newKey()).send();
        assertThat(unknown.status()).isEqualTo(404);
        assertThat(unknown.header(IdempotencyState.HEADER)).as("no record: it may still come, or be gone")
                .isEqualTo("unknown;next=same-key");
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
}
