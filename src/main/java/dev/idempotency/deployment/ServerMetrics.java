package dev.idempotency.deployment;

import dev.idempotency.config.ServerApis;
import dev.idempotency.metrics.IdempotencyMeters;
import dev.idempotency.metrics.MeterBackends;
import jakarta.enterprise.inject.spi.BeanManager;

import java.util.Optional;
import java.util.logging.Logger;

/**
 * The server's metrics registry, when it offers one the library knows (Micrometer, MicroProfile Metrics) as the
 * deployment's one bean of its type; the library's meters record with it.
 */
final class ServerMetrics {
    private static final Logger LOG = Logger.getLogger(ServerMetrics.class.getName());

    private ServerMetrics() {
    }

    /** The library's meters on the server's registry; empty when the server offers none (nothing is recorded). */
    static Optional<IdempotencyMeters> detect(BeanManager beanManager) {
        Optional<IdempotencyMeters> meters = MeterBackends.detect(
                type -> ServerApis.find(type, ServerMetrics.class.getClassLoader()),
                type -> soleBean(beanManager, type)).map(IdempotencyMeters::new);
        meters.ifPresent(found -> LOG.info("IDEM-I008 the library's metrics are recorded with " + found.backend()
                + " (idempotency.*)"));
        return meters;
    }

    /**
     * The deployment's one bean of a type, looked up through an injection point of its own: a server's producer
     * may read it (see {@link LookupInjectionPoint}). A bean that cannot be had costs the library its metrics, not
     * the deployment.
     */
    private static Optional<Object> soleBean(BeanManager beanManager, Class<?> type) {
        try {
            if (!beanManager.createInstance().select(type).isResolvable()) {
                return Optional.empty();
            }
            return Optional.of(beanManager.getInjectableReference(new LookupInjectionPoint(type),
                    beanManager.createCreationalContext(null)));
        } catch (RuntimeException | LinkageError e) {
            LOG.warning("IDEM-W019 the deployment's " + type.getName() + " bean could not be obtained, so the"
                    + " library records no metrics with it: " + e);
            return Optional.empty();
        }
    }
}
