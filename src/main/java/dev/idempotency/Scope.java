package dev.idempotency;

import java.util.Objects;

/**
 * Who owns an operation: tenant + principal + endpoint + key. Two requests are the same operation only
 * when all four are equal; another user's identical key is another operation.
 *
 * @param tenant    the tenant, {@code ""} when the application has none
 * @param principal the caller's name; {@link #ANONYMOUS} when anonymous calls are allowed
 * @param endpoint  the endpoint name ({@link Idempotent#endpoint()})
 * @param key       the client's idempotency key
 */
public record Scope(String tenant, String principal, String endpoint, String key) {
    /** The principal of anonymous operations when {@code idempotency.anonymous=allow}. */
    public static final String ANONYMOUS = "$anonymous";

    public Scope {
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(principal, "principal");
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(key, "key");
    }

    @Override
    public String toString() {
        // The key stays out of logs and messages.
        return "Scope[tenant=" + tenant + ", principal=" + principal + ", endpoint=" + endpoint + "]";
    }
}
