package dev.idempotency.endpoint;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.enterprise.inject.Produces;
import jakarta.enterprise.inject.spi.InjectionPoint;

/**
 * What WildFly's micrometer subsystem offers a deployment: one {@link MeterRegistry} bean. Its producer reads the
 * annotations of the injection point as Payara's {@code MetricRegistry} producer does ({@code @RegistryScope}), so a
 * lookup without an annotated injection point fails the deployment here as it does there.
 */
public class MeterRegistryProducer {
    static final SimpleMeterRegistry REGISTRY = new SimpleMeterRegistry();

    @Produces
    MeterRegistry registry(InjectionPoint injectionPoint) {
        if (injectionPoint.getAnnotated().isAnnotationPresent(Deprecated.class)) {
            throw new IllegalStateException("no deprecated registries");
        }
        return REGISTRY;
    }
}
