package dev.idempotency.redis;

import dev.idempotency.RecordStatus;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.OutcomeCache;
import dev.idempotency.spi.StoredResponse;
import dev.idempotency.testing.OwnRedis;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/** The Jedis cache against the machine's Redis (6379), and against a Redis of its own for the faults. */
class RedisOutcomeCacheTest {
    private static final Duration TIMEOUT = Duration.ofMillis(50);
    // Generous beside the 50 ms timeout: a bound that shows the call never hangs, not a speed measurement.
    private static final Duration NEVER_HANGS = Duration.ofSeconds(5);

    private static RedisOutcomeCache cache(String url, Duration openFor) {
        return cache(url, openFor, Clock.systemUTC());
    }

    private static RedisOutcomeCache cache(String url, Duration openFor, Clock clock) {
        return cache(url, openFor, clock, command -> { });
    }

    private static RedisOutcomeCache cache(String url, Duration openFor, Clock clock,
                                           java.util.function.Consumer<String> failed) {
        RedisAddress address = RedisAddress.parse(url);
        return new RedisOutcomeCache(() -> RedisOutcomeCache.client(address, TIMEOUT), address.toString(), clock, openFor,
                failed);
    }

    private static IdempotencyRecord finished(String scopeKey, Instant expiresAt) {
        Instant now = Instant.now().truncatedTo(ChronoUnit.MICROS);
        StoredResponse response = new StoredResponse(201, Map.of("Location", List.of("/payments/7"),
                "Content-Type", List.of("application/json")), "{\"id\":7,\"amount\":\"1.00\"}".getBytes(StandardCharsets.UTF_8),
                StoredResponse.PLAIN);
        return new IdempotencyRecord(scopeKey, "acme", "alice", "payments.create", "v1:abc:rules", RecordStatus.SUCCEEDED,
                Optional.of("7"), Optional.of(response), "0123456789abcdef0123456789abcdef", Optional.empty(), 2, now,
                now, expiresAt.truncatedTo(ChronoUnit.MICROS));
    }

    private static String scopeKey() {
        return "test-" + UUID.randomUUID();
    }

    @Test
    void aFinishedRecordRoundTripsEveryColumnAndLivesNoLongerThanItsExpiry() throws Exception {
        try (RedisOutcomeCache cache = cache("redis://127.0.0.1:6379", RedisOutcomeCache.OPEN_FOR)) {
            String key = scopeKey();
            IdempotencyRecord record = finished(key, Instant.now().plusSeconds(60));
            cache.put(record);
            IdempotencyRecord read = cache.get(key).orElseThrow();
            assertThat(read).usingRecursiveComparison().ignoringFields("response").isEqualTo(record);
            assertThat(read.response().orElseThrow().body()).isEqualTo(record.response().orElseThrow().body());
            assertThat(read.response().orElseThrow().headers()).isEqualTo(record.response().orElseThrow().headers());
            long ttlMillis = cache.ttlMillis(key);
            assertThat(ttlMillis).as("PXAT the record's expiry").isPositive().isLessThanOrEqualTo(60_000);

            String expired = scopeKey();
            cache.put(finished(expired, Instant.now().minusSeconds(1)));
            assertThat(cache.get(expired)).as("an expired record is not written").isEmpty();
            assertThat(cache.get(scopeKey())).isEmpty();
        }
    }

    @Test
    void anEntryThatDoesNotReadIsAbsent() throws Exception {
        try (OwnRedis redis = OwnRedis.start(); RedisOutcomeCache cache = cache(redis.url(), RedisOutcomeCache.OPEN_FOR)) {
            assertThat(redis.answers("SET idempotency:garbled not-a-record")).startsWith("+OK");
            assertThat(cache.get("garbled")).isEmpty();
        }
    }

    @Test
    void aRedisThatRefusesIsAbsentAndSkippedAfterThreeFailuresInARow() {
        List<String> failed = new java.util.concurrent.CopyOnWriteArrayList<>();
        assertTimeoutPreemptively(NEVER_HANGS, () -> {
            int closedPort;
            try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
                closedPort = s.getLocalPort();
            }
            try (RedisOutcomeCache cache = cache("redis://127.0.0.1:" + closedPort, Duration.ofMinutes(1),
                    Clock.systemUTC(), failed::add)) {
                for (int i = 0; i < RedisOutcomeCache.FAILURES_TO_OPEN; i++) {
                    assertThat(cache.skipping()).isFalse();
                    assertThat(cache.get(scopeKey())).isEmpty();
                }
                assertThat(cache.skipping()).as("skipped after three failures in a row").isTrue();
                cache.put(finished(scopeKey(), Instant.now().plusSeconds(60)));
                cache.get(scopeKey());
            }
        });
        assertThat(failed).as("each failed command is reported; skipped ones are not sent, so not failures")
                .containsExactly("get", "get", "get");
    }

    @Test
    void aWriteThatFailsIsReportedAsSuch() throws Exception {
        List<String> failed = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (OwnRedis redis = OwnRedis.start(); RedisOutcomeCache cache = cache(redis.url(), Duration.ofMinutes(1),
                Clock.systemUTC(), failed::add)) {
            String key = scopeKey();
            cache.put(finished(key, Instant.now().plusSeconds(60)));
            assertThat(failed).isEmpty();
            redis.kill();
            assertTimeoutPreemptively(NEVER_HANGS, () -> cache.put(finished(key, Instant.now().plusSeconds(60))));
            assertThat(failed).containsExactly("set");
        }
    }

    // kill -STOP: connections are accepted and nothing answers. Each call ends at the timeout; then Redis is skipped
    // until the breaker's period has passed (moved on the cache's clock), and answers again once resumed.
    @Test
    void aStoppedRedisAnswersAbsentAfterTheTimeoutAndComesBackWhenItDoes() throws Exception {
        dev.idempotency.testing.MutableClock clock = new dev.idempotency.testing.MutableClock();
        try (OwnRedis redis = OwnRedis.start(); RedisOutcomeCache cache = cache(redis.url(), Duration.ofMinutes(1), clock)) {
            String key = scopeKey();
            cache.put(finished(key, Instant.now().plusSeconds(600)));
            assertThat(cache.get(key)).isPresent();
            redis.pause();
            assertTimeoutPreemptively(NEVER_HANGS, () -> {
                for (int i = 0; i < RedisOutcomeCache.FAILURES_TO_OPEN; i++) {
                    assertThat(cache.get(key)).isEmpty();
                }
            });
            assertThat(cache.skipping()).isTrue();
            redis.resume();
            assertThat(cache.get(key)).as("skipped for the breaker's period").isEmpty();
            clock.advance(Duration.ofMinutes(2));
            assertThat(cache.skipping()).isFalse();
            assertThat(firstAnswer(cache, key)).as("read again once resumed").isPresent();
        }
    }

    @Test
    void aRedisKilledFlushedOrRestartedEmptyIsAbsentNeverWrong() throws Exception {
        try (OwnRedis redis = OwnRedis.start(); RedisOutcomeCache cache = cache(redis.url(), Duration.ofMillis(200))) {
            String key = scopeKey();
            IdempotencyRecord record = finished(key, Instant.now().plusSeconds(60));
            cache.put(record);
            redis.flushAll();
            assertThat(cache.get(key)).as("flushed").isEmpty();
            cache.put(record);
            redis.kill();
            assertTimeoutPreemptively(NEVER_HANGS, () -> assertThat(cache.get(key)).as("killed").isEmpty());
            redis.boot();
            // Restarted empty: absent, then written and read again, once the pool has dropped its dead connection.
            assertThat(firstAnswer(cache, key)).as("restarted empty: absent until written again").isEmpty();
            cache.put(record);
            assertThat(cache.get(key)).isPresent();
        }
    }

    // redis-sentinel://: the client finds the master from the Sentinel; when the master dies, the Sentinel promotes
    // the replica, where the cache then writes. Meanwhile every read is absent or right, never another outcome.
    @Test
    void aSentinelAddressFindsTheReplicaTheSentinelPromotedAfterAFailover() throws Exception {
        try (OwnRedis master = OwnRedis.start(); OwnRedis replica = OwnRedis.replicaOf(master);
             OwnRedis sentinel = OwnRedis.sentinel(master, "idem");
             RedisOutcomeCache cache = cache("redis-sentinel://127.0.0.1:" + sentinel.port() + "#idem",
                     Duration.ofMillis(200))) {
            String before = scopeKey();
            IdempotencyRecord written = finished(before, Instant.now().plusSeconds(60));
            cache.put(written);
            assertThat(cache.get(before)).isPresent();
            master.kill();
            sentinel.awaitLog("+switch-master idem");
            cache.get(before).ifPresent(r -> assertThat(r.ownerToken()).isEqualTo(written.ownerToken()));
            // The running client learns of the switch from the Sentinel's channel, on its own thread; a client made now
            // asks the Sentinel for the master.
            try (RedisOutcomeCache fresh = cache("redis-sentinel://127.0.0.1:" + sentinel.port() + "#idem",
                    Duration.ofMillis(200))) {
                String after = scopeKey();
                fresh.put(finished(after, Instant.now().plusSeconds(60)));
                assertThat(fresh.get(after)).as("written to the promoted replica (the master is dead)").isPresent();
            }
        }
    }

    // redis-cluster://: a real cluster of three masters, the entries spread over them by slot. A master killed: every
    // read is absent or the entry that was written under its key, never another, and none waits past the timeout.
    @Test
    void aClusterAddressSpreadsEntriesOverItsMastersAndAKilledMasterIsAbsentNeverWrong() throws Exception {
        try (OwnRedis a = OwnRedis.clusterNode(); OwnRedis b = OwnRedis.clusterNode(); OwnRedis c = OwnRedis.clusterNode()) {
            OwnRedis.joinCluster(List.of(a, b, c));
            try (RedisOutcomeCache cache = cache("redis-cluster://127.0.0.1:" + a.port() + ",127.0.0.1:" + b.port(),
                    Duration.ofMinutes(1))) {
                List<String> keys = new java.util.ArrayList<>();
                for (int i = 0; i < 30; i++) {
                    String key = scopeKey();
                    cache.put(finished(key, Instant.now().plusSeconds(60)));
                    keys.add(key);
                }
                for (String key : keys) {
                    assertThat(cache.get(key)).as(key).hasValueSatisfying(r -> assertThat(r.scopeKey()).isEqualTo(key));
                }
                assertThat(List.of(a, b, c)).as("each master holds the entries of its slots")
                        .allSatisfy(master -> assertThat(master.size()).isPositive());
                assertThat(a.size() + b.size() + c.size()).isEqualTo(keys.size());
                c.kill();
                assertTimeoutPreemptively(NEVER_HANGS, () -> {
                    for (String key : keys) {
                        cache.get(key).ifPresent(r -> assertThat(r.scopeKey()).isEqualTo(key));
                    }
                });
            }
        }
    }

    // What the cache answers once a call reaches Redis: a failed call drops a dead pooled connection (one, when a test
    // calls from one thread), so one more call is enough; the breaker does not open in between (fewer than three).
    private static Optional<IdempotencyRecord> firstAnswer(RedisOutcomeCache cache, String key) {
        Optional<IdempotencyRecord> answer = cache.get(key);
        return answer.isPresent() ? answer : cache.get(key);
    }

    @Test
    void theNoCacheAnswersAbsent() {
        OutcomeCache.NONE.put(finished("k", Instant.now().plusSeconds(5)));
        assertThat(OutcomeCache.NONE.get("k")).isEmpty();
    }
}
