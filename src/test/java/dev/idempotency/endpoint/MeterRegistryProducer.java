package dev.idempotency.endpoint;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/** What WildFly's micrometer subsystem offers a deployment: one {@link MeterRegistry} bean. */
public class MeterRegistryProducer {
    static final SimpleMeterRegistry REGISTRY = new SimpleMeterRegistry();

    @Produces
    @Singleton
    MeterRegistry registry() {
        return REGISTRY;
    }
}
