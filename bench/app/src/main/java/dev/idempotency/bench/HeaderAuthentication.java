package dev.idempotency.bench;

import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.ext.Provider;

import java.security.Principal;

/**
 * The benchmark's authentication: the caller is the {@code X-Bench-User} header. The library rejects
 * anonymous callers by default and limits the keys one caller holds per endpoint, so the load spreads its
 * new keys over many users; a real authentication mechanism would only add the same cost to every row.
 */
@Provider
@Priority(Priorities.AUTHENTICATION)
public class HeaderAuthentication implements ContainerRequestFilter {
    static final String HEADER = "X-Bench-User";

    @Override
    public void filter(ContainerRequestContext request) {
        String user = request.getHeaderString(HEADER);
        if (user == null || user.isEmpty()) {
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
                return HEADER;
            }
        });
    }
}
