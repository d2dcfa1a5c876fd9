package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyException;
import dev.idempotency.ProblemType;
import dev.idempotency.RecordStatus;
import dev.idempotency.core.Admission;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.core.IdempotencyProtocol;
import dev.idempotency.core.Operation;
import dev.idempotency.redis.RedisAddress;
import dev.idempotency.redis.RedisOutcomeCache;
import dev.idempotency.spi.OutcomeCache;
import dev.idempotency.spi.StoredResponse;
import dev.idempotency.testing.Databases;
import dev.idempotency.testing.PolicyBuilder;
import dev.idempotency.testing.StoreFixture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * ClaimMode.IN_TRANSACTION reads the database with its claim's INSERT (ADR 14): no read before it, so that a new
 * operation costs the INSERT alone; a retry's INSERT meets the committed record, which is then read and judged.
 */
class ClaimInTransactionReadsTest {
    private static final StoredResponse FIRST = new StoredResponse(201, Map.of("Location", List.of("/payments/1")),
            "{\"id\":1}".getBytes(StandardCharsets.UTF_8), StoredResponse.PLAIN);

    private StoreFixture db;
    private CountingDataSource counted;

    @BeforeEach
    void start() {
        db = new StoreFixture(Databases.named("h2"), "idem_in_tx_reads");
        counted = new CountingDataSource(db.database.dataSource());
    }

    private IdempotencyProtocol protocol(OutcomeCache cache) {
        return new IdempotencyProtocol(JdbcRecordStore.forDataSource(counted, db.table), cache, db.transactions,
                Clock.systemUTC(), new java.security.SecureRandom(), e -> { }, 4);
    }

    private static Operation op(String key, String body, boolean cached) {
        EndpointPolicy policy = PolicyBuilder.defaults().with(p -> {
            p.claimInTransaction = true;
            p.cacheOutcomes = cached;
        }).build();
        return StoreFixture.operation(key, policy, body);
    }

    // What the interceptor does: the request filter's look-up, then in the business transaction the admission.
    private Admission admitInTransaction(IdempotencyProtocol protocol, Operation op, Runnable inTransaction) {
        dev.idempotency.core.AdmissionPhase.LookUp lookUp = protocol.admission().lookUp(op);
        if (lookUp.answer().isPresent()) {
            return lookUp.answer().get();
        }
        var tx = db.transactions.joinOrBegin();
        try {
            Admission admission = protocol.admission().admit(op, lookUp.record());
            if (admission instanceof Admission.Execute execute) {
                protocol.completion().finish(execute.claim(), RecordStatus.SUCCEEDED, Optional.of(FIRST), Optional.of("1"));
            }
            inTransaction.run();
            tx.commit();
            if (admission instanceof Admission.Execute execute) {
                protocol.admission().claimEnded(execute.claim());
            }
            return admission;
        } catch (RuntimeException e) {
            tx.abandonQuietly();
            throw e;
        }
    }

    @Test
    void aNewOperationIsClaimedByItsInsertWithNoReadBeforeIt() {
        IdempotencyProtocol protocol = protocol(OutcomeCache.NONE);
        Operation op = op(UUID.randomUUID().toString(), "{\"amount\":1}", false);
        counted.statements.clear();
        dev.idempotency.core.AdmissionPhase.LookUp lookUp = protocol.admission().lookUp(op);
        assertThat(lookUp.answer()).isEmpty();
        assertThat(counted.statements).as("the look-up reads nothing: the claim's INSERT will").isEmpty();

        Admission first = admitInTransaction(protocol, op, () -> { });
        assertThat(first).isInstanceOf(Admission.Execute.class);
        assertThat(counted.statements.get(0)).as("the claim's INSERT first").startsWith("INSERT INTO " + db.table + " ");
        assertThat(counted.statements).as("then the finish and the key's charge (H2: no CTEs), and no read")
                .noneMatch(sql -> sql.startsWith("SELECT"));

        counted.statements.clear();
        Admission retry = admitInTransaction(protocol, op, () -> { });
        assertThat(retry).isInstanceOfSatisfying(Admission.Replay.class,
                r -> assertThat(r.record().response().orElseThrow().status()).isEqualTo(201));
        assertThat(counted.statements).as("the INSERT meets the committed record, which is read").hasSize(2);
        assertThat(counted.statements.get(0)).startsWith("INSERT");
        assertThat(counted.statements.get(1)).startsWith("SELECT");

        assertThatThrownBy(() -> admitInTransaction(protocol, op(op.scope().key(), "{\"amount\":2}", false), () -> { }))
                .isInstanceOfSatisfying(IdempotencyException.class,
                        e -> assertThat(e.problem().type()).isEqualTo(ProblemType.FINGERPRINT_MISMATCH));
        assertThat(db.store.find(op.scopeKey()).orElseThrow().status()).isEqualTo(RecordStatus.SUCCEEDED);
    }

    @Test
    void withRedisARetryIsAnsweredBeforeAnyStatement() {
        OutcomeCache redis = RedisOutcomeCache.connect(RedisAddress.parse("redis://127.0.0.1:6379"),
                Duration.ofMillis(50), Clock.systemUTC(), command -> { });
        IdempotencyProtocol protocol = protocol(redis);
        Operation op = op(UUID.randomUUID().toString(), "{}", true);
        assertThat(admitInTransaction(protocol, op, () -> { })).isInstanceOf(Admission.Execute.class);
        counted.statements.clear();
        assertThat(protocol.admission().lookUp(op).answer()).hasValueSatisfying(a -> assertThat(a).isInstanceOf(Admission.Replay.class));
        assertThat(counted.statements).as("answered by Redis").isEmpty();
    }
}
