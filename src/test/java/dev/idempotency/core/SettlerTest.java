package dev.idempotency.core;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyEvent.Settled.Resolution;
import dev.idempotency.RecordStatus;
import dev.idempotency.Scope;
import dev.idempotency.json.JacksonCanonicalJson;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.OutcomeResolver;
import dev.idempotency.spi.ResolutionRequest;
import dev.idempotency.spi.StoredResponse;
import dev.idempotency.testing.Databases;
import dev.idempotency.testing.MutableClock;
import dev.idempotency.testing.PolicyBuilder;
import dev.idempotency.testing.StoreFixture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Design guide §5/§6: an operation whose executor died and that no client retries is not left PROCESSING
 * forever (held against its caller's limits, kept from the purge, never reported): the settler finds it once its
 * lease has been out for {@code settle.after}, and it ends SUCCEEDED (its resolver found it done) or
 * FAILED_RETRYABLE. Over the real JDBC store (H2) with a movable clock; passes run when the test says so, as the
 * scheduler would run them.
 */
class SettlerTest {
    private static final Duration AFTER = Duration.ofMinutes(1);
    private static final Duration LOOK_BACK = Duration.ofHours(1);
    private final Fingerprinter fingerprinter = new Fingerprinter(
            "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8), List.of(), new JacksonCanonicalJson());
    private final MutableClock clock = new MutableClock();
    private final List<IdempotencyEvent> events = new CopyOnWriteArrayList<>();
    private final List<ResolutionRequest> asked = new CopyOnWriteArrayList<>();
    private StoreFixture db;
    private IdempotencyProtocol protocol;

    @BeforeEach
    void setUp() {
        db = new StoreFixture(Databases.named("h2"), "idem_settle_test");
        protocol = new IdempotencyProtocol(db.store, db.transactions, clock, new SecureRandom(), events::add, 1);
    }

    @Test
    void aStuckOperationIsMadeRetryableOnceAfterItsLeaseHasBeenOutAndRetentionThenRemovesIt() {
        PolicyBuilder policy = PolicyBuilder.defaults();
        Settler settler = settler(policy, null);
        Claim abandoned = execute(op("k1", policy, null));
        clock.advance(Duration.ofSeconds(80));
        assertThat(settler.settleDue()).as("lease out 50 s: a retrying client still comes first").isEmpty();
        clock.advance(Duration.ofSeconds(11));
        List<IdempotencyEvent.Settled> settled = settler.settleDue();
        assertThat(settled).singleElement().satisfies(s -> {
            assertThat(s.scopeKey()).isEqualTo(abandoned.operation().scopeKey());
            assertThat(s.status()).isEqualTo(RecordStatus.FAILED_RETRYABLE);
            assertThat(s.resolution()).isEqualTo(Resolution.NOTHING_TO_ASK);
        });
        assertThat(events).contains(settled.get(0));
        assertThat(record("k1", policy).status()).isEqualTo(RecordStatus.FAILED_RETRYABLE);
        assertThat(settler.settleDue()).as("once").isEmpty();
        assertThat(protocol.completion().finish(abandoned, RecordStatus.SUCCEEDED, Optional.empty(), Optional.empty()))
                .as("its executor, were it alive, is fenced out").isFalse();

        clock.advance(Duration.ofHours(24).plusMinutes(5));
        assertThat(protocol.recovery().purgeExpired(100, 10)).as("retention removes it; a PROCESSING record it never would")
                .isEqualTo(1);
    }

    @Test
    void aRetryAfterTheSettlementRunsAtOnce() {
        PolicyBuilder policy = PolicyBuilder.defaults();
        Settler settler = settler(policy, null);
        execute(op("k1", policy, null));
        clock.advance(Duration.ofMinutes(2));
        assertThat(settler.settleDue()).hasSize(1);
        Admission retry = protocol.admission().admit(op("k1", policy, null));
        assertThat(retry).isInstanceOf(Admission.Execute.class);
        assertThat(((Admission.Execute) retry).claim().attempt()).isEqualTo(2);
    }

    @Test
    void anExecutionWhoseLeaseIsRenewedIsNeverSettledAndIsOnceItsRenewalsStop() {
        PolicyBuilder policy = PolicyBuilder.defaults();
        Settler settler = settler(policy, null);
        LeaseKeeper keeper = new LeaseKeeper(db.store, db.transactions, clock, events::add);
        Claim running = execute(op("long", policy, null));
        boolean[] active = {true};
        keeper.hold(running, new LeaseKeeper.Execution() {
            @Override
            public boolean active() {
                return active[0];
            }

            @Override
            public void leaseLost() {
                throw new AssertionError("the lease is renewed in time");
            }
        });
        // Ten minutes of a long execution: the keeper renews every 7.5 s on a server, here every 10 s.
        for (int i = 0; i < 60; i++) {
            clock.advance(Duration.ofSeconds(10));
            keeper.renewDue();
            assertThat(settler.settleDue()).as("at %d s", (i + 1) * 10).isEmpty();
        }
        assertThat(record("long", running.operation()).status()).isEqualTo(RecordStatus.PROCESSING);
        // Its node dies: no more renewals. Without the renewals moving the expiry, the settler's window would
        // have passed this record long ago and never meet it again.
        active[0] = false;
        clock.advance(Duration.ofSeconds(30).plus(AFTER).plusSeconds(1));
        assertThat(settler.settleDue()).singleElement()
                .satisfies(s -> assertThat(s.scopeKey()).isEqualTo(running.operation().scopeKey()));
    }

    @Test
    void theEndpointsResolverDecidesWhatAStuckOperationWithSideEffectsBecomes() {
        PolicyBuilder sideEffects = PolicyBuilder.defaults().with(p -> p.externalSideEffects = true);
        StoredResponse paid = new StoredResponse(201, Map.of("Content-Type", List.of("application/json")),
                "{\"id\":\"p-9\"}".getBytes(StandardCharsets.UTF_8), StoredResponse.PLAIN);
        Operation done = op("done", sideEffects, null);
        Operation notDone = op("not-done", sideEffects, null);
        Operation failing = op("failing", sideEffects, null);
        OutcomeResolver resolver = resolver(request -> {
            if (request.previous().scopeKey().equals(done.scopeKey())) {
                return new dev.idempotency.spi.Resolution.Done(paid, Optional.of("p-9"));
            }
            if (request.previous().scopeKey().equals(failing.scopeKey())) {
                throw new IllegalStateException("acquirer unreachable");
            }
            return new dev.idempotency.spi.Resolution.NotDone();
        });
        Settler settler = settler(sideEffects, resolver);
        execute(done);
        execute(notDone);
        execute(failing);
        clock.advance(Duration.ofMinutes(2));

        List<IdempotencyEvent.Settled> settled = settler.settleDue();
        assertThat(settled).extracting(IdempotencyEvent.Settled::resolution)
                .containsExactlyInAnyOrder(Resolution.DONE, Resolution.NOT_DONE, Resolution.UNKNOWN);
        assertThat(asked).hasSize(3).allSatisfy(r -> assertThat(r.scope()).as("no key is stored").isEmpty());
        ResolutionRequest aboutDone = asked.stream().filter(r -> r.previous().scopeKey().equals(done.scopeKey()))
                .findFirst().orElseThrow();
        assertThat(aboutDone.derive().apply("acquirer.charge")).as("the key the first attempt sent downstream")
                .isEqualTo(done.derive("acquirer.charge"));
        assertThat(aboutDone.endpoint()).isEqualTo("payments.create");

        IdempotencyRecord completed = record("done", sideEffects);
        assertThat(completed.status()).isEqualTo(RecordStatus.SUCCEEDED);
        assertThat(completed.resourceId()).contains("p-9");
        Admission replay = protocol.admission().admit(op("done", sideEffects, resolver));
        assertThat(replay).isInstanceOf(Admission.Replay.class);
        assertThat(new String(((Admission.Replay) replay).record().response().orElseThrow().body(),
                StandardCharsets.UTF_8)).isEqualTo("{\"id\":\"p-9\"}");
        assertThat(record("not-done", sideEffects).status()).isEqualTo(RecordStatus.FAILED_RETRYABLE);
        assertThat(record("failing", sideEffects).status()).isEqualTo(RecordStatus.FAILED_RETRYABLE);

        // A client's retry of a settled one asks the resolver again before it runs ...
        int before = asked.size();
        assertThat(protocol.admission().admit(op("not-done", sideEffects, resolver))).isInstanceOf(Admission.Execute.class);
        assertThat(asked).hasSize(before + 1);
        // ... and a resolver that fails on the request path is an unknown outcome there too: 503, nothing run,
        // the claim given back for the next retry.
        assertThatThrownBy(() -> protocol.admission().admit(op("failing", sideEffects, resolver)))
                .isInstanceOfSatisfying(IdempotencyException.class,
                        e -> assertThat(e.problem().status()).isEqualTo(503));
        assertThat(asked).hasSize(before + 2);
        assertThat(record("failing", sideEffects).status()).isEqualTo(RecordStatus.FAILED_RETRYABLE);
    }

    @Test
    void twoNodesThatReadTheSameStuckRecordSettleItOnce() {
        PolicyBuilder policy = PolicyBuilder.defaults();
        Claim abandoned = execute(op("k1", policy, null));
        clock.advance(Duration.ofMinutes(2));
        IdempotencyRecord read = record("k1", policy);
        assertThat(read.ownerToken()).isEqualTo(abandoned.ownerToken());
        assertThat(protocol.recovery().settle(read, Optional.of(policy.build()), Optional.empty())).isPresent();
        assertThat(protocol.recovery().settle(read, Optional.of(policy.build()), Optional.empty()))
                .as("the second node's takeover is fenced by the owner token it read").isEmpty();
        assertThat(events).filteredOn(e -> e instanceof IdempotencyEvent.Settled).hasSize(1);
    }

    @Test
    void endpointsWithDifferentRetentionsAreEachFoundInTheirOwnWindow() {
        PolicyBuilder day = PolicyBuilder.defaults();
        PolicyBuilder hour = PolicyBuilder.defaults().with(p -> {
            p.endpoint = "refunds.create";
            p.retention = Duration.ofHours(1);
        });
        Settler settler = new Settler(protocol, db.store, db.transactions, clock,
                List.of(new Settler.Endpoint(day.build(), Optional.empty()),
                        new Settler.Endpoint(hour.build(), Optional.empty())), AFTER, LOOK_BACK, 2);
        for (int i = 0; i < 3; i++) {
            execute(op("d" + i, day, null));
            execute(op("h" + i, hour, null));
        }
        clock.advance(Duration.ofMinutes(2));
        assertThat(settler.settleDue()).as("in pages of two").extracting(IdempotencyEvent.Settled::endpoint)
                .containsExactlyInAnyOrder("payments.create", "payments.create", "payments.create",
                        "refunds.create", "refunds.create", "refunds.create");
    }

    @Test
    void anOperationStuckBeforeTheLookBackIsSettledWhenItExpiresAsIsOneOfAnEndpointNoLongerServed() {
        PolicyBuilder served = PolicyBuilder.defaults();
        PolicyBuilder gone = PolicyBuilder.defaults().with(p -> p.endpoint = "legacy.create");
        execute(op("old", served, null));
        execute(op("orphan", gone, null));
        clock.advance(Duration.ofHours(3));
        // A node that starts now looks back an hour: both leases ran out before that.
        Settler settler = settler(served, null);
        assertThat(settler.settleDue()).isEmpty();
        clock.advance(Duration.ofHours(22));
        List<IdempotencyEvent.Settled> settled = settler.settleDue();
        assertThat(settled).extracting(IdempotencyEvent.Settled::endpoint, IdempotencyEvent.Settled::resolution)
                .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple("payments.create", Resolution.EXPIRED),
                        org.assertj.core.groups.Tuple.tuple("legacy.create", Resolution.EXPIRED));
        assertThat(protocol.recovery().purgeExpired(100, 10)).as("then the purge removes both").isEqualTo(2);
    }

    @Test
    void anOperationOfAnEndpointNotServedHereIsLeftToItsOwnDeploymentUntilItExpires() {
        PolicyBuilder served = PolicyBuilder.defaults();
        PolicyBuilder other = PolicyBuilder.defaults().with(p -> p.endpoint = "other-app.create");
        Settler settler = settler(served, null);
        execute(op("theirs", other, null));
        clock.advance(Duration.ofMinutes(5));
        assertThat(settler.settleDue()).isEmpty();
        assertThat(record("theirs", other).status()).isEqualTo(RecordStatus.PROCESSING);
    }

    private Settler settler(PolicyBuilder policy, OutcomeResolver resolver) {
        return new Settler(protocol, db.store, db.transactions, clock,
                List.of(new Settler.Endpoint(policy.build(), Optional.ofNullable(resolver))), AFTER, LOOK_BACK, 100);
    }

    private Claim execute(Operation op) {
        Admission admission = protocol.admission().admit(op);
        assertThat(admission).isInstanceOf(Admission.Execute.class);
        return ((Admission.Execute) admission).claim();
    }

    private IdempotencyRecord record(String key, PolicyBuilder policy) {
        return record(key, op(key, policy, null));
    }

    private IdempotencyRecord record(String key, Operation op) {
        return db.transactions.requiresNew(() -> db.store.find(op.scopeKey())).orElseThrow();
    }

    private Operation op(String key, PolicyBuilder policy, OutcomeResolver resolver) {
        EndpointPolicy built = policy.build();
        RequestFacts facts = new RequestFacts("POST", "/api/payments", "application/json", "", "acme/alice",
                "{}".getBytes(StandardCharsets.UTF_8));
        return Operation.of(StoreFixture.SCOPE_DIGEST, new Scope("acme", "alice", built.endpoint(), key),
                fingerprinter.fingerprint(facts, Set.of(), Map.of()), built, Optional.ofNullable(resolver));
    }

    private OutcomeResolver resolver(Function<ResolutionRequest, dev.idempotency.spi.Resolution> answer) {
        return new OutcomeResolver() {
            @Override
            public boolean handles(String endpoint) {
                return true;
            }

            @Override
            public dev.idempotency.spi.Resolution resolve(ResolutionRequest request) {
                asked.add(request);
                return answer.apply(request);
            }
        };
    }
}
