package dev.idempotency.call;

import dev.idempotency.endpoints.IdempotentEndpoint;

import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.RecordStatus;
import dev.idempotency.core.Admission;
import dev.idempotency.core.BusinessTransactions;
import dev.idempotency.core.AdmissionPhase;
import dev.idempotency.core.Execution;
import dev.idempotency.core.OutcomeStorage;
import dev.idempotency.core.CallFacts;
import dev.idempotency.core.Claim;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.core.CommitSettlement;
import dev.idempotency.core.BusinessTransaction;
import dev.idempotency.core.OutcomeClassification;
import dev.idempotency.core.OutcomeCodec;
import dev.idempotency.core.Operation;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.StoredResponse;
import jakarta.interceptor.InvocationContext;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import jakarta.json.bind.JsonbException;

import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * Runs an {@code @Idempotent} CDI business method, keyed by its {@code @IdempotencyKey} argument, under the
 * protocol. The claim commits on its own; the method then runs in the caller's transaction when there is one (its
 * result's record commits with the caller's work, and is given back if the caller rolls back), else in one of the
 * library's own, committed here. The result is stored as JSON (Jakarta JSON Binding, the server's) and a call with
 * the same key and equal arguments gets it back, read as the method's return type, without running the method.
 * <ul>
 * <li>a final failure ({@code finalOn}, Bean Validation) is recorded FAILED_FINAL, thrown, and every later call
 *     with the key gets {@link ProblemType#OPERATION_FAILED};</li>
 * <li>any other failure gives the claim back: the next call runs the method again;</li>
 * <li>a method that throws never commits its work: the caller's transaction is marked rollback-only, since its
 *     record says the operation was not done (or failed finally, with nothing of it kept);</li>
 * <li>a call while another with the key runs is answered as the endpoint's in-flight policy says: an
 *     {@link IdempotencyException} ({@link ProblemType#REQUEST_IN_FLIGHT}), after the bounded wait if so set.</li>
 * </ul>
 */
public final class MethodCall {
    private static final Logger LOG = Logger.getLogger(MethodCall.class.getName());
    private static final StoredResponse NO_RESULT = new StoredResponse(204, Map.of(), new byte[0], StoredResponse.PLAIN);

    private final BusinessTransactions transactions;
    private final AdmissionPhase admission;
    private final Execution execution;
    private final CommitSettlement commits;
    private final OutcomeStorage outcomes;
    // The stored outcome of a failure without a response: a problem naming the exception's type, not its message.
    private final BiFunction<ProblemType, String, StoredResponse> failureOutcomes;
    private final Supplier<Optional<String>> callerName;
    // The server's JSON-B, created when the first call needs it (a deployment without business methods never does).
    private volatile Jsonb json;

    /**
     * @param callerName the container's authenticated caller on the calling thread, if any
     */
    public MethodCall(BusinessTransactions transactions, AdmissionPhase admission, Execution execution,
                      CommitSettlement commits, OutcomeStorage outcomes, BiFunction<ProblemType, String, StoredResponse> failureOutcomes,
                      Supplier<Optional<String>> callerName) {
        this.transactions = transactions;
        this.admission = admission;
        this.execution = execution;
        this.commits = commits;
        this.outcomes = outcomes;
        this.failureOutcomes = failureOutcomes;
        this.callerName = callerName;
    }

    /** Calls {@code method} as {@code invocation} asks, or answers with the outcome of the key's first call. */
    public Object call(InvocationContext invocation, IdempotentEndpoint method) throws Exception {
        Object key = invocation.getParameters()[method.declared().keyParameter()];
        EndpointPolicy policy = method.policy();
        if (key == null) {
            if (policy.keyRequired()) {
                throw new IdempotencyException(Problem.of(ProblemType.KEY_MISSING, "the @IdempotencyKey argument of "
                        + method.name() + " is null"));
            }
            // An optional key left out: the call runs unprotected.
            return invocation.proceed();
        }
        CallFacts facts = new CallFacts(method.name(), key.toString(), arguments(invocation, method),
                callerName.get());
        Operation op = method.prepare(facts).orElseThrow();
        Admission admission = this.admission.admit(op);
        if (admission instanceof Admission.Replay replay) {
            return replayed(replay.record(), method);
        }
        if (admission instanceof Admission.Accepted running) {
            // in-flight=accepted, meant for a client that polls a status resource: a call has none to poll.
            throw new IdempotencyException(Problem.of(ProblemType.REQUEST_IN_FLIGHT, "the first call with this key"
                    + " is still running; call again later").retryAfter(running.retryAfter()));
        }
        if (!(admission instanceof Admission.Execute execute)) {
            throw new IllegalStateException("IDEM-X008 a business method was admitted as " + admission);
        }
        return execute(invocation, method, execute.claim());
    }

    private Object execute(InvocationContext invocation, IdempotentEndpoint method, Claim claim) throws Exception {
        return execution.run(claim, transactions.joinOrBegin(), new ReturnValueCodec(invocation,
                method));
    }

    /**
     * A call's outcomes: the method's return value, kept as JSON; a repeat gets it back, or the first call's final
     * failure thrown. Every failure is the method's caller's to see: thrown.
     */
    private final class ReturnValueCodec implements OutcomeCodec<Object> {
        private final InvocationContext invocation;
        private final IdempotentEndpoint method;

        ReturnValueCodec(InvocationContext invocation, IdempotentEndpoint method) {
            this.invocation = invocation;
            this.method = method;
        }

        @Override
        public Object invoke() throws Exception {
            return invocation.proceed();
        }

        @Override
        public StoredResponse capture(Object result) {
            if (result == null) {
                return NO_RESULT;
            }
            try {
                return new StoredResponse(200, Map.of("Content-Type", List.of("application/json")),
                        json().toJson(result, invocation.getMethod().getGenericReturnType())
                                .getBytes(StandardCharsets.UTF_8), StoredResponse.PLAIN);
            } catch (JsonbException unwritable) {
                throw new UnstorableResult(new IdempotencyException(Problem.of(ProblemType.NOT_CONFIGURED,
                        "the result of " + method.name() + " cannot be written as JSON to be kept for repeats: "
                                + unwritable.getMessage()), unwritable));
            }
        }

        // The method threw: nothing of its work commits. A final failure is recorded; any other gives the claim back.
        @Override
        public Object failed(Throwable thrown, Claim claim) throws Exception {
            if (thrown instanceof UnstorableResult unstorable) {
                // A result that cannot be kept cannot be given back to a repeat: nothing of this call commits.
                commits.giveBackQuietly(claim);
                throw unstorable.problem;
            }
            boolean isFinal = OutcomeClassification.FailureKind.of(claim.operation().policy(), thrown)
                    == OutcomeClassification.FailureKind.FINAL;
            execution.recordFailure(claim, isFinal ? RecordStatus.FAILED_FINAL
                    : RecordStatus.FAILED_RETRYABLE, isFinal ? Optional.of(failureOutcomes.apply(
                    ProblemType.OPERATION_FAILED, "the first call with this key failed finally ("
                            + thrown.getClass().getName() + "); a new operation needs a new key")) : Optional.empty());
            if (thrown instanceof Error error) {
                throw error;
            }
            throw (Exception) thrown;
        }

        // Another call owns the operation now: nothing of this one commits; the winner's result, if any.
        @Override
        public Object superseded(Superseded why, Claim claim, Supplier<Admission.Replay> winner) {
            return replayed(winner.get().record(), method);
        }

        @Override
        public Object retryable(Object result, StoredResponse first) {
            throw new IllegalStateException("IDEM-X009 a business method's result is never retryable: " + first.status());
        }

        @Override
        public Object rolledBack(Object result, StoredResponse first, Optional<Exception> committedWith) {
            throw new IdempotencyException(CommitSettlement.rolledBackProblem());
        }

        @Override
        public Object finishFailed(RuntimeException storeFailed, Claim claim) {
            throw storeFailed;
        }

        @Override
        public Object finishedInCallersTransaction(BusinessTransaction tx, Claim claim, Object result,
                                                   StoredResponse first, Optional<Exception> committedWith) {
            return result;
        }

        @Override
        public Object committed(Object result, StoredResponse first, Optional<Exception> committedWith) {
            return result;
        }

        // Given back from its completion already.
        @Override
        public Object commitRolledBack(CommitSettlement.OwnedCommit.RolledBack rolledBack, Claim claim) {
            throw CommitSettlement.rolledBack(rolledBack.failure());
        }

        @Override
        public Object notCommitted(CommitSettlement.OwnedCommit.NotCommitted notCommitted, Claim claim) {
            throw CommitSettlement.retryLater(notCommitted.failure());
        }
    }

    // A result that cannot be kept for repeats: the call fails with a problem, and nothing of it commits.
    private static final class UnstorableResult extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final IdempotencyException problem;

        UnstorableResult(IdempotencyException problem) {
            super(problem.getMessage(), problem, false, false);
            this.problem = problem;
        }
    }

    /** The first call's outcome: its result read back, or its final failure thrown. */
    private Object replayed(IdempotencyRecord record, IdempotentEndpoint method) {
        StoredResponse stored = outcomes.replayed(record);
        if (record.status() == RecordStatus.FAILED_FINAL) {
            throw new IdempotencyException(Problem.of(ProblemType.OPERATION_FAILED, storedDetail(stored)));
        }
        if (stored.status() == NO_RESULT.status()) {
            return null;
        }
        if (StoredResponse.OMITTED.equals(stored.bodyEncoding())) {
            throw new IdempotencyException(Problem.of(ProblemType.RESPONSE_TOO_LARGE, "the operation was done, but"
                    + " its result was not kept (storage or max-response-bytes of " + method.name() + ")")
                    .withState(dev.idempotency.core.AnswerStates.APPLIED));
        }
        return json().fromJson(new String(stored.body(), StandardCharsets.UTF_8), method.declared().method().getGenericReturnType());
    }

    // The detail recorded with a final failure (the exception's type, never its message).
    private String storedDetail(StoredResponse problem) {
        try {
            Object detail = json().fromJson(new String(problem.body(), StandardCharsets.UTF_8), Map.class).get("detail");
            return detail == null ? "the first call with this key failed finally" : detail.toString();
        } catch (JsonbException unreadable) {
            return "the first call with this key failed finally";
        }
    }

    // Every argument but the key, in order: the call's "body", fingerprinted as canonical JSON.
    private byte[] arguments(InvocationContext invocation, IdempotentEndpoint method) {
        Object[] all = invocation.getParameters();
        List<Object> others = new ArrayList<>(all.length);
        for (int i = 0; i < all.length; i++) {
            if (i != method.declared().keyParameter()) {
                others.add(all[i]);
            }
        }
        try {
            return json().toJson(others).getBytes(StandardCharsets.UTF_8);
        } catch (JsonbException unwritable) {
            throw new IdempotencyException(Problem.of(ProblemType.NOT_CONFIGURED, "the arguments of "
                    + method.name() + " cannot be written as JSON for its fingerprint: " + unwritable.getMessage()),
                    unwritable);
        }
    }

    private Jsonb json() {
        Jsonb created = json;
        if (created == null) {
            synchronized (this) {
                if (json == null) {
                    json = JsonbBuilder.create();
                }
                created = json;
            }
        }
        return created;
    }
}
