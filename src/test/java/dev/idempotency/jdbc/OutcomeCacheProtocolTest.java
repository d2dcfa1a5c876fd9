package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyException;
import dev.idempotency.ProblemType;
import dev.idempotency.RecordStatus;
import dev.idempotency.core.Admission;
import dev.idempotency.core.Claim;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.core.IdempotencyProtocol;
import dev.idempotency.core.Operation;
import dev.idempotency.core.ProtocolEvents;
import dev.idempotency.redis.RedisAddress;
import dev.idempotency.redis.RedisOutcomeCache;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.OutcomeCache;
import dev.idempotency.spi.StoredResponse;
import dev.idempotency.testing.Databases;
import dev.idempotency.testing.MutableClock;
import dev.idempotency.testing.PolicyBuilder;
import dev.idempotency.testing.StoreFixture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The protocol with finished outcomes in the machine's Redis (6379) and records in H2: Redis only ever replaces the
 * read of a record to replay, is written after the commit, and is judged like the database's record.
 */
class OutcomeCacheProtocolTest {
    private static final EndpointPolicy CACHED = PolicyBuilder.defaults().with(p -> p.cacheOutcomes = true).build();
    private static final StoredResponse FIRST = new StoredResponse(201, Map.of("Location", List.of("/payments/1")),
            "{\"id\":1}".getBytes(StandardCharsets.UTF_8), StoredResponse.PLAIN);

    private StoreFixture db;
    private CountingDataSource counted;
    private OutcomeCache redis;
    private IdempotencyProtocol protocol;
    private final List<ProtocolEvents.CacheRead> cacheReads = new java.util.concurrent.CopyOnWriteArrayList<>();

    @BeforeEach
    void start() {
        db = new StoreFixture(Databases.named("h2"), "idem_cache_test");
        counted = new CountingDataSource(db.database.dataSource());
        redis = RedisOutcomeCache.connect(RedisAddress.parse("redis://127.0.0.1:6379"), Duration.ofMillis(50),
                Clock.systemUTC(), command -> { });
        protocol = protocol(redis, Clock.systemUTC());
    }

    private IdempotencyProtocol protocol(OutcomeCache cache, Clock clock) {
        return new IdempotencyProtocol(JdbcRecordStore.forDataSource(counted, db.table), cache, db.transactions, clock,
                new java.security.SecureRandom(), new ProtocolEvents() {
                    @Override
                    public void publish(dev.idempotency.IdempotencyEvent event) {
                    }

                    @Override
                    public void cacheRead(String endpoint, CacheRead read) {
                        cacheReads.add(read);
                    }
                }, 4);
    }

    private static Operation op(String key, String body) {
        return StoreFixture.operation(key, CACHED, body);
    }

    private Claim claim(Operation op) {
        return ((Admission.Execute) protocol.admission().admit(op)).claim();
    }

    @Test
    void anOutcomeReachesRedisOnlyOnceItsTransactionCommitted() {
        Operation rolledBack = op(UUID.randomUUID().toString(), "{}");
        Claim first = claim(rolledBack);
        var tx = db.transactions.joinOrBegin();
        assertThat(protocol.completion().finish(first, RecordStatus.SUCCEEDED, Optional.of(FIRST), Optional.empty())).isTrue();
        assertThat(redis.get(rolledBack.scopeKey())).as("before the commit").isEmpty();
        tx.abandon();
        assertThat(redis.get(rolledBack.scopeKey())).as("rolled back").isEmpty();

        Operation committed = op(UUID.randomUUID().toString(), "{}");
        Claim second = claim(committed);
        tx = db.transactions.joinOrBegin();
        protocol.completion().finish(second, RecordStatus.SUCCEEDED, Optional.of(FIRST), Optional.of("1"));
        assertThat(redis.get(committed.scopeKey())).isEmpty();
        tx.commit();
        IdempotencyRecord cached = redis.get(committed.scopeKey()).orElseThrow();
        assertThat(cached.status()).isEqualTo(RecordStatus.SUCCEEDED);
        assertThat(cached.expiresAt()).as("no later than the database's record")
                .isBeforeOrEqualTo(db.store.find(committed.scopeKey()).orElseThrow().expiresAt());
    }

    @Test
    void aRetryIsAnsweredFromRedisWithoutAStatementAndAnotherBodyIsStill422() {
        Operation op = op(UUID.randomUUID().toString(), "{\"amount\":1}");
        finishCommitted(op);
        counted.statements.clear();
        dev.idempotency.core.AdmissionPhase.LookUp retry = protocol.admission().lookUp(op);
        assertThat(retry.answer()).hasValueSatisfying(a -> assertThat(a).isInstanceOf(Admission.Replay.class));
        assertThat(counted.statements).as("answered by Redis alone").isEmpty();
        // The same key with another body: found in Redis, and judged as the database's record is (AWS Powertools
        // #2260 replayed it: its cache path skipped the payload check).
        assertThatThrownBy(() -> protocol.admission().lookUp(op(op.scope().key(), "{\"amount\":2}")))
                .isInstanceOfSatisfying(IdempotencyException.class,
                        e -> assertThat(e.problem().type()).isEqualTo(ProblemType.FINGERPRINT_MISMATCH));
        assertThat(counted.statements).as("judged on Redis's copy").isEmpty();
    }

    @Test
    void aReplayReadFromTheDatabaseFillsRedisForTheNextRetry() {
        Operation op = op(UUID.randomUUID().toString(), "{}");
        IdempotencyProtocol withoutRedis = protocol(OutcomeCache.NONE, Clock.systemUTC());
        Claim claim = ((Admission.Execute) withoutRedis.admission().admit(op)).claim();
        var tx = db.transactions.joinOrBegin();
        withoutRedis.completion().finish(claim, RecordStatus.SUCCEEDED, Optional.of(FIRST), Optional.empty());
        tx.commit();
        assertThat(redis.get(op.scopeKey())).isEmpty();
        assertThat(protocol.admission().lookUp(op).answer()).hasValueSatisfying(a -> assertThat(a).isInstanceOf(Admission.Replay.class));
        assertThat(redis.get(op.scopeKey())).as("read through").isPresent();
    }

    @Test
    void aCachedEntryOfAnotherScopeOrPastItsRecordsExpiryIsIgnoredAndTheDatabaseDecides() {
        Operation op = op(UUID.randomUUID().toString(), "{}");
        Instant now = Instant.now();
        // Planted under the operation's key: another tenant's record (a key-derivation bug must not leak it).
        redis.put(new IdempotencyRecord(op.scopeKey(), "globex", "alice", "payments.create", op.fingerprint().stored(),
                RecordStatus.SUCCEEDED, Optional.empty(), Optional.of(FIRST), "t", Optional.empty(), 1, now, now,
                now.plusSeconds(60)));
        assertThat(protocol.admission().lookUp(op).answer()).as("not this operation's: the database has nothing, a claim").isEmpty();
        // This operation's, but expired by the protocol's clock (Redis's own clock disagreeing): as if absent.
        redis.put(new IdempotencyRecord(op.scopeKey(), "acme", "alice", "payments.create", op.fingerprint().stored(),
                RecordStatus.SUCCEEDED, Optional.empty(), Optional.of(FIRST), "t", Optional.empty(), 1, now, now,
                now.plusSeconds(60)));
        assertThat(protocol.admission().lookUp(op).answer()).as("this operation's, in time").isPresent();
        MutableClock later = new MutableClock();
        later.advance(Duration.ofSeconds(120));
        assertThat(protocol(redis, later).admission().lookUp(op).answer()).as("past its expiry").isEmpty();
    }

    @Test
    void withRedisRefusingReplaysComeFromTheDatabase() throws Exception {
        Operation op = op(UUID.randomUUID().toString(), "{}");
        finishCommitted(op);
        int closedPort;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        IdempotencyProtocol down = protocol(RedisOutcomeCache.connect(RedisAddress.parse("redis://127.0.0.1:" + closedPort),
                Duration.ofMillis(50), Clock.systemUTC(), command -> { }), Clock.systemUTC());
        cacheReads.clear();
        for (int i = 0; i < 5; i++) {
            assertThat(down.admission().lookUp(op).answer()).hasValueSatisfying(a -> assertThat(a).isInstanceOf(Admission.Replay.class));
        }
        assertThat(cacheReads).as("a cache that cannot answer is a miss").hasSize(5)
                .containsOnly(ProtocolEvents.CacheRead.MISS);
    }

    @Test
    void everyReadOfTheCacheIsReportedByWhatItGave() {
        Operation op = op(UUID.randomUUID().toString(), "{}");
        cacheReads.clear();
        Claim claim = claim(op);
        assertThat(cacheReads).as("a new operation: nothing cached").containsExactly(ProtocolEvents.CacheRead.MISS);
        var tx = db.transactions.joinOrBegin();
        protocol.completion().finish(claim, RecordStatus.SUCCEEDED, Optional.of(FIRST), Optional.empty());
        tx.commit();
        protocol.admission().lookUp(op);
        assertThat(cacheReads).as("its retry").containsExactly(ProtocolEvents.CacheRead.MISS, ProtocolEvents.CacheRead.HIT);

        Operation other = op(UUID.randomUUID().toString(), "{}");
        Instant now = Instant.now();
        redis.put(new IdempotencyRecord(other.scopeKey(), "globex", "alice", "payments.create",
                other.fingerprint().stored(), RecordStatus.SUCCEEDED, Optional.empty(), Optional.of(FIRST), "t",
                Optional.empty(), 1, now, now, now.plusSeconds(60)));
        cacheReads.clear();
        protocol.admission().lookUp(other);
        assertThat(cacheReads).as("another scope's entry").containsExactly(ProtocolEvents.CacheRead.REFUSED);
    }

    private void finishCommitted(Operation op) {
        Claim claim = claim(op);
        var tx = db.transactions.joinOrBegin();
        protocol.completion().finish(claim, RecordStatus.SUCCEEDED, Optional.of(FIRST), Optional.empty());
        tx.commit();
    }
}
