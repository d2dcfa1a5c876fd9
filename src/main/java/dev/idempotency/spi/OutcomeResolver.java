package dev.idempotency.spi;

/**
 * Asked before an abandoned or failed attempt of an endpoint with
 * {@link dev.idempotency.Idempotent#externalSideEffects()} runs again: "did the downstream already do
 * it?". Typically it looks the operation up downstream with the derived key the first attempt sent.
 * An application provides it as a bean; an endpoint with {@code externalSideEffects = true} that no resolver
 * handles fails the deployment (IDEM-D012).
 */
public interface OutcomeResolver {

    /** Whether this resolver knows the endpoint. */
    boolean handles(String endpoint);

    /** What happened to the earlier attempt. */
    Resolution resolve(ResolutionRequest request);
}
