package dev.idempotency.endpoints;

import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.core.Operation;
import dev.idempotency.core.RequestPreparation;
import dev.idempotency.spi.OutcomeResolver;

import java.util.Objects;
import java.util.Optional;

/**
 * An idempotent method as the deployment resolved it, once: its declaration, its policy, the resolver that asks its
 * downstream (when it has external side effects) and the preparation of its trigger's input (key, scope,
 * fingerprint). A call looks it up by its method and uses it as it is.
 *
 * @param declared    the annotated method, as the extension found it
 * @param policy      its resolved policy
 * @param resolver    the application's resolver for it, when it has external side effects
 * @param preparation how its trigger's input becomes an operation
 */
public record IdempotentEndpoint(IdempotentMethod declared, EndpointPolicy policy, Optional<OutcomeResolver> resolver,
                                 RequestPreparation preparation) {
    public IdempotentEndpoint {
        Objects.requireNonNull(declared, "declared");
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(resolver, "resolver");
        Objects.requireNonNull(preparation, "preparation");
    }

    /** The endpoint's name. */
    public String name() {
        return declared.endpoint();
    }

    /** What calls it: a request, a message or the application. */
    public IdempotentMethod.Trigger trigger() {
        return declared.trigger();
    }

    /**
     * Key, scope and fingerprint of one input of this endpoint's trigger (a request, a message, a call).
     *
     * @return empty when the input carries no key and the endpoint does not require one
     * @throws dev.idempotency.IdempotencyException for a missing or malformed key, a malformed body or a missing
     *                                              principal
     */
    public Optional<Operation> prepare(RequestPreparation.Incoming input) {
        return preparation.prepare(input, policy, resolver);
    }
}
