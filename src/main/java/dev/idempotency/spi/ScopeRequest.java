package dev.idempotency.spi;

import java.util.List;
import java.util.Optional;

/** What a {@link ScopeResolver} may look at: the authenticated caller, the headers, the endpoint and key. */
public interface ScopeRequest {
    /** The authenticated principal's name, if any. */
    Optional<String> principalName();

    /** Whether the caller has a role (as the container's security knows it). */
    boolean isUserInRole(String role);

    /** The values of a request header, empty when absent. */
    List<String> header(String name);

    /** The endpoint name of the {@link dev.idempotency.Idempotent} method. */
    String endpoint();

    /** The validated idempotency key. */
    String key();
}
