package dev.idempotency.core;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyException;
import dev.idempotency.ProblemType;
import dev.idempotency.RecordStatus;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.StoredResponse;
import dev.idempotency.testing.Databases;
import dev.idempotency.testing.MutableClock;
import dev.idempotency.testing.StoreFixture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The stages every trigger runs once its operation is claimed: what each way a run can end leaves in the store, and
 * which of its codec's renderings answers it. The codec here records what it was asked; the store is H2 under
 * Narayana, the transactions real.
 */
class ExecutionTest {
    private static final StoredResponse CREATED = new StoredResponse(201, Map.of("Location", List.of("/p/1")),
            "{\"id\":1}".getBytes(StandardCharsets.UTF_8), StoredResponse.PLAIN);
    private static final StoredResponse UNAVAILABLE = new StoredResponse(503, Map.of(), new byte[0],
            StoredResponse.PLAIN);

    private final MutableClock clock = new MutableClock();
    private final List<IdempotencyEvent> events = new CopyOnWriteArrayList<>();
    private StoreFixture db;
    private IdempotencyProtocol protocol;
    private LeaseKeeper keeper;
    private Execution execution;

    @BeforeEach
    void setUp() {
        db = new StoreFixture(Databases.named("h2"), "idem_execution_test");
        protocol = new IdempotencyProtocol(db.store, db.transactions, clock, new SecureRandom(), events::add, 1);
        keeper = new LeaseKeeper(db.store, db.transactions, clock, events::add);
        CommitSettlement commits = new CommitSettlement(protocol);
        execution = new Execution(protocol, new LeaseGuard(keeper, commits), commits,
                new OutcomeStorage(ResponseSealer.none(), (json, redaction) -> Optional.of(json)));
    }

    @Test
    void aReturnedRunIsFinishedWithItsOutcomeAndCommittedInTheLibrarysOwnTransaction() throws Exception {
        Claim claim = claim("done");
        Recording codec = new Recording(() -> "payment", result -> CREATED);

        Object answered = execution.run(claim, db.transactions.joinOrBegin(), codec);

        assertThat(answered).isEqualTo("payment");
        assertThat(codec.calls).containsExactly("committed");
        IdempotencyRecord record = record(claim);
        assertThat(record.status()).isEqualTo(RecordStatus.SUCCEEDED);
        assertThat(record.response().orElseThrow().body()).isEqualTo(CREATED.body());
        assertThat(record.resourceId()).contains("1");
    }

    @Test
    void aRetryableOutcomeIsGivenBackAndTheNextAttemptRuns() throws Exception {
        Claim claim = claim("unavailable");
        Recording codec = new Recording(() -> "down", result -> UNAVAILABLE);

        assertThat(execution.run(claim, db.transactions.joinOrBegin(), codec)).isEqualTo("down");

        assertThat(codec.calls).containsExactly("retryable");
        assertThat(record(claim).status()).isEqualTo(RecordStatus.FAILED_RETRYABLE);
        assertThat(protocol.admission().admit(claim.operation())).isInstanceOf(Admission.Execute.class);
    }

    @Test
    void aThrownFailureCommitsNothingAndIsTheCodecsToRecord() throws Exception {
        Claim claim = claim("thrown");
        Recording codec = new Recording(() -> {
            throw new IllegalArgumentException("declined");
        }, result -> CREATED);

        assertThat(execution.run(claim, db.transactions.joinOrBegin(), codec)).isEqualTo("failed");

        assertThat(codec.calls).containsExactly("failed:IllegalArgumentException");
        assertThat(record(claim).status()).as("the codec records it (here: nothing)").isEqualTo(RecordStatus.PROCESSING);
        assertThat(dev.idempotency.testing.Narayana.transactionManager().getStatus()).as("the run's transaction ended")
                .isEqualTo(jakarta.transaction.Status.STATUS_NO_TRANSACTION);
    }

    @Test
    void aRunWhoseLeaseWasLostCommitsNothingAndIsAnsweredByTheExecutorThatTookItOver() throws Exception {
        Claim claim = claim("lost");
        Recording codec = new Recording(() -> {
            // The method outlives its lease; a retry takes the operation over; the keeper finds the lease gone.
            clock.advance(Duration.ofSeconds(31));
            assertThat(protocol.admission().admit(claim.operation())).isInstanceOf(Admission.Execute.class);
            keeper.renewDue();
            return "late";
        }, result -> CREATED);

        execution.run(claim, db.transactions.joinOrBegin(), codec);

        assertThat(codec.calls).containsExactly("superseded:LEASE_LOST");
        assertThat(codec.winner).as("the takeover is still running: 409")
                .isInstanceOf(IdempotencyException.class)
                .matches(e -> ((IdempotencyException) e).problem().type() == ProblemType.SUPERSEDED);
        IdempotencyRecord record = record(claim);
        assertThat(record.status()).isEqualTo(RecordStatus.PROCESSING);
        assertThat(record.ownerToken()).as("the takeover's, untouched").isNotEqualTo(claim.ownerToken());
        assertThat(events).anyMatch(IdempotencyEvent.LeaseLost.class::isInstance);
    }

    @Test
    void aFinishFencedOutByATakeoverCommitsNothingAndIsAnsweredAsSuperseded() throws Exception {
        Claim claim = claim("fenced");
        Recording codec = new Recording(() -> {
            // Not held by the keeper's renewal: the retry takes the operation over after the lease.
            clock.advance(Duration.ofSeconds(31));
            assertThat(protocol.admission().admit(claim.operation())).isInstanceOf(Admission.Execute.class);
            return "late";
        }, result -> CREATED);

        execution.run(claim, db.transactions.joinOrBegin(), codec);

        assertThat(codec.calls).containsExactly("superseded:FENCED");
        assertThat(record(claim).ownerToken()).isNotEqualTo(claim.ownerToken());
        assertThat(events).anyMatch(IdempotencyEvent.Fenced.class::isInstance);
    }

    @Test
    void aRunWhoseTransactionWasMarkedRollbackOnlyGivesItsClaimBack() throws Exception {
        Claim claim = claim("marked");
        BusinessTransaction tx = db.transactions.joinOrBegin();
        Recording codec = new Recording(() -> {
            tx.abandon();
            return "marked";
        }, result -> CREATED);

        execution.run(claim, tx, codec);

        assertThat(codec.calls).containsExactly("rolledBack");
        assertThat(record(claim).status()).isEqualTo(RecordStatus.FAILED_RETRYABLE);
    }

    @Test
    void aFinishInTheCallersTransactionIsGivenBackWhenTheCallerRollsBack() throws Exception {
        Claim claim = claim("joined");
        BusinessTransaction callers = db.transactions.joinOrBegin();
        BusinessTransaction joined = db.transactions.joinOrBegin();
        assertThat(joined.owned()).isFalse();
        Recording codec = new Recording(() -> "joined", result -> CREATED);

        execution.run(claim, joined, codec);
        assertThat(codec.calls).containsExactly("finishedInCallersTransaction");
        callers.abandon();

        assertThat(record(claim).status()).as("given back from the rollback").isEqualTo(RecordStatus.FAILED_RETRYABLE);
    }

    @Test
    void aFailureRecordedAsFinalIsReplayedAndOneRecordedRetryableRunsAgain() {
        Claim declined = claim("declined");
        StoredResponse problem = new StoredResponse(422, Map.of(), "{}".getBytes(StandardCharsets.UTF_8),
                StoredResponse.PLAIN);
        execution.recordFailure(declined, RecordStatus.FAILED_FINAL, Optional.of(problem));
        assertThat(protocol.admission().admit(declined.operation())).isInstanceOf(Admission.Replay.class);

        Claim broken = claim("broken");
        execution.recordFailure(broken, RecordStatus.FAILED_RETRYABLE, Optional.empty());
        assertThat(protocol.admission().admit(broken.operation())).isInstanceOf(Admission.Execute.class);
    }

    @Test
    void theStatusOfAnAnswerDecidesFinalOrRetryableInOnePlace() {
        assertThat(OutcomeClassification.ofStatus(201)).isEqualTo(RecordStatus.SUCCEEDED);
        assertThat(OutcomeClassification.ofStatus(303)).isEqualTo(RecordStatus.SUCCEEDED);
        assertThat(OutcomeClassification.ofStatus(409)).isEqualTo(RecordStatus.FAILED_FINAL);
        assertThat(OutcomeClassification.ofStatus(500)).isEqualTo(RecordStatus.FAILED_RETRYABLE);
        assertThat(OutcomeClassification.ofCommitted(500)).as("committed work is never retried")
                .isEqualTo(RecordStatus.FAILED_FINAL);
        assertThat(OutcomeClassification.FailureKind.BY_STATUS.retryable(422)).isFalse();
        assertThat(OutcomeClassification.FailureKind.BY_STATUS.retryable(503)).isTrue();
        assertThat(OutcomeClassification.FailureKind.BY_STATUS.retryable(200)).as("a failure mapped to a success")
                .isTrue();
        assertThat(OutcomeClassification.FailureKind.FINAL.retryable(503)).isFalse();
        assertThat(OutcomeClassification.FailureKind.RETRYABLE.retryable(422)).isTrue();
    }

    @Test
    void aFinishedRecordWithoutAResponseIsRefusedAsAReplay() {
        IdempotencyRecord broken = new IdempotencyRecord("k", "acme", "alice", "payments.create", "h",
                RecordStatus.SUCCEEDED, Optional.empty(), Optional.empty(), "t", Optional.empty(), 1, clock.instant(),
                clock.instant(), clock.instant().plusSeconds(60));
        assertThatThrownBy(() -> new OutcomeStorage(ResponseSealer.none(), (json, redaction) -> Optional.of(json))
                .replayed(broken)).hasMessageContaining("IDEM-X002");
    }

    private Claim claim(String key) {
        Admission admission = protocol.admission().admit(StoreFixture.operation(key));
        assertThat(admission).isInstanceOf(Admission.Execute.class);
        return ((Admission.Execute) admission).claim();
    }

    private IdempotencyRecord record(Claim claim) {
        return db.transactions.requiresNew(() -> db.store.find(claim.operation().scopeKey())).orElseThrow();
    }

    /** Names each rendering it was asked for; answers with a name, never deciding anything. */
    private static final class Recording implements OutcomeCodec<Object> {
        final List<String> calls = new ArrayList<>();
        private final java.util.concurrent.Callable<Object> method;
        private final java.util.function.Function<Object, StoredResponse> capture;
        Object winner;

        Recording(java.util.concurrent.Callable<Object> method, java.util.function.Function<Object, StoredResponse> capture) {
            this.method = method;
            this.capture = capture;
        }

        @Override
        public Object invoke() throws Exception {
            return method.call();
        }

        @Override
        public StoredResponse capture(Object result) {
            return capture.apply(result);
        }

        @Override
        public Optional<String> resourceId(StoredResponse first) {
            return Optional.ofNullable(first.header("Location")).map(l -> l.substring(l.lastIndexOf('/') + 1));
        }

        @Override
        public Object failed(Throwable thrown, Claim claim) {
            calls.add("failed:" + thrown.getClass().getSimpleName());
            return "failed";
        }

        @Override
        public Object superseded(Superseded why, Claim claim, Supplier<Admission.Replay> answer) {
            calls.add("superseded:" + why);
            try {
                winner = answer.get();
            } catch (RuntimeException e) {
                winner = e;
            }
            return "superseded";
        }

        @Override
        public Object retryable(Object result, StoredResponse first) {
            calls.add("retryable");
            return result;
        }

        @Override
        public Object rolledBack(Object result, StoredResponse first, Optional<Exception> committedWith) {
            calls.add("rolledBack");
            return result;
        }

        @Override
        public Object finishFailed(RuntimeException storeFailed, Claim claim) {
            calls.add("finishFailed");
            return null;
        }

        @Override
        public Object finishedInCallersTransaction(BusinessTransaction tx, Claim claim, Object result,
                                                   StoredResponse first, Optional<Exception> committedWith) {
            calls.add("finishedInCallersTransaction");
            return result;
        }

        @Override
        public Object committed(Object result, StoredResponse first, Optional<Exception> committedWith) {
            calls.add("committed");
            return result;
        }

        @Override
        public Object commitRolledBack(CommitSettlement.OwnedCommit.RolledBack rolledBack, Claim claim) {
            calls.add("commitRolledBack");
            return null;
        }

        @Override
        public Object notCommitted(CommitSettlement.OwnedCommit.NotCommitted notCommitted, Claim claim) {
            calls.add("notCommitted");
            return null;
        }
    }
}
