package dev.idempotency.health;

import dev.idempotency.internal.IdempotencyRuntime;
import dev.idempotency.internal.ReadinessReport;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

import java.util.Map;
import java.util.Optional;

/**
 * The library's MicroProfile Health readiness check, named {@code idempotency}: DOWN while the record store cannot
 * answer or the protocol's time is unknown, so that a load balancer sends idempotent requests elsewhere instead of
 * having them answered 503. The extension registers it only where the MicroProfile Health API is visible
 * (WildFly with its {@code microprofile-health-smallrye} subsystem, Payara).
 */
@Readiness
@ApplicationScoped
public class IdempotencyReadinessCheck implements HealthCheck {
    static final String NAME = "idempotency";

    @Inject
    IdempotencyRuntime runtime;

    @Override
    public HealthCheckResponse call() {
        ReadinessReport readiness = runtime.readiness();
        // The response's own constructor (MicroProfile Health 3+), not its builder: no provider lookup.
        return new HealthCheckResponse(NAME, readiness.up() ? HealthCheckResponse.Status.UP
                : HealthCheckResponse.Status.DOWN, Optional.of(Map.copyOf(readiness.data())));
    }
}
