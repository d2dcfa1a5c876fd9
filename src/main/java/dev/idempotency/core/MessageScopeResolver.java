package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.Scope;
import dev.idempotency.spi.ScopeRequest;
import dev.idempotency.spi.ScopeResolver;

import java.util.List;
import java.util.Map;

/**
 * The scope of a message: tenant and principal from the endpoint's {@link MessagePolicy} (a constant, or a
 * property the producer sets), the endpoint, the key. A message has no authenticated caller, and the
 * application's {@link ScopeResolver}, written for requests, is not asked.
 */
public final class MessageScopeResolver implements ScopeResolver {
    private static final int MAX_LENGTH = 128;
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
        String principal = single(policy.principal(), request, "principal");
        if (principal.isEmpty()) {
            throw new IdempotencyException(Problem.of(ProblemType.PRINCIPAL_REQUIRED,
                    "the message has no property " + policy.principal().value() + " naming whose operation it is"));
        }
        return new Scope(single(policy.tenant(), request, "tenant"), principal, request.endpoint(), request.key());
    }

    private static String single(ScopeSource source, ScopeRequest request, String what) {
        List<String> values = source.read(request::header);
        if (values.size() > 1 || (values.size() == 1 && values.get(0).length() > MAX_LENGTH)) {
            throw new IdempotencyException(Problem.of(ProblemType.KEY_INVALID, "the message's " + what + " ("
                    + source + ") must have at most " + MAX_LENGTH + " characters"));
        }
        return values.isEmpty() ? "" : values.get(0);
    }
}
