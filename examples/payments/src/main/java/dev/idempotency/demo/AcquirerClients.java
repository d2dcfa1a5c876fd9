package dev.idempotency.demo;

import jakarta.ws.rs.client.ClientBuilder;
import jakarta.ws.rs.client.ClientRequestFilter;
import jakarta.ws.rs.core.HttpHeaders;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.concurrent.TimeUnit;

/** How the demo's services reach the acquirer: over HTTP, as the payments service user. */
final class AcquirerClients {
    private AcquirerClients() {
    }

    /** A client builder that authenticates every call and waits at most {@code readTimeoutMillis} for an answer. */
    static ClientBuilder asServiceUser(String servicePassword, long readTimeoutMillis) {
        String credentials = Base64.getEncoder().encodeToString(
                (Tenants.SERVICE_USER + ":" + servicePassword).getBytes(StandardCharsets.UTF_8));
        return ClientBuilder.newBuilder()
                .connectTimeout(2, TimeUnit.SECONDS)
                .readTimeout(readTimeoutMillis, TimeUnit.MILLISECONDS)
                .register((ClientRequestFilter) request ->
                        request.getHeaders().putSingle(HttpHeaders.AUTHORIZATION, "Basic " + credentials));
    }
}
