package dev.idempotency.jdbc;

import dev.idempotency.RecordStatus;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.DuplicateRecordException;
import dev.idempotency.spi.IdempotencyRecord;
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
    private StoreFixture db;

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
    void countsAreScopedToThePrincipalAndCapped() {
        for (int i = 0; i < 5; i++) {
            int n = i;
            tx(() -> db.store.insert(processing("live" + n, "t" + n, NOW)));
        }
        IdempotencyRecord expiredLease = withLease(processing("stale", "ts", NOW), NOW.minusSeconds(1));
        tx(() -> db.store.insert(expiredLease));
        IdempotencyRecord other = new IdempotencyRecord(scope("bob1"), "acme", "bob", "payments", "v1:x",
                RecordStatus.PROCESSING, Optional.empty(), Optional.empty(), token("tb"), Optional.of(NOW.plusSeconds(30)),
                1, NOW, NOW, NOW.plus(Duration.ofDays(1)));
        tx(() -> db.store.insert(other));
        assertThat(tx(() -> db.store.countInFlight("acme", "alice", NOW, 100))).isEqualTo(5);
        assertThat(tx(() -> db.store.countInFlight("acme", "alice", NOW, 3))).isEqualTo(3);
        assertThat(tx(() -> db.store.countInFlight("globex", "alice", NOW, 100))).isZero();
        assertThat(tx(() -> db.store.countRetained("acme", "alice", "payments", NOW, 100))).isEqualTo(6);
        assertThat(tx(() -> db.store.countRetained("acme", "alice", "refunds", NOW, 100))).isZero();
        assertThat(tx(() -> db.store.countRetained("acme", "alice", "payments", NOW.plus(Duration.ofDays(2)), 100))).isZero();
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
                        if (protocol.admit(op) instanceof dev.idempotency.core.Admission.Execute) {
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
                .hasMessageContaining("IDEM-S008").hasMessageContaining(db.store.dialect().script());
    }

    @Test
    void schemaCreationCanRunAgain() {
        tx(() -> db.store.insert(processing("k1", "t1", NOW)));
        tx(() -> {
            db.store.createSchema();
            return null;
        });
        assertThat(db.rows("")).isEqualTo(1);
    }

    static String scope(String name) {
        return String.format("%64s", name).replace(' ', '0');
    }

    static String token(String name) {
        return String.format("%32s", name).replace(' ', 'f');
    }

    private static Map<String, List<String>> headers() {
        Map<String, List<String>> h = new LinkedHashMap<>();
        h.put("Content-Type", List.of("application/json"));
        h.put("Location", List.of("http://127.0.0.1/demo/api/payments/p-1"));
        return h;
    }

    private static IdempotencyRecord processing(String key, String owner, Instant at) {
        return new IdempotencyRecord(scope(key), "acme", "alice", "payments", "v1:" + "ab".repeat(32),
                RecordStatus.PROCESSING, Optional.empty(), Optional.empty(), token(owner), Optional.of(at.plusSeconds(30)),
                1, at, at, at.plus(Duration.ofDays(1)));
    }

    private static IdempotencyRecord withLease(IdempotencyRecord r, Instant lease) {
        return new IdempotencyRecord(r.scopeKey(), r.tenant(), r.principal(), r.endpoint(), r.requestHash(), r.status(),
                r.resourceId(), r.response(), r.ownerToken(), Optional.of(lease), r.attempts(), r.createdAt(),
                r.updatedAt(), r.expiresAt());
    }

    private void tx(Runnable work) {
        db.transactions.requiresNew(() -> {
            work.run();
            return null;
        });
    }

    private <T> T tx(java.util.function.Supplier<T> work) {
        return db.transactions.requiresNew(work);
    }
}
