package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.Scope;
import dev.idempotency.spi.ScopeRequest;
import dev.idempotency.spi.ScopeResolver;

import java.util.Map;
import java.util.Objects;

/**
 * The scope of a call of an idempotent business method: tenant and principal from the endpoint's {@link Sources}
 * (a constant, or the container's authenticated caller), the endpoint, the key. The application's
 * {@link ScopeResolver} reads requests, which a call does not have, and is not asked.
 */
public final class CallScopeResolver implements ScopeResolver {
    private final Map<String, Sources> endpoints;

    /** @param endpoints the sources of every business-method endpoint */
    public CallScopeResolver(Map<String, Sources> endpoints) {
        this.endpoints = Map.copyOf(endpoints);
    }

    @Override
    public Scope resolve(ScopeRequest request) {
        Sources sources = endpoints.get(request.endpoint());
        if (sources == null) {
            throw new IllegalStateException("IDEM-X006 endpoint '" + request.endpoint() + "' is not a business method");
        }
        String principal = sources.principal().single(request, "caller");
        if (principal.isEmpty()) {
            throw new IdempotencyException(Problem.of(ProblemType.PRINCIPAL_REQUIRED, "the call has no authenticated"
                    + " caller, whose operation it would be (call.principal = caller); name a constant principal for"
                    + " calls without one"));
        }
        return new Scope(sources.tenant().single(request, "tenant"), principal, request.endpoint(), request.key());
    }

    /**
     * Where a business method's tenant and principal come from: a constant or the caller, never a property.
     *
     * @param tenant    default {@code constant:} (none)
     * @param principal default {@code constant:$calls}
     */
    public record Sources(ScopeSource tenant, ScopeSource principal) {
        public Sources {
            Objects.requireNonNull(tenant, "tenant");
            Objects.requireNonNull(principal, "principal");
            if (tenant.kind() == ScopeSource.Kind.PROPERTY || principal.kind() == ScopeSource.Kind.PROPERTY) {
                throw new IllegalArgumentException("a call has no properties: constant:<value> or caller");
            }
        }
    }
}
