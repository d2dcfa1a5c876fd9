package dev.idempotency.core;

import dev.idempotency.IdempotencyEvent;

import java.time.Duration;

/**
 * Where the protocol reports what it did and how long its steps took; the CDI adapter fires the events and
 * hands both to the server's metrics.
 */
@FunctionalInterface
public interface ProtocolEvents {
    ProtocolEvents NONE = event -> { };

    void publish(IdempotencyEvent event);

    /** How long since {@code startedNanos} ({@link System#nanoTime()}): what {@link #timed} is told. */
    static Duration since(long startedNanos) {
        return Duration.ofNanos(System.nanoTime() - startedNanos);
    }

    /** A timed step of the protocol, measured where it runs. */
    enum Step {
        /** A claim's own transaction: the INSERT of a new operation, or the compare-and-set of a takeover. */
        CLAIM,
        /** The fenced update that ends an execution (in the business transaction, before its commit). */
        FINISH,
        /** A replay's admission: from the read of the record to the stored outcome found (every re-read included). */
        REPLAY
    }

    /** {@code step} of an operation of {@code endpoint} took {@code took}; by default not recorded. */
    default void timed(Step step, String endpoint, Duration took) {
    }

    /** What a read of the outcome cache (Redis) gave an operation of {@code endpoint}. */
    enum CacheRead {
        /** The operation's finished outcome: the database was not read. */
        HIT,
        /** Nothing there, or the cache could not answer in time: the database was read. */
        MISS,
        /** An entry that is not this operation's finished, unexpired outcome: ignored, the database was read. */
        REFUSED
    }

    /** A read of the outcome cache for an operation of {@code endpoint}; by default not recorded. */
    default void cacheRead(String endpoint, CacheRead read) {
    }
}
