package dev.idempotency.internal;

import dev.idempotency.core.OutcomeClassification;
import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.RecordStatus;
import dev.idempotency.core.Admission;
import dev.idempotency.core.CallFacts;
import dev.idempotency.core.Claim;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.core.CommitSettlement;
import dev.idempotency.core.LeaseGuard;
import dev.idempotency.core.LeaseKeeper;
import dev.idempotency.core.Operation;
import dev.idempotency.jta.JtaTransactions;
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
import java.util.logging.Level;
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

    private final IdempotencyRuntime runtime;
    // The server's JSON-B, created when the first call needs it (a deployment without business methods never does).
    private volatile Jsonb json;

    MethodCall(IdempotencyRuntime runtime) {
        this.runtime = runtime;
    }

    /** Calls {@code method} as {@code invocation} asks, or answers with the outcome of the key's first call. */
    public Object call(InvocationContext invocation, IdempotentMethod method) throws Exception {
        Object key = invocation.getParameters()[method.keyParameter()];
        EndpointPolicy policy = runtime.policy(method.endpoint());
        if (key == null) {
            if (policy.keyRequired()) {
                throw new IdempotencyException(Problem.of(ProblemType.KEY_MISSING, "the @IdempotencyKey argument of "
                        + method.endpoint() + " is null"));
            }
            // An optional key left out: the call runs unprotected.
            return invocation.proceed();
        }
        CallFacts facts = new CallFacts(method.endpoint(), key.toString(), arguments(invocation, method),
                runtime.callerName());
        Operation op = runtime.prepareCall(facts, method).orElseThrow();
        Admission admission = runtime.protocol().admit(op);
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

    private Object execute(InvocationContext invocation, IdempotentMethod method, Claim claim) throws Exception {
        JtaTransactions.BusinessTransaction tx = runtime.transactions().joinOrBegin();
        CommitSettlement commits = runtime.commits();
        LeaseGuard leases = runtime.leaseGuard();
        LeaseKeeper.Held lease = leases.hold(claim, tx);
        Object result;
        try (lease) {
            result = invocation.proceed();
        } catch (Exception | Error thrown) {
            failed(tx, claim, thrown);
            throw thrown;
        }
        if (leases.abandonedIfLost(lease, tx)) {
            // Another call may own the operation now: nothing of this one commits; the winner's result, if any.
            return replayed(((Admission.Replay) runtime.protocol().afterFenced(claim.operation())).record(), method);
        }
        if (!tx.active()) {
            commits.nothingCommits(tx, claim);
            throw new IdempotencyException(CommitSettlement.rolledBackProblem());
        }
        StoredResponse first;
        try {
            first = result == null ? NO_RESULT : new StoredResponse(200, Map.of("Content-Type",
                    List.of("application/json")), json().toJson(result, invocation.getMethod().getGenericReturnType())
                    .getBytes(StandardCharsets.UTF_8), StoredResponse.PLAIN);
        } catch (JsonbException unwritable) {
            // A result that cannot be kept cannot be given back to a repeat: nothing of this call commits.
            commits.nothingCommits(tx, claim);
            throw new IdempotencyException(Problem.of(ProblemType.NOT_CONFIGURED, "the result of " + method.endpoint()
                    + " cannot be written as JSON to be kept for repeats: " + unwritable.getMessage()), unwritable);
        }
        // If the transaction rolls back after the finish (the caller's, later, or at its commit), the record rolls
        // back to this claim: it is given back then, so that the next call runs at once.
        // An owned transaction whose commit cannot tell is settled where it is committed, below.
        CommitSettlement.Guard onRollback = commits.giveBackOnRollback(tx, claim, !tx.owned());
        boolean finished;
        try {
            finished = runtime.protocol().finish(claim, RecordStatus.SUCCEEDED,
                    Optional.of(runtime.outcomes().forStorage(first, claim.operation().policy(),
                            claim.operation().scopeKey())),
                    Optional.empty());
        } catch (RuntimeException storeFailed) {
            tx.abandonQuietly();
            throw storeFailed;
        }
        if (!finished) {
            // Fenced out: another call took the operation over; its result, if it has one.
            onRollback.settledHere();
            tx.abandonQuietly();
            return replayed(((Admission.Replay) runtime.protocol().afterFenced(claim.operation())).record(), method);
        }
        if (!tx.owned()) {
            return result;
        }
        CommitSettlement.OwnedCommit commit = commits.commitOwned(tx, claim);
        if (commit instanceof CommitSettlement.OwnedCommit.RefusedForConflict) {
            // Refused at COMMIT for a conflict: nothing of this call committed; the winner's result, if any.
            return replayed(commits.winnerAfterRefusedCommit(claim), method);
        }
        if (commit instanceof CommitSettlement.OwnedCommit.RolledBack rolledBack) {
            // Given back from its completion already.
            throw CommitSettlement.rolledBack(rolledBack.failure());
        }
        if (commit instanceof CommitSettlement.OwnedCommit.NotCommitted notCommitted) {
            throw CommitSettlement.retryLater(notCommitted.failure());
        }
        return result;
    }

    // The method threw: nothing of its work commits. A final failure is recorded; any other gives the claim back.
    private void failed(JtaTransactions.BusinessTransaction tx, Claim claim, Throwable thrown) {
        tx.abandonQuietly();
        EndpointPolicy policy = claim.operation().policy();
        boolean isFinal = OutcomeClassification.FailureKind.of(policy, thrown) == OutcomeClassification.FailureKind.FINAL;
        try {
            if (isFinal) {
                runtime.protocol().finishAlone(claim, RecordStatus.FAILED_FINAL, Optional.of(runtime.failureOutcome(
                        ProblemType.OPERATION_FAILED, "the first call with this key failed finally ("
                                + thrown.getClass().getName() + "); a new operation needs a new key")));
            } else {
                runtime.protocol().release(claim);
            }
        } catch (RuntimeException notRecorded) {
            LOG.log(Level.WARNING, "IDEM-W006 could not record the failure of " + claim
                    + "; it will be taken over when its lease ends", notRecorded);
        }
    }

    /** The first call's outcome: its result read back, or its final failure thrown. */
    private Object replayed(IdempotencyRecord record, IdempotentMethod method) {
        StoredResponse stored = runtime.outcomes().replayed(record);
        if (record.status() == RecordStatus.FAILED_FINAL) {
            throw new IdempotencyException(Problem.of(ProblemType.OPERATION_FAILED, storedDetail(stored)));
        }
        if (stored.status() == NO_RESULT.status()) {
            return null;
        }
        if (StoredResponse.OMITTED.equals(stored.bodyEncoding())) {
            throw new IdempotencyException(Problem.of(ProblemType.RESPONSE_TOO_LARGE, "the operation was done, but"
                    + " its result was not kept (storage or max-response-bytes of " + method.endpoint() + ")"));
        }
        return json().fromJson(new String(stored.body(), StandardCharsets.UTF_8), method.method().getGenericReturnType());
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
    private byte[] arguments(InvocationContext invocation, IdempotentMethod method) {
        Object[] all = invocation.getParameters();
        List<Object> others = new ArrayList<>(all.length);
        for (int i = 0; i < all.length; i++) {
            if (i != method.keyParameter()) {
                others.add(all[i]);
            }
        }
        try {
            return json().toJson(others).getBytes(StandardCharsets.UTF_8);
        } catch (JsonbException unwritable) {
            throw new IdempotencyException(Problem.of(ProblemType.NOT_CONFIGURED, "the arguments of "
                    + method.endpoint() + " cannot be written as JSON for its fingerprint: " + unwritable.getMessage()),
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
