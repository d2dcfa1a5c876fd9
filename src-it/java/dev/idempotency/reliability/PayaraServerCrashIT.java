package dev.idempotency.reliability;

import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.importer.ZipImporter;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.File;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Scenario 4e on Payara Server: the JVM of the domain that runs asynchronous tasks dies inside them (kill -9);
 * started again as its operator starts it, the server redeploys the demo, the dead tasks' leases run out and the
 * clients' retries take them over: every payment once, none lost.
 */
@ExtendWith(ArquillianExtension.class)
class PayaraServerCrashIT {
    private final Scale scale = Scale.current();
    private final PayaraServerDomain domain = new PayaraServerDomain();

    @Deployment(testable = false)
    static WebArchive demo() {
        // A lease of 5 s on the asynchronous payments (30 s by default), by this deployment's own configuration: the
        // restarted server meets the dead tasks' leases already run out, as the lease's length does not matter here.
        return ShrinkWrap.create(ZipImporter.class, "demo.war").importFrom(new File(System.getProperty("it.war")))
                .as(WebArchive.class)
                .addAsResource(new StringAsset("idempotency.endpoints.payments.async.lease=PT5S\n"),
                        "META-INF/microprofile-config.properties");
    }

    @Test
    void crashInsideAnAsynchronousTask() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        String run = UUID.randomUUID().toString().substring(0, 8);
        List<Operations.Operation> ops = Operations.create(run, scale.crashKeys, null, Operations.ASYNC_PAYMENTS);
        long start = System.nanoTime();
        // Accepted at once; each task is held 4 s inside its transaction, after the charge; the JVM dies once the
        // first task has logged its pause (the others running or queued, their claims made).
        try (LogWatch paused = domain.watchLog()) {
            for (CompletableFuture<LoadClient.Answer> accepted : client.holdInTransaction(domain.base(), ops, 4000)) {
                assertThat(accepted.get(30, TimeUnit.SECONDS).status()).as("answered before the task ran").isEqualTo(202);
            }
            paused.await(WildFlyNode.PAUSED, 1, 30);
        }
        domain.crash();
        domain.start();
        // The clients only poll the status resource (issue 33 item 4): the restarted server runs each task again from
        // the input its claim kept once the dead lease (5 s here) has run out; nobody sends a payment again.
        List<String> notInProgress = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        List<CompletableFuture<LoadClient.Answer>> settled = ops.stream()
                .map(op -> CompletableFuture.supplyAsync(() -> client.pollAccepted(domain.base(), op,
                        Duration.ofMinutes(3), seen -> {
                            if (seen.status() != 202 && seen.status() != 201) {
                                notInProgress.add(op.key() + ": " + seen.status() + " " + seen.body());
                            }
                        }))).toList();
        for (CompletableFuture<LoadClient.Answer> answer : settled) {
            assertThat(answer.get(5, TimeUnit.MINUTES).status()).isEqualTo(201);
        }
        assertThat(notInProgress).as("pollers saw 202, then the outcome; never a retryable failure").isEmpty();
        Checker.Result result = Checker.check(ops, history);
        Report.write("4e'. Crash on Payara Server: kill -9 inside an asynchronous task", ops.size()
                        + " asynchronous payments accepted by the domain (202); their clients then only poll the status"
                        + " resource until the outcome, which the domain, started again, runs from each claim's kept input",
                "kill -9 of the domain's JVM once the first task is paused inside its 4 s transaction (the rest running"
                        + " or queued); asadmin start-domain on the same data",
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(ops.size());
        for (Operations.Operation op : ops) {
            assertThat(Checker.attempts(op)).as("taken over after the dead lease").isGreaterThanOrEqualTo(2);
        }
    }
}
