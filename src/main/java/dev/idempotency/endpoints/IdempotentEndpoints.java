package dev.idempotency.endpoints;

import dev.idempotency.core.EndpointPolicy;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The deployment's idempotent endpoints, resolved once when it is validated and never changed after: keyed by the
 * annotated method, for the interceptor and the request filter, and by name, for the status and admin resources.
 */
public final class IdempotentEndpoints {
    private final Map<Method, IdempotentEndpoint> byMethod;
    private final Map<String, IdempotentEndpoint> byName;
    // An invoked method that is not the annotated one itself (a subclass's, a proxy's override), as first matched.
    private final Map<Method, Optional<IdempotentEndpoint>> overrides = new ConcurrentHashMap<>();

    public IdempotentEndpoints(Collection<IdempotentEndpoint> endpoints) {
        Map<Method, IdempotentEndpoint> methods = new LinkedHashMap<>();
        Map<String, IdempotentEndpoint> names = new LinkedHashMap<>();
        for (IdempotentEndpoint endpoint : endpoints) {
            methods.put(endpoint.declared().method(), endpoint);
            names.put(endpoint.name(), endpoint);
        }
        this.byMethod = Map.copyOf(methods);
        this.byName = java.util.Collections.unmodifiableMap(names);
    }

    /** None: a deployment that has not started. */
    public static IdempotentEndpoints none() {
        return new IdempotentEndpoints(java.util.List.of());
    }

    /** The endpoint of an intercepted method, matching overrides by signature; null if it is not idempotent. */
    public IdempotentEndpoint of(Method invoked) {
        IdempotentEndpoint direct = byMethod.get(invoked);
        if (direct != null) {
            return direct;
        }
        return overrides.computeIfAbsent(invoked, this::overridden).orElse(null);
    }

    private Optional<IdempotentEndpoint> overridden(Method invoked) {
        for (IdempotentEndpoint candidate : byMethod.values()) {
            Method m = candidate.declared().method();
            if (m.getName().equals(invoked.getName())
                    && Arrays.equals(m.getParameterTypes(), invoked.getParameterTypes())
                    && (m.getDeclaringClass().isAssignableFrom(invoked.getDeclaringClass())
                    || invoked.getDeclaringClass().isAssignableFrom(m.getDeclaringClass()))) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /** The endpoint of that name, if the deployment has it. */
    public Optional<IdempotentEndpoint> named(String endpoint) {
        return Optional.ofNullable(byName.get(endpoint));
    }

    /** The policy of the endpoint of that name; null if the deployment has none of that name. */
    public EndpointPolicy policy(String endpoint) {
        IdempotentEndpoint found = byName.get(endpoint);
        return found == null ? null : found.policy();
    }

    /** Every endpoint, in the order they were found. */
    public Collection<IdempotentEndpoint> all() {
        return byName.values();
    }

    /** The policies by endpoint name, as a function (a name not served gives null). */
    public Function<String, EndpointPolicy> policies() {
        return this::policy;
    }
}
