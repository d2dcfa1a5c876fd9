package dev.idempotency.http;

import jakarta.transaction.Transactional;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.Optional;

/**
 * Whether an exception thrown by an idempotent method leaves its business transaction to commit, as the
 * application declared it, and what its mappers answer for it. The record follows the business work: an
 * exception the application declared as not rolling back commits the work, so its outcome is recorded in the
 * same transaction; every other exception rolls both back, as before.
 *
 * <ul>
 *   <li>A joined transaction begun by {@code @Transactional} on the method (or its class): that annotation's
 *       rules — {@code dontRollbackOn} wins over {@code rollbackOn}; otherwise checked exceptions commit and
 *       unchecked ones roll back (Jakarta Transactions 2.0, 3.7). Errors always roll back.</li>
 *   <li>Otherwise an exception type annotated {@code jakarta.ejb.ApplicationException(rollback = false)}
 *       (read by name: the EJB API is not a dependency) commits.</li>
 *   <li>Everything else rolls back.</li>
 * </ul>
 */
public final class RollbackRules {
    private static final String APPLICATION_EXCEPTION = "jakarta.ejb.ApplicationException";

    private RollbackRules() {
    }

    /** Whether {@code thrown} lets the transaction commit; {@code joined}: begun outside the library. */
    public static boolean commitsDespite(Exception thrown, Method method, Class<?> beanClass, boolean joined) {
        Transactional transactional = joined ? transactional(method, beanClass) : null;
        if (transactional != null) {
            if (matches(transactional.dontRollbackOn(), thrown)) {
                return true;
            }
            if (matches(transactional.rollbackOn(), thrown)) {
                return false;
            }
            return !(thrown instanceof RuntimeException);
        }
        return applicationExceptionRollback(thrown.getClass()).map(rollback -> !rollback).orElse(false);
    }

    /**
     * The response the application's mappers give for {@code thrown}: its {@code ExceptionMapper}, else a
     * {@code WebApplicationException}'s own response, else 500 (what the JAX-RS runtime answers then).
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static Response rendered(Throwable thrown, jakarta.ws.rs.ext.Providers providers) {
        ExceptionMapper mapper = providers == null ? null : providers.getExceptionMapper(thrown.getClass());
        if (mapper != null) {
            return mapper.toResponse(thrown);
        }
        if (thrown instanceof WebApplicationException web) {
            return web.getResponse();
        }
        return Response.serverError().build();
    }

    private static Transactional transactional(Method method, Class<?> beanClass) {
        Transactional onMethod = method.getAnnotation(Transactional.class);
        if (onMethod != null) {
            return onMethod;
        }
        // The bean's class may be a container subclass (proxy) of the class that carries it.
        for (Class<?> type = beanClass; type != null && type != Object.class; type = type.getSuperclass()) {
            Transactional onClass = type.getAnnotation(Transactional.class);
            if (onClass != null) {
                return onClass;
            }
        }
        return method.getDeclaringClass().getAnnotation(Transactional.class);
    }

    private static boolean matches(Class<?>[] types, Throwable thrown) {
        for (Class<?> type : types) {
            if (type.isInstance(thrown)) {
                return true;
            }
        }
        return false;
    }

    // @ApplicationException(rollback, inherited) on the type or, where inherited (its default), a supertype.
    private static Optional<Boolean> applicationExceptionRollback(Class<?> type) {
        boolean own = true;
        for (Class<?> t = type; t != null && t != Throwable.class; t = t.getSuperclass()) {
            for (Annotation annotation : t.getDeclaredAnnotations()) {
                if (annotation.annotationType().getName().equals(APPLICATION_EXCEPTION)) {
                    if (!own && !Boolean.TRUE.equals(attribute(annotation, "inherited"))) {
                        return Optional.empty();
                    }
                    return Optional.of(Boolean.TRUE.equals(attribute(annotation, "rollback")));
                }
            }
            own = false;
        }
        return Optional.empty();
    }

    private static Object attribute(Annotation annotation, String name) {
        try {
            return annotation.annotationType().getMethod(name).invoke(annotation);
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }
}
