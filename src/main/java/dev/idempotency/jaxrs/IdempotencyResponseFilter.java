package dev.idempotency.jaxrs;

import dev.idempotency.internal.ProblemResponses;
import dev.idempotency.internal.ResponseSnapshots;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.internal.IdempotencyRuntime;
import dev.idempotency.internal.IdempotentExchange;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.spi.StoredResponse;
import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import java.time.Duration;
import java.util.Optional;

/**
 * Sends what the protocol decided: the stored bytes of the first response (for the first execution as
 * for every replay, so they cannot drift), or records a thrown failure as the application's exception
 * mappers rendered it. Response filters run in descending priority, so this low priority runs late,
 * after the application's own filters changed the response.
 */
@Priority(Priorities.AUTHENTICATION - 500)
public class IdempotencyResponseFilter implements ContainerResponseFilter {
    private final Collaborators collaborators = new Collaborators();

    @Override
    public void filter(ContainerRequestContext request, ContainerResponseContext response) {
        IdempotentExchange exchange = collaborators.exchange();
        if (exchange.request() == null || !exchange.isActive()) {
            return;
        }
        IdempotentExchange.Reply reply = exchange.reply();
        if (reply != null) {
            if (!reply.awaitsCommit() || committedQuietly(exchange, reply, response)) {
                ResponseSnapshots.apply(reply.response(), response, reply.replayed());
            } else if (exchange.transactionEnd() != IdempotentExchange.TransactionEnd.OPEN) {
                settleCommit(collaborators.runtime(), exchange, reply, response);
            }
            return;
        }
        Optional<IdempotentExchange.FailureKind> pending = exchange.pendingFailure();
        if (pending.isEmpty()) {
            return;
        }
        IdempotencyRuntime runtime = collaborators.runtime();
        EndpointPolicy policy = exchange.policy();
        StoredResponse failure = ResponseSnapshots.ofContext(response, exchange.request(), policy);
        int status = failure.status();
        boolean retryable = pending.get().retryable(status);
        runtime.recordFailure(exchange, failure, retryable);
        ResponseSnapshots.apply(failure, response, false);
    }

    /**
     * The joined transaction committed and nothing failed on the way out. A commit that raised (a heuristic
     * outcome: the connection was lost during COMMIT) may still be reported as committed to synchronizations;
     * the application then answers with its mapping of that exception, not the method's response.
     */
    private static boolean committedQuietly(IdempotentExchange exchange, IdempotentExchange.Reply reply,
                                            ContainerResponseContext response) {
        return exchange.transactionEnd() == IdempotentExchange.TransactionEnd.COMMITTED
                && response.getStatus() == reply.response().status();
    }

    /**
     * The joined transaction rolled back, or its commit outcome is unknown (the connection was lost during
     * COMMIT): the fenced update tells. Committed: the first response is the answer. Known rollback: the
     * application's mapped answer stands. Otherwise (not committed, or undecidable): 503, retry the same key.
     */
    private static void settleCommit(IdempotencyRuntime runtime, IdempotentExchange exchange,
                                     IdempotentExchange.Reply reply, ContainerResponseContext response) {
        Optional<Boolean> committed = runtime.settleCommit(exchange);
        if (committed.orElse(false)) {
            ResponseSnapshots.apply(reply.response(), response, false);
        } else if (exchange.transactionEnd() != IdempotentExchange.TransactionEnd.ROLLED_BACK || committed.isEmpty()) {
            Problem problem = Problem.of(ProblemType.STORE_UNAVAILABLE,
                    "the outcome could not be committed; retry with the same key").retryAfter(Duration.ofSeconds(1));
            Response rendered = runtime.problems().toResponse(problem);
            response.setStatus(rendered.getStatus());
            response.getHeaders().clear();
            response.getHeaders().putAll(rendered.getHeaders());
            response.setEntity(rendered.getEntity(), new java.lang.annotation.Annotation[0],
                    MediaType.valueOf(ProblemResponses.PROBLEM_JSON));
        }
    }
}
