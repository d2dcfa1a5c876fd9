package dev.idempotency.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.DoubleSupplier;

/**
 * Micrometer, as WildFly's {@code micrometer} subsystem offers it to deployments. Meters are registered through
 * the registry's shorthand methods ({@code counter(name, tags)}, {@code timer(name, tags)}): WildFly 39 exports
 * those, and logs a warning for every {@code Timer.start} or builder it sees.
 */
final class MicrometerBackend implements MeterBackend {
    private final MeterRegistry registry;
    private final Map<MeterKey, Counter> counters = new ConcurrentHashMap<>();
    private final Map<MeterKey, Timer> timers = new ConcurrentHashMap<>();
    // A registry holds a gauge's state weakly: this keeps it for as long as the library runs.
    private final Map<String, DoubleSupplier> gauges = new ConcurrentHashMap<>();

    private MicrometerBackend(MeterRegistry registry) {
        this.registry = registry;
    }

    static MeterBackend of(Object registry) {
        return new MicrometerBackend((MeterRegistry) registry);
    }

    @Override
    public String name() {
        return "Micrometer";
    }

    @Override
    public void increment(String name, long amount, String... tags) {
        counters.computeIfAbsent(new MeterKey(name, tags), k -> registry.counter(name, Tags.of(tags))).increment(amount);
    }

    @Override
    public void record(String name, Duration took, String... tags) {
        timers.computeIfAbsent(new MeterKey(name, tags), k -> registry.timer(name, Tags.of(tags))).record(took);
    }

    @Override
    public void gauge(String name, DoubleSupplier value) {
        gauges.put(name, value);
        registry.gauge(name, Tags.empty(), value, DoubleSupplier::getAsDouble);
    }
}
