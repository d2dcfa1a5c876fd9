package dev.idempotency.it;

import dev.idempotency.it.parts.ForwardingRecordStore;
import dev.idempotency.it.parts.OneTaskAtATime;
import dev.idempotency.it.parts.OpenResource;
import dev.idempotency.it.parts.PartsApplication;
import dev.idempotency.it.parts.PartsControl;
import dev.idempotency.it.parts.PartsResource;
import dev.idempotency.it.parts.PartsTasks;
import dev.idempotency.it.statuses.Holds;
import dev.idempotency.it.statuses.StatusesAdmin;
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

import static dev.idempotency.it.PaymentsContractIT.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README status table's rows that need an application with parts of its own, over real HTTP on the real
 * server: a path it leaves open to unauthenticated callers (401 {@code principal-required}, from the library, not
 * the container), its own record store that does not list records (501 {@code admin-unsupported}), and its own
 * bounded executor, saturated by a held task (503 {@code task-not-accepted}, and the key free for a retry).
 */
@ExtendWith(ArquillianExtension.class)
class ApplicationPartsIT {
    private static final String CONFIG = String.join("\n",
            "idempotency.endpoints.parts.task.status-path=parts/tasks", "");

    @Deployment(testable = false)
    static WebArchive parts() throws Exception {
        // /api/open/* open to everyone: a constraint without an auth-constraint requires no authentication
        // (Servlet 6.0, 13.8.1); the rest of /api/* keeps the demo's.
        return TestApplication.create("parts", CONFIG, webXml -> webXml.replaceFirst("<security-constraint>",
                        "<security-constraint><web-resource-collection><web-resource-name>open</web-resource-name>"
                                + "<url-pattern>/api/open/*</url-pattern></web-resource-collection>"
                                + "</security-constraint>\n  <security-constraint>"))
                .addClasses(PartsApplication.class, PartsResource.class, OpenResource.class,
                        ForwardingRecordStore.class, OneTaskAtATime.class, PartsControl.class, PartsTasks.class,
                        Holds.class, TestControl.class, StatusesAdmin.class);
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
    void anUnauthenticatedCallerOfAnOpenPathIsRefusedByTheLibraryWith401AndNothingRuns() {
        String key = key();
        Api.Reply refused = api.post("open/payments", "{}").anonymous().key(key).send();
        assertProblem(refused, 401, "principal-required");
        assertThat(executions(key)).isZero();
        // The same endpoint serves an authenticated caller: the 401 was the library's rule, not the path's.
        assertThat(api.post("open/payments", "{}").key(key).send().status()).isEqualTo(201);
        assertThat(executions(key)).isEqualTo(1);
    }

    @Test
    void theApplicationsOwnStoreServesTheProtocolAndTheAdminListingIsUnsupportedWith501() {
        int claimsBefore = Integer.parseInt(api.get("parts-control/claims").send().text());
        String key = key();
        Api.Reply first = api.post("parts/payments", "{}").key(key).send();
        assertThat(first.status()).as(first.text()).isEqualTo(201);
        Api.Reply replay = api.post("parts/payments", "{}").key(key).send();
        assertThat(replay.status()).isEqualTo(201);
        assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(replay.body()).isEqualTo(first.body());
        assertThat(executions(key)).isEqualTo(1);
        assertThat(Integer.parseInt(api.get("parts-control/claims").send().text()))
                .as("the claim went through the application's store").isEqualTo(claimsBefore + 1);

        Api.Reply listing = api.get("admin/idempotency/endpoints/parts.payments/records").as("operator").send();
        assertProblem(listing, 501, "admin-unsupported");
    }

    @Test
    void aTaskTheSaturatedExecutorRefusesIs503WithRetryAfterAndItsKeyStaysFree() {
        String running = key();
        held.add(running);
        assertThat(api.post("parts/task", "{}").key(running).send().status()).isEqualTo(202);
        assertThat(api.get("control/entered/" + running).send().status()).as("the first task holds the one slot")
                .isEqualTo(204);

        String refusedKey = key();
        held.add(refusedKey);
        Api.Reply refused = api.post("parts/task", "{}").key(refusedKey).send();
        assertProblem(refused, 503, "task-not-accepted");
        assertThat(Integer.parseInt(refused.header("Retry-After"))).isPositive();
        assertThat(api.get("control/task-ended").send().text()).as("the refused task's end")
                .isEqualTo("FAILED_RETRYABLE");
        assertThat(executions(refusedKey)).as("nothing ran").isZero();

        release(running);
        assertThat(api.get("control/task-ended").send().text()).isEqualTo("SUCCEEDED");
        assertThat(api.get("parts-control/slot-free").send().status()).isEqualTo(204);
        // The same key again: accepted and run, not answered from the refusal.
        Api.Reply retried = api.post("parts/task", "{}").key(refusedKey).send();
        assertThat(retried.status()).as(retried.text()).isEqualTo(202);
        assertThat(api.get("control/entered/" + refusedKey).send().status()).isEqualTo(204);
        release(refusedKey);
        assertThat(api.get("control/task-ended").send().text()).isEqualTo("SUCCEEDED");
        assertThat(executions(refusedKey)).isEqualTo(1);
    }

    private void release(String key) {
        assertThat(api.post("control/release/" + key, "").send().status()).isEqualTo(204);
    }

    private int executions(String key) {
        return Integer.parseInt(api.get("control/executions/" + key).send().text());
    }

    private static String key() {
        return "parts-" + UUID.randomUUID();
    }
}
