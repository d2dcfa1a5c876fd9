package dev.idempotency.cdi;

import dev.idempotency.deployment.Assembly;
import dev.idempotency.endpoints.IdempotentEndpoint;
import dev.idempotency.endpoints.IdempotentMethod;
import dev.idempotency.http.IdempotentExchange;
import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.core.Admission;
import dev.idempotency.core.AnswerStates;
import dev.idempotency.core.Claim;
import dev.idempotency.core.AdmissionPhase;
import dev.idempotency.core.Operation;
import dev.idempotency.core.BusinessCommitFailure;
import dev.idempotency.core.CommitSettlement;
import dev.idempotency.core.BusinessTransaction;
import dev.idempotency.http.CapturedRequest;
import dev.idempotency.http.ExchangeStage;
import dev.idempotency.http.OperationStatus;
import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;

import java.util.Optional;

/**
 * Runs an {@link Idempotent} resource method under the protocol: admit (claim, replay or reject), run
 * the method in a JTA transaction, and finish the record in that same transaction with the response
 * bytes the client gets. Its priority puts it inside the application's {@code @Transactional}
 * (configurable with {@code idempotency.interceptor-priority}).
 */
@Idempotent
@Interceptor
@Priority(Interceptor.Priority.LIBRARY_BEFORE + 10)
public class IdempotentInterceptor {
    private static final java.util.logging.Logger LOG = java.util.logging.Logger.getLogger(IdempotentInterceptor.class.getName());

    @Inject
    Assembly assembly;
    @Inject
    IdempotentExchange exchange;
    @Inject
    AsynchronousTasks tasks;

    @AroundInvoke
    public Object around(InvocationContext invocation) throws Exception {
        IdempotentEndpoint method = assembly.method(invocation.getMethod());
        if (method == null && invocation.getMethod().isAnnotationPresent(Idempotent.class)) {
            // Annotated, but the extension never saw its class (not discovered as a bean): refuse loudly rather
            // than run unprotected.
            LOG.severe("IDEM-E002 " + invocation.getMethod().getDeclaringClass().getName() + "#"
                    + invocation.getMethod().getName() + " is @Idempotent but the library did not find it at deployment;"
                    + " make its archive a bean archive (beans.xml with bean-discovery-mode=\"all\", or a bean-defining"
                    + " annotation)");
            throw new IdempotencyException(Problem.of(ProblemType.NOT_CONFIGURED,
                    "this method is not set up for idempotency; the server log says why"));
        }
        if (method != null && method.trigger() == IdempotentMethod.Trigger.CALL) {
            // A call owns no request: it is run apart from the exchange, wherever it is made (even inside another
            // idempotent operation, whose transaction it then joins).
            return assembly.calls().call(invocation, method);
        }
        ExchangeStage stage = exchange.stage();
        if (method == null || stage.active() != null || stage instanceof ExchangeStage.Unkeyed) {
            // Not idempotent; a nested call inside an operation that is already protected; or the key is
            // optional on this endpoint and the request has none: it runs unprotected.
            return invocation.proceed();
        }
        if (method.trigger() == IdempotentMethod.Trigger.MESSAGE) {
            return assembly.messages().deliver(invocation, method, exchange);
        }
        Operation op;
        if (stage instanceof ExchangeStage.Read r) {
            op = r.operation();
        } else if (stage instanceof ExchangeStage.Prepared p) {
            op = p.operation();
        } else {
            throw new IdempotencyException(Problem.of(ProblemType.NOT_CONFIGURED,
                    "this @Idempotent method was called without the library's JAX-RS filters (register "
                            + "dev.idempotency.jaxrs.IdempotencyFeature, or let the server scan the library)"));
        }
        CapturedRequest request = stage.request();
        exchange.admitting(op);
        if (op.policy().claimInTransaction()) {
            return claimInTransaction(invocation, method, op, stage, request);
        }
        Admission admission = admit(op, stage);
        if (admission instanceof Admission.Execute execute) {
            return op.policy().asynchronous() ? tasks.submit(invocation, execute.claim(), request)
                    : execute(invocation, method, execute.claim(), request, assembly.transactions().joinOrBegin());
        }
        return answer(admission, method, invocation, request, op);
    }

    // Admission goes on from the request filter's read when it made one.
    private Admission admit(Operation op, ExchangeStage stage) {
        AdmissionPhase admission = assembly.protocol().admission();
        return stage instanceof ExchangeStage.Read r ? admission.admit(op, r.record()) : admission.admit(op);
    }

    /**
     * ClaimMode.IN_TRANSACTION: the business transaction begins first and the claim is written in it, so that one
     * commit makes both the record and the business data (docs/adr/0014).
     */
    private Object claimInTransaction(InvocationContext invocation, IdempotentEndpoint method, Operation op,
                                      ExchangeStage stage, CapturedRequest request) throws Exception {
        BusinessTransaction tx = assembly.transactions().joinOrBegin();
        Admission admission;
        try {
            admission = admit(op, stage);
        } catch (RuntimeException | Error e) {
            // A claim whose wait ran out may have left the transaction unusable (PostgreSQL aborts it).
            tx.abandonQuietly();
            throw e;
        }
        if (admission instanceof Admission.Execute execute) {
            Claim claim = execute.claim();
            tx.afterCompletion(ended -> assembly.protocol().admission().claimEnded(claim));
            return execute(invocation, method, claim, request, tx);
        }
        if (tx.owned()) {
            // Nothing was written, or an earlier attempt's outcome learnt from the downstream: it commits.
            try {
                tx.commit();
            } catch (BusinessCommitFailure failure) {
                throw CommitSettlement.retryLater(failure);
            }
        }
        return answer(admission, method, invocation, request, op);
    }

    // An admission that runs nothing: a replay, a 202 for an operation in progress, or nothing more to send.
    private Object answer(Admission admission, IdempotentEndpoint method, InvocationContext invocation,
                          CapturedRequest request, Operation op) throws Exception {
        if (admission instanceof Admission.Replay replay) {
            exchange.settled(ResponseCodec.replayable(assembly.outcomes(), replay.record(), method, invocation, request),
                    true, AnswerStates.ofRecord(replay.record(), op.policy().externalSideEffects()));
        } else if (admission instanceof Admission.Accepted accepted) {
            exchange.settled(OperationStatus.accepted(accepted.record(), request, op.policy().statusPath(),
                    op.scope().key(), accepted.retryAfter()), false, AnswerStates.IN_PROGRESS);
        } else {
            exchange.settled(Optional.empty());
        }
        return null;
    }

    private Object execute(InvocationContext invocation, IdempotentEndpoint method, Claim claim, CapturedRequest request,
                           BusinessTransaction tx) throws Exception {
        exchange.running(claim);
        return assembly.execution().run(claim, tx, new ResponseCodec(exchange, assembly.outcomes(), invocation, method,
                request));
    }
}
