package dev.idempotency.endpoint;

import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.core.SecurityContext;

import java.security.Principal;

/**
 * The test application's authentication: {@code X-User: alice}, with her roles in {@code X-Roles} (comma-separated);
 * the servers' own in the real-server tests.
 */
@Priority(Priorities.AUTHENTICATION)
public class HeaderAuthentication implements ContainerRequestFilter {
    @Override
    public void filter(ContainerRequestContext request) {
        String user = request.getHeaderString("X-User");
        // Without X-User the request is anonymous, as a server's own security context shows it: no principal.
        Principal principal = user == null ? null : () -> user;
        java.util.Set<String> roles = request.getHeaderString("X-Roles") == null ? java.util.Set.of()
                : java.util.Set.of(request.getHeaderString("X-Roles").split(","));
        request.setSecurityContext(new SecurityContext() {
            @Override
            public Principal getUserPrincipal() {
                return principal;
            }

            @Override
            public boolean isUserInRole(String role) {
                return principal != null && roles.contains(role);
            }

            @Override
            public boolean isSecure() {
                return false;
            }

            @Override
            public String getAuthenticationScheme() {
                return "X-User";
            }
        });
    }
}
