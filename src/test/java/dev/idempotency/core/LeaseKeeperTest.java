package dev.idempotency.core;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyException;
import dev.idempotency.ProblemType;
import dev.idempotency.Scope;
import dev.idempotency.json.JacksonCanonicalJson;
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
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Design guide §5/§6: an execution that runs longer than its lease keeps it, so a retry meets it in flight
 * instead of running the operation a second time; one that cannot keep it can no longer commit. Time is moved
 * by the test (30 s leases, the default); the keeper runs when the test says so, as the scheduler would.
 */
class LeaseKeeperTest {
    private static final Duration LEASE = Duration.ofSeconds(30);
    private final Fingerprinter fingerprinter = new Fingerprinter(
            "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8), List.of(), new JacksonCanonicalJson());
    private final MutableClock clock = new MutableClock();
    private final List<IdempotencyEvent> events = new CopyOnWriteArrayList<>();
    private StoreFixture db;
    private IdempotencyProtocol protocol;
    private LeaseKeeper keeper;

    @BeforeEach
    void setUp() {
        db = new StoreFixture(Databases.named("h2"), "idem_lease_test");
        protocol = new IdempotencyProtocol(db.store, db.transactions, clock, new SecureRandom(), events::add, 1);
        keeper = new LeaseKeeper(db.store, db.transactions, clock, events::add);
    }

    @Test
    void aHeldExecutionOutlivesItsLeaseAndARetryStillMeetsItInFlight() {
        Claim running = execute("long");
        Execution execution = new Execution();
        LeaseKeeper.Held held = keeper.hold(running, execution);
        clock.advance(Duration.ofSeconds(10));
        keeper.renewDue();
        assertThat(leaseUntilOf(running)).as("not yet half gone: no write").isEqualTo(leaseAtClaim(running));
        clock.advance(Duration.ofSeconds(6));
        keeper.renewDue();
        assertThat(Duration.between(clock.instant(), leaseUntilOf(running))).isBetween(LEASE.minusSeconds(1), LEASE);
        clock.advance(Duration.ofSeconds(20));
        // 36 s after the claim: without the renewal a retry would take the operation over here (see below).
        IdempotencyException retry = rejected("long");
        assertThat(retry.problem().type()).isEqualTo(ProblemType.REQUEST_IN_FLIGHT);
        // The keeper runs every 7.5 s on a server; here every 14 s, still within half a lease.
        for (int i = 0; i < 6; i++) {
            keeper.renewDue();
            clock.advance(Duration.ofSeconds(14));
            assertThat(rejected("long").problem().type()).isEqualTo(ProblemType.REQUEST_IN_FLIGHT);
        }
        assertThat(execution.lost).isFalse();
        held.close();
        assertThat(keeper.held()).isZero();
    }

    @Test
    void withoutTheKeeperTheSameRetryTakesTheOperationOver() {
        execute("unheld");
        clock.advance(Duration.ofSeconds(36));
        assertThat(protocol.admission().admit(op("unheld"))).isInstanceOf(Admission.Execute.class);
    }

    @Test
    void aLeaseThatRanOutIsNotRevivedAndItsExecutionIsToldToRollBack() {
        Claim late = execute("late");
        Execution execution = new Execution();
        keeper.hold(late, execution);
        clock.advance(Duration.ofSeconds(31));
        Admission takeover = protocol.admission().admit(op("late"));
        assertThat(takeover).isInstanceOf(Admission.Execute.class);
        keeper.renewDue();
        assertThat(execution.lost).isTrue();
        assertThat(keeper.held()).isZero();
        assertThat(events).anyMatch(e -> e instanceof IdempotencyEvent.LeaseLost lost
                && lost.scopeKey().equals(late.operation().scopeKey()));
        assertThat(db.transactions.requiresNew(() -> protocol.completion().finish(late, dev.idempotency.RecordStatus.SUCCEEDED,
                Optional.empty(), Optional.empty()))).as("fenced as before").isFalse();

        // Run out but not taken over: still not revived (a retry may be taking it over on what it read).
        Claim stale = execute("stale");
        Execution unrenewed = new Execution();
        keeper.hold(stale, unrenewed);
        clock.advance(Duration.ofSeconds(31));
        keeper.renewDue();
        assertThat(unrenewed.lost).isTrue();
        assertThat(leaseUntilOf(stale)).isEqualTo(leaseAtClaim(stale));
    }

    @Test
    void anExecutionWhoseTransactionEndedIsNotRenewed() {
        Claim ended = execute("ended");
        Execution execution = new Execution();
        execution.active = false;
        keeper.hold(ended, execution);
        clock.advance(Duration.ofSeconds(20));
        keeper.renewDue();
        assertThat(leaseUntilOf(ended)).isEqualTo(leaseAtClaim(ended));
        assertThat(execution.lost).isFalse();
    }

    @Test
    void theKeeperRunsFourTimesPerShortestLease() {
        assertThat(LeaseKeeper.interval(Duration.ofSeconds(30))).isEqualTo(Duration.ofMillis(7500));
        assertThat(LeaseKeeper.interval(Duration.ofMillis(200))).isEqualTo(Duration.ofMillis(100));
    }

    private static final class Execution implements LeaseKeeper.Execution {
        volatile boolean active = true;
        volatile boolean lost;
        final AtomicInteger told = new AtomicInteger();

        @Override
        public boolean active() {
            return active;
        }

        @Override
        public void leaseLost() {
            lost = true;
            assertThat(told.incrementAndGet()).as("told once").isEqualTo(1);
        }
    }

    private java.time.Instant leaseUntilOf(Claim claim) {
        return db.transactions.requiresNew(() -> db.store.find(claim.operation().scopeKey())).orElseThrow()
                .leaseUntil().orElseThrow();
    }

    private final Map<String, java.time.Instant> claimedLeases = new java.util.HashMap<>();

    private java.time.Instant leaseAtClaim(Claim claim) {
        return claimedLeases.get(claim.operation().scopeKey());
    }

    private Claim execute(String key) {
        Admission admission = protocol.admission().admit(op(key));
        assertThat(admission).isInstanceOf(Admission.Execute.class);
        Claim claim = ((Admission.Execute) admission).claim();
        claimedLeases.put(claim.operation().scopeKey(), leaseUntilOf(claim));
        return claim;
    }

    private IdempotencyException rejected(String key) {
        try {
            Admission admission = protocol.admission().admit(op(key));
            throw new AssertionError("expected the retry to meet the execution in flight, got " + admission);
        } catch (IdempotencyException e) {
            return e;
        }
    }

    private Operation op(String key) {
        EndpointPolicy policy = PolicyBuilder.defaults().build();
        RequestFacts facts = new RequestFacts("POST", "/api/payments", "application/json", "", "acme/alice",
                "{}".getBytes(StandardCharsets.UTF_8));
        return Operation.of(StoreFixture.SCOPE_DIGEST, new Scope("acme", "alice", policy.endpoint(), key),
                fingerprinter.fingerprint(facts, Set.of(), Map.of()), policy, Optional.empty());
    }
}
