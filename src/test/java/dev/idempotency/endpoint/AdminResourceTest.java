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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The admin resource (IdempotencyAdminResource) as an operator uses it on a stuck operation: only in the role, the
 * stuck record listed first, released once (fenced on the version read), after which the client's retry runs the
 * operation and the held executor commits nothing; purge on demand; every action an event naming the administrator.
 */
@EnableWeld
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdminResourceTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PAYMENT = "{\"merchantOrderNo\":\"%s\",\"amount\":10.00,\"currency\":\"EUR\"}";
    private static final String ADMIN = "admin/idempotency/";

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

    @AfterEach
    void letGo() {
        PaymentResource.duringExecution = key -> { };
    }

    @Test
    void onlyCallersInTheAdminRoleMayUseIt() throws Exception {
        assertProblem(http.get(ADMIN + "endpoints/payments.create/records").send(), 403, "admin-forbidden");
        assertProblem(http.get(ADMIN + "endpoints/payments.create/records").header("X-Roles", "user").send(), 403,
                "admin-forbidden");
        assertProblem(http.post(ADMIN + "purge", "").send(), 403, "admin-forbidden");
        assertProblem(http.get(ADMIN + "endpoints/payments.create/records").without("X-User").send(), 401,
                "principal-required");
        assertThat(weld.select(EventLog.class).get().events())
                .noneMatch(e -> e instanceof IdempotencyEvent.Administered);
    }

    @Test
    void badQueriesAreProblemsNotFailures() throws Exception {
        assertProblem(admin(http.get(ADMIN + "endpoints/payments.create/records?state=DONE")), 400, "admin-request-invalid");
        assertProblem(admin(http.get(ADMIN + "endpoints/payments.create/records?older-than=5m")), 400, "admin-request-invalid");
        assertProblem(admin(http.get(ADMIN + "endpoints/payments.create/records?limit=0")), 400, "admin-request-invalid");
        assertProblem(admin(http.get(ADMIN + "endpoints/payments.create/records?limit=501")), 400, "admin-request-invalid");
        assertProblem(admin(http.get(ADMIN + "records/" + "0".repeat(64))), 404, "operation-not-found");
    }

    @Test
    void aStuckOperationIsListedFirstAndReleasedOnceAfterWhichTheRetryRunsIt() throws Exception {
        // A finished operation, older than the stuck one, so that only the stuck-first order puts the stuck one first.
        String done = UUID.randomUUID().toString();
        assertThat(http.post("payments", String.format(PAYMENT, "ADM-0")).key(done).send().status()).isEqualTo(201);
        MutableClock clock = weld.select(MutableClock.class).get();
        clock.advance(Duration.ofSeconds(1));

        String key = UUID.randomUUID().toString();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        PaymentResource.duringExecution = k -> {
            if (k.equals(key) && running.getCount() > 0) {
                running.countDown();
                await(letGo);
            }
        };
        CompletableFuture<Http.Reply> held = CompletableFuture.supplyAsync(() ->
                http.post("payments", String.format(PAYMENT, "ADM-1")).key(key).send());
        await(running);
        clock.advance(Duration.ofSeconds(31));

        Http.Reply listed = admin(http.get(ADMIN + "endpoints/payments.create/records?limit=10"));
        assertThat(listed.status()).as(listed.text()).isEqualTo(200);
        JsonNode records = JSON.readTree(listed.body()).get("records");
        assertThat(records).hasSize(2);
        JsonNode stuck = records.get(0);
        assertThat(stuck.get("state").asText()).isEqualTo("PROCESSING");
        assertThat(stuck.get("stuck").asBoolean()).isTrue();
        assertThat(stuck.get("principal").asText()).isEqualTo("alice");
        assertThat(stuck.has("ownerToken")).isFalse();
        assertThat(records.get(1).get("state").asText()).isEqualTo("SUCCEEDED");
        assertThat(records.get(1).get("stuck").asBoolean()).isFalse();
        JsonNode processingOnly = JSON.readTree(admin(http.get(ADMIN
                + "endpoints/payments.create/records?state=PROCESSING")).body()).get("records");
        assertThat(processingOnly).hasSize(1);
        assertThat(JSON.readTree(admin(http.get(ADMIN + "endpoints/payments.create/records?older-than=PT1H")).body())
                .get("records")).isEmpty();

        String scopeKey = stuck.get("scopeKey").asText();
        Http.Reply shown = admin(http.get(ADMIN + "records/" + scopeKey));
        assertThat(shown.status()).isEqualTo(200);
        String version = stuck.get("version").asText();
        assertThat(shown.header("ETag")).isEqualTo("\"" + version + "\"");

        assertProblem(admin(http.post(ADMIN + "records/" + scopeKey + "/release", "")), 428, "record-version-required");
        assertProblem(admin(http.post(ADMIN + "records/" + scopeKey + "/release", "").header("If-Match", "\"0\"")),
                412, "record-changed");
        Http.Reply released = admin(http.post(ADMIN + "records/" + scopeKey + "/release", "")
                .header("If-Match", shown.header("ETag")));
        assertThat(released.status()).as(released.text()).isEqualTo(200);
        assertThat(JSON.readTree(released.body()).get("state").asText()).isEqualTo("FAILED_RETRYABLE");
        assertProblem(admin(http.post(ADMIN + "records/" + scopeKey + "/release", "")
                .header("If-Match", shown.header("ETag"))), 412, "record-changed");
        assertProblem(admin(http.post(ADMIN + "records/" + scopeKey + "/release", "")
                .header("If-Match", released.header("ETag"))), 409, "record-not-processing");

        // The held executor lost its claim: it commits nothing; the client's retry runs the payment once.
        letGo.countDown();
        assertThat(held.get(10, TimeUnit.SECONDS).status()).isEqualTo(409);
        PaymentResource.duringExecution = k -> { };
        Http.Reply retry = http.post("payments", String.format(PAYMENT, "ADM-1")).key(key).send();
        assertThat(retry.status()).as(retry.text()).isEqualTo(201);
        assertThat(retry.header("Idempotent-Replayed")).isNull();
        assertThat(h2.count("SELECT COUNT(*) FROM test_payment WHERE merchant_order_no = ?", "ADM-1")).isEqualTo(1);

        List<IdempotencyEvent> events = weld.select(EventLog.class).get().events();
        assertThat(events).anyMatch(e -> e instanceof IdempotencyEvent.Released r && r.scopeKey().equals(scopeKey));
        assertThat(events).filteredOn(e -> e instanceof IdempotencyEvent.Administered)
                .map(e -> (IdempotencyEvent.Administered) e)
                .allMatch(e -> e.administrator().equals("ops"))
                .extracting(e -> e.action() + " " + e.result())
                .contains("list listed 2", "show shown", "release released", "release changed", "release not-processing");
    }

    @Test
    void purgeNowDeletesTheExpiredRecords() throws Exception {
        String key = UUID.randomUUID().toString();
        assertThat(http.post("payments", String.format(PAYMENT, "ADM-2")).key(key).send().status()).isEqualTo(201);
        assertThat(JSON.readTree(admin(http.post(ADMIN + "purge", "")).body()).get("purged").asInt()).isZero();
        weld.select(MutableClock.class).get().advance(Duration.ofHours(25));
        Http.Reply purged = admin(http.post(ADMIN + "purge", ""));
        assertThat(purged.status()).isEqualTo(200);
        assertThat(JSON.readTree(purged.body()).get("purged").asInt()).isEqualTo(1);
        assertThat(weld.select(EventLog.class).get().events()).anyMatch(e -> e instanceof IdempotencyEvent.Administered a
                && a.action().equals("purge") && a.result().equals("purged 1"));
    }

    private static Http.Reply admin(Http.Request request) {
        return request.user("ops").header("X-Roles", "user,idempotency-admin").send();
    }

    private static void assertProblem(Http.Reply reply, int status, String slug) throws Exception {
        assertThat(reply.status()).as(reply.text()).isEqualTo(status);
        assertThat(reply.header("Content-Type")).startsWith("application/problem+json");
        assertThat(JSON.readTree(reply.body()).get("type").asText()).endsWith("/" + slug);
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
