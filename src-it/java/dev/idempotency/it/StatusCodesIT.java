package dev.idempotency.it;

import com.fasterxml.jackson.databind.JsonNode;
import dev.idempotency.it.statuses.AcceptedOperations;
import dev.idempotency.it.statuses.TaskOperations;
import dev.idempotency.it.statuses.DirectCall;
import dev.idempotency.it.statuses.RetryingApi;
import dev.idempotency.it.statuses.ScriptedDownstream;
import dev.idempotency.it.statuses.Holds;
import dev.idempotency.it.statuses.DownstreamEcho;
import dev.idempotency.it.statuses.EchoApi;
import dev.idempotency.it.statuses.LedgerApi;
import dev.idempotency.it.statuses.StatusesAdmin;
import dev.idempotency.it.statuses.StatusesApplication;
import dev.idempotency.it.statuses.StatusesResource;
import dev.idempotency.it.statuses.TestControl;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URISyntaxException;
import java.net.URL;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.idempotency.it.PaymentsContractIT.assertProblem;
import static dev.idempotency.it.PaymentsContractIT.assertState;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rows of the README's status table that the demo's contract does not reach, each over real HTTP on
 * the real server (WildFly or Payara, every database): a small application of its own with one endpoint
 * per row, configured in its microprofile-config.properties as a user would. Running executions are held on
 * latches on the server ({@link Holds}) and released by the test, never timed.
 */
@ExtendWith(ArquillianExtension.class)
class StatusCodesIT {
    private static final String CONFIG = String.join("\n",
            // A tenant per test run, so that the key limit starts from zero on a database kept between runs.
            "idempotency.tenant=header:X-Tenant",
            "idempotency.endpoints.statuses.accepted.status-path=statuses/operations",
            "idempotency.endpoints.statuses.task.status-path=statuses/tasks",
            "idempotency.endpoints.statuses.keys.max-keys-per-endpoint=2",
            // Small enough for a test to exceed it (413) without sending a megabyte.
            "idempotency.max-request-bytes=4096",
            "idempotency.endpoints.statuses.large.max-response-bytes=1024",
            "idempotency.endpoints.statuses.large.oversize-response=fail",
            "idempotency.endpoints.statuses.in-transaction.in-flight-wait=PT1S",
            // LedgerApi's derived key: its purpose and header by configuration (configKey "ledger").
            "idempotency.client.ledger.purpose=ledger.post",
            "idempotency.client.ledger.header=Ledger-Key",
            // The client half's budget: four sends within 20 s.
            "idempotency.client.retry.max-attempts=4", "idempotency.client.retry.max-time=PT20S", "");

    @Deployment(testable = false)
    static WebArchive statuses() throws Exception {
        return TestApplication.create("statuses", CONFIG, webXml -> webXml)
                .addClasses(StatusesApplication.class, StatusesResource.class, AcceptedOperations.class,
                        TaskOperations.class, StatusesResource.TaskOutcome.class,
                        DirectCall.class, TestControl.class, Holds.class, StatusesAdmin.class, DownstreamEcho.class,
                        EchoApi.class, LedgerApi.class, ScriptedDownstream.class, RetryingApi.class);
    }

    @ArquillianResource
    URL base;
    private Api api;
    private final List<String> held = new ArrayList<>();

    @BeforeEach
    void client() throws URISyntaxException {
        api = new Api(base.toURI());
    }

    @AfterEach
    void releaseHeld() {
        held.forEach(key -> api.post("control/release/" + key, "").send());
    }

    @Test
    void aDuplicateOfAnAcceptedEndpointGets202WithTheStatusLocationAndRetryAfter() throws Exception {
        String key = key();
        CompletableFuture<Api.Reply> first = heldFirst("statuses/accepted", key);
        Api.Reply duplicate = api.post("statuses/accepted", "{}").key(key).send();
        assertThat(duplicate.status()).as(duplicate.text()).isEqualTo(202);
        assertState(duplicate, "in-progress;next=same-key");
        assertThat(Integer.parseInt(duplicate.header("Retry-After"))).isPositive();
        String location = duplicate.header("Location");
        assertThat(location).endsWith("/api/statuses/operations/" + key);
        assertThat(duplicate.json().get("state").asText()).isEqualTo("PROCESSING");
        assertThat(statusAt(location).get("state").asText()).isEqualTo("PROCESSING");

        release(key);
        Api.Reply original = first.get(30, TimeUnit.SECONDS);
        assertThat(original.status()).isEqualTo(201);
        assertState(original, "applied;next=stop");
        JsonNode done = statusAt(location);
        assertThat(done.get("state").asText()).isEqualTo("SUCCEEDED");
        assertThat(done.get("responseStatus").asInt()).isEqualTo(201);
        assertThat(api.post("statuses/accepted", "{}").key(key).send().body()).isEqualTo(original.body());
        assertThat(executions(key)).isEqualTo(1);
    }

    @Test
    void anAsynchronousEndpointIs202AtOnceItsTaskRunsOnTheManagedExecutorAndTheStatusResourceServesItsOutcome() {
        String key = key();
        held.add(key);
        // Answered while the task is still held: the request does not wait for the method.
        Api.Reply accepted = api.post("statuses/task", "{}").key(key).send();
        assertThat(accepted.status()).as(accepted.text()).isEqualTo(202);
        assertState(accepted, "in-progress;next=same-key");
        assertThat(Integer.parseInt(accepted.header("Retry-After"))).isPositive();
        String location = accepted.header("Location");
        assertThat(location).endsWith("/api/statuses/tasks/" + key);
        assertThat(accepted.json().get("state").asText()).isEqualTo("PROCESSING");
        assertThat(api.get("control/entered/" + key).send().status()).as("the task entered its hold").isEqualTo(204);
        Api.Reply duplicate = api.post("statuses/task", "{}").key(key).send();
        assertThat(duplicate.status()).isEqualTo(202);
        assertThat(duplicate.header("Location")).isEqualTo(location);
        String path = location.substring(location.indexOf("/api/") + "/api/".length());
        Api.Reply running = api.get(path).send();
        assertThat(running.status()).isEqualTo(202);
        assertState(running, "in-progress;next=same-key");
        assertThat(running.json().get("state").asText()).isEqualTo("PROCESSING");

        release(key);
        assertThat(api.get("control/task-ended").send().text()).isEqualTo("SUCCEEDED");
        Api.Reply outcome = api.get(path).send();
        assertThat(outcome.status()).as(outcome.text()).isEqualTo(200);
        assertThat(outcome.header("Idempotent-Replayed")).isEqualTo("true");
        assertState(outcome, "applied;next=stop;expires=@");
        assertThat(outcome.json().get("key").asText()).isEqualTo(key);
        assertThat(outcome.json().get("execution").asInt()).isEqualTo(1);
        assertThat(outcome.json().get("thread").asText()).as("the server's managed executor ran it")
                .containsIgnoringCase("ManagedExecutorService");
        Api.Reply replay = api.post("statuses/task", "{}").key(key).send();
        assertThat(replay.status()).isEqualTo(200);
        assertThat(replay.body()).isEqualTo(outcome.body());
        assertThat(executions(key)).isEqualTo(1);
    }

    @Test
    void aDuplicateOfATooEarlyEndpointGets425WithRetryAfter() throws Exception {
        String key = key();
        CompletableFuture<Api.Reply> first = heldFirst("statuses/too-early", key);
        Api.Reply duplicate = api.post("statuses/too-early", "{}").key(key).send();
        assertProblem(duplicate, 425, "request-in-flight");
        assertState(duplicate, "in-progress;next=same-key");
        assertThat(Integer.parseInt(duplicate.header("Retry-After"))).isPositive();
        release(key);
        assertThat(first.get(30, TimeUnit.SECONDS).status()).isEqualTo(201);
        assertThat(executions(key)).isEqualTo(1);
    }

    // ClaimMode.IN_TRANSACTION on the server's own transaction manager and datasource: nothing is visible while the
    // first runs (the administrator lists no record), a duplicate waits on its uncommitted row for in-flight-wait
    // (PT1S) and gets 409; the first commits claim and outcome at once, and the retry replays it.
    @Test
    void aClaimInTheBusinessTransactionIsInvisibleWhileItRunsADuplicateWaitsThen409AndTheRetryReplays() throws Exception {
        String admin = "admin/idempotency/endpoints/statuses.in-transaction/records";
        String key = key();
        CompletableFuture<Api.Reply> first = heldFirst("statuses/in-transaction", key);
        Api.Reply duplicate = api.post("statuses/in-transaction", "{}").key(key).send();
        assertProblem(duplicate, 409, "request-in-flight");
        assertState(duplicate, "in-progress;next=same-key");
        assertThat(Integer.parseInt(duplicate.header("Retry-After"))).isPositive();
        Api.Reply listed = api.get(admin + "?state=PROCESSING").as("operator").send();
        assertThat(listed.status()).as(listed.text()).isEqualTo(200);
        assertThat(listed.json().path("records").size()).as("no PROCESSING record is ever visible: " + listed.text())
                .isZero();
        release(key);
        Api.Reply original = first.get(30, TimeUnit.SECONDS);
        assertThat(original.status()).as(original.text()).isEqualTo(201);
        Api.Reply replay = api.post("statuses/in-transaction", "{}").key(key).send();
        assertThat(replay.status()).isEqualTo(201);
        assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(replay.body()).isEqualTo(original.body());
        assertThat(executions(key)).isEqualTo(1);
    }

    // The record's finish is made in the business transaction on the server's own transaction manager and
    // datasource: when that transaction rolls back at commit, the finish rolls back with it, so the retry runs again
    // (never a replay of work that was not kept). In both claim modes.
    @Test
    void aFinishRollsBackWithItsBusinessTransactionWhenTheCommitFails() {
        for (String path : List.of("statuses/rolled-back-at-commit", "statuses/rolled-back-at-commit-in-transaction")) {
            String key = key();
            Api.Reply first = api.post(path, "{}").key(key).send();
            assertThat(first.status()).as(path + ": " + first.text()).isGreaterThanOrEqualTo(500);
            String type = first.header("Content-Type");
            if (type != null && type.startsWith("text/html")) {
                // Payara: an exception of the application's transaction interceptor that no mapper takes never reaches
                // a JAX-RS response filter; the servlet container's error page is the answer, and says nothing.
                assertThat(first.header("Idempotency-State")).isNull();
            } else {
                assertState(first, "not-applied;next=");
            }
            Api.Reply retry = api.post(path, "{}").key(key).send();
            assertThat(retry.header("Idempotent-Replayed")).as(path + ": nothing was kept, nothing to replay: "
                    + retry.text()).isNull();
            assertThat(executions(key)).as(path + ": the retry ran again").isEqualTo(2);
        }
    }

    @Test
    void anExecutionTakenOverByAnotherNodeIs409SupersededWithRetryAfter() throws Exception {
        String key = key();
        CompletableFuture<Api.Reply> first = heldFirst("statuses/superseded", key);
        assertThat(api.post("control/take-over/statuses.superseded", "").send().text()).isEqualTo("1");
        release(key);
        Api.Reply fenced = first.get(30, TimeUnit.SECONDS);
        assertProblem(fenced, 409, "superseded");
        assertState(fenced, "in-progress;next=same-key");
        assertThat(Integer.parseInt(fenced.header("Retry-After"))).isPositive();
    }

    @Test
    void aCallerHoldingTheEndpointsKeyLimitGets429AndItsOwnKeysStillReplay() {
        String tenant = "run-" + key();
        List<Api.Reply> firsts = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Api.Reply reply = api.post("statuses/keys", "{}").header("X-Tenant", tenant).key(key()).send();
            assertThat(reply.status()).as(reply.text()).isEqualTo(201);
            firsts.add(reply);
        }
        Api.Reply refused = api.post("statuses/keys", "{}").header("X-Tenant", tenant).key(key()).send();
        assertProblem(refused, 429, "too-many-keys");
        assertState(refused, "not-applied;next=same-key");
        assertThat(Integer.parseInt(refused.header("Retry-After"))).isPositive();
        for (Api.Reply first : firsts) {
            String key = first.json().get("key").asText();
            Api.Reply replay = api.post("statuses/keys", "{}").header("X-Tenant", tenant).key(key).send();
            assertThat(replay.status()).isEqualTo(201);
            assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
            assertThat(replay.body()).isEqualTo(first.body());
        }
        Api.Reply otherTenant = api.post("statuses/keys", "{}").header("X-Tenant", tenant + "-b").key(key()).send();
        assertThat(otherTenant.status()).as("the limit is the caller's, per tenant").isEqualTo(201);
    }

    @Test
    void successFromATransactionMarkedRollbackOnlyIs500RolledBackAndTheRetryRunsAgain() {
        String key = key();
        Api.Reply first = api.post("statuses/rollback-only", "{}").key(key).send();
        assertProblem(first, 500, "rolled-back");
        assertState(first, "not-applied;next=");
        Api.Reply retry = api.post("statuses/rollback-only", "{}").key(key).send();
        assertProblem(retry, 500, "rolled-back");
        assertThat(executions(key)).as("nothing recorded: the retry ran again").isEqualTo(2);
    }

    @Test
    void aResponseOverTheEndpointsLimitIs500ResponseTooLargeAndNothingIsRecorded() {
        String key = key();
        Api.Reply tooLarge = api.post("statuses/large", "{}").key(key).send();
        assertProblem(tooLarge, 500, "response-too-large");
        assertState(tooLarge, "not-applied;next=");
        assertProblem(api.post("statuses/large", "{}").key(key).send(), 500, "response-too-large");
        assertThat(executions(key)).isEqualTo(2);
    }

    @Test
    void anIdempotentMethodCalledPastTheFiltersIs500NotConfigured() {
        String key = key();
        Api.Reply direct = api.post("statuses/direct", "{}").key(key).send();
        assertProblem(direct, 500, "not-configured");
        assertState(direct, "not-applied;next=stop");
    }

    @Test
    void aRecordFingerprintedUnderRulesThisNodeDoesNotKnowIs409WithRetryAfterNot422() {
        String key = key();
        Api.Reply first = api.post("statuses/rules", "{\"amount\":1}").key(key).send();
        assertThat(first.status()).isEqualTo(201);
        assertThat(Integer.parseInt(api.post("control/foreign-rules/statuses.rules", "").send().text())).isPositive();
        Api.Reply retry = api.post("statuses/rules", "{\"amount\":1}").key(key).send();
        assertProblem(retry, 409, "fingerprint-rules-unknown");
        assertState(retry, "unknown;next=same-key");
        assertThat(Integer.parseInt(retry.header("Retry-After"))).isPositive();
        assertThat(executions(key)).isEqualTo(1);
    }

    @Test
    void aBodyOverTheLimitIs413BodyTooLargeAndTheKeyStaysFree() {
        String key = key();
        String tenant = "large-" + key; // a tenant of its own: the endpoint's key limit counts per tenant
        Api.Reply tooLarge = api.post("statuses/keys", "{\"note\":\"" + "x".repeat(5000) + "\"}")
                .header("X-Tenant", tenant).key(key).send();
        assertProblem(tooLarge, 413, "body-too-large");
        assertState(tooLarge, "not-applied;next=stop");
        Api.Reply fitting = api.post("statuses/keys", "{}").header("X-Tenant", tenant).key(key).send();
        assertThat(fitting.status()).as("nothing was recorded for the refused body: " + fitting.text()).isEqualTo(201);
        assertThat(fitting.header("Idempotent-Replayed")).isNull();
    }

    @Test
    void aBodyThatDoesNotParseStrictlyIs400BodyMalformed() {
        String key = key();
        Api.Reply malformed = api.post("statuses/keys", "{\"amount\":1,\"amount\":2}").key(key).send();
        assertProblem(malformed, 400, "body-malformed");
        assertState(malformed, "not-applied;next=stop");
        assertThat(executions(key)).isZero();
    }

    @Test
    void theLibrarysMetricsCountWhatItDidAsTheServerExportsThem() {
        Metrics before = Metrics.scrape();
        String key = key();
        assertThat(api.post("statuses/metered", "{\"n\":1}").key(key).send().status()).isEqualTo(201);
        assertThat(api.post("statuses/metered", "{\"n\":1}").key(key).send().status()).isEqualTo(201);
        assertProblem(api.post("statuses/metered", "{\"n\":2}").key(key).send(), 422, "fingerprint-mismatch");
        assertProblem(api.post("statuses/metered", "{\"n\":3}").send(), 400, "key-missing");
        Metrics after = Metrics.scrape();
        String endpoint = "statuses.metered";
        assertThat(after.delta(before, "idempotency_claims_total", endpoint)).isEqualTo(1);
        assertThat(after.delta(before, "idempotency_executions_total", endpoint, "outcome", "succeeded")).isEqualTo(1);
        assertThat(after.delta(before, "idempotency_replays_total", endpoint, "outcome", "succeeded")).isEqualTo(1);
        assertThat(after.delta(before, "idempotency_mismatches_total", endpoint)).isEqualTo(1);
        assertThat(after.delta(before, "idempotency_rejections_total", endpoint, "reason", "fingerprint-mismatch"))
                .isEqualTo(1);
        assertThat(after.delta(before, "idempotency_rejections_total", endpoint, "reason", "key-missing")).isEqualTo(1);
        assertThat(after.delta(before, "idempotency_claim_seconds_count", endpoint)).isEqualTo(1);
        assertThat(after.delta(before, "idempotency_finish_seconds_count", endpoint)).isEqualTo(1);
        assertThat(after.delta(before, "idempotency_replay_seconds_count", endpoint)).isEqualTo(1);
        assertThat(after.value("idempotency_operations_stuck", "")).as("the gauge of stuck operations is exported")
                .isNotNull();
    }

    @Test
    void theLibrarysReadinessCheckJoinsTheServersHealth() {
        Health health = Health.ready(Health.endpoint());
        JsonNode check = health.check("idempotency");
        assertThat(health.status()).as(health.body().toString()).isEqualTo(200);
        assertThat(check.path("status").asText()).as(health.body().toString()).isEqualTo("UP");
        assertThat(check.path("data").path("store").asText()).isEqualTo("reachable");
        assertThat(check.path("data").path("clock").asText()).isIn("database", "local");
    }

    @Test
    void theOpenApiDocumentDescribesEveryIdempotentOperationWithoutAnAnnotationFromTheApplication() {
        OpenApiDocument document = OpenApiDocument.read();
        String text = document.root().toString();

        JsonNode tooEarly = document.operation("POST", "/api/statuses/too-early");
        JsonNode key = OpenApiDocument.header(tooEarly, "Idempotency-Key");
        assertThat(key.path("required").asBoolean()).as(tooEarly.toString()).isTrue();
        assertThat(key.path("schema").path("type").toString()).as(key.toString()).contains("string");
        assertThat(key.path("schema").path("maxLength").asInt()).as(key.toString()).isEqualTo(255);
        assertThat(key.path("schema").path("pattern").asText()).isEqualTo("^[!-~]+$");
        JsonNode responses = tooEarly.path("responses");
        for (String status : new String[]{"400", "409", "413", "422", "425", "429", "503"}) {
            assertThat(responses.path(status).path("content").path("application/problem+json").path("schema")
                    .path("$ref").asText()).as(status + " in " + responses).isEqualTo("#/components/schemas/IdempotencyProblem");
        }
        assertThat(responses.path("425").path("headers").has("Retry-After")).as(responses.toString()).isTrue();
        assertThat(responses.path("503").path("headers").has("Retry-After")).as(responses.toString()).isTrue();
        assertThat(tooEarly.path("x-idempotency").path("endpoint").asText()).as(tooEarly.toString())
                .isEqualTo("statuses.too-early");

        assertThat(document.operation("POST", "/api/statuses/keys").path("responses").path("429").path("description")
                .asText()).as("the endpoint's own limit").contains("more than 2 keys");
        JsonNode accepted = document.operation("POST", "/api/statuses/accepted").path("responses");
        assertThat(accepted.path("202").path("headers").has("Location")).as(accepted.toString()).isTrue();
        assertThat(accepted.has("425")).as(accepted.toString()).isFalse();

        JsonNode control = document.operation("GET", "/api/control/task-ended");
        assertThat(OpenApiDocument.header(control, "Idempotency-Key").isMissingNode()).as(control.toString()).isTrue();
        assertThat(control.path("responses").has("409")).as(control.toString()).isFalse();
        assertThat(document.root().path("components").path("schemas").path("IdempotencyProblem").path("properties")
                .has("retryAfter")).as(text).isTrue();
    }

    @Test
    void theAdminResourceReleasesARunningOperationFencedOnItsVersionOnlyForItsRole() throws Exception {
        String admin = "admin/idempotency/";
        Api.Reply forbidden = api.get(admin + "endpoints/statuses.superseded/records").send();
        assertProblem(forbidden, 403, "admin-forbidden");
        assertProblem(api.get(admin + "endpoints/statuses.superseded/records?state=BOGUS").as("operator").send(), 400,
                "admin-request-invalid");

        String key = key();
        CompletableFuture<Api.Reply> first = heldFirst("statuses/superseded", key);
        Api.Reply listed = api.get(admin + "endpoints/statuses.superseded/records?state=PROCESSING").as("operator").send();
        assertThat(listed.status()).as(listed.text()).isEqualTo(200);
        JsonNode record = null;
        for (JsonNode candidate : listed.json().path("records")) {
            if ("alice".equals(candidate.path("principal").asText())) {
                record = candidate;
            }
        }
        assertThat(record).as(listed.text()).isNotNull();
        String scopeKey = record.path("scopeKey").asText();
        Api.Reply shown = api.get(admin + "records/" + scopeKey).as("operator").send();
        assertThat(shown.status()).as(shown.text()).isEqualTo(200);
        assertThat(shown.json().path("state").asText()).isEqualTo("PROCESSING");
        assertProblem(api.post(admin + "records/" + scopeKey + "/release", "").send(), 403, "admin-forbidden");
        assertProblem(api.post(admin + "records/" + scopeKey + "/release", "").as("operator")
                .header("If-Match", "\"0\"").send(), 412, "record-changed");
        assertProblem(api.post(admin + "records/" + scopeKey + "/release", "").as("operator").send(), 428,
                "record-version-required");

        Api.Reply released = api.post(admin + "records/" + scopeKey + "/release", "").as("operator")
                .header("If-Match", shown.header("ETag")).send();
        assertThat(released.status()).as(released.text()).isEqualTo(200);
        assertThat(released.json().path("state").asText()).isEqualTo("FAILED_RETRYABLE");
        assertProblem(api.post(admin + "records/" + scopeKey + "/release", "").as("operator")
                .header("If-Match", released.header("ETag")).send(), 409, "record-not-processing");
        release(key);
        assertProblem(first.get(30, TimeUnit.SECONDS), 409, "superseded");
        Api.Reply retry = api.post("statuses/superseded", "{}").key(key).send();
        assertThat(retry.status()).as("the released operation runs again for the client's retry: " + retry.text())
                .isEqualTo(201);
        assertThat(retry.header("Idempotent-Replayed")).isNull();
        assertThat(executions(key)).isEqualTo(2);

        Api.Reply purged = api.post(admin + "purge", "").as("operator").send();
        assertThat(purged.status()).as(purged.text()).isEqualTo(200);
        assertThat(purged.json().path("purged").asInt()).isNotNegative();
    }

    @Test
    void restClientCallsCarryTheOperationsDerivedKeyByAnnotationOrByConfiguration() {
        String key = key();
        Api.Reply first = api.post("statuses/downstream", "{}").key(key).send();
        assertThat(first.status()).as(first.text()).isEqualTo(200);
        JsonNode sent = first.json();
        assertThat(sent.path("echo").asText()).as("@DerivedKey(\"echo.charge\") on the interface")
                .isEqualTo(sent.path("expectedEcho").asText()).hasSize(43);
        assertThat(sent.path("ledger").asText()).as("idempotency.client.ledger.purpose and .header")
                .isEqualTo(sent.path("expectedLedger").asText());
        assertThat(sent.path("echo").asText()).isNotEqualTo(key);
    }

    // Sends the first request and returns once it runs on the server, held until release(key).
    private CompletableFuture<Api.Reply> heldFirst(String path, String key) {
        held.add(key);
        CompletableFuture<Api.Reply> first = CompletableFuture.supplyAsync(() -> api.post(path, "{}").key(key).send());
        Api.Reply entered = api.get("control/entered/" + key).send();
        assertThat(entered.status()).as("the first execution entered its hold").isEqualTo(204);
        return first;
    }

    // The client half inside the server (WildFly's RESTEasy, Payara's Jersey): one derived key for every attempt,
    // in-progress and unknown answers asked again after their Retry-After, an outcome still unknown after the budget
    // a typed exception.
    @Test
    void theClientHalfRetriesWhatTheAnswersAllowUnderOneKeyAndNeverGuessesAnUnknownOutcome() {
        Api.Reply served = api.post("statuses/retried?script=in-progress,unknown", "{}").key(key()).send();
        assertThat(served.status()).as(served.text()).isEqualTo(200);
        JsonNode answer = served.json().path("answer");
        assertThat(answer.path("calls").asInt()).as("two answers retried, the third the outcome").isEqualTo(3);
        assertThat(answer.path("key").asText()).as("the operation's derived key on every attempt")
                .isEqualTo(served.json().path("expectedKey").asText());
        assertThat(answer.path("sameBody").asBoolean()).isTrue();

        Api.Reply unknown = api.post("statuses/retried?script=unknown*", "{}").key(key()).send();
        assertThat(unknown.status()).as(unknown.text()).isEqualTo(200);
        assertThat(unknown.json().path("unknown").asBoolean()).isTrue();
        assertThat(unknown.json().path("attempts").asInt()).isEqualTo(4);
        assertThat(unknown.json().path("lastState").asText()).startsWith("unknown;next=same-key");
    }

    private void release(String key) {
        assertThat(api.post("control/release/" + key, "").send().status()).isEqualTo(204);
    }

    private int executions(String key) {
        return Integer.parseInt(api.get("control/executions/" + key).send().text());
    }

    private JsonNode statusAt(String location) {
        String path = location.substring(location.indexOf("/api/") + "/api/".length());
        Api.Reply status = api.get(path).send();
        assertThat(status.status()).as(status.text()).isEqualTo(200);
        return status.json();
    }

    private static String key() {
        return UUID.randomUUID().toString();
    }
}
