package dev.idempotency.deployment;

import jakarta.enterprise.inject.Default;
import jakarta.enterprise.inject.spi.Annotated;
import jakarta.enterprise.inject.spi.Bean;
import jakarta.enterprise.inject.spi.InjectionPoint;

import java.lang.annotation.Annotation;
import java.lang.reflect.Member;
import java.lang.reflect.Type;
import java.util.Set;

/**
 * The injection point of a bean the library looks up by type, as if a field {@code @Inject T t;} without any
 * annotation asked for it. Servers' producers read their injection point: Payara's {@code MetricRegistry} producer
 * looks for {@code @RegistryScope} on {@code getAnnotated()}, which a plain {@code Instance} lookup leaves null
 * (and the deployment fails); here it is an element without annotations, so the producer takes its default.
 */
final class LookupInjectionPoint implements InjectionPoint {
    private final Class<?> type;

    LookupInjectionPoint(Class<?> type) {
        this.type = type;
    }

    @Override
    public Type getType() {
        return type;
    }

    @Override
    public Set<Annotation> getQualifiers() {
        return Set.of(Default.Literal.INSTANCE);
    }

    @Override
    public Bean<?> getBean() {
        return null;
    }

    @Override
    public Member getMember() {
        return null;
    }

    @Override
    public Annotated getAnnotated() {
        return new Annotated() {
            @Override
            public Type getBaseType() {
                return type;
            }

            @Override
            public Set<Type> getTypeClosure() {
                return Set.of(type, Object.class);
            }

            @Override
            public <T extends Annotation> T getAnnotation(Class<T> annotationType) {
                return null;
            }

            @Override
            public <T extends Annotation> Set<T> getAnnotations(Class<T> annotationType) {
                return Set.of();
            }

            @Override
            public Set<Annotation> getAnnotations() {
                return Set.of();
            }

            @Override
            public boolean isAnnotationPresent(Class<? extends Annotation> annotationType) {
                return false;
            }
        };
    }

    @Override
    public boolean isDelegate() {
        return false;
    }

    @Override
    public boolean isTransient() {
        return false;
    }
}
