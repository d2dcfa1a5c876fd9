package dev.idempotency.jaxrs;

import dev.idempotency.deployment.Assembly;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.ext.ContextResolver;
import jakarta.ws.rs.ext.Providers;

/**
 * Hands the library's assembly to its status and admin resources. JAX-RS creates those resources per request
 * and the application's subclass of them need not be a CDI bean, so nothing is injected into them; they ask
 * JAX-RS's own registry ({@code @Context Providers}) for this resolver, which looked the assembly up once, as the
 * filters do (registered by {@link IdempotencyFeature}).
 */
public class AssemblyResolver implements ContextResolver<Assembly> {
    private final Collaborators collaborators = new Collaborators();

    @Override
    public Assembly getContext(Class<?> type) {
        return collaborators.assembly();
    }

    /** The assembly, from the application's JAX-RS registry; a clear error where the feature was left out. */
    static Assembly of(Providers providers) {
        ContextResolver<Assembly> resolver = providers.getContextResolver(Assembly.class, MediaType.WILDCARD_TYPE);
        if (resolver == null) {
            throw new IllegalStateException("the library's JAX-RS feature is not registered: an Application that lists"
                    + " its classes must list dev.idempotency.jaxrs.IdempotencyFeature");
        }
        return resolver.getContext(Assembly.class);
    }
}
