package dev.idempotency.http;

import dev.idempotency.core.RequestPreparation;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.ext.Providers;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What the request filter saw of an idempotent request, before the resource method ran: the body is
 * buffered (bounded) so that it can be fingerprinted and still be read by the application.
 *
 * @param method      HTTP method
 * @param path        the raw request path
 * @param query       the raw query string, or ""
 * @param baseUri     the application's base URI (for the status resource's location)
 * @param contentType Content-Type as sent, or ""
 * @param headers     request headers, names case-insensitive
 * @param body        body bytes
 * @param security    the request's security context
 * @param providers   the application's JAX-RS providers (writers for the first response)
 */
public record CapturedRequest(String method, String path, String query, URI baseUri, String contentType,
                              Map<String, List<String>> headers, byte[] body, SecurityContext security,
                              Providers providers) implements RequestPreparation.Incoming {
    public CapturedRequest {
        query = query == null ? "" : query;
        TreeMap<String, List<String>> copy = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        headers.forEach((name, values) -> copy.merge(name, List.copyOf(values),
                (a, b) -> java.util.stream.Stream.concat(a.stream(), b.stream()).toList()));
        headers = java.util.Collections.unmodifiableMap(copy);
    }

    /** The same request with other providers (an asynchronous task's, off the request thread). */
    public CapturedRequest withProviders(Providers other) {
        return new CapturedRequest(method, path, query, baseUri, contentType, headers, body, security, other);
    }

    /** The values of a header, empty when absent. */
    @Override
    public List<String> header(String name) {
        return headers.getOrDefault(name, List.of());
    }

    @Override
    public boolean isUserInRole(String role) {
        return security != null && security.isUserInRole(role);
    }

    /** The authenticated principal's name. */
    @Override
    public Optional<String> principalName() {
        return Optional.ofNullable(security).map(SecurityContext::getUserPrincipal).map(java.security.Principal::getName);
    }
}
