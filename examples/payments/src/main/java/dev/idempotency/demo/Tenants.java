package dev.idempotency.demo;

import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.Scope;
import dev.idempotency.spi.ScopeRequest;
import dev.idempotency.spi.ScopeResolver;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.Map;

/**
 * Which tenant a user belongs to — the demo's own {@link ScopeResolver}, replacing the library's default:
 * alice and bob are in {@code acme}, carol and mallory in {@code globex}; the payments service calls the
 * acquirer as its own tenant.
 */
@ApplicationScoped
public class Tenants implements ScopeResolver {
    static final String SERVICE_USER = "payments-service";
    private static final Map<String, String> TENANT_OF = Map.of(
            "alice", "acme", "bob", "acme", "carol", "globex", "mallory", "globex", SERVICE_USER, "payments-service");

    /**
     * The tenant of an authenticated user.
     *
     * @throws DemoProblem 403 no-tenant for a user the realm knows and no tenant has (an operator added the
     *                     user, not the mapping): the caller's error to report, not the server's
     */
    public String of(String user) {
        String tenant = TENANT_OF.get(user);
        if (tenant == null) {
            throw DemoProblem.noTenant(user);
        }
        return tenant;
    }

    @Override
    public Scope resolve(ScopeRequest request) {
        String user = request.principalName().orElseThrow(() -> new IdempotencyException(Problem.of(
                ProblemType.PRINCIPAL_REQUIRED, "idempotent operations belong to an authenticated caller")));
        return new Scope(of(user), user, request.endpoint(), request.key());
    }
}
