package dev.idempotency.jaxrs;

import dev.idempotency.deployment.Assembly;
import dev.idempotency.http.IdempotentExchange;
import jakarta.enterprise.inject.spi.CDI;

/**
 * The library's CDI beans as the JAX-RS providers reach them, looked up once per provider instance:
 * the assembly's and the request-scoped exchange's client proxies stay valid for the application's life (the
 * exchange's resolves to the current request's instance), so a request does no bean lookup. JAX-RS creates
 * the providers, not CDI, hence no injection.
 */
final class Collaborators {
    private volatile Assembly assembly;
    private volatile IdempotentExchange exchange;

    Assembly assembly() {
        Assembly found = assembly;
        if (found == null) {
            found = CDI.current().select(Assembly.class).get();
            assembly = found;
        }
        return found;
    }

    IdempotentExchange exchange() {
        IdempotentExchange found = exchange;
        if (found == null) {
            found = CDI.current().select(IdempotentExchange.class).get();
            exchange = found;
        }
        return found;
    }
}
