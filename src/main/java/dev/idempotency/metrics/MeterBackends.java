package dev.idempotency.metrics;

import java.util.Optional;
import java.util.function.Function;

/** Which {@link MeterBackend} a deployment records with. Apart from the backends, so that none of them names another. */
public final class MeterBackends {
    private MeterBackends() {
    }

    /**
     * The metrics library the server offers this deployment, if any: Micrometer (WildFly's {@code micrometer}
     * subsystem, a {@code MeterRegistry} bean) first, else MicroProfile Metrics (Payara: a {@code MetricRegistry}
     * bean). Each is looked for only when its API is visible to the library, so that a server without either
     * deploys the library unchanged.
     *
     * @param offered an API's type as the deployment sees it, by name; empty when the server does not offer it
     * @param beans   the deployment's bean of a type, when it has exactly one
     */
    public static Optional<MeterBackend> detect(Function<String, Optional<Class<?>>> offered,
                                         Function<Class<?>, Optional<Object>> beans) {
        Optional<Object> micrometer = offered.apply("io.micrometer.core.instrument.MeterRegistry").flatMap(beans);
        if (micrometer.isPresent()) {
            return Optional.of(MicrometerBackend.of(micrometer.get()));
        }
        return offered.apply("org.eclipse.microprofile.metrics.MetricRegistry").flatMap(beans)
                .map(MicroProfileMetricsBackend::of);
    }
}
