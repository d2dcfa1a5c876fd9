package dev.idempotency.spi;

import java.util.Objects;

/**
 * What an accepted asynchronous operation keeps with its claim, so that another node can run it again when the
 * node that accepted it dies (docs/adr/0020): the request as the protocol saw it and the method's arguments, in the
 * library's own encoding, sealed like a stored response under {@code storage = encrypted}.
 *
 * @param data     the bytes, opaque to a store
 * @param encoding how they are written ({@code plain}, or {@code aes-gcm:<key id>}), as a stored response's body
 */
public record TaskInput(byte[] data, String encoding) {
    public TaskInput {
        Objects.requireNonNull(data, "data");
        Objects.requireNonNull(encoding, "encoding");
    }
}
