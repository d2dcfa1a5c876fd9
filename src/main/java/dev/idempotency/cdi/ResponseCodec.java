package dev.idempotency.cdi;

import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyState;
import dev.idempotency.core.AnswerStates;
import dev.idempotency.core.Admission;
import dev.idempotency.core.BusinessTransaction;
import dev.idempotency.core.Claim;
import dev.idempotency.core.CommitSettlement;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.core.OutcomeClassification;
import dev.idempotency.core.OutcomeCodec;
import dev.idempotency.core.OutcomeStorage;
import dev.idempotency.core.TransactionEnd;
import dev.idempotency.endpoints.IdempotentEndpoint;
import dev.idempotency.http.CapturedRequest;
import dev.idempotency.http.IdempotentExchange;
import dev.idempotency.http.ResponseSnapshots;
import dev.idempotency.http.RollbackRules;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.StoredResponse;
import jakarta.interceptor.InvocationContext;

import java.lang.reflect.InvocationTargetException;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * An HTTP request's outcomes: captured as the response the method made (its bytes, as the client gets them) and
 * handed to the exchange, whose response filter sends them; a thrown failure is recorded there, once the
 * application's exception mappers have rendered it.
 */
final class ResponseCodec implements OutcomeCodec<Object> {
    private final IdempotentExchange exchange;
    private final OutcomeStorage outcomes;
    private final InvocationContext invocation;
    private final IdempotentEndpoint method;
    private final CapturedRequest request;
    private final EndpointPolicy policy;

    ResponseCodec(IdempotentExchange exchange, OutcomeStorage outcomes, InvocationContext invocation,
                  IdempotentEndpoint method, CapturedRequest request) {
        this.exchange = exchange;
        this.outcomes = outcomes;
        this.invocation = invocation;
        this.method = method;
        this.request = request;
        this.policy = method.policy();
    }

    @Override
    public Object invoke() throws Exception {
        return invocation.proceed();
    }

    @Override
    public StoredResponse capture(Object result) {
        return ResponseSnapshots.ofResult(result, invocation.getMethod(), request, policy);
    }

    @Override
    public Optional<String> resourceId(StoredResponse first) {
        return ResponseSnapshots.resourceId(first);
    }

    @Override
    public Optional<StoredResponse> commitsDespite(Exception thrown, BusinessTransaction tx) {
        if (!RollbackRules.commitsDespite(thrown, invocation.getMethod(), invocation.getTarget().getClass(),
                !tx.owned())) {
            return Optional.empty();
        }
        return Optional.of(ResponseSnapshots.ofResult(RollbackRules.rendered(thrown, request.providers()),
                invocation.getMethod(), request, policy));
    }

    @Override
    public boolean settlesTransactionEnd() {
        return true;
    }

    @Override
    public Object failed(Throwable thrown, Claim claim) throws Exception {
        // The response filter records what the application's exception mappers make of it.
        exchange.failed(OutcomeClassification.FailureKind.of(policy, thrown));
        throw rethrown(thrown);
    }

    @Override
    public Object superseded(Superseded why, Claim claim, Supplier<Admission.Replay> winner) throws Exception {
        // The winner's outcome when it has one, else 409 superseded (thrown by the protocol).
        exchange.settled(Optional.empty());
        IdempotencyRecord won = winner.get().record();
        exchange.settled(replayable(outcomes, won, method, invocation, request), true,
                AnswerStates.ofRecord(won, policy.externalSideEffects()));
        return null;
    }

    @Override
    public Object retryable(Object result, StoredResponse first) {
        exchange.settled(first, false, exchange.notApplied());
        return result;
    }

    @Override
    public Object rolledBack(Object result, StoredResponse first, Optional<Exception> committedWith)
            throws Exception {
        IdempotencyState nothingCommitted = exchange.notApplied();
        if (committedWith.isPresent()) {
            exchange.settledSaying(nothingCommitted);
            throw committedWith.get();
        }
        exchange.settled(Optional.empty());
        // A success must not reach the client as done.
        if (OutcomeClassification.isSuccess(first.status())) {
            throw new IdempotencyException(CommitSettlement.rolledBackProblem().withState(nothingCommitted));
        }
        exchange.settled(first, false, nothingCommitted);
        return result;
    }

    @Override
    public Object finishFailed(RuntimeException storeFailed, Claim claim) {
        exchange.failed(OutcomeClassification.FailureKind.RETRYABLE);
        throw storeFailed;
    }

    @Override
    public Object finishedInCallersTransaction(BusinessTransaction tx, Claim claim, Object result,
                                               StoredResponse first, Optional<Exception> committedWith)
            throws Exception {
        // Awaiting first: the transaction manager may report the end on another thread at any time now.
        exchange.awaitCommit(claim, first);
        tx.afterCompletion(committed -> exchange.transactionEnded(TransactionEnd.of(committed)));
        return answered(result, committedWith);
    }

    @Override
    public Object committed(Object result, StoredResponse first, Optional<Exception> committedWith)
            throws Exception {
        exchange.settled(first, false, AnswerStates.APPLIED);
        return answered(result, committedWith);
    }

    @Override
    public Object commitRolledBack(CommitSettlement.OwnedCommit.RolledBack rolledBack, Claim claim) {
        // The application's failure at commit (a constraint checked at flush): its mappers answer.
        exchange.failed(OutcomeClassification.FailureKind.BY_STATUS);
        throw rolledBack.applicationCause().orElseGet(() -> CommitSettlement.rolledBack(rolledBack.failure()));
    }

    @Override
    public Object notCommitted(CommitSettlement.OwnedCommit.NotCommitted notCommitted, Claim claim) {
        exchange.settled(Optional.empty());
        throw CommitSettlement.retryLater(notCommitted.failure());
    }

    // A failure the application declared not to roll back goes on to its mappers and its transaction interceptor,
    // which commits on it as declared.
    private Object answered(Object result, Optional<Exception> committedWith) throws Exception {
        if (committedWith.isPresent()) {
            throw committedWith.get();
        }
        return result;
    }

    private static Exception rethrown(Throwable thrown) {
        if (thrown instanceof Error error) {
            throw error;
        }
        return (Exception) thrown;
    }


    /** A stored response ready to send: decrypted, and for minimal storage with its body rebuilt. */
    static StoredResponse replayable(OutcomeStorage outcomes, IdempotencyRecord record, IdempotentEndpoint method,
                                     InvocationContext invocation, CapturedRequest request) throws Exception {
        StoredResponse stored = outcomes.replayed(record);
        if (!StoredResponse.OMITTED.equals(stored.bodyEncoding())) {
            return stored;
        }
        if (method.declared().replayWith() == null || record.resourceId().isEmpty()) {
            return stored.withBody(new byte[0], StoredResponse.PLAIN);
        }
        Object entity;
        try {
            entity = method.declared().replayWith().invoke(invocation.getTarget(), record.resourceId().get());
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
        StoredResponse rebuilt = ResponseSnapshots.ofResult(entity, method.declared().replayWith(), request,
                method.policy());
        return new StoredResponse(stored.status(), stored.headers(), rebuilt.body(), StoredResponse.PLAIN);
    }
}
