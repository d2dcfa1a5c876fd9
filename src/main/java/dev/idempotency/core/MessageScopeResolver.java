package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.Scope;
import dev.idempotency.spi.ScopeRequest;
import dev.idempotency.spi.ScopeResolver;

import java.util.Map;

/**
 * The scope of a message: tenant and principal from the endpoint's {@link MessagePolicy} (a constant, or a
 * property the producer sets), the endpoint, the key. A message has no authenticated caller, and the
 * application's {@link ScopeResolver}, written for requests, is not asked.
 */
public final class MessageScopeResolver implements ScopeResolver {
    private final Map<String, MessagePolicy> policies;

    /** @param policies the message policy of every endpoint that consumes messages */
    public MessageScopeResolver(Map<String, MessagePolicy> policies) {
        this.policies = Map.copyOf(policies);
    }

    @Override
    public Scope resolve(ScopeRequest request) {
        MessagePolicy policy = policies.get(request.endpoint());
        if (policy == null) {
            throw new IllegalStateException("IDEM-X006 endpoint '" + request.endpoint() + "' does not consume messages");
        }
        String principal = policy.principal().single(request, "message's principal");
        if (principal.isEmpty()) {
            throw new IdempotencyException(Problem.of(ProblemType.PRINCIPAL_REQUIRED,
                    "the message has no property " + policy.principal().value() + " naming whose operation it is"));
        }
        return new Scope(policy.tenant().single(request, "message's tenant"), principal, request.endpoint(),
                request.key());
    }
}
