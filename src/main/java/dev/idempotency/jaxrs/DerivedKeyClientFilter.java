package dev.idempotency.jaxrs;

import dev.idempotency.IdempotencyContext;
import jakarta.enterprise.inject.spi.CDI;
import jakarta.ws.rs.client.ClientRequestContext;
import jakarta.ws.rs.client.ClientRequestFilter;

/**
 * Puts the operation's derived key on an outgoing JAX-RS client call, so the downstream sees the same
 * key on every retry and takeover of the operation:
 * {@code client.register(new DerivedKeyClientFilter("acquirer.charge"))}. Outside an idempotent
 * operation it adds nothing; a key set explicitly on the request is left alone.
 */
public class DerivedKeyClientFilter implements ClientRequestFilter {
    private final String purpose;
    private final String header;

    /** Sends {@code Idempotency-Key: <derived key for purpose>}. */
    public DerivedKeyClientFilter(String purpose) {
        this(purpose, "Idempotency-Key");
    }

    public DerivedKeyClientFilter(String purpose, String header) {
        if (purpose == null || purpose.isBlank()) {
            throw new IllegalArgumentException("a derived key needs a purpose");
        }
        this.purpose = purpose;
        this.header = header;
    }

    @Override
    public void filter(ClientRequestContext request) {
        if (request.getHeaders().containsKey(header)) {
            return;
        }
        IdempotencyContext context = CDI.current().select(IdempotencyContext.class).get();
        if (context.isActive()) {
            request.getHeaders().putSingle(header, context.derive(purpose));
        }
    }
}
