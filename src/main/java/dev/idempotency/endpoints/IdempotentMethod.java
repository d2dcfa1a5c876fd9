package dev.idempotency.endpoints;

import dev.idempotency.call.MethodCall;
import dev.idempotency.jms.MessageDelivery;

import dev.idempotency.Idempotent;

import java.lang.reflect.Method;

/**
 * An {@link Idempotent} method found at deployment.
 *
 * @param method     the annotated Java method
 * @param annotation the effective annotation (method-level, else class-level)
 * @param endpoint   the endpoint name
 * @param replayWith for minimal storage: the method rebuilding a body from a resource id, or null
 * @param trigger      what calls it: a request, a message or the application
 * @param keyParameter for a business method, the position of its {@link dev.idempotency.IdempotencyKey} parameter;
 *                     -1 otherwise
 */
public record IdempotentMethod(Method method, Idempotent annotation, String endpoint, Method replayWith,
                               Trigger trigger, int keyParameter) {

    /** What an idempotent method is called for, and so which path of the library runs it. */
    public enum Trigger {
        /** A JAX-RS resource method: the request filters capture the request, the response filter sends the outcome. */
        REQUEST,
        /** A message listener ({@code onMessage(jakarta.jms.Message)}): {@link MessageDelivery} runs it. */
        MESSAGE,
        /** A CDI business method with an {@code @IdempotencyKey} parameter: {@link MethodCall} runs it. */
        CALL
    }
}
