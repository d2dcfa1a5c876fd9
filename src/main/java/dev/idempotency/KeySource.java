package dev.idempotency;

/** Where an {@link Idempotent} method finds its idempotency key. */
public enum KeySource {
    /** A request header, {@code Idempotency-Key} unless {@link Idempotent#keyName()} names another. */
    HEADER,
    /** A field of the JSON request body named by {@link Idempotent#keyName()}, e.g. {@code merchantOrderNo}. */
    BODY_FIELD
}
