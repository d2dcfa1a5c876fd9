package dev.idempotency.core;

import java.util.Optional;

/** Removes an endpoint's redacted fields from a JSON body (the json adapter parses it). */
@FunctionalInterface
public interface JsonRedaction {

    /** The body without its redacted fields; empty when it does not parse as JSON. */
    Optional<byte[]> redact(byte[] json, Redaction redaction);
}
