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
        RedisAddress address = RedisAddress.parse(url);
        return new RedisOutcomeCache(() -> RedisOutcomeCache.client(address, TIMEOUT), address.toString(),
                Clock.systemUTC(), openFor);
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
        assertTimeoutPreemptively(NEVER_HANGS, () -> {
            int closedPort;
            try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
                closedPort = s.getLocalPort();
            }
            try (RedisOutcomeCache cache = cache("redis://127.0.0.1:" + closedPort, Duration.ofMinutes(1))) {
                for (int i = 0; i < RedisOutcomeCache.FAILURES_TO_OPEN; i++) {
                    assertThat(cache.skipping()).isFalse();
                    assertThat(cache.get(scopeKey())).isEmpty();
                }
                assertThat(cache.skipping()).as("skipped after three failures in a row").isTrue();
                cache.put(finished(scopeKey(), Instant.now().plusSeconds(60)));
            }
        });
    }

    // kill -STOP: connections are accepted and nothing answers. Each call ends at the timeout; then Redis is skipped.
    @Test
    void aStoppedRedisAnswersAbsentAfterTheTimeoutAndComesBackWhenItDoes() throws Exception {
        try (OwnRedis redis = OwnRedis.start(); RedisOutcomeCache cache = cache(redis.url(), Duration.ofMillis(200))) {
            String key = scopeKey();
            cache.put(finished(key, Instant.now().plusSeconds(60)));
            assertThat(cache.get(key)).isPresent();
            redis.pause();
            assertTimeoutPreemptively(NEVER_HANGS, () -> {
                for (int i = 0; i < RedisOutcomeCache.FAILURES_TO_OPEN; i++) {
                    assertThat(cache.get(key)).isEmpty();
                }
            });
            assertThat(cache.skipping()).isTrue();
            redis.resume();
            awaitAnswer(cache, key);
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
            // Restarted empty: absent (after the pool drops its dead connections), then written and read again.
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (System.nanoTime() < deadline) {
                assertThat(cache.get(key)).as("restarted empty: absent until written again").isEmpty();
                cache.put(record);
                if (cache.get(key).isPresent()) {
                    return;
                }
                Thread.sleep(50);
            }
            throw new AssertionError("the cache never used the restarted Redis");
        }
    }

    // redis-sentinel://: the client finds the master from the Sentinel; when the master dies, the Sentinel promotes
    // the replica and the client follows it. Meanwhile every read is absent or right, never another outcome.
    @Test
    void aSentinelAddressFollowsAFailoverToThePromotedReplica() throws Exception {
        try (OwnRedis master = OwnRedis.start(); OwnRedis replica = OwnRedis.replicaOf(master);
             OwnRedis sentinel = OwnRedis.sentinel(master, "idem");
             RedisOutcomeCache cache = cache("redis-sentinel://127.0.0.1:" + sentinel.port() + "#idem",
                     Duration.ofMillis(200))) {
            String before = scopeKey();
            IdempotencyRecord written = finished(before, Instant.now().plusSeconds(60));
            cache.put(written);
            assertThat(cache.get(before)).isPresent();
            master.kill();
            String after = scopeKey();
            IdempotencyRecord next = finished(after, Instant.now().plusSeconds(60));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (System.nanoTime() < deadline) {
                cache.get(before).ifPresent(r -> assertThat(r.ownerToken()).isEqualTo(written.ownerToken()));
                cache.put(next);
                if (cache.get(after).isPresent()) {
                    // The master is dead: the replica, promoted, took the write.
                    return;
                }
                Thread.sleep(100);
            }
            throw new AssertionError("the client never wrote to the promoted replica");
        }
    }

    private static void awaitAnswer(RedisOutcomeCache cache, String key) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < deadline) {
            if (cache.get(key).isPresent()) {
                assertThat(cache.skipping()).isFalse();
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("the cache never read Redis again after it resumed");
    }

    @Test
    void theNoCacheAnswersAbsent() {
        OutcomeCache.NONE.put(finished("k", Instant.now().plusSeconds(5)));
        assertThat(OutcomeCache.NONE.get("k")).isEmpty();
    }
}
