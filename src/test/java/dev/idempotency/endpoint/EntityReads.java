package dev.idempotency.endpoint;

import jakarta.ws.rs.ext.ReaderInterceptor;
import jakarta.ws.rs.ext.ReaderInterceptorContext;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;

/** Counts the request entities the JAX-RS runtime reads for the application's methods. */
public class EntityReads implements ReaderInterceptor {
    static final AtomicInteger COUNT = new AtomicInteger();

    @Override
    public Object aroundReadFrom(ReaderInterceptorContext context) throws IOException {
        COUNT.incrementAndGet();
        return context.proceed();
    }
}
