package dev.idempotency.jaxrs;

import jakarta.ws.rs.core.Feature;
import jakarta.ws.rs.core.FeatureContext;
import jakarta.ws.rs.ext.Provider;

/**
 * Registers the library's JAX-RS parts: the request and response filters, the problem mapper and the resolver
 * through which the status and admin resources reach the library.
 * Found by the server's scan of the application (WildFly and Payara scan WEB-INF/lib); an
 * application whose {@code Application} lists its classes registers this one class.
 */
@Provider
public class IdempotencyFeature implements Feature {

    @Override
    public boolean configure(FeatureContext context) {
        context.register(IdempotencyRequestFilter.class);
        context.register(IdempotencyResponseFilter.class);
        context.register(IdempotencyExceptionMapper.class);
        context.register(AssemblyResolver.class);
        return true;
    }
}
