package dev.idempotency;

import jakarta.inject.Qualifier;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks the {@code java.util.concurrent.ExecutorService} bean that runs the tasks of
 * {@link Idempotent#asynchronous() asynchronous} endpoints, when the server's
 * {@code java:comp/DefaultManagedExecutorService} should not: a managed executor of the application's own
 * (a producer of a {@code @Resource(lookup = ...)} field), or in tests a plain one. Tasks must run with the
 * application's class loader and, where the method needs it, its security context: a managed executor
 * propagates both.
 */
@Qualifier
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.FIELD, ElementType.PARAMETER, ElementType.TYPE})
public @interface IdempotencyExecutor {
}
