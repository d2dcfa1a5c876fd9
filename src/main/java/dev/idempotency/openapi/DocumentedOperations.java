package dev.idempotency.openapi;

import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.core.KeyRules;
import jakarta.ws.rs.HttpMethod;
import jakarta.ws.rs.Path;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The idempotent JAX-RS operations of this deployment as its OpenAPI document shows them: where each one is (HTTP
 * method, path template under the application's path) and the rules its requests are held to.
 *
 * <p>The deployment publishes them when it starts; {@link dev.idempotency.openapi.IdempotencyOasFilter} reads them. The
 * server creates that filter by reflection, with no injection (WildFly at deployment, after the CDI container has
 * started; Payara on the first {@code GET /openapi}), so it finds them here. The library's jar is in the
 * application's {@code WEB-INF/lib}: its classes, and so this static, are one deployment's.
 *
 * @param operations      the documented operations
 * @param keyRules        what a valid key is
 * @param maxRequestBytes the largest request body accepted (413 beyond)
 */
public record DocumentedOperations(List<Operation> operations, KeyRules keyRules, int maxRequestBytes) {
    private static volatile DocumentedOperations published;

    /**
     * One idempotent resource method.
     *
     * @param httpMethod the HTTP method, upper case
     * @param path       the class's and the method's {@code @Path} joined, relative to the application's path
     * @param policy     the endpoint's resolved rules
     */
    public record Operation(String httpMethod, String path, EndpointPolicy policy) {
        public Operation {
            Objects.requireNonNull(httpMethod, "httpMethod");
            Objects.requireNonNull(path, "path");
            Objects.requireNonNull(policy, "policy");
        }
    }

    public DocumentedOperations {
        operations = List.copyOf(operations);
        Objects.requireNonNull(keyRules, "keyRules");
    }

    /** What the running deployment documents; empty before it started and after it stopped. */
    public static Optional<DocumentedOperations> published() {
        return Optional.ofNullable(published);
    }

    public static void publish(DocumentedOperations operations) {
        published = operations;
    }

    public static void withdraw() {
        published = null;
    }

    /**
     * Where a resource method is, from its annotations: its HTTP method, and the path of its class ({@code @Path} on
     * the class, a superclass or an interface) joined with its own. Empty for a method of a sub-resource, whose path
     * its locator decides at run time.
     */
    public static Optional<Operation> of(Method method, EndpointPolicy policy) {
        String httpMethod = null;
        for (Annotation annotation : method.getAnnotations()) {
            HttpMethod designator = annotation.annotationType().getAnnotation(HttpMethod.class);
            if (designator != null) {
                httpMethod = designator.value();
            }
        }
        Path onClass = classPath(method.getDeclaringClass());
        if (httpMethod == null || onClass == null) {
            return Optional.empty();
        }
        Path onMethod = method.getAnnotation(Path.class);
        String path = "/" + onClass.value() + (onMethod == null ? "" : "/" + onMethod.value());
        return Optional.of(new Operation(httpMethod, path, policy));
    }

    private static Path classPath(Class<?> type) {
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            Path path = c.getAnnotation(Path.class);
            if (path != null) {
                return path;
            }
            for (Class<?> contract : c.getInterfaces()) {
                Path declared = contract.getAnnotation(Path.class);
                if (declared != null) {
                    return declared;
                }
            }
        }
        return null;
    }
}
