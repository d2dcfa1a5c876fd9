package dev.idempotency.endpoint;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.ProblemType;
import dev.idempotency.RecordStatus;
import dev.idempotency.testing.Databases;
import dev.idempotency.testing.TestDatabase;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import jakarta.persistence.EntityManagerFactory;
import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The library's meters and events after a known sequence of requests, with a Micrometer registry bean as WildFly's
 * micrometer subsystem provides one (the real servers' exports are read in the real-server tests).
 */
@EnableWeld
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MetricsTest {
    private static final String PAYMENT = "{\"merchantOrderNo\":\"%s\",\"amount\":100.00,\"currency\":\"EUR\"}";

    @WeldSetup
    WeldInitiator weld = WeldInitiator.from(EndpointFixture.weld().addBeanClasses(MeterRegistryProducer.class)).build();

    private EntityManagerFactory emf;
    private Http http;
    private final TestDatabase h2 = Databases.named("h2");

    @BeforeAll
    void start() {
        emf = EndpointFixture.hibernate();
        weld.select(Payments.class).get().use(emf);
        http = EndpointFixture.http(weld.select(PaymentResource.class).get());
        EndpointFixture.emptyTables(h2);
    }

    @AfterAll
    void stop() {
        emf.close();
    }

    @Test
    void everyOutcomeIsCountedPerEndpointAndTheStepsAreTimed() {
        String key = UUID.randomUUID().toString();
        assertThat(http.post("payments", String.format(PAYMENT, "M-1")).key(key).send().status()).isEqualTo(201);
        assertThat(http.post("payments", String.format(PAYMENT, "M-1")).key(key).send().status()).isEqualTo(201);
        assertThat(http.post("payments", String.format(PAYMENT, "M-1")).key(key).send().status()).isEqualTo(201);
        assertThat(http.post("payments", String.format(PAYMENT, "M-2")).key(key).send().status()).isEqualTo(422);
        assertThat(http.post("payments", String.format(PAYMENT, "M-3")).send().status()).isEqualTo(400);
        assertThat(http.post("payments", String.format(PAYMENT, "M-4")).key(UUID.randomUUID().toString())
                .header("X-Fail", "transient").send().status()).isEqualTo(503);

        assertThat(count("idempotency.claims")).isEqualTo(2);
        assertThat(count("idempotency.executions", "outcome", "succeeded")).isEqualTo(1);
        assertThat(count("idempotency.releases")).as("the 503 gave its claim back").isEqualTo(1);
        assertThat(count("idempotency.replays", "outcome", "succeeded")).isEqualTo(2);
        assertThat(count("idempotency.mismatches")).isEqualTo(1);
        assertThat(count("idempotency.rejections", "reason", "fingerprint-mismatch")).isEqualTo(1);
        assertThat(count("idempotency.rejections", "reason", "key-missing")).isEqualTo(1);
        assertThat(timer("idempotency.claim").count()).isEqualTo(2);
        assertThat(timer("idempotency.finish").count()).as("the success's finish and the 503's give-back").isEqualTo(2);
        assertThat(timer("idempotency.replay").count()).isEqualTo(2);
        assertThat(timer("idempotency.replay").totalTime(java.util.concurrent.TimeUnit.NANOSECONDS)).isPositive();

        EventLog events = weld.select(EventLog.class).get();
        assertThat(events.events()).anyMatch(e -> e instanceof IdempotencyEvent.Completed c
                && c.endpoint().equals("payments.create") && c.status() == RecordStatus.SUCCEEDED && c.attempt() == 1);
        assertThat(events.events()).anyMatch(e -> e instanceof IdempotencyEvent.Released r
                && r.endpoint().equals("payments.create"));
        assertThat(events.events()).anyMatch(e -> e instanceof IdempotencyEvent.Rejected r
                && r.reason() == ProblemType.KEY_MISSING && r.status() == 400 && r.scopeKey().isEmpty());
    }

    @Test
    void aDuplicateThatWaitsForTheFirstsOutcomeIsCounted() throws Exception {
        String key = UUID.randomUUID().toString();
        java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch released = new java.util.concurrent.CountDownLatch(1);
        PaymentResource.duringExecution = k -> {
            if (k.equals(key)) {
                running.countDown();
                try {
                    released.await(10, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        try {
            java.util.concurrent.CompletableFuture<Http.Reply> first = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> http.post("payments/waiting", String.format(PAYMENT, "W-1")).key(key).send());
            assertThat(running.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            java.util.concurrent.CompletableFuture<Http.Reply> duplicate = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> http.post("payments/waiting", String.format(PAYMENT, "W-1")).key(key).send());
            weld.select(EventLog.class).get().await(IdempotencyEvent.WaitingForOutcome.class,
                    e -> e.endpoint().equals("payments.waiting"));
            released.countDown();
            assertThat(first.get(10, java.util.concurrent.TimeUnit.SECONDS).status()).isEqualTo(201);
            assertThat(duplicate.get(10, java.util.concurrent.TimeUnit.SECONDS).status()).isEqualTo(201);
        } finally {
            released.countDown();
            PaymentResource.duringExecution = k -> { };
        }
        assertThat(countOn("payments.waiting", "idempotency.in.flight.waits")).isEqualTo(1);
    }

    private static double count(String name, String... tags) {
        return countOn("payments.create", name, tags);
    }

    private static double countOn(String endpoint, String name, String... tags) {
        Counter counter = MeterRegistryProducer.REGISTRY.find(name).tag("endpoint", endpoint).tags(tags).counter();
        return counter == null ? 0 : counter.count();
    }

    private static Timer timer(String name) {
        Timer timer = MeterRegistryProducer.REGISTRY.find(name).tag("endpoint", "payments.create").timer();
        assertThat(timer).as(name).isNotNull();
        return timer;
    }
}
