package dev.idempotency.health;

import dev.idempotency.deployment.ReadinessReport;
import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.context.spi.CreationalContext;
import jakarta.enterprise.inject.spi.AfterBeanDiscovery;
import jakarta.enterprise.inject.spi.Bean;
import jakarta.enterprise.inject.spi.InjectionPoint;
import jakarta.enterprise.inject.spi.PassivationCapable;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

import java.lang.annotation.Annotation;
import java.lang.reflect.Type;
import java.util.Map;
import java.util.Set;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The library's MicroProfile Health readiness check, named {@code idempotency}: DOWN while the record store cannot
 * answer or the protocol's time is unknown, so that a load balancer sends idempotent requests elsewhere instead of
 * having them answered 503. The extension adds it only where the MicroProfile Health API is visible (WildFly with
 * its {@code microprofile-health-smallrye} subsystem, Payara); no other class of the library names that API.
 */
public final class IdempotencyReadinessCheck implements HealthCheck {
    static final String NAME = "idempotency";
    private final Supplier<ReadinessReport> readiness;

    IdempotencyReadinessCheck(Supplier<ReadinessReport> readiness) {
        this.readiness = readiness;
    }

    /**
     * Adds the check as a {@code @Readiness HealthCheck} bean of the application's own bean archive ({@code home}, a
     * class of the application): a server's health support looks its checks up with a bean manager that sees the
     * application's archives, not necessarily the one of a library jar (WildFly's does not). The archive of a bean
     * added as a {@link Bean} is its bean class's; a bean configurator's would be the extension's.
     */
    public static void register(AfterBeanDiscovery event, Class<?> home, Supplier<ReadinessReport> readiness) {
        event.addBean(new CheckBean(home, readiness));
    }

    private record CheckBean(Class<?> home, Supplier<ReadinessReport> readiness)
            implements Bean<HealthCheck>, PassivationCapable {
        @Override
        public Class<?> getBeanClass() {
            return home;
        }

        @Override
        public Set<InjectionPoint> getInjectionPoints() {
            return Set.of();
        }

        @Override
        public HealthCheck create(CreationalContext<HealthCheck> context) {
            return new IdempotencyReadinessCheck(readiness);
        }

        @Override
        public void destroy(HealthCheck instance, CreationalContext<HealthCheck> context) {
            context.release();
        }

        @Override
        public Set<Type> getTypes() {
            return Set.of(HealthCheck.class, Object.class);
        }

        @Override
        public Set<Annotation> getQualifiers() {
            return Set.of(Readiness.Literal.INSTANCE, Any.Literal.INSTANCE);
        }

        @Override
        public Class<? extends Annotation> getScope() {
            return Dependent.class;
        }

        @Override
        public String getName() {
            return null;
        }

        @Override
        public Set<Class<? extends Annotation>> getStereotypes() {
            return Set.of();
        }

        @Override
        public boolean isAlternative() {
            return false;
        }

        @Override
        public String getId() {
            return IdempotencyReadinessCheck.class.getName();
        }
    }

    @Override
    public HealthCheckResponse call() {
        ReadinessReport report = readiness.get();
        // The response's own constructor (MicroProfile Health 3+), not its builder: no provider lookup.
        return new HealthCheckResponse(NAME, report.up() ? HealthCheckResponse.Status.UP
                : HealthCheckResponse.Status.DOWN, Optional.of(Map.copyOf(report.data())));
    }
}
