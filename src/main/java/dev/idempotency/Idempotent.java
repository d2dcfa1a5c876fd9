package dev.idempotency;

import jakarta.enterprise.util.Nonbinding;
import jakarta.interceptor.InterceptorBinding;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a JAX-RS resource method, a message listener ({@code onMessage(jakarta.jms.Message)}) or a CDI business
 * method with an {@link IdempotencyKey} parameter idempotent: the same operation (same scope and key, same request
 * fingerprint) arriving twice has the effect of once, and every repeat gets the first outcome back.
 *
 * <p>Every member is {@link Nonbinding}. A member left at its default takes the value configured as
 * {@code idempotency.<setting>}; {@code idempotency.endpoints.<endpoint>.<setting>} overrides both the
 * annotation and the global setting. Misuse (a method that is not a synchronous JAX-RS resource method, a
 * primitive return type, an unparsable duration) fails the deployment.
 */
@InterceptorBinding
@Inherited
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface Idempotent {

    /**
     * Name of the endpoint: part of the scope (tenant + principal + endpoint + key) and the key of its
     * per-endpoint configuration. Default {@code ""}: the simple class name and the method name,
     * {@code PaymentResource.create}.
     */
    @Nonbinding
    String endpoint() default "";

    /** Where the idempotency key comes from. Default {@link KeySource#HEADER}. */
    @Nonbinding
    KeySource keySource() default KeySource.HEADER;

    /**
     * For {@link KeySource#HEADER}: the header name, default {@code ""} meaning the configured
     * {@code idempotency.key-header} ({@code Idempotency-Key}). For {@link KeySource#BODY_FIELD}: the
     * field of the JSON body, a dotted path such as {@code merchantOrderNo} or {@code order.number}.
     */
    @Nonbinding
    String keyName() default "";

    /**
     * Whether a request without a key is rejected with 400. Default {@code true}. When {@code false}, a
     * request without a key runs without idempotency protection.
     */
    @Nonbinding
    boolean keyRequired() default true;

    /**
     * How long a finished record is kept (and so how long a repeat is recognised), an ISO-8601 duration
     * such as {@code PT24H} or {@code P30D}. Default {@code ""}: {@code idempotency.retention}, itself
     * {@code PT24H} by default. Must cover the clients' whole retry window and the audit period.
     */
    @Nonbinding
    String retention() default "";

    /**
     * How long a claim protects a running execution before another request may take it over, an
     * ISO-8601 duration. Default {@code ""}: {@code idempotency.lease} ({@code PT30S}). A running execution
     * renews it (on the managed scheduler) while its transaction is active, so it need not be longer than the
     * slowest execution; it is how long a crashed node's operation waits before a retry takes it over.
     */
    @Nonbinding
    String lease() default "";

    /** What a duplicate gets while the first is still running. Default: {@code idempotency.in-flight}. */
    @Nonbinding
    InFlightPolicy inFlight() default InFlightPolicy.CONFIGURED;

    /** How the first response is kept for replay. Default: {@code idempotency.storage} ({@code FULL}). */
    @Nonbinding
    ResponseStorage storage() default ResponseStorage.CONFIGURED;

    /**
     * For {@link ResponseStorage#MINIMAL}: the name of a method of the same bean that rebuilds the body
     * on replay. It takes one {@code String} (the stored resource id) and returns the entity. Default
     * {@code ""}: a minimal replay has no body.
     */
    @Nonbinding
    String replayWith() default "";

    /** Exceptions (and subclasses) whose outcome is final: stored and replayed. Default none. */
    @Nonbinding
    Class<? extends Throwable>[] finalOn() default {};

    /**
     * Exceptions (and subclasses) that are retryable: nothing is stored, a retry with the same key runs
     * again. Default none. Without a match, a mapped 4xx is final and anything else is retryable.
     */
    @Nonbinding
    Class<? extends Throwable>[] retryOn() default {};

    /**
     * Whether the method has effects outside its transaction (a downstream charge). When {@code true},
     * before an abandoned or failed attempt is run again, the application's
     * {@link dev.idempotency.spi.OutcomeResolver} is asked what happened; an endpoint that declares it without
     * a resolver that handles it fails the deployment (IDEM-D012). Default {@code false}.
     */
    @Nonbinding
    boolean externalSideEffects() default false;

    /**
     * Whether the method runs as an asynchronous task (for long operations: payments that wait on a slow
     * acquirer, exports). The first request is answered at once with {@code 202 Accepted}, {@code Location}
     * of the endpoint's status resource ({@link dev.idempotency.jaxrs.IdempotencyStatusResource}) and
     * {@code Retry-After}; the method runs on the server's managed executor
     * ({@code java:comp/DefaultManagedExecutorService}, or an {@code ExecutorService} bean qualified
     * {@link IdempotencyExecutor}) in a JTA transaction of its own, under the same claim, lease and fencing,
     * and its outcome is stored with its record. Retries of the key get the same {@code 202} until it is
     * done, then the outcome; the status resource serves the outcome too. The method runs on another thread:
     * JAX-RS {@code @Context} objects cannot be used in it (a relative {@code Location} is resolved against
     * the application's base URI), and its entity is written as JSON with JSON-B (the application's
     * {@code ContextResolver<Jsonb>} if it has one), {@code String} and {@code byte[]} as they are. Duplicates
     * always get {@code 202} ({@link InFlightPolicy#ACCEPTED}). Default {@code false}.
     */
    @Nonbinding
    boolean asynchronous() default false;

    /**
     * Where the claim of a new operation is written: in a transaction of its own ({@link ClaimMode#OWN_TRANSACTION},
     * two commits per new operation, the operation visible while it runs) or in the business transaction
     * ({@link ClaimMode#IN_TRANSACTION}, one commit; duplicates wait on the first's commit). Default
     * {@link ClaimMode#CONFIGURED}: {@code idempotency.claim}, itself {@code own-transaction}.
     */
    @Nonbinding
    ClaimMode claim() default ClaimMode.CONFIGURED;
}
