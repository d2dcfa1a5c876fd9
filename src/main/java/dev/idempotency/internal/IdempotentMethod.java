package dev.idempotency.internal;

import dev.idempotency.Idempotent;

import java.lang.reflect.Method;

/**
 * An {@link Idempotent} resource method found at deployment.
 *
 * @param method     the annotated Java method
 * @param annotation the effective annotation (method-level, else class-level)
 * @param endpoint   the endpoint name
 * @param replayWith for minimal storage: the method rebuilding a body from a resource id, or null
 */
public record IdempotentMethod(Method method, Idempotent annotation, String endpoint, Method replayWith) {
}
