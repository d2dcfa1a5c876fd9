package dev.idempotency.core;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A call of an idempotent CDI business method as the protocol sees it, taken by the interceptor: what a request is
 * to {@link RequestPreparation}. Its key is the {@code @IdempotencyKey} argument, read like a header named
 * {@link #KEY}; its body is the other arguments as a JSON array, fingerprinted as canonical JSON; its path is the
 * endpoint, so that a method renamed or moved is still the same operation.
 *
 * @param endpoint  the endpoint the method serves
 * @param key       the key argument's text
 * @param arguments the other arguments, in their order, as a JSON array
 * @param caller    the container's authenticated caller, if any
 */
public record CallFacts(String endpoint, String key, byte[] arguments, Optional<String> caller)
        implements RequestPreparation.Incoming {
    /** The method of every call. */
    public static final String METHOD = "CALL";
    /** The name under which the key argument is read, as the endpoint's {@code keyName}. */
    public static final String KEY = "@IdempotencyKey";

    public CallFacts {
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(arguments, "arguments");
        Objects.requireNonNull(caller, "caller");
    }

    @Override
    public String method() {
        return METHOD;
    }

    @Override
    public String path() {
        return "/" + endpoint;
    }

    @Override
    public String query() {
        return "";
    }

    @Override
    public String contentType() {
        return "application/json";
    }

    /** The key under {@link #KEY}; a call has nothing else a header would carry. */
    @Override
    public List<String> header(String name) {
        return KEY.equals(name) ? List.of(key) : List.of();
    }

    @Override
    public byte[] body() {
        return arguments;
    }

    @Override
    public Optional<String> principalName() {
        return caller;
    }

    /** Roles are not part of a call's scope: its sources are a constant or the caller's name. */
    @Override
    public boolean isUserInRole(String role) {
        return false;
    }

    @Override
    public String toString() {
        // The key may be a business secret: logs name the call by its endpoint.
        return "a call of " + endpoint;
    }
}
