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

    /** How a joined business transaction ended, as its synchronization was told. */
    public enum TransactionEnd {
        /** Still running (or not joined). */
        OPEN,
        /** Reported committed; a commit that raised may still be a heuristic hazard (the response filter checks). */
        COMMITTED,
        ROLLED_BACK,
        /** Any other end status: the fenced update settles it. */
        UNKNOWN;

        /** From {@code JtaTransactions.BusinessTransaction#afterCompletion}'s true, false or null. */
        public static TransactionEnd of(Boolean committed) {
            return committed == null ? UNKNOWN : committed ? COMMITTED : ROLLED_BACK;
        }
    }

    /** How a thrown failure counts for the record: by its type, or by the status the application maps it to. */
    public enum FailureKind {
        /** A configured retryOn type, or a failure of the library's own finish: the retry runs again. */
        RETRYABLE,
        /** A configured finalOn type or a Bean Validation failure: recorded and replayed. */
        FINAL,
        /** Neither: a 4xx mapping is final, anything else retryable. */
        BY_STATUS;

        /** Whether a failure of this kind, mapped to {@code status}, leaves the operation retryable. */
        public boolean retryable(int status) {
            return switch (this) {
                case RETRYABLE -> true;
                case FINAL -> false;
                case BY_STATUS -> status < 400 || status >= 500;
            };
        }
    }

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
    private TransactionEnd transactionEnd = TransactionEnd.OPEN;
    private FailureKind failure;
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

    /** The business method threw: the response filter records the mapped response as a failure of this kind. */
    public void failedWith(FailureKind kind) {
        this.failure = kind;
    }

    /** The kind of a thrown failure whose outcome still has to be recorded; empty when there is none. */
    public Optional<FailureKind> pendingFailure() {
        return settled ? Optional.empty() : Optional.ofNullable(failure);
    }

    /** A joined business transaction ended. */
    public void completed(TransactionEnd end) {
        this.transactionEnd = end;
    }

    /** How the joined business transaction ended ({@code OPEN} while it runs). */
    public TransactionEnd transactionEnd() {
        return transactionEnd;
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
            runtime.businessCommit().settleAbandoned(this);
        }
    }
}
