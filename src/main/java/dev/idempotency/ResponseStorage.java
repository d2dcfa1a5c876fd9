package dev.idempotency;

/** How the first outcome of an operation is kept for replay. */
public enum ResponseStorage {
    /** Take {@code idempotency.storage} (itself {@link #FULL} by default). */
    CONFIGURED,
    /** Status, replayed headers and the body bytes. */
    FULL,
    /** As {@link #FULL}, with the body encrypted at rest (AES-GCM, key id stored with the record). */
    ENCRYPTED,
    /**
     * Status, replayed headers and the resource id only; the body is rebuilt on replay by the method
     * named in {@link Idempotent#replayWith()}. For responses that carry secrets.
     */
    MINIMAL
}
