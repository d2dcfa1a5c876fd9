package dev.idempotency.metrics;

import dev.idempotency.config.ServerApis;
import java.time.Duration;
import java.util.Optional;
import java.util.function.DoubleSupplier;
import java.util.function.Function;

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

    /**
     * The metrics library the server offers this deployment, if any: Micrometer (WildFly's {@code micrometer}
     * subsystem, a {@code MeterRegistry} bean) first, else MicroProfile Metrics (Payara: a {@code MetricRegistry}
     * bean). Each is looked for only when its API is visible to the library, so that a server without either
     * deploys the library unchanged.
     *
     * @param beans the deployment's bean of a type, when it has exactly one
     */
    static Optional<MeterBackend> detect(ClassLoader loader, Function<Class<?>, Optional<Object>> beans) {
        Optional<Object> micrometer = ServerApis.find("io.micrometer.core.instrument.MeterRegistry", loader).flatMap(beans);
        if (micrometer.isPresent()) {
            return Optional.of(MicrometerBackend.of(micrometer.get()));
        }
        return ServerApis.find("org.eclipse.microprofile.metrics.MetricRegistry", loader).flatMap(beans)
                .map(MicroProfileMetricsBackend::of);
    }
}
