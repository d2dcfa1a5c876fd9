package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.Scope;
import dev.idempotency.spi.ScopeRequest;
import dev.idempotency.spi.ScopeResolver;

import java.util.List;

/**
 * The scope unless the application provides its own {@link ScopeResolver}: the authenticated
 * principal, and the tenant from a constant or from a header that a trusted gateway sets. Without a
 * principal the request is rejected (401), or, when anonymous calls are allowed, it is scoped to
 * {@link Scope#ANONYMOUS} — all anonymous callers then share one key space, which only suits keys of
 * high entropy.
 */
public final class DefaultScopeResolver implements ScopeResolver {
    private static final int MAX_TENANT_LENGTH = 128;
    private final boolean tenantFromHeader;
    private final String tenant;
    private final boolean anonymousAllowed;

    /**
     * @param tenantFromHeader whether {@code tenant} names a header (else it is the tenant itself)
     */
    public DefaultScopeResolver(boolean tenantFromHeader, String tenant, boolean anonymousAllowed) {
        this.tenantFromHeader = tenantFromHeader;
        this.tenant = tenant;
        this.anonymousAllowed = anonymousAllowed;
    }

    @Override
    public Scope resolve(ScopeRequest request) {
        String principal = request.principalName().filter(name -> !name.isEmpty()).orElse(null);
        if (principal == null) {
            if (!anonymousAllowed) {
                throw new IdempotencyException(Problem.of(ProblemType.PRINCIPAL_REQUIRED,
                        "idempotent operations belong to an authenticated caller"));
            }
            principal = Scope.ANONYMOUS;
        }
        return new Scope(tenantOf(request), principal, request.endpoint(), request.key());
    }

    private String tenantOf(ScopeRequest request) {
        if (!tenantFromHeader) {
            return tenant;
        }
        List<String> values = request.header(tenant);
        if (values.size() > 1 || (values.size() == 1 && values.get(0).length() > MAX_TENANT_LENGTH)) {
            throw new IdempotencyException(Problem.of(ProblemType.KEY_INVALID,
                    "the tenant header must appear at most once, with at most " + MAX_TENANT_LENGTH + " characters"));
        }
        return values.isEmpty() ? "" : values.get(0);
    }
}
