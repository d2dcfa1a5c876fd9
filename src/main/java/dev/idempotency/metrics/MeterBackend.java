package dev.idempotency.metrics;

import java.time.Duration;
import java.util.function.DoubleSupplier;

/**
 * The server's metrics library, as the library's meters need it: counters, timers and one gauge, each named in
 * the Micrometer / MicroProfile Metrics style ({@code idempotency.replays}) with tags as alternating keys and values.
 * An implementation caches its meters: a request looks them up by name and tags only.
 */
public interface MeterBackend {
    /** Which library it is, for the start-up log line. */
    String name();

    void increment(String name, long amount, String... tags);

    void record(String name, Duration took, String... tags);

    /** Registers a gauge read from {@code value} whenever the metrics are scraped. */
    void gauge(String name, DoubleSupplier value);
}
