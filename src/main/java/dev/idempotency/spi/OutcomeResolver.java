package dev.idempotency.spi;

/**
 * Asked before an abandoned or failed attempt of an endpoint with
 * {@link dev.idempotency.Idempotent#externalSideEffects()} runs again: "did the downstream already do
 * it?". Typically it looks the operation up downstream with the derived key the first attempt sent.
 * An application provides it as a bean; without one, attempts are simply run again (and must rely on the
 * downstream honouring the derived key).
 */
public interface OutcomeResolver {

    /** Whether this resolver knows the endpoint. */
    boolean handles(String endpoint);

    /** What happened to the earlier attempt. */
    Resolution resolve(ResolutionRequest request);
}
