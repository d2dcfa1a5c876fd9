package dev.idempotency.endpoint;

import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.core.SecurityContext;

import java.security.Principal;

/** The test application's authentication: {@code X-User: alice} (the servers' own in the real-server tests). */
@Priority(Priorities.AUTHENTICATION)
public class HeaderAuthentication implements ContainerRequestFilter {
    @Override
    public void filter(ContainerRequestContext request) {
        String user = request.getHeaderString("X-User");
        if (user == null) {
            return;
        }
        Principal principal = () -> user;
        request.setSecurityContext(new SecurityContext() {
            @Override
            public Principal getUserPrincipal() {
                return principal;
            }

            @Override
            public boolean isUserInRole(String role) {
                return false;
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
