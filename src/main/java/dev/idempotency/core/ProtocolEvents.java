package dev.idempotency.core;

import dev.idempotency.IdempotencyEvent;

/** Where the protocol reports what it did; the CDI adapter fires them as events. */
@FunctionalInterface
public interface ProtocolEvents {
    ProtocolEvents NONE = event -> { };

    void publish(IdempotencyEvent event);
}
