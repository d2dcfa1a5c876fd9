package dev.idempotency.http;

import dev.idempotency.IdempotencyContext;
import dev.idempotency.IdempotencyState;
import dev.idempotency.core.AnswerStates;
import dev.idempotency.Scope;
import dev.idempotency.core.Claim;
import dev.idempotency.core.CommitSettlement;
import dev.idempotency.core.Execution;
import dev.idempotency.core.OutcomeStorage;
import dev.idempotency.core.Operation;
import dev.idempotency.http.ExchangeStage.AwaitingCommit;
import dev.idempotency.core.OutcomeClassification.FailureKind;
import dev.idempotency.http.ExchangeStage.Reply;
import dev.idempotency.core.TransactionEnd;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.StoredResponse;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One idempotent request as it passes from the JAX-RS request filter, through the interceptor, to the
 * response filter; also the application's {@link IdempotencyContext}. It holds one immutable
 * {@link ExchangeStage} and moves it forward; each move names what happened. Request scoped: at the end of
 * the request, a claim that nobody settled is settled here (the safety net for unmapped exceptions).
 *
 * <p>The stage is an atomic reference because one move, the end of a joined transaction, may be reported
 * by the transaction manager on another thread (a timeout rolled back by its reaper).
 */
@RequestScoped
public class IdempotentExchange implements IdempotencyContext {

    @Inject
    Execution execution;
    @Inject
    CommitSettlement commits;
    @Inject
    OutcomeStorage outcomes;

    private final AtomicReference<ExchangeStage> stage = new AtomicReference<>(new ExchangeStage.Idle());
    // Whether the application was given the key or a key derived from it while this request ran: a downstream call
    // may have acted under it, so a failure of this run can never tell the client that a new key is safe.
    private volatile boolean keyHandedOut;

    /** Where the request stands now. */
    public ExchangeStage stage() {
        return stage.get();
    }

    /** The request filter captured the request; {@code prepared} is its operation, null when it has no key. */
    public void capture(CapturedRequest request, Operation prepared) {
        stage.set(prepared == null ? new ExchangeStage.Unkeyed(request) : new ExchangeStage.Prepared(request, prepared));
    }

    /** The request filter read the record, which did not answer alone; admission goes on from this read. */
    public void read(Optional<IdempotencyRecord> record) {
        ExchangeStage.Prepared prepared = expect(ExchangeStage.Prepared.class);
        stage.set(new ExchangeStage.Read(prepared.request(), prepared.operation(), record));
    }

    /** The interceptor takes the operation on. */
    public void admitting(Operation operation) {
        stage.set(new ExchangeStage.Admitting(stage.get().request(), operation));
    }

    /** The operation is answered without executing anything: a replay, an in-flight answer. */
    public void answered(Operation operation, Reply reply) {
        stage.set(new ExchangeStage.Settled(stage.get().request(), operation, 0, Optional.of(reply), Optional.empty()));
    }

    /** Admission claimed the operation: the business method runs. */
    public void running(Claim claim) {
        stage.set(new ExchangeStage.Running(stage.get().request(), claim));
    }

    /**
     * An asynchronous task runs the claimed operation: this exchange is the task's, in the request context
     * of the executor's thread, so that the method's nested calls and {@link #derive} see the operation and the
     * end of that context gives back a claim the task did not settle.
     */
    public void runningTask(CapturedRequest request, Claim claim) {
        stage.set(new ExchangeStage.Running(request, claim));
    }

    /** The claim needs nothing more; {@code reply}, if any, is what goes out. */
    public void settled(Optional<Reply> reply) {
        ExchangeStage now = stage.get();
        stage.set(new ExchangeStage.Settled(now.request(), now.active(), now.attempt(), reply, Optional.empty()));
    }

    /** The claim needs nothing more, and {@code response} goes out (a replay when {@code replayed}), saying {@code state}. */
    public void settled(StoredResponse response, boolean replayed, IdempotencyState state) {
        settled(Optional.of(new Reply(response, replayed, state)));
    }

    /** The claim needs nothing more; the application's own answer goes out, and says {@code state}. */
    public void settledSaying(IdempotencyState state) {
        ExchangeStage now = stage.get();
        stage.set(new ExchangeStage.Settled(now.request(), now.active(), now.attempt(), Optional.empty(),
                Optional.of(state)));
    }

    /**
     * What an answer says when nothing of the run this request holds a claim for committed ({@link
     * AnswerStates#notApplied}); read it before the claim is settled.
     */
    public IdempotencyState notApplied() {
        return stage.get().unsettledClaim().map(claim -> AnswerStates.notApplied(claim, keyHandedOut))
                .orElse(AnswerStates.NOT_APPLIED_SAME_KEY);
    }

    /**
     * While a thrown failure waits to be recorded: what an answer of {@code status} for it says (its work rolled
     * back; final or retryable as its kind and the status make it). Empty at any other stage.
     */
    public Optional<IdempotencyState> failureState(int status) {
        return stage.get() instanceof ExchangeStage.Failed failed
                ? Optional.of(AnswerStates.failed(failed.claim(), !failed.kind().retryable(status), keyHandedOut))
                : Optional.empty();
    }

    /** Something threw while the claim was held: the response filter records the mapped response as this kind. */
    public void failed(FailureKind kind) {
        ExchangeStage now = stage.get();
        Claim claim = now.unsettledClaim().orElseThrow(() -> new IllegalStateException(
                "IDEM-X004 a failure recorded without a claim, at " + now.getClass().getSimpleName()));
        stage.set(new ExchangeStage.Failed(now.request(), claim, kind));
    }

    /**
     * Records the failure this request's run threw, as the application's mappers rendered it: final (replayed) or
     * retryable (given back), as its kind and {@code rendered}'s status say; then the claim needs nothing more. A
     * failure to record is logged only (the lease bounds the record): the client keeps the answer its failure was
     * mapped to.
     *
     * @return the record's status now
     */
    public dev.idempotency.RecordStatus recordFailure(StoredResponse rendered) {
        ExchangeStage.Failed failed = expect(ExchangeStage.Failed.class);
        Claim claim = failed.claim();
        boolean retryable = failed.kind().retryable(rendered.status());
        execution.recordFailure(claim, retryable ? dev.idempotency.RecordStatus.FAILED_RETRYABLE
                : dev.idempotency.RecordStatus.FAILED_FINAL, retryable ? Optional.empty()
                : Optional.of(outcomes.forStorage(rendered, claim.operation().policy(),
                claim.operation().scopeKey())));
        settled(Optional.empty());
        return retryable ? dev.idempotency.RecordStatus.FAILED_RETRYABLE : dev.idempotency.RecordStatus.FAILED_FINAL;
    }

    /** Finished inside the caller's transaction: {@code first} goes out once it has ended. */
    public void awaitCommit(Claim claim, StoredResponse first) {
        stage.set(new AwaitingCommit(stage.get().request(), claim, first, TransactionEnd.OPEN));
    }

    /** The caller's transaction ended (called by its synchronization, on any thread). */
    public void transactionEnded(TransactionEnd end) {
        stage.updateAndGet(now -> now instanceof AwaitingCommit awaiting ? awaiting.ended(end) : now);
    }

    /**
     * A message's delivery ended: the exchange is idle again, so that the next delivery in the same request context
     * (a container may keep one for several) is not taken for a nested call. A claim still unsettled here, which only
     * an unexpected failure leaves, is given back first.
     */
    public void delivered() {
        ExchangeStage now = stage.get();
        if (now.unsettledClaim().isPresent()) {
            settleAbandoned(now);
        }
        keyHandedOut = false;
        stage.set(new ExchangeStage.Idle());
    }

    private <T extends ExchangeStage> T expect(Class<T> type) {
        ExchangeStage now = stage.get();
        if (!type.isInstance(now)) {
            throw new IllegalStateException("IDEM-X004 expected " + type.getSimpleName() + ", the exchange is at "
                    + now.getClass().getSimpleName());
        }
        return type.cast(now);
    }

    @Override
    public boolean isActive() {
        return stage.get().active() != null;
    }

    @Override
    public Optional<String> key() {
        return scope().map(Scope::key);
    }

    @Override
    public Optional<Scope> scope() {
        Optional<Scope> scope = Optional.ofNullable(stage.get().active()).map(Operation::scope);
        if (scope.isPresent()) {
            keyHandedOut = true;
        }
        return scope;
    }

    // Read without handing the key out (see IdempotencyContext#tenant).
    @Override
    public Optional<String> tenant() {
        return Optional.ofNullable(stage.get().active()).map(op -> op.scope().tenant());
    }

    @Override
    public Optional<String> principal() {
        return Optional.ofNullable(stage.get().active()).map(op -> op.scope().principal());
    }

    @Override
    public int attempt() {
        return stage.get().attempt();
    }

    @Override
    public String derive(String purpose) {
        Operation operation = stage.get().active();
        if (operation == null) {
            throw new IllegalStateException("IDEM-X001 no idempotent operation is active in this call");
        }
        keyHandedOut = true;
        return operation.derive(purpose);
    }

    @PreDestroy
    void endOfRequest() {
        ExchangeStage now = stage.get();
        if (now.unsettledClaim().isPresent()) {
            settleAbandoned(now);
        }
    }

    // A claim nobody settled: a joined transaction that ended is settled by the fenced update, otherwise given back.
    private void settleAbandoned(ExchangeStage now) {
        commits.settleAbandoned(now.unsettledClaim().orElseThrow(),
                now instanceof AwaitingCommit awaiting ? Optional.of(awaiting.end()) : Optional.empty());
        settled(Optional.empty());
    }
}
