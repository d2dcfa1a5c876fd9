package dev.idempotency.jaxrs;

import dev.idempotency.cdi.IdempotencyRuntime;
import dev.idempotency.cdi.IdempotentExchange;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.spi.StoredResponse;
import jakarta.annotation.Priority;
import jakarta.enterprise.inject.spi.CDI;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;

import java.util.Optional;

/**
 * Sends what the protocol decided: the stored bytes of the first response (for the first execution as
 * for every replay, so they cannot drift), or records a thrown failure as the application's exception
 * mappers rendered it. Response filters run in descending priority, so this low priority runs late,
 * after the application's own filters changed the response.
 */
@Priority(Priorities.AUTHENTICATION - 500)
public class IdempotencyResponseFilter implements ContainerResponseFilter {

    @Override
    public void filter(ContainerRequestContext request, ContainerResponseContext response) {
        IdempotentExchange exchange = CDI.current().select(IdempotentExchange.class).get();
        if (exchange.request() == null || !exchange.isActive()) {
            return;
        }
        IdempotentExchange.Reply reply = exchange.reply();
        if (reply != null) {
            if (!reply.awaitsCommit() || Boolean.TRUE.equals(exchange.hasCommitted())) {
                ResponseSnapshots.apply(reply.response(), response, reply.replayed());
            }
            return;
        }
        Optional<Optional<Boolean>> pending = exchange.pendingFailure();
        if (pending.isEmpty()) {
            return;
        }
        IdempotencyRuntime runtime = CDI.current().select(IdempotencyRuntime.class).get();
        EndpointPolicy policy = exchange.policy();
        StoredResponse failure = ResponseSnapshots.ofContext(response, exchange.request(), policy);
        int status = failure.status();
        boolean retryable = pending.get().orElse(status < 400 || status >= 500);
        runtime.recordFailure(exchange, failure, retryable);
        ResponseSnapshots.apply(failure, response, false);
    }
}
