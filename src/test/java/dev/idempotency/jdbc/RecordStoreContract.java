package dev.idempotency.jdbc;

import dev.idempotency.RecordStatus;
import dev.idempotency.testing.PolicyBuilder;
import dev.idempotency.core.Operation;
import dev.idempotency.core.IdempotencyProtocol;
import dev.idempotency.core.Claim;
import dev.idempotency.core.Admission;
import dev.idempotency.ProblemType;
import dev.idempotency.IdempotencyException;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.DuplicateRecordException;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.QuotaCharge;
import dev.idempotency.spi.QuotaExceededException;
import dev.idempotency.spi.StoreUnavailableException;
import dev.idempotency.spi.StoredResponse;
import dev.idempotency.testing.Databases;
import dev.idempotency.testing.StoreFixture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What every database must do for the JDBC store; run against H2 and the machine's PostgreSQL and MariaDB. */
abstract class RecordStoreContract {
    private static final Instant NOW = Instant.parse("2026-12-03T10:15:30.123456Z");
    StoreFixture db;

    abstract String database();

    @BeforeEach
    void freshTable() {
        db = new StoreFixture(Databases.named(database()), "idem_store_test");
    }

    @Test
    void insertThenFindRoundTripsEveryColumn() {
        IdempotencyRecord record = processing("k1", "token-1", NOW);
        tx(() -> db.store.insert(record));
        assertThat(tx(() -> db.store.find(scope("k1")))).contains(record);
        assertThat(tx(() -> db.store.find(scope("absent")))).isEmpty();
    }

    @Test
    void aSecondInsertOfTheSameScopeKeyIsADuplicate() {
        tx(() -> db.store.insert(processing("k1", "token-1", NOW)));
        assertThatThrownBy(() -> tx(() -> db.store.insert(processing("k1", "token-2", NOW))))
                .isInstanceOf(DuplicateRecordException.class);
        assertThat(tx(() -> db.store.find(scope("k1"))).orElseThrow().ownerToken()).isEqualTo(token("token-1"));
    }

    @Test
    void finishIsFencedByOwnerTokenAndProcessingState() {
        tx(() -> db.store.insert(processing("k1", "token-1", NOW)));
        StoredResponse response = new StoredResponse(201, headers(), "{\"id\":\"p-1\"}".getBytes(StandardCharsets.UTF_8),
                StoredResponse.PLAIN);
        Completion done = new Completion(RecordStatus.SUCCEEDED, Optional.of("p-1"), Optional.of(response), NOW.plusSeconds(1),
                NOW.plus(Duration.ofDays(1)));
        assertThat(tx(() -> db.store.finish(scope("k1"), token("intruder"), done))).isFalse();
        assertThat(tx(() -> db.store.finish(scope("k1"), token("token-1"), done))).isTrue();
        assertThat(tx(() -> db.store.finish(scope("k1"), token("token-1"), done))).as("only from PROCESSING").isFalse();
        IdempotencyRecord stored = tx(() -> db.store.find(scope("k1"))).orElseThrow();
        assertThat(stored.status()).isEqualTo(RecordStatus.SUCCEEDED);
        assertThat(stored.response()).contains(response);
        assertThat(stored.resourceId()).contains("p-1");
        assertThat(stored.leaseUntil()).isEmpty();
        assertThat(stored.expiresAt()).isEqualTo(NOW.plus(Duration.ofDays(1)).truncatedTo(ChronoUnit.MICROS));
    }

    @Test
    void takeOverIsACompareAndSetOnTokenAndStatus() {
        tx(() -> db.store.insert(processing("k1", "token-1", NOW)));
        IdempotencyRecord next = new IdempotencyRecord(scope("k1"), "acme", "alice", "payments", "v1:other",
                RecordStatus.PROCESSING, Optional.empty(), Optional.empty(), token("token-2"),
                Optional.of(NOW.plusSeconds(60)), 2, NOW, NOW.plusSeconds(30), NOW.plus(Duration.ofDays(1)));
        assertThat(tx(() -> db.store.takeOver(scope("k1"), token("token-x"), RecordStatus.PROCESSING, next))).isFalse();
        assertThat(tx(() -> db.store.takeOver(scope("k1"), token("token-1"), RecordStatus.FAILED_RETRYABLE, next))).isFalse();
        assertThat(tx(() -> db.store.takeOver(scope("k1"), token("token-1"), RecordStatus.PROCESSING, next))).isTrue();
        assertThat(tx(() -> db.store.takeOver(scope("k1"), token("token-1"), RecordStatus.PROCESSING, next)))
                .as("the old owner's token no longer matches").isFalse();
        IdempotencyRecord now = tx(() -> db.store.find(scope("k1"))).orElseThrow();
        assertThat(now.ownerToken()).isEqualTo(token("token-2"));
        assertThat(now.attempts()).isEqualTo(2);
        assertThat(now.requestHash()).isEqualTo("v1:other");
        Completion late = new Completion(RecordStatus.SUCCEEDED, Optional.empty(), Optional.empty(), NOW, NOW.plusSeconds(9));
        assertThat(tx(() -> db.store.finish(scope("k1"), token("token-1"), late))).as("fenced old owner").isFalse();
    }

    @Test
    void aLeaseIsRenewedOnlyByItsOwnerWhileItRunsAndHasNotRunOut() {
        tx(() -> db.store.insert(processing("l1", "t1", NOW)));
        java.time.Instant later = NOW.plusSeconds(60);
        assertThat(tx(() -> db.store.renewLease(scope("l1"), token("intruder"), NOW, later, later))).isFalse();
        assertThat(tx(() -> db.store.renewLease(scope("l1"), token("t1"), NOW.plusSeconds(30), later, later)))
                .as("ran out (NOW + 30 s): a retry may be taking it over").isFalse();
        assertThat(tx(() -> db.store.renewLease(scope("l1"), token("t1"), NOW.plusSeconds(20), later,
                later.plus(Duration.ofDays(1))))).isTrue();
        IdempotencyRecord renewed = tx(() -> db.store.find(scope("l1"))).orElseThrow();
        assertThat(renewed.leaseUntil()).contains(later.truncatedTo(ChronoUnit.MICROS));
        assertThat(renewed.expiresAt()).as("the expiry follows the lease, so that the settler meets it again")
                .isEqualTo(later.plus(Duration.ofDays(1)).truncatedTo(ChronoUnit.MICROS));
        assertThat(tx(() -> db.store.finish(scope("l1"), token("t1"), new Completion(RecordStatus.SUCCEEDED,
                Optional.empty(), Optional.empty(), NOW, NOW.plus(Duration.ofDays(1)))))).isTrue();
        assertThat(tx(() -> db.store.renewLease(scope("l1"), token("t1"), NOW, later.plusSeconds(60), later)))
                .as("finished").isFalse();
    }

    @Test
    void processingRecordsArePagedByExpiryThenKeyWithinTheWindow() {
        Instant at = NOW;
        tx(() -> db.store.insert(processing("p1", "t1", at)));
        tx(() -> db.store.insert(processing("p2", "t2", at)));
        tx(() -> db.store.insert(processing("p3", "t3", at.plusSeconds(1))));
        tx(() -> db.store.insert(processing("p4", "t4", at.plusSeconds(5))));
        tx(() -> db.store.insert(processing("f1", "t5", at)));
        assertThat(tx(() -> db.store.finish(scope("f1"), token("t5"), new Completion(RecordStatus.SUCCEEDED,
                Optional.empty(), Optional.empty(), at, at)))).isTrue();
        Instant from = at.plus(Duration.ofDays(1));
        Instant before = from.plusSeconds(5);

        List<IdempotencyRecord> first = tx(() -> db.store.findProcessing(from, "", before, 2));
        assertThat(first).extracting(IdempotencyRecord::scopeKey).containsExactly(scope("p1"), scope("p2"));
        IdempotencyRecord last = first.get(1);
        assertThat(tx(() -> db.store.findProcessing(last.expiresAt(), last.scopeKey(), before, 2)))
                .as("the next page, up to the window's end (exclusive); never the finished record")
                .extracting(IdempotencyRecord::scopeKey).containsExactly(scope("p3"));
        assertThat(tx(() -> db.store.findProcessing(from.plusNanos(1000), "", before.plusSeconds(1), 10)))
                .extracting(IdempotencyRecord::scopeKey).containsExactly(scope("p3"), scope("p4"));
    }

    @Test
    void anAdministratorsListShowsTheStuckFirstThenTheOldestOfOneEndpoint() {
        // Oldest first: a finished record (t0), a live claim (t0 + 10 s), a claim whose lease ran out (t0 + 20 s).
        tx(() -> db.store.insert(processing("done", "t1", NOW)));
        assertThat(tx(() -> db.store.finish(scope("done"), token("t1"), new Completion(RecordStatus.SUCCEEDED,
                Optional.empty(), Optional.empty(), NOW, NOW.plus(Duration.ofDays(1)))))).isTrue();
        tx(() -> db.store.insert(withLease(processing("live", "t2", NOW.plusSeconds(10)), NOW.plusSeconds(600))));
        tx(() -> db.store.insert(processing("stuck", "t3", NOW.plusSeconds(20))));
        tx(() -> db.store.insert(new IdempotencyRecord(scope("other"), "acme", "alice", "exports", "v1:" + "ab".repeat(32),
                RecordStatus.PROCESSING, Optional.empty(), Optional.empty(), token("t4"), Optional.of(NOW), 1, NOW, NOW,
                NOW.plus(Duration.ofDays(1)))));
        Instant now = NOW.plusSeconds(120);
        java.util.Set<RecordStatus> all = java.util.EnumSet.allOf(RecordStatus.class);

        assertThat(tx(() -> db.store.list("payments", all, now, now, 10))).extracting(IdempotencyRecord::scopeKey)
                .containsExactly(scope("stuck"), scope("done"), scope("live"));
        assertThat(tx(() -> db.store.list("payments", java.util.EnumSet.of(RecordStatus.PROCESSING), now, now, 10)))
                .extracting(IdempotencyRecord::scopeKey).containsExactly(scope("stuck"), scope("live"));
        assertThat(tx(() -> db.store.list("payments", all, NOW.plusSeconds(10), now, 10)))
                .as("created at or before").extracting(IdempotencyRecord::scopeKey)
                .containsExactly(scope("done"), scope("live"));
        assertThat(tx(() -> db.store.list("payments", all, now, now, 1))).extracting(IdempotencyRecord::scopeKey)
                .containsExactly(scope("stuck"));
    }

    @Test
    void chargesAreScopedToTheCallerRefusedAtTheLimitAndGivenBackByTheFinish() {
        QuotaCharge twoInFlight = new QuotaCharge(true, 2, true, 0);
        tx(() -> db.store.insert(processing("a1", "t1", NOW), twoInFlight));
        tx(() -> db.store.insert(processing("a2", "t2", NOW), twoInFlight));
        assertThatThrownBy(() -> tx(() -> db.store.insert(processing("a3", "t3", NOW), twoInFlight)))
                .isInstanceOfSatisfying(QuotaExceededException.class,
                        e -> assertThat(e.limit()).isEqualTo(QuotaExceededException.Limit.IN_FLIGHT));
        assertThat(tx(() -> db.store.find(scope("a3")))).as("nothing of a refused claim stays").isEmpty();
        tx(() -> db.store.insert(processingOf("bob", "b1", "tb"), twoInFlight));
        assertThat(tx(() -> db.store.finish(scope("a1"), token("t1"), new Completion(RecordStatus.SUCCEEDED,
                Optional.empty(), Optional.empty(), NOW, NOW.plus(Duration.ofDays(1)))))).isTrue();
        tx(() -> db.store.insert(processing("a3", "t3", NOW), twoInFlight));
        assertThat(db.rows("principal = 'alice'")).isEqualTo(3);

        QuotaCharge threeKeys = new QuotaCharge(true, 0, true, 3);
        assertThatThrownBy(() -> tx(() -> db.store.insert(processing("a4", "t4", NOW), threeKeys)))
                .isInstanceOfSatisfying(QuotaExceededException.class,
                        e -> assertThat(e.limit()).isEqualTo(QuotaExceededException.Limit.KEYS));
        tx(() -> db.store.insert(processingOf("bob", "b2", "tb2"), threeKeys));
    }

    // The finish gives its in-flight unit back in the business transaction, which may run on for a while after
    // it: the row it locks must not be one that the caller's next claim charges (that claim would wait for
    // the business commit: one caller's requests ran one at a time, 400/s against 976/s spread over callers).
    @Test
    void aFinishWhoseTransactionHasNotCommittedHoldsUpNoClaimOfItsCaller() throws Exception {
        QuotaCharge limited = new QuotaCharge(true, 5, true, 0);
        tx(() -> db.store.insert(processing("f1", "t1", NOW), limited));
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            whileFinishIsOpen("f1", "t1", () -> {
                Future<?> claim = pool.submit(() -> tx(() -> db.store.insert(processing("f2", "t2", NOW), limited)));
                // Without waiting on the open business transaction, the claim is done in well under a second;
                // with it, never before that transaction ends (it waits for this to return: 30 s at most).
                claim.get(20, java.util.concurrent.TimeUnit.SECONDS);
            });
        } finally {
            pool.shutdownNow();
        }
        assertThat(tx(() -> db.store.find(scope("f2"))).orElseThrow().status()).isEqualTo(RecordStatus.PROCESSING);
    }

    // Exactness with the give-back in another row: one that has not committed (or rolled back) is not counted.
    @Test
    void aGiveBackCountsOnlyOnceItsTransactionCommits() throws Exception {
        QuotaCharge oneInFlight = new QuotaCharge(true, 1, true, 0);
        tx(() -> db.store.insert(processing("g1", "t1", NOW), oneInFlight));
        assertThatThrownBy(() -> db.transactions.requiresNew(() -> {
            assertThat(db.store.finish(scope("g1"), token("t1"), succeeded())).isTrue();
            throw new IllegalStateException("the business transaction rolls back");
        })).hasMessageContaining("rolls back");
        assertThatThrownBy(() -> tx(() -> db.store.insert(processing("g2", "t2", NOW), oneInFlight)))
                .as("g1 is still running: its give-back rolled back with it").isInstanceOf(QuotaExceededException.class);
        whileFinishIsOpen("g1", "t1", () -> assertThatThrownBy(() ->
                tx(() -> db.store.insert(processing("g2", "t2", NOW), oneInFlight)))
                .as("g1's finish has not committed").isInstanceOf(QuotaExceededException.class));
        tx(() -> db.store.insert(processing("g2", "t2", NOW), oneInFlight));
        assertThatThrownBy(() -> tx(() -> db.store.insert(processing("g3", "t3", NOW), oneInFlight)))
                .isInstanceOf(QuotaExceededException.class);
    }

    @FunctionalInterface
    interface Check {
        void run() throws Exception;
    }

    // Finishes a record in a business transaction on another thread and runs the check while that transaction
    // is still open (it commits when the check is done); the finish must have succeeded.
    private void whileFinishIsOpen(String key, String owner, Check check) throws Exception {
        CountDownLatch finished = new CountDownLatch(1);
        CountDownLatch checked = new CountDownLatch(1);
        ExecutorService business = Executors.newSingleThreadExecutor();
        try {
            Future<Boolean> done = business.submit(() -> tx(() -> {
                boolean ok = db.store.finish(scope(key), token(owner), succeeded());
                finished.countDown();
                awaitQuietly(checked);
                return ok;
            }));
            finished.await();
            check.run();
            checked.countDown();
            assertThat(done.get()).isTrue();
        } finally {
            checked.countDown();
            business.shutdownNow();
        }
    }

    private static Completion succeeded() {
        return new Completion(RecordStatus.SUCCEEDED, Optional.empty(), Optional.empty(), NOW, NOW.plus(Duration.ofDays(1)));
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(30, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void reconcilingAtALimitReleasesRunOutLeasesAndDeletesExpiredRecordsOnceASecond() {
        QuotaCharge twoInFlight = new QuotaCharge(true, 2, true, 0);
        tx(() -> db.store.insert(withLease(processing("s1", "t1", NOW), NOW.minusSeconds(1)), twoInFlight));
        tx(() -> db.store.insert(processing("live", "t2", NOW), twoInFlight));
        assertThatThrownBy(() -> tx(() -> db.store.insert(processing("s3", "t3", NOW), twoInFlight)))
                .isInstanceOf(QuotaExceededException.class);
        assertThat(tx(() -> db.store.reconcile(QuotaExceededException.Limit.IN_FLIGHT, "acme", "alice", "payments", NOW)))
                .isTrue();
        assertThat(tx(() -> db.store.find(scope("s1"))).orElseThrow().status()).isEqualTo(RecordStatus.FAILED_RETRYABLE);
        assertThat(tx(() -> db.store.find(scope("live"))).orElseThrow().status()).isEqualTo(RecordStatus.PROCESSING);
        Completion late = new Completion(RecordStatus.SUCCEEDED, Optional.empty(), Optional.empty(), NOW, NOW.plusSeconds(9));
        assertThat(tx(() -> db.store.finish(scope("s1"), token("t1"), late))).as("its executor is fenced").isFalse();
        tx(() -> db.store.insert(processing("s3", "t3", NOW), twoInFlight));

        Instant later = NOW.plus(Duration.ofDays(2));
        QuotaCharge threeKeys = new QuotaCharge(true, 0, true, 3);
        assertThatThrownBy(() -> tx(() -> db.store.insert(processing("s4", "t4", later), threeKeys)))
                .isInstanceOf(QuotaExceededException.class);
        assertThat(tx(() -> db.store.reconcile(QuotaExceededException.Limit.KEYS, "acme", "alice", "payments", later)))
                .as("s1 (released, expired) is deleted; PROCESSING records stay").isTrue();
        assertThat(tx(() -> db.store.find(scope("s1")))).isEmpty();
        assertThat(tx(() -> db.store.find(scope("live")))).isPresent();
        tx(() -> db.store.insert(processing("s4", "t4", later), threeKeys));
        assertThatThrownBy(() -> tx(() -> db.store.insert(processing("s5", "t5", later), threeKeys)))
                .isInstanceOf(QuotaExceededException.class);
        assertThat(tx(() -> db.store.reconcile(QuotaExceededException.Limit.KEYS, "acme", "alice", "payments", later)))
                .as("checked a moment ago: no second scan").isFalse();
    }

    @Test
    void purgeGivesTheDeletedRecordsBackToTheirCallersCount() {
        QuotaCharge twoKeys = new QuotaCharge(true, 0, true, 2);
        for (String key : List.of("p1", "p2")) {
            tx(() -> db.store.insert(processing(key, "t" + key, NOW), twoKeys));
            tx(() -> db.store.finish(scope(key), token("t" + key), new Completion(RecordStatus.SUCCEEDED,
                    Optional.empty(), Optional.empty(), NOW, NOW.plus(Duration.ofDays(1)))));
        }
        Instant later = NOW.plus(Duration.ofDays(2));
        assertThatThrownBy(() -> tx(() -> db.store.insert(processing("p3", "tp3", later), twoKeys)))
                .isInstanceOf(QuotaExceededException.class);
        assertThat(tx(() -> db.store.purgeExpired(later, 10))).isEqualTo(2);
        tx(() -> db.store.insert(processing("p3", "tp3", later), twoKeys));
        tx(() -> db.store.insert(processing("p4", "tp4", later), twoKeys));
    }

    @Test
    void purgeDeletesOnlyExpiredFinishedRecordsInBatches() {
        Instant later = NOW.plus(Duration.ofDays(2));
        for (int i = 0; i < 7; i++) {
            int n = i;
            tx(() -> db.store.insert(processing("done" + n, "t" + n, NOW)));
            tx(() -> db.store.finish(scope("done" + n), token("t" + n), new Completion(RecordStatus.SUCCEEDED,
                    Optional.empty(), Optional.empty(), NOW, NOW.plus(Duration.ofDays(1)))));
        }
        tx(() -> db.store.insert(processing("running", "tr", NOW.minus(Duration.ofDays(3)))));
        tx(() -> db.store.insert(processing("fresh", "tf", later)));
        tx(() -> db.store.finish(scope("fresh"), token("tf"), new Completion(RecordStatus.SUCCEEDED, Optional.empty(),
                Optional.empty(), later, later.plus(Duration.ofDays(1)))));
        assertThat(tx(() -> db.store.purgeExpired(later, 3))).isEqualTo(3);
        assertThat(tx(() -> db.store.purgeExpired(later, 3))).isEqualTo(3);
        assertThat(tx(() -> db.store.purgeExpired(later, 3))).isEqualTo(1);
        assertThat(tx(() -> db.store.purgeExpired(later, 3))).isZero();
        assertThat(tx(() -> db.store.find(scope("running")))).as("PROCESSING is never purged").isPresent();
        assertThat(tx(() -> db.store.find(scope("fresh")))).as("unexpired is kept").isPresent();
    }

    @Test
    void concurrentClaimsOfOneOperationUnderTheKeysOfTwoSecretsLetAtMostOneWin() throws Exception {
        // During a rolling rotation of the secret one operation has two keys, which no unique index compares:
        // each claim names the other as an alias. Pairs of claims start together, round after round.
        int rounds = 40;
        ExecutorService pool = Executors.newFixedThreadPool(2);
        int bothWon = 0;
        int noneWon = 0;
        try {
            for (int round = 0; round < rounds; round++) {
                String oldKey = "old-" + round;
                String newKey = "new-" + round;
                java.util.concurrent.CyclicBarrier together = new java.util.concurrent.CyclicBarrier(2);
                Future<Boolean> oldSide = pool.submit(() -> claimUnderAlias(together, oldKey, newKey));
                Future<Boolean> newSide = pool.submit(() -> claimUnderAlias(together, newKey, oldKey));
                boolean a = oldSide.get();
                boolean b = newSide.get();
                bothWon += a && b ? 1 : 0;
                noneWon += !a && !b ? 1 : 0;
                int records = (tx(() -> db.store.find(scope(oldKey))).isPresent() ? 1 : 0)
                        + (tx(() -> db.store.find(scope(newKey))).isPresent() ? 1 : 0);
                assertThat(records).as("round %d", round).isEqualTo((a ? 1 : 0) + (b ? 1 : 0));
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(bothWon).as("rounds in which both keys were claimed").isZero();
        // Both may lose only to a deadlock both sides report as contention; the protocol then re-reads and retries.
        assertThat(noneWon).as("rounds that nobody won").isLessThan(rounds);
    }

    private boolean claimUnderAlias(java.util.concurrent.CyclicBarrier together, String key, String alias)
            throws Exception {
        together.await();
        try {
            tx(() -> db.store.insert(processing(key, key, NOW), QuotaCharge.UNLIMITED, List.of(scope(alias))));
            return true;
        } catch (DuplicateRecordException lost) {
            return false;
        } catch (StoreUnavailableException contention) {
            assertThat(contention.isContention()).as(contention.getMessage()).isTrue();
            return false;
        }
    }

    @Test
    void concurrentClaimsOfOneKeyLetExactlyOneWin() throws Exception {
        int threads = 16;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger won = new AtomicInteger();
        List<Future<?>> all = new ArrayList<>();
        try {
            for (int i = 0; i < threads; i++) {
                int n = i;
                all.add(pool.submit(() -> {
                    start.await();
                    try {
                        tx(() -> db.store.insert(processing("race", "t" + n, NOW)));
                        won.incrementAndGet();
                    } catch (DuplicateRecordException lost) {
                        // expected for all but one
                    } catch (StoreUnavailableException contention) {
                        assertThat(contention.isContention()).as(contention.getMessage()).isTrue();
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : all) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(won.get()).isEqualTo(1);
        assertThat(db.rows("")).isEqualTo(1);
    }

    @Test
    void concurrentRequestsThroughTheProtocolExecuteOnceAndOthersGetAStableAnswer() throws Exception {
        dev.idempotency.core.IdempotencyProtocol protocol = db.protocol();
        dev.idempotency.core.Operation op = StoreFixture.operation("race-key");
        int threads = 64;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger executed = new AtomicInteger();
        List<Future<Integer>> answers = new ArrayList<>();
        try {
            for (int i = 0; i < threads; i++) {
                answers.add(pool.submit(() -> {
                    start.await();
                    try {
                        if (protocol.admission().admit(op) instanceof dev.idempotency.core.Admission.Execute) {
                            executed.incrementAndGet();
                            return 0;
                        }
                        return -1;
                    } catch (dev.idempotency.IdempotencyException e) {
                        return e.problem().status();
                    }
                }));
            }
            start.countDown();
            for (Future<Integer> answer : answers) {
                assertThat(answer.get()).isIn(0, 409, 503);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(executed.get()).isEqualTo(1);
        assertThat(db.rows("")).isEqualTo(1);
    }

    // ClaimMode.IN_TRANSACTION: the claim's INSERT is in the business transaction; a duplicate's INSERT waits on it.
    private static dev.idempotency.core.EndpointPolicy inTransaction(int waitSeconds) {
        return PolicyBuilder.defaults().with(p -> {
            p.claimInTransaction = true;
            p.inFlightWait = Duration.ofSeconds(waitSeconds);
        }).build();
    }

    private static final StoredResponse FIRST = new StoredResponse(201, Map.of("Location", List.of("/payments/1")),
            "{\"id\":1}".getBytes(StandardCharsets.UTF_8), StoredResponse.PLAIN);

    /** A request's claim in a business transaction of its own, begun here, on the calling thread. */
    private dev.idempotency.jta.JtaTransactions.BusinessTransaction begin() {
        dev.idempotency.jta.JtaTransactions.BusinessTransaction tx = db.transactions.joinOrBegin();
        assertThat(tx.owned()).isTrue();
        return tx;
    }

    @Test
    void aDuplicateOfAClaimInTheBusinessTransactionWaitsBoundedThenReplaysWhatCommitted() throws Exception {
        IdempotencyProtocol protocol = db.protocol();
        Operation op = StoreFixture.operation("in-tx", inTransaction(1));
        ExecutorService first = Executors.newSingleThreadExecutor();
        CountDownLatch claimed = new CountDownLatch(1);
        CountDownLatch commit = new CountDownLatch(1);
        try {
            Future<Boolean> firstRun = first.submit(() -> {
                var tx = begin();
                Claim claim = ((Admission.Execute) protocol.admission().admit(op)).claim();
                assertThat(claim.inTransaction()).isTrue();
                boolean finished = protocol.completion().finish(claim, RecordStatus.SUCCEEDED, Optional.of(FIRST), Optional.of("1"));
                claimed.countDown();
                awaitQuietly(commit);
                tx.commit();
                protocol.admission().claimEnded(claim);
                return finished;
            });
            claimed.await();
            assertThat(db.rows("")).as("nothing is visible before the business commit").isZero();
            // The duplicate's INSERT waits on the first's uncommitted row, then its wait (1 s) runs out: in flight.
            var tx = begin();
            assertThatThrownBy(() -> protocol.admission().admit(op)).isInstanceOfSatisfying(IdempotencyException.class,
                    e -> assertThat(e.problem().type()).isEqualTo(ProblemType.REQUEST_IN_FLIGHT));
            tx.abandonQuietly();
            commit.countDown();
            assertThat(firstRun.get()).isTrue();
        } finally {
            commit.countDown();
            first.shutdownNow();
        }
        // Once it committed, the one commit made the record SUCCEEDED; the next retry replays it.
        var tx = begin();
        Admission replay = protocol.admission().admit(op);
        tx.commit();
        assertThat(replay).isInstanceOfSatisfying(Admission.Replay.class,
                r -> assertThat(r.record().response().orElseThrow().body()).isEqualTo(FIRST.body()));
        assertThat(db.rows("status = 'SUCCEEDED'")).isEqualTo(1);
    }

    @Test
    void aDuplicateWaitingOnAClaimInTheBusinessTransactionReplaysOnceItCommitsOrRunsOnceItRollsBack() throws Exception {
        for (boolean commits : new boolean[] {true, false}) {
            CountingDataSource watched = new CountingDataSource(db.database.dataSource());
            IdempotencyProtocol protocol = new IdempotencyProtocol(JdbcRecordStore.forDataSource(watched, db.table),
                    db.transactions, java.time.Clock.systemUTC(), new java.security.SecureRandom(), e -> { }, 4);
            Operation op = StoreFixture.operation("wait-" + commits, inTransaction(20));
            CountDownLatch duplicateClaims = new CountDownLatch(1);
            CountDownLatch firstClaimed = new CountDownLatch(1);
            CountDownLatch firstEnds = new CountDownLatch(1);
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                Future<?> first = pool.submit(() -> {
                    var tx = begin();
                    Claim claim = ((Admission.Execute) protocol.admission().admit(op)).claim();
                    assertThat(protocol.completion().finish(claim, RecordStatus.SUCCEEDED, Optional.of(FIRST), Optional.empty()))
                            .isTrue();
                    firstClaimed.countDown();
                    awaitQuietly(firstEnds);
                    if (commits) {
                        tx.commit();
                    } else {
                        tx.abandon();
                    }
                    protocol.admission().claimEnded(claim);
                    return null;
                });
                assertThat(firstClaimed.await(20, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
                watched.beforePrepare = sql -> {
                    if (sql.startsWith("INSERT INTO " + db.table + " ") || sql.startsWith("WITH claimed")) {
                        duplicateClaims.countDown();
                    }
                };
                Future<Admission> duplicate = pool.submit(() -> {
                    var tx = begin();
                    Admission admitted = protocol.admission().admit(op);
                    if (admitted instanceof Admission.Execute run) {
                        protocol.completion().finish(run.claim(), RecordStatus.SUCCEEDED, Optional.of(FIRST), Optional.empty());
                    }
                    tx.commit();
                    return admitted;
                });
                assertThat(duplicateClaims.await(20, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
                // The first ends now, whatever the duplicate has reached (waiting on the row, or about to).
                firstEnds.countDown();
                first.get(30, java.util.concurrent.TimeUnit.SECONDS);
                Admission second = duplicate.get(30, java.util.concurrent.TimeUnit.SECONDS);
                assertThat(second).as(commits ? "the first committed: replayed" : "the first rolled back: it runs")
                        .isInstanceOf(commits ? Admission.Replay.class : Admission.Execute.class);
                assertThat(db.rows("scope_key = ? AND status = 'SUCCEEDED'", op.scopeKey())).isEqualTo(1);
            } finally {
                firstEnds.countDown();
                pool.shutdownNow();
            }
        }
    }

    @Test
    void sixtyFourConcurrentRequestsClaimingInTheBusinessTransactionOnTwoNodesExecuteOnce() throws Exception {
        IdempotencyProtocol[] nodes = {db.protocol(), db.protocol()};
        Operation op = StoreFixture.operation("race-in-tx", inTransaction(5));
        int threads = 64;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger executed = new AtomicInteger();
        Map<String, Integer> answers = new java.util.concurrent.ConcurrentHashMap<>();
        List<Future<?>> all = new ArrayList<>();
        try {
            for (int i = 0; i < threads; i++) {
                IdempotencyProtocol node = nodes[i % 2];
                all.add(pool.submit(() -> {
                    start.await();
                    var tx = db.transactions.joinOrBegin();
                    try {
                        Admission admitted = node.admission().admit(op);
                        if (admitted instanceof Admission.Execute run) {
                            executed.incrementAndGet();
                            assertThat(node.completion().finish(run.claim(), RecordStatus.SUCCEEDED, Optional.of(FIRST),
                                    Optional.empty())).isTrue();
                            tx.commit();
                            node.admission().claimEnded(run.claim());
                        } else {
                            tx.commit();
                        }
                        answers.merge(admitted.getClass().getSimpleName(), 1, Integer::sum);
                    } catch (IdempotencyException e) {
                        tx.abandonQuietly();
                        answers.merge(e.problem().type().name(), 1, Integer::sum);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : all) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        System.out.println(database() + ": 64 concurrent requests of one key, claimed in the business transaction on two"
                + " nodes: " + answers);
        assertThat(executed.get()).isEqualTo(1);
        assertThat(answers.keySet()).isSubsetOf("Execute", "Replay", ProblemType.REQUEST_IN_FLIGHT.name());
        assertThat(db.rows("")).isEqualTo(1);
        assertThat(db.rows("status = 'SUCCEEDED'")).isEqualTo(1);
    }

    @Test
    void theKeyOfAClaimInTheBusinessTransactionIsChargedByItsFinishAndRefusedThereAtTheLimit() {
        IdempotencyProtocol protocol = db.protocol();
        dev.idempotency.core.EndpointPolicy oneKey = PolicyBuilder.defaults().with(p -> {
            p.claimInTransaction = true;
            p.maxKeys = 1;
        }).build();
        for (String key : List.of("limited-1", "limited-2")) {
            var tx = begin();
            Claim claim = ((Admission.Execute) protocol.admission().admit(StoreFixture.operation(key, oneKey))).claim();
            if (key.endsWith("1")) {
                assertThat(protocol.completion().finish(claim, RecordStatus.SUCCEEDED, Optional.of(FIRST), Optional.empty())).isTrue();
                tx.commit();
            } else {
                assertThatThrownBy(() -> protocol.completion().finish(claim, RecordStatus.SUCCEEDED, Optional.of(FIRST),
                        Optional.empty())).isInstanceOfSatisfying(IdempotencyException.class,
                        e -> assertThat(e.problem().type()).isEqualTo(ProblemType.TOO_MANY_KEYS));
                tx.abandon();
            }
            protocol.admission().claimEnded(claim);
        }
        assertThat(db.rows("")).isEqualTo(1);
        assertThat(db.database.count("SELECT COUNT(*) FROM " + db.table + "_quota WHERE endpoint = '' AND used > 0"))
                .as("no in-flight unit is taken by a claim in the business transaction").isZero();
    }

    @Test
    void sixtyFourConcurrentNewOperationsOfOneCallerNeverPassTheInFlightLimit() throws Exception {
        assertRaceOfOneCallerStaysWithin(PolicyBuilder.defaults().with(p -> p.maxInFlight = 5),
                ProblemType.TOO_MANY_IN_FLIGHT, "status = 'PROCESSING'");
    }

    @Test
    void sixtyFourConcurrentNewOperationsOfOneCallerNeverPassTheKeyLimit() throws Exception {
        assertRaceOfOneCallerStaysWithin(PolicyBuilder.defaults().with(p -> {
            p.maxInFlight = 0;
            p.maxKeys = 5;
        }), ProblemType.TOO_MANY_KEYS, "endpoint = 'payments.create'");
    }

    // 64 threads of alice, each with a key of its own, released at once: exactly 5 claims, the other 59 refused by
    // the limit (429), never a sixth record. The caller's counter row orders them: its creation is an INSERT that
    // the burst queues on (RecordSql.ensureQuota), then each claim's increment waits for the one before; none
    // fails for contention (no 503), so none of the 5 places is left unused.
    private void assertRaceOfOneCallerStaysWithin(PolicyBuilder policy, ProblemType refusal, String counted)
            throws Exception {
        Race race = raceOfOneCaller(db.protocol(), 64, policy.build(), "race-");
        System.out.println(database() + ": 64 concurrent new operations of one caller, limit 5: " + race.executed()
                + " executed, refused " + race.answers() + " " + race.details());
        assertThat(race.answers().keySet()).as(race.details().toString()).containsOnly(refusal.name());
        assertThat(race.executed()).as("exactly the limit").isEqualTo(5);
        assertThat(db.rows("principal = 'alice' AND " + counted)).isEqualTo(race.executed());
        assertThat(race.answers().get(refusal.name()))
                .as("refused by the limit, of " + race.answers() + " " + race.details()).isEqualTo(64 - 5);
    }

    @Test
    void aBurstOfANewCallersFirstOperationsThatAllMissItsCounterRowAdmitsSomeAndLimitsTheRest() throws Exception {
        // Every transaction of the burst reaches the creation of the caller's counter row before any has created
        // it. Had each first looked for the row with an UPDATE, on MariaDB each would hold a gap lock that the
        // others' INSERTs wait for: one deadlock among all, again on every retry while others keep arriving.
        int threads = 32;
        CountingDataSource held = new CountingDataSource(db.database.dataSource());
        CountDownLatch allMissed = new CountDownLatch(threads);
        held.beforePrepare = sql -> {
            if (sql.startsWith("INSERT INTO " + db.table + "_quota")) {
                allMissed.countDown();
                try {
                    allMissed.await(10, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        IdempotencyProtocol protocol = new IdempotencyProtocol(JdbcRecordStore.forDataSource(held, db.table),
                db.transactions, java.time.Clock.systemUTC(), new java.security.SecureRandom(), e -> { }, 4);
        long deadlocksBefore = innodbDeadlocks();
        Race race = raceOfOneCaller(protocol, threads, PolicyBuilder.defaults().with(p -> p.maxInFlight = 5).build(),
                "burst-");
        // The burst queues on the new row instead of deadlocking (RecordSql.ensureQuota); 0 where not MariaDB.
        assertThat(innodbDeadlocks() - deadlocksBefore).as("InnoDB deadlocks during the burst").isZero();
        System.out.println(database() + ": 32 first operations of a caller that all missed its counter row, limit 5: "
                + race.executed() + " executed, refused " + race.answers());
        assertThat(race.executed()).isEqualTo(5);
        assertThat(race.answers().keySet()).as("refusals: " + race.details())
                .containsOnly(ProblemType.TOO_MANY_IN_FLIGHT.name());
    }

    // MariaDB's count of deadlocks since it started (the unit tests run one class at a time); 0 elsewhere.
    private long innodbDeadlocks() throws java.sql.SQLException {
        if (!"mariadb".equals(database())) {
            return 0;
        }
        try (java.sql.Connection c = db.database.raw(); java.sql.Statement st = c.createStatement();
             java.sql.ResultSet rs = st.executeQuery("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'")) {
            rs.next();
            return rs.getLong(2);
        }
    }

    /** What a race of one caller's new operations gave: claims, refusals by problem type, a cause of each type. */
    private record Race(int executed, Map<String, Integer> answers, Map<String, String> details) {
    }

    // alice's operations with keys prefix0..prefixN, admitted by that many threads released at once.
    private static Race raceOfOneCaller(IdempotencyProtocol protocol, int threads,
                                        dev.idempotency.core.EndpointPolicy policy, String prefix) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger executed = new AtomicInteger();
        Map<String, Integer> answers = new java.util.concurrent.ConcurrentHashMap<>();
        Map<String, String> details = new java.util.concurrent.ConcurrentHashMap<>();
        List<Future<?>> all = new ArrayList<>();
        try {
            for (int i = 0; i < threads; i++) {
                Operation op = StoreFixture.operation(prefix + i, policy);
                all.add(pool.submit(() -> {
                    start.await();
                    try {
                        assertThat(protocol.admission().admit(op)).isInstanceOf(Admission.Execute.class);
                        executed.incrementAndGet();
                    } catch (IdempotencyException refused) {
                        String type = refused.problem().type().name();
                        answers.merge(type, 1, Integer::sum);
                        details.putIfAbsent(type, refused.problem().detail() + " <- "
                                + java.util.stream.Stream.iterate(refused.getCause(), java.util.Objects::nonNull,
                                        Throwable::getCause).map(String::valueOf)
                                .collect(java.util.stream.Collectors.joining(" <- ")));
                        assertThat(refused.problem().retryAfterSeconds()).isPresent();
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : all) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        return new Race(executed.get(), Map.copyOf(answers), Map.copyOf(details));
    }

    @Test
    void aReplayCostsOneSelectAndNoTransaction() {
        CountingDataSource counting = new CountingDataSource(db.database.dataSource());
        JdbcRecordStore store = JdbcRecordStore.forDataSource(counting, db.table);
        java.util.concurrent.atomic.AtomicInteger transactions = new java.util.concurrent.atomic.AtomicInteger();
        dev.idempotency.core.TransactionBoundary countingTransactions = new dev.idempotency.core.TransactionBoundary() {
            @Override
            public <T> T requiresNew(java.util.function.Supplier<T> work) {
                transactions.incrementAndGet();
                return db.transactions.requiresNew(work);
            }

            @Override
            public <T> T withoutTransaction(java.util.function.Supplier<T> read) {
                return db.transactions.withoutTransaction(read);
            }
        };
        IdempotencyProtocol protocol = new IdempotencyProtocol(store, countingTransactions, java.time.Clock.systemUTC(),
                new java.security.SecureRandom(), e -> { }, 1);
        Operation op = StoreFixture.operation("replayed");
        Claim claim = ((Admission.Execute) protocol.admission().admit(op)).claim();
        assertThat(protocol.completion().finishAlone(claim, RecordStatus.SUCCEEDED, Optional.of(new StoredResponse(201, headers(),
                "{}".getBytes(StandardCharsets.UTF_8), StoredResponse.PLAIN)))).isTrue();
        counting.statements.clear();
        transactions.set(0);

        assertThat(protocol.admission().admit(op)).isInstanceOf(Admission.Replay.class);
        assertThat(counting.statements).as("one read by primary key").hasSize(1);
        assertThat(counting.statements.get(0)).startsWith("SELECT").contains("WHERE scope_key = ?");
        assertThat(transactions).as("no transaction of its own").hasValue(0);
    }

    @Test
    void aLostClaimRaceIsAnsweredWithoutAFailedStatement() {
        tx(() -> db.store.insert(processing("k1", "token-1", NOW)));
        // Inside one transaction: on PostgreSQL a failed statement would abort it, and the read after would fail.
        Optional<IdempotencyRecord> afterwards = tx(() -> {
            try {
                db.store.insert(processing("k1", "token-2", NOW));
                throw new AssertionError("a duplicate was inserted");
            } catch (DuplicateRecordException expected) {
                return db.store.find(scope("k1"));
            }
        });
        assertThat(afterwards.orElseThrow().ownerToken()).isEqualTo(token("token-1"));
    }

    @Test
    void theDatabaseClockCorrectsALocalClockThatRunsAhead() {
        java.time.Clock ahead = java.time.Clock.offset(java.time.Clock.systemUTC(), Duration.ofSeconds(60));
        DatabaseClock clock = db.store.databaseClock(ahead, Duration.ofMinutes(1));
        Duration error = Duration.between(Instant.now(), clock.instant()).abs();
        assertThat(error).as("database time, not the local clock's").isLessThan(Duration.ofSeconds(2));
        assertThat(clock.offset()).isBetween(Duration.ofSeconds(-62), Duration.ofSeconds(-58));
    }

    @Test
    void aMissingTableIsASetupErrorNamingTheScript() {
        JdbcRecordStore wrong = new JdbcRecordStore(db.database.dataSource(), db.store.dialect(), "no_such_table");
        assertThatThrownBy(() -> tx(() -> wrong.find(scope("k1")))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("IDEM-S008").hasMessageContaining(db.store.dialect().scripts());
    }

    @Test
    void schemaCreationCanRunAgain() {
        tx(() -> db.store.insert(processing("k1", "t1", NOW)));
        db.store.schema().migrate();
        assertThat(db.rows("")).isEqualTo(1);
    }

    static String scope(String name) {
        return String.format("%64s", name).replace(' ', '0');
    }

    static String token(String name) {
        return String.format("%32s", name).replace(' ', 'f');
    }

    static Map<String, List<String>> headers() {
        Map<String, List<String>> h = new LinkedHashMap<>();
        h.put("Content-Type", List.of("application/json"));
        h.put("Location", List.of("http://127.0.0.1/demo/api/payments/p-1"));
        return h;
    }

    static IdempotencyRecord processing(String key, String owner, Instant at) {
        return new IdempotencyRecord(scope(key), "acme", "alice", "payments", "v1:" + "ab".repeat(32),
                RecordStatus.PROCESSING, Optional.empty(), Optional.empty(), token(owner), Optional.of(at.plusSeconds(30)),
                1, at, at, at.plus(Duration.ofDays(1)));
    }

    private static IdempotencyRecord processingOf(String principal, String key, String owner) {
        return new IdempotencyRecord(scope(key), "acme", principal, "payments", "v1:" + "ab".repeat(32),
                RecordStatus.PROCESSING, Optional.empty(), Optional.empty(), token(owner), Optional.of(NOW.plusSeconds(30)),
                1, NOW, NOW, NOW.plus(Duration.ofDays(1)));
    }

    private static IdempotencyRecord withLease(IdempotencyRecord r, Instant lease) {
        return new IdempotencyRecord(r.scopeKey(), r.tenant(), r.principal(), r.endpoint(), r.requestHash(), r.status(),
                r.resourceId(), r.response(), r.ownerToken(), Optional.of(lease), r.attempts(), r.createdAt(),
                r.updatedAt(), r.expiresAt());
    }

    void tx(Runnable work) {
        db.transactions.requiresNew(() -> {
            work.run();
            return null;
        });
    }

    <T> T tx(java.util.function.Supplier<T> work) {
        return db.transactions.requiresNew(work);
    }
}
