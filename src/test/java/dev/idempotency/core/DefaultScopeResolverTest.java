package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.Scope;
import dev.idempotency.spi.ScopeRequest;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DefaultScopeResolverTest {

    @Test
    void scopesByTenantConstantPrincipalEndpointAndKey() {
        Scope scope = new DefaultScopeResolver(false, "acme", false).resolve(request("alice", Map.of()));
        assertThat(scope).isEqualTo(new Scope("acme", "alice", "payments", "k1"));
    }

    @Test
    void takesTheTenantFromAHeaderOnceAndBounded() {
        DefaultScopeResolver resolver = new DefaultScopeResolver(true, "X-Tenant", false);
        assertThat(resolver.resolve(request("alice", Map.of("X-Tenant", List.of("globex")))).tenant()).isEqualTo("globex");
        assertThat(resolver.resolve(request("alice", Map.of())).tenant()).isEmpty();
        assertThatThrownBy(() -> resolver.resolve(request("alice", Map.of("X-Tenant", List.of("a", "b")))))
                .isInstanceOf(IdempotencyException.class);
        assertThatThrownBy(() -> resolver.resolve(request("alice", Map.of("X-Tenant", List.of("t".repeat(129))))))
                .isInstanceOf(IdempotencyException.class);
    }

    @Test
    void withoutAPrincipalRejectsWith401OrUsesTheDocumentedAnonymousScope() {
        assertThatThrownBy(() -> new DefaultScopeResolver(false, "", false).resolve(request(null, Map.of())))
                .isInstanceOf(IdempotencyException.class)
                .satisfies(e -> assertThat(((IdempotencyException) e).problem().status()).isEqualTo(401));
        assertThat(new DefaultScopeResolver(false, "", true).resolve(request(null, Map.of())).principal())
                .isEqualTo(Scope.ANONYMOUS);
    }

    private static ScopeRequest request(String principal, Map<String, List<String>> headers) {
        return new ScopeRequest() {
            @Override
            public Optional<String> principalName() {
                return Optional.ofNullable(principal);
            }

            @Override
            public boolean isUserInRole(String role) {
                return false;
            }

            @Override
            public List<String> header(String name) {
                return headers.getOrDefault(name, List.of());
            }

            @Override
            public String endpoint() {
                return "payments";
            }

            @Override
            public String key() {
                return "k1";
            }
        };
    }
}
