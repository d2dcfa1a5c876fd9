package dev.idempotency.internal;

import dev.idempotency.IdempotencyContext;
import dev.idempotency.Scope;
import dev.idempotency.core.Claim;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.core.Operation;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.StoredResponse;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.RequestScoped;

import java.util.Optional;

/**
 * One idempotent request as it passes from the JAX-RS request filter, through the interceptor, to the
 * response filter; also the application's {@link IdempotencyContext}. Request scoped: at the end of the
 * request, a claim that nobody finished is given back (the safety net for unmapped exceptions).
 */
@RequestScoped
public class IdempotentExchange implements IdempotencyContext {

    /** What the response filter must send: a stored outcome, and whether it is a replay. */
    public record Reply(StoredResponse response, boolean replayed, boolean awaitsCommit) {
    }

    private CapturedRequest request;
    private Operation prepared;
    private Optional<IdempotencyRecord> lastRead = Optional.empty();
    private boolean read;
    private Operation operation;
    private Claim claim;
    private Reply reply;
    private Boolean committed;
    private boolean completed;
    private Optional<Boolean> failureRetryable;
    private boolean settled;
    private IdempotencyRuntime runtime;

    /**
     * What the request filter found: the request, and its operation when it carries a key (null when the
     * key is optional and absent).
     */
    public void capture(CapturedRequest captured, Operation preparedOperation, IdempotencyRuntime owner) {
        this.request = captured;
        this.prepared = preparedOperation;
        this.runtime = owner;
    }

    /** The record as the request filter read it, which needed a claim; admission goes on from there. */
    public void read(Optional<IdempotencyRecord> record) {
        this.lastRead = record;
        this.read = true;
    }

    /** The request filter's read of the record, if it made one. */
    public Optional<Optional<IdempotencyRecord>> lastRead() {
        return read ? Optional.of(lastRead) : Optional.empty();
    }

    /** The operation the request filter prepared, if the request carries a key. */
    public Optional<Operation> prepared() {
        return Optional.ofNullable(prepared);
    }

    public CapturedRequest request() {
        return request;
    }

    /** The request filter answered from the record alone: a replay or an in-flight answer, nothing runs. */
    public void answered(Operation op, Reply answer) {
        this.operation = op;
        this.reply = answer;
        this.settled = true;
    }

    public void begin(Operation op) {
        this.operation = op;
    }

    public void claimed(Claim newClaim) {
        this.claim = newClaim;
    }

    public Claim claim() {
        return claim;
    }

    public Operation operation() {
        return operation;
    }

    /** The policy of the endpoint this request runs on (null before the interceptor ran). */
    public EndpointPolicy policy() {
        return operation == null ? null : operation.policy();
    }

    public void reply(Reply answer) {
        this.reply = answer;
    }

    public Reply reply() {
        return reply;
    }

    /** The business method threw: the response filter records the mapped response as a failure. */
    public void failedWith(Optional<Boolean> retryableByType) {
        this.failureRetryable = retryableByType;
    }

    /** Whether a thrown exception's outcome still has to be recorded; its type's classification if configured. */
    public Optional<Optional<Boolean>> pendingFailure() {
        return settled || failureRetryable == null ? Optional.empty() : Optional.of(failureRetryable);
    }

    /** A joined business transaction ended: committed (true), rolled back (false) or unknown (null). */
    public void completed(Boolean outcome) {
        this.completed = true;
        this.committed = outcome;
    }

    /** For a joined business transaction: whether it has committed (null while running or unknown). */
    public Boolean hasCommitted() {
        return committed;
    }

    /** For a joined business transaction: whether it has ended, whatever its outcome. */
    public boolean hasCompleted() {
        return completed;
    }

    /** The claim needs nothing more: finished, released or replayed. */
    public void settled() {
        this.settled = true;
    }

    public boolean isSettled() {
        return settled;
    }

    @Override
    public boolean isActive() {
        return operation != null;
    }

    @Override
    public Optional<String> key() {
        return Optional.ofNullable(operation).map(op -> op.scope().key());
    }

    @Override
    public Optional<Scope> scope() {
        return Optional.ofNullable(operation).map(Operation::scope);
    }

    @Override
    public int attempt() {
        return claim == null ? 0 : claim.attempt();
    }

    @Override
    public String derive(String purpose) {
        if (operation == null) {
            throw new IllegalStateException("IDEM-X001 no idempotent operation is active in this call");
        }
        return operation.derive(purpose);
    }

    @PreDestroy
    void endOfRequest() {
        if (runtime != null && claim != null && !settled) {
            runtime.settleAbandoned(this);
        }
    }
}
