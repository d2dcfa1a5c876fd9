package dev.idempotency.metrics;

import org.eclipse.microprofile.metrics.Counter;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.eclipse.microprofile.metrics.Tag;
import org.eclipse.microprofile.metrics.Timer;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.DoubleSupplier;

/** MicroProfile Metrics 5 (Payara's), in the application's registry: {@code /metrics?scope=application}. */
final class MicroProfileMetricsBackend implements MeterBackend {
    private final MetricRegistry registry;
    private final Map<MeterKey, Counter> counters = new ConcurrentHashMap<>();
    private final Map<MeterKey, Timer> timers = new ConcurrentHashMap<>();

    private MicroProfileMetricsBackend(MetricRegistry registry) {
        this.registry = registry;
    }

    static MeterBackend of(Object registry) {
        return new MicroProfileMetricsBackend((MetricRegistry) registry);
    }

    @Override
    public String name() {
        return "MicroProfile Metrics";
    }

    @Override
    public void increment(String name, long amount, String... tags) {
        counters.computeIfAbsent(new MeterKey(name, tags), k -> registry.counter(name, tags(tags))).inc(amount);
    }

    @Override
    public void record(String name, Duration took, String... tags) {
        timers.computeIfAbsent(new MeterKey(name, tags), k -> registry.timer(name, tags(tags))).update(took);
    }

    @Override
    public void gauge(String name, DoubleSupplier value) {
        registry.gauge(name, value::getAsDouble);
    }

    private static Tag[] tags(String... keysAndValues) {
        Tag[] tags = new Tag[keysAndValues.length / 2];
        for (int i = 0; i < tags.length; i++) {
            tags[i] = new Tag(keysAndValues[2 * i], keysAndValues[2 * i + 1]);
        }
        return tags;
    }
}
