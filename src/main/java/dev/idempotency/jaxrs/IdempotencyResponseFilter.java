package dev.idempotency.jaxrs;

import dev.idempotency.http.ProblemResponses;
import dev.idempotency.http.ResponseSnapshots;
import dev.idempotency.IdempotencyState;
import dev.idempotency.core.AnswerStates;
import dev.idempotency.core.CommitSettlement;
import dev.idempotency.core.TransactionEnd;
import dev.idempotency.http.ExchangeStage;
import dev.idempotency.http.IdempotentExchange;
import dev.idempotency.spi.StoredResponse;
import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

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
        ExchangeStage stage = exchange.stage();
        if (stage instanceof ExchangeStage.Settled settled) {
            if (settled.reply().isPresent()) {
                ExchangeStage.Reply reply = settled.reply().get();
                ResponseSnapshots.apply(reply.response(), response, reply.replayed());
                say(reply.state(), response);
            } else if (settled.state().isPresent()) {
                say(settled.state().get(), response);
            } else if (settled.operation() != null && !response.getHeaders().containsKey(IdempotencyState.HEADER)) {
                // Neither a reply nor a problem of the library's said what happened: nobody here can tell.
                say(AnswerStates.UNKNOWN, response);
            }
        } else if (stage instanceof ExchangeStage.AwaitingCommit awaiting) {
            int firstStatus = awaiting.first().status();
            if (CommitSettlement.committedPlainly(awaiting.end(), firstStatus, response.getStatus())) {
                ResponseSnapshots.apply(awaiting.first(), response, false);
                say(AnswerStates.APPLIED, response);
            } else if (awaiting.end() != TransactionEnd.OPEN) {
                // Read before the claim is settled: what a rollback says depends on it.
                IdempotencyState nothingCommitted = exchange.notApplied();
                CommitSettlement.JoinedAnswer answer;
                try {
                    answer = collaborators.assembly().commits().settleJoined(awaiting.claim(), awaiting.end(),
                            firstStatus, response.getStatus());
                } finally {
                    exchange.settled(java.util.Optional.empty());
                }
                answer(answer, awaiting.first(), response, nothingCommitted);
            } else {
                // The caller's transaction outlives the response: whether it will commit, nobody here knows yet.
                say(AnswerStates.UNKNOWN, response);
            }
        } else if (stage instanceof ExchangeStage.Failed failed) {
            StoredResponse failure = ResponseSnapshots.ofContext(response, failed.request(), failed.claim().operation().policy());
            IdempotencyState recorded = exchange.failureState(failure.status()).orElseThrow();
            exchange.recordFailure(failure);
            ResponseSnapshots.apply(failure, response, false);
            say(recorded, response);
        }
    }

    /**
     * The joined transaction ended without a plain commit (rolled back, or its commit raised): what
     * {@link CommitSettlement} settled. A known rollback keeps the application's mapped answer, unless the
     * answer is the method's own success (the application marked the transaction rollback-only).
     */
    private void answer(CommitSettlement.JoinedAnswer answer, StoredResponse first, ContainerResponseContext response,
                        IdempotencyState nothingCommitted) {
        switch (answer) {
            case FIRST_RESPONSE -> {
                ResponseSnapshots.apply(first, response, false);
                say(AnswerStates.APPLIED, response);
            }
            case APPLICATION_ANSWER -> say(nothingCommitted, response);
            case RETRY_LATER -> replaceWith(CommitSettlement.retryLaterProblem(), response);
            case ROLLED_BACK -> replaceWith(CommitSettlement.rolledBackProblem().withState(nothingCommitted), response);
        }
    }

    private static void say(IdempotencyState state, ContainerResponseContext response) {
        response.getHeaders().putSingle(IdempotencyState.HEADER, state.headerValue());
    }

    private void replaceWith(dev.idempotency.Problem problem, ContainerResponseContext response) {
        Response rendered = collaborators.assembly().problems().toResponse(problem);
        response.setStatus(rendered.getStatus());
        response.getHeaders().clear();
        response.getHeaders().putAll(rendered.getHeaders());
        response.setEntity(rendered.getEntity(), new java.lang.annotation.Annotation[0],
                MediaType.valueOf(ProblemResponses.PROBLEM_JSON));
    }
}
