package dev.idempotency.core;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyException;
import dev.idempotency.InFlightPolicy;
import dev.idempotency.ProblemType;
import dev.idempotency.RecordStatus;
import dev.idempotency.Scope;
import dev.idempotency.json.JacksonCanonicalJson;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.OutcomeResolver;
import dev.idempotency.spi.Resolution;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The protocol's decisions over the real JDBC store (H2) in real JTA transactions (Narayana), with a movable clock. */
class IdempotencyProtocolTest {
    private static final byte[] SECRET = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8);
    private final Fingerprinter fingerprinter = new Fingerprinter(SECRET, List.of(), new JacksonCanonicalJson());
    private final MutableClock clock = new MutableClock();
    private final List<IdempotencyEvent> events = new CopyOnWriteArrayList<>();
    /** Counted down when a duplicate takes a waiting place: the moment a test may let the first finish. */
    private final java.util.concurrent.CountDownLatch duplicateWaits = new java.util.concurrent.CountDownLatch(1);
    private StoreFixture db;
    private IdempotencyProtocol protocol;

    @BeforeEach
    void setUp() {
        db = new StoreFixture(Databases.named("h2"), "idem_protocol_test");
        protocol = new IdempotencyProtocol(db.store, db.transactions, clock, new SecureRandom(), event -> {
            events.add(event);
            if (event instanceof IdempotencyEvent.WaitingForOutcome) {
                duplicateWaits.countDown();
            }
        }, 1);
    }

    @Test
    void theFirstRequestClaimsWithAnUnguessableTokenAndALease() {
        Claim claim = execute(op("k1", "{\"amount\":100}", PolicyBuilder.defaults()));
        assertThat(claim.attempt()).isEqualTo(1);
        assertThat(claim.ownerToken()).matches("[0-9a-f]{32}");
        IdempotencyRecord record = record(claim);
        assertThat(record.status()).isEqualTo(RecordStatus.PROCESSING);
        assertThat(record.leaseUntil()).isPresent();
        assertThat(Duration.between(clock.instant(), record.leaseUntil().get())).isBetween(Duration.ofSeconds(29), Duration.ofSeconds(30));
        assertThat(events).anyMatch(e -> e instanceof IdempotencyEvent.Claimed);
        assertThat(execute(op("k2", "{}", PolicyBuilder.defaults())).ownerToken()).isNotEqualTo(claim.ownerToken());
    }

    @Test
    void aDuplicateInFlightGets409WithRetryAfterBoundedByTheLease() {
        execute(op("k1", "{}", PolicyBuilder.defaults()));
        IdempotencyException e = rejected(op("k1", "{}", PolicyBuilder.defaults()));
        assertThat(e.problem().type()).isEqualTo(ProblemType.REQUEST_IN_FLIGHT);
        assertThat(e.problem().status()).isEqualTo(409);
        assertThat(e.problem().retryAfterSeconds()).contains(5L);
        assertThat(events).anyMatch(ev -> ev instanceof IdempotencyEvent.InFlightRejected);
    }

    @Test
    void inFlightPolicyMayAnswer425Or202() {
        execute(op("k1", "{}", PolicyBuilder.defaults()));
        IdempotencyException tooEarly = rejected(op("k1", "{}", PolicyBuilder.defaults().with(p -> p.inFlight = InFlightPolicy.TOO_EARLY)));
        assertThat(tooEarly.problem().status()).isEqualTo(425);
        assertThat(tooEarly.problem().retryAfterSeconds()).isPresent();
        Admission accepted = protocol.admission().admit(op("k1", "{}", PolicyBuilder.defaults().with(p -> p.inFlight = InFlightPolicy.ACCEPTED)));
        assertThat(accepted).isInstanceOf(Admission.Accepted.class);
    }

    @Test
    void aWaitingDuplicateGetsTheOutcomeOnceTheFirstFinishes() throws Exception {
        PolicyBuilder waiting = PolicyBuilder.defaults().with(p -> p.inFlight = InFlightPolicy.WAIT);
        Claim claim = execute(op("k1", "{}", waiting));
        CompletableFuture<Admission> duplicate = CompletableFuture.supplyAsync(() -> protocol.admission().admit(op("k1", "{}", waiting)));
        assertThat(duplicateWaits.await(10, TimeUnit.SECONDS)).as("the duplicate waits").isTrue();
        assertThat(duplicate).isNotDone();
        finishAlone(claim, RecordStatus.SUCCEEDED, 201);
        Admission answer = duplicate.get(5, TimeUnit.SECONDS);
        assertThat(answer).isInstanceOf(Admission.Replay.class);
        assertThat(((Admission.Replay) answer).record().response().orElseThrow().status()).isEqualTo(201);
    }

    @Test
    void theWaitIsBoundedAndWaitersBeyondTheCapAreAnsweredAtOnce() throws Exception {
        PolicyBuilder waiting = PolicyBuilder.defaults().with(p -> {
            p.inFlight = InFlightPolicy.WAIT;
            p.inFlightWait = Duration.ofSeconds(2); // longer than the steps below take: the waiter holds its place
        });
        execute(op("k1", "{}", waiting));
        AtomicReference<Throwable> first = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                protocol.admission().admit(op("k1", "{}", waiting));
            } catch (Throwable t) {
                first.set(t);
            }
        });
        waiter.start();
        assertThat(duplicateWaits.await(10, TimeUnit.SECONDS)).as("the first duplicate waits").isTrue();
        IdempotencyException beyondCap = rejected(op("k1", "{}", waiting));
        // Answered without taking a waiting place (the cap is 1 waiter), so without waiting: no second wait began.
        assertThat(events.stream().filter(e -> e instanceof IdempotencyEvent.WaitingForOutcome))
                .as("the cap is 1 waiter").hasSize(1);
        assertThat(beyondCap.problem().status()).isEqualTo(409);
        waiter.join(5000);
        assertThat(first.get()).isInstanceOf(IdempotencyException.class);
        assertThat(((IdempotencyException) first.get()).problem().status()).as("the wait ended, still running").isEqualTo(409);
    }

    @Test
    void aFinishedOperationIsReplayedNotRunAgain() {
        Claim claim = execute(op("k1", "{\"amount\":100}", PolicyBuilder.defaults()));
        finishAlone(claim, RecordStatus.SUCCEEDED, 201);
        Admission again = protocol.admission().admit(op("k1", "{ \"amount\" : 1E2 }", PolicyBuilder.defaults()));
        assertThat(again).isInstanceOf(Admission.Replay.class);
        assertThat(events).anyMatch(e -> e instanceof IdempotencyEvent.Replayed);
        assertThat(db.rows("")).isEqualTo(1);
    }

    @Test
    void aFinalFailureIsReplayedToo() {
        Claim claim = execute(op("k1", "{}", PolicyBuilder.defaults()));
        finishAlone(claim, RecordStatus.FAILED_FINAL, 400);
        Admission again = protocol.admission().admit(op("k1", "{}", PolicyBuilder.defaults()));
        assertThat(((Admission.Replay) again).record().status()).isEqualTo(RecordStatus.FAILED_FINAL);
    }

    @Test
    void theSameKeyWithAnotherRequestIs422Or409ByConfiguration() {
        Claim claim = execute(op("k1", "{\"amount\":100}", PolicyBuilder.defaults()));
        finishAlone(claim, RecordStatus.SUCCEEDED, 201);
        IdempotencyException mismatch = rejected(op("k1", "{\"amount\":200}", PolicyBuilder.defaults()));
        assertThat(mismatch.problem().type()).isEqualTo(ProblemType.FINGERPRINT_MISMATCH);
        assertThat(mismatch.problem().status()).isEqualTo(422);
        assertThat(rejected(op("k1", "{\"amount\":200}", PolicyBuilder.defaults().with(p -> p.mismatchStatus = 409)))
                .problem().status()).isEqualTo(409);
        assertThat(events).anyMatch(e -> e instanceof IdempotencyEvent.Mismatched);
        // Also while the first is still running: a misuse of the key is not an in-flight duplicate.
        execute(op("k2", "{\"amount\":1}", PolicyBuilder.defaults()));
        assertThat(rejected(op("k2", "{\"amount\":2}", PolicyBuilder.defaults())).problem().status()).isEqualTo(422);
    }

    @Test
    void aRetryableFailureRunsAgainAsTheNextAttempt() {
        Claim first = execute(op("k1", "{}", PolicyBuilder.defaults()));
        assertThat(protocol.completion().release(first)).isTrue();
        assertThat(record(first).status()).isEqualTo(RecordStatus.FAILED_RETRYABLE);
        Claim second = execute(op("k1", "{}", PolicyBuilder.defaults()));
        assertThat(second.attempt()).isEqualTo(2);
        assertThat(second.ownerToken()).isNotEqualTo(first.ownerToken());
        assertThat(events).anyMatch(e -> e instanceof IdempotencyEvent.TakenOver t && t.previousStatus() == RecordStatus.FAILED_RETRYABLE);
    }

    @Test
    void anExpiredLeaseIsTakenOverAndTheOldOwnerIsFencedOut() {
        Claim stale = execute(op("k1", "{}", PolicyBuilder.defaults()));
        clock.advance(Duration.ofSeconds(31));
        Claim fresh = execute(op("k1", "{}", PolicyBuilder.defaults()));
        assertThat(fresh.attempt()).isEqualTo(2);
        assertThat(db.transactions.requiresNew(() -> protocol.completion().finish(stale, RecordStatus.SUCCEEDED,
                Optional.of(response(201)), Optional.empty()))).as("fenced").isFalse();
        assertThat(events).anyMatch(e -> e instanceof IdempotencyEvent.Fenced);
        assertThat(protocol.completion().release(stale)).as("every change is fenced, release too").isFalse();
        assertThat(record(fresh).status()).isEqualTo(RecordStatus.PROCESSING);
        finishAlone(fresh, RecordStatus.SUCCEEDED, 201);
        assertThat(protocol.recovery().afterFenced(stale.operation())).isInstanceOf(Admission.Replay.class);
    }

    @Test
    void aLiveLeaseIsNeverTakenOver() {
        execute(op("k1", "{}", PolicyBuilder.defaults()));
        clock.advance(Duration.ofSeconds(29));
        assertThat(rejected(op("k1", "{}", PolicyBuilder.defaults())).problem().status()).isEqualTo(409);
    }

    @Test
    void afterFencedWithoutAFinishedWinnerIs409Superseded() {
        Claim stale = execute(op("k1", "{}", PolicyBuilder.defaults()));
        clock.advance(Duration.ofSeconds(31));
        execute(op("k1", "{}", PolicyBuilder.defaults()));
        assertThatThrownBy(() -> protocol.recovery().afterFenced(stale.operation())).isInstanceOf(IdempotencyException.class)
                .satisfies(e -> assertThat(((IdempotencyException) e).problem().type()).isEqualTo(ProblemType.SUPERSEDED))
                .satisfies(e -> assertThat(((IdempotencyException) e).problem().status()).isEqualTo(409));
    }

    @Test
    void anExpiredRecordIsAsIfAbsent() {
        Claim claim = execute(op("k1", "{\"amount\":1}", PolicyBuilder.defaults().with(p -> p.retention = Duration.ofMinutes(10))));
        finishAlone(claim, RecordStatus.SUCCEEDED, 201);
        clock.advance(Duration.ofMinutes(11));
        Claim again = execute(op("k1", "{\"amount\":2}", PolicyBuilder.defaults()));
        assertThat(again.attempt()).isEqualTo(1);
        assertThat(record(again).status()).isEqualTo(RecordStatus.PROCESSING);
    }

    @Test
    void tooManyOperationsInFlightGet429ButTheirOwnRepeatsDoNot() {
        PolicyBuilder limited = PolicyBuilder.defaults().with(p -> p.maxInFlight = 2);
        execute(op("k1", "{}", limited));
        execute(op("k2", "{}", limited));
        IdempotencyException limit = rejected(op("k3", "{}", limited));
        assertThat(limit.problem().type()).isEqualTo(ProblemType.TOO_MANY_IN_FLIGHT);
        assertThat(limit.problem().status()).isEqualTo(429);
        assertThat(limit.problem().retryAfterSeconds()).isPresent();
        assertThat(rejected(op("k1", "{}", limited)).problem().type()).as("own repeat").isEqualTo(ProblemType.REQUEST_IN_FLIGHT);
        assertThat(execute(op("k9", "{}", limited, "bob"))).as("another caller is served").isNotNull();
        assertThat(db.rows("")).isEqualTo(3);
    }

    @Test
    void tooManyRetainedKeysGet429() {
        PolicyBuilder limited = PolicyBuilder.defaults().with(p -> p.maxKeys = 2);
        finishAlone(execute(op("k1", "{}", limited)), RecordStatus.SUCCEEDED, 201);
        finishAlone(execute(op("k2", "{}", limited)), RecordStatus.SUCCEEDED, 201);
        assertThat(rejected(op("k3", "{}", limited)).problem().type()).isEqualTo(ProblemType.TOO_MANY_KEYS);
        assertThat(protocol.admission().admit(op("k1", "{}", limited))).isInstanceOf(Admission.Replay.class);
    }

    @Test
    void aRecountThatMeetsContentionLeavesTheLimitsAnswer() {
        // MariaDB: the recount of a caller's records deadlocks against that caller's concurrent claims; the
        // limit that was met is still the answer (429), not "store unavailable" (503).
        dev.idempotency.spi.RecordStore contended = (dev.idempotency.spi.RecordStore) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[]{dev.idempotency.spi.RecordStore.class}, (proxy, method, args) -> {
                    if (method.getName().equals("reconcile")) {
                        throw new dev.idempotency.spi.StoreUnavailableException("deadlock", null, true);
                    }
                    try {
                        return method.invoke(db.store, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        IdempotencyProtocol protocol = new IdempotencyProtocol(contended, db.transactions, clock, new SecureRandom(),
                events::add, 1);
        PolicyBuilder limited = PolicyBuilder.defaults().with(p -> p.maxKeys = 1);
        assertThat(protocol.admission().admit(op("k1", "{}", limited))).isInstanceOf(Admission.Execute.class);
        IdempotencyException refused = rejected(protocol, op("k2", "{}", limited));
        assertThat(refused.problem().type()).isEqualTo(ProblemType.TOO_MANY_KEYS);
        assertThat(refused.problem().retryAfterSeconds()).isPresent();
    }

    @Test
    void anOutcomeResolverCanCompleteATakenOverOperationWithoutRunningIt() {
        PolicyBuilder sideEffects = PolicyBuilder.defaults().with(p -> p.externalSideEffects = true);
        execute(op("k1", "{}", sideEffects));
        clock.advance(Duration.ofSeconds(31));
        AtomicReference<ResolutionRequest> asked = new AtomicReference<>();
        OutcomeResolver done = resolver(request -> {
            asked.set(request);
            return new Resolution.Done(response(201), Optional.of("p-1"));
        });
        Admission admission = protocol.admission().admit(op("k1", "{}", sideEffects, "alice", done));
        assertThat(admission).isInstanceOf(Admission.Replay.class);
        assertThat(((Admission.Replay) admission).record().status()).isEqualTo(RecordStatus.SUCCEEDED);
        assertThat(asked.get().derive().apply("acquirer.charge"))
                .isEqualTo(op("k1", "{}", sideEffects).derive("acquirer.charge"));
    }

    @Test
    void anOutcomeResolverThatSaysNotDoneLetsItRunAndUnknownIs503() {
        PolicyBuilder sideEffects = PolicyBuilder.defaults().with(p -> p.externalSideEffects = true);
        execute(op("k1", "{}", sideEffects));
        clock.advance(Duration.ofSeconds(31));
        IdempotencyException unknown = rejected(op("k1", "{}", sideEffects, "alice", resolver(r -> new Resolution.Unknown("acquirer down"))));
        assertThat(unknown.problem().status()).isEqualTo(503);
        assertThat(unknown.problem().retryAfterSeconds()).isPresent();
        Admission notDone = protocol.admission().admit(op("k1", "{}", sideEffects, "alice", resolver(r -> new Resolution.NotDone())));
        assertThat(notDone).isInstanceOf(Admission.Execute.class);
        assertThat(((Admission.Execute) notDone).claim().attempt()).isEqualTo(3);
    }

    @Test
    void anUnknownCommitIsSettledByTheFencedUpdate() {
        Claim notCommitted = execute(op("k1", "{}", PolicyBuilder.defaults()));
        assertThat(protocol.recovery().settleUnknownCommit(notCommitted)).isEmpty();
        assertThat(record(notCommitted).status()).isEqualTo(RecordStatus.FAILED_RETRYABLE);

        Claim committed = execute(op("k2", "{}", PolicyBuilder.defaults()));
        finishAlone(committed, RecordStatus.SUCCEEDED, 201);
        assertThat(protocol.recovery().settleUnknownCommit(committed)).hasValueSatisfying(r -> assertThat(r.status()).isEqualTo(RecordStatus.SUCCEEDED));
    }

    @Test
    void purgeRemovesExpiredFinishedRecordsOnly() {
        PolicyBuilder shortLived = PolicyBuilder.defaults().with(p -> p.retention = Duration.ofMinutes(1));
        for (int i = 0; i < 5; i++) {
            finishAlone(execute(op("k" + i, "{}", shortLived)), RecordStatus.SUCCEEDED, 201);
        }
        execute(op("running", "{}", shortLived));
        clock.advance(Duration.ofMinutes(2));
        assertThat(protocol.recovery().purgeExpired(2, 100)).isEqualTo(5);
        assertThat(db.rows("")).isEqualTo(1);
        assertThat(events).anyMatch(e -> e instanceof IdempotencyEvent.Purged p && p.count() == 5);
    }

    @Test
    void anUnreachableStoreIs503WithRetryAfter() {
        dev.idempotency.testing.TestDatabase down = dev.idempotency.testing.TestDatabase.unreachable();
        IdempotencyProtocol offline = new IdempotencyProtocol(
                new dev.idempotency.jdbc.JdbcRecordStore(down.dataSource(), dev.idempotency.jdbc.Dialect.POSTGRESQL, "t"),
                db.transactions, clock, new SecureRandom(), events::add, 1);
        assertThatThrownBy(() -> offline.admission().admit(op("k1", "{}", PolicyBuilder.defaults())))
                .isInstanceOf(IdempotencyException.class)
                .satisfies(e -> assertThat(((IdempotencyException) e).problem().status()).isEqualTo(503))
                .satisfies(e -> assertThat(((IdempotencyException) e).problem().retryAfterSeconds()).isPresent());
    }

    @Test
    void aClaimWhoseCommitAnswerWasLostIsGivenBackSoTheRetryRunsAtOnce() {
        IdempotencyProtocol losing = new IdempotencyProtocol(db.store, losingTheFirstCommitAnswer(true), clock,
                new SecureRandom(), events::add, 1);
        Operation op = op("k-lost", "{}", claimFirst());
        IdempotencyException refused = rejected(losing, op);
        assertThat(refused.problem().status()).isEqualTo(503);
        assertThat(refused.problem().retryAfterSeconds()).isPresent();
        IdempotencyRecord given = db.transactions.requiresNew(() -> db.store.find(op.scopeKey())).orElseThrow();
        assertThat(given.status()).as("the committed claim, released by the fenced update").isEqualTo(RecordStatus.FAILED_RETRYABLE);
        Admission retry = losing.admission().admit(op);
        assertThat(retry).isInstanceOf(Admission.Execute.class);
        assertThat(((Admission.Execute) retry).claim().attempt()).isEqualTo(2);
    }

    @Test
    void givingBackTriesTwiceWhenTheFirstTryMeetsTheBrokenConnection() {
        // First the claim's COMMIT answer is lost; then the give-back's first transaction gets the very
        // connection that lost it (the pool hands it out once more) and fails; the second try settles it.
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        TransactionBoundary flaky = new TransactionBoundary() {
            @Override
            public <T> T requiresNew(java.util.function.Supplier<T> work) {
                int call = calls.incrementAndGet();
                if (call == 2) {
                    throw new dev.idempotency.spi.StoreUnavailableException("the broken pooled connection", null, false);
                }
                T result = db.transactions.requiresNew(work);
                if (call == 1) {
                    throw new CommitOutcomeUnknownException("the answer to COMMIT was lost", null);
                }
                return result;
            }
        };
        IdempotencyProtocol protocol = new IdempotencyProtocol(db.store, flaky, clock, new SecureRandom(), events::add, 1);
        Operation op = op("k-given-back", "{}", claimFirst());
        assertThat(rejected(protocol, op).problem().status()).isEqualTo(503);
        assertThat(db.transactions.requiresNew(() -> db.store.find(op.scopeKey())).orElseThrow().status())
                .as("given back on the second try").isEqualTo(RecordStatus.FAILED_RETRYABLE);
    }

    // Seen on a Galera cluster through WildFly (scenario 18b): the give-back after a lost lease was refused at COMMIT
    // because another node's takeover certified first, and the contention escaped as a 500.
    @Test
    void aGiveBackWhoseCommitLosesToAnotherTransactionIsNotAnErrorAndLeavesTheRecordAlone() {
        Claim claim = execute(op("k-give-back-lost", "{}", claimFirst()));
        TransactionBoundary losing = new TransactionBoundary() {
            @Override
            public <T> T requiresNew(java.util.function.Supplier<T> work) {
                throw new dev.idempotency.spi.StoreUnavailableException("IDEM-S009 rolled back at commit", null, true);
            }
        };
        IdempotencyProtocol protocol = new IdempotencyProtocol(db.store, losing, clock, new SecureRandom(), events::add, 1);
        assertThat(protocol.completion().release(claim)).as("not given back: the record is another's now").isFalse();
        assertThat(db.transactions.requiresNew(() -> db.store.find(claim.operation().scopeKey())).orElseThrow().status())
                .isEqualTo(RecordStatus.PROCESSING);
        // Unavailable is still unavailable: the caller answers 503.
        IdempotencyProtocol down = new IdempotencyProtocol(db.store, new TransactionBoundary() {
            @Override
            public <T> T requiresNew(java.util.function.Supplier<T> work) {
                throw new dev.idempotency.spi.StoreUnavailableException("IDEM-S007 down", null, false);
            }
        }, clock, new SecureRandom(), events::add, 1);
        assertThatThrownBy(() -> down.completion().release(claim)).isInstanceOf(dev.idempotency.spi.StoreUnavailableException.class);
    }

    @Test
    void aClaimWhoseCommitDidNotHappenLeavesNothingAndTheRetryClaimsAfresh() {
        IdempotencyProtocol losing = new IdempotencyProtocol(db.store, losingTheFirstCommitAnswer(false), clock,
                new SecureRandom(), events::add, 1);
        Operation op = op("k-not-committed", "{}", claimFirst());
        assertThat(rejected(losing, op).problem().status()).isEqualTo(503);
        assertThat(db.transactions.requiresNew(() -> db.store.find(op.scopeKey()))).isEmpty();
        assertThat(((Admission.Execute) losing.admission().admit(op)).claim().attempt()).isEqualTo(1);
    }

    /** No per-caller limits: the claim's insert is the protocol's first transaction. */
    private static PolicyBuilder claimFirst() {
        return PolicyBuilder.defaults().with(p -> {
            p.maxInFlight = 0;
            p.maxKeys = 0;
        });
    }

    /**
     * The protocol's first transaction ends as if the connection dropped during COMMIT: its work committed
     * (or, with {@code committed} false, rolled back), and the caller is told the outcome is unknown.
     */
    private TransactionBoundary losingTheFirstCommitAnswer(boolean committed) {
        java.util.concurrent.atomic.AtomicBoolean first = new java.util.concurrent.atomic.AtomicBoolean(true);
        return new TransactionBoundary() {
            @Override
            public <T> T requiresNew(java.util.function.Supplier<T> work) {
                if (!first.getAndSet(false)) {
                    return db.transactions.requiresNew(work);
                }
                if (committed) {
                    db.transactions.requiresNew(work);
                } else {
                    try {
                        db.transactions.requiresNew(() -> {
                            work.get();
                            throw new IllegalStateException("rolled back");
                        });
                    } catch (IllegalStateException rolledBack) {
                        // nothing of it stays
                    }
                }
                throw new CommitOutcomeUnknownException("the answer to COMMIT was lost", null);
            }
        };
    }

    private static IdempotencyException rejected(IdempotencyProtocol protocol, Operation op) {
        try {
            Admission admission = protocol.admission().admit(op);
            throw new AssertionError("expected a rejection, got " + admission);
        } catch (IdempotencyException e) {
            return e;
        }
    }

    private Claim execute(Operation op) {
        Admission admission = protocol.admission().admit(op);
        assertThat(admission).isInstanceOf(Admission.Execute.class);
        return ((Admission.Execute) admission).claim();
    }

    private IdempotencyException rejected(Operation op) {
        try {
            Admission admission = protocol.admission().admit(op);
            throw new AssertionError("expected a rejection, got " + admission);
        } catch (IdempotencyException e) {
            return e;
        }
    }

    private void finishAlone(Claim claim, RecordStatus status, int httpStatus) {
        assertThat(protocol.completion().finishAlone(claim, status, Optional.of(response(httpStatus)))).isTrue();
    }

    private IdempotencyRecord record(Claim claim) {
        return db.transactions.requiresNew(() -> db.store.find(claim.operation().scopeKey())).orElseThrow();
    }

    private static StoredResponse response(int status) {
        return new StoredResponse(status, Map.of("Content-Type", List.of("application/json")),
                "{\"id\":\"p-1\"}".getBytes(StandardCharsets.UTF_8), StoredResponse.PLAIN);
    }

    private Operation op(String key, String body, PolicyBuilder policy) {
        return op(key, body, policy, "alice");
    }

    private Operation op(String key, String body, PolicyBuilder policy, String principal) {
        return op(key, body, policy, principal, null);
    }

    private Operation op(String key, String body, PolicyBuilder policy, String principal, OutcomeResolver resolver) {
        EndpointPolicy built = policy.build();
        RequestFacts facts = new RequestFacts("POST", "/api/payments", "application/json", "", "acme/" + principal,
                body.getBytes(StandardCharsets.UTF_8));
        return Operation.of(StoreFixture.SCOPE_DIGEST, new Scope("acme", principal, built.endpoint(), key),
                fingerprinter.fingerprint(facts, Set.of(), Map.of()), built, Optional.ofNullable(resolver));
    }

    private static OutcomeResolver resolver(java.util.function.Function<ResolutionRequest, Resolution> answer) {
        return new OutcomeResolver() {
            @Override
            public boolean handles(String endpoint) {
                return true;
            }

            @Override
            public Resolution resolve(ResolutionRequest request) {
                return answer.apply(request);
            }
        };
    }
}
