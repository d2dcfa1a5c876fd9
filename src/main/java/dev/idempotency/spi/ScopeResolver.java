package dev.idempotency.spi;

import dev.idempotency.Scope;

/**
 * Decides who owns an operation. The default takes the principal from the JAX-RS
 * {@code SecurityContext} and the tenant from {@code idempotency.tenant} ({@code header:<name>} or
 * {@code constant:<value>}). An application replaces it by declaring its own bean of this type.
 */
public interface ScopeResolver {

    /**
     * The scope of the operation, or throws {@link dev.idempotency.IdempotencyException} (for instance
     * {@code principal-required}) when the request has none.
     */
    Scope resolve(ScopeRequest request);
}
