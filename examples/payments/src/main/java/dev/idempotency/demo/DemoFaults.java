package dev.idempotency.demo;

import dev.idempotency.IdempotencyContext;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.RequestScoped;
import jakarta.enterprise.inject.spi.CDI;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InterceptorBinding;
import jakarta.interceptor.InvocationContext;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.enterprise.util.Nonbinding;
import jakarta.ws.rs.client.ClientRequestContext;
import jakarta.ws.rs.client.ClientRequestFilter;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.ext.Provider;
import org.eclipse.microprofile.config.ConfigProvider;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.Map;

/**
 * The demo's fault injection, all of it, for the tests and for trying the library out: nothing here is part
 * of the payments themselves, and none of it acts unless the server property {@code demo.faults} is
 * {@code true} (scripts/demo.sh and the test servers set it; an application copied from the demo leaves it
 * out). The request headers, read by {@link Headers}:
 * <ul>
 *   <li>{@code X-Demo-Delay-Ms} on {@code POST /payments}: the payment pauses after its charge is recorded,
 *   inside its transaction; on {@code POST /acquirer/payouts}: the acquirer takes that long between
 *   receiving a payout and settling it;</li>
 *   <li>{@code X-Demo-Fail: transient} on {@code POST /payments}: fails after the charge (503, rolled back);
 *   {@code X-Demo-Fail: before-charge}: fails before the acquirer is called (503, rolled back, nothing done anywhere:
 *   a first attempt says a new key is safe);
 *   {@code X-Demo-Fail: at-commit}: the commit itself fails, after the idempotency record was updated in the
 *   same transaction (503, both rolled back);</li>
 *   <li>{@code X-Demo-Acquirer-Delay-Ms} on {@code POST /payouts} and {@code POST /payments}: sent to the acquirer as
 *   its {@code X-Demo-Delay-Ms} ({@link Forwarded}), so that the payout or the charge outlives the service's read
 *   timeout (10 s for charges): the acquirer still records it, and the service's answer is lost;</li>
 *   <li>{@code X-Demo-Hold: name} where {@code X-Demo-Delay-Ms} acts: the request waits there (after its delay, if
 *   any) until {@code DELETE /demo-faults/holds/name} releases the hold ({@link Holds}), at most 60 s. A test that
 *   must see requests in flight while it acts keeps them there for exactly as long as it needs, however slow or
 *   fast the machine; a release before any request arrives lets them all through.</li>
 * </ul>
 * They act at the {@link At} points of the demo's data services ({@link Injector}), also inside the task of
 * {@code POST /payments/async} and in the listener of a command sent by {@code POST /payment-commands}, which get
 * the faults their request carried. The clock skew of a node,
 * the server property {@code demo.clock-skew}, is applied by {@link DemoClock}, under the same switch.
 */
@RequestScoped
public class DemoFaults {
    static final String DELAY = "X-Demo-Delay-Ms";
    static final String FAIL = "X-Demo-Fail";
    static final String ACQUIRER_DELAY = "X-Demo-Acquirer-Delay-Ms";
    static final String HOLD = "X-Demo-Hold";
    private static final long MAX_DELAY_MS = 60_000;

    private long delayMillis;
    private String fail;
    private Long acquirerDelayMillis;
    private String hold;

    // The faults of the latest request of each operation (caller and key), for its asynchronous task or its
    // message's listener: they run in a request context of their own, where the request's headers are not.
    private static final Map<String, Recorded> OF_OPERATIONS = java.util.Collections.synchronizedMap(
            new java.util.LinkedHashMap<>(16, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Recorded> eldest) {
                    return size() > 10_000;
                }
            });

    record Recorded(long delayMillis, String fail, Long acquirerDelayMillis, String hold) {
    }

    // The holds by name: a latch each, released once; created by whichever comes first, the request or the release.
    private static final Map<String, java.util.concurrent.CountDownLatch> HOLDS = java.util.Collections.synchronizedMap(
            new java.util.LinkedHashMap<>() {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, java.util.concurrent.CountDownLatch> eldest) {
                    return size() > 1_000;
                }
            });

    @Inject
    IdempotencyContext idempotency;

    // Whether this context's faults are known: read from its request's headers, or looked up once for its operation.
    private boolean known;

    // In an asynchronous task or a command's listener, which no request filter saw: the faults its request carried,
    // looked up by the operation's key. Only there: a request's own faults never hand its key out, so that a failure
    // before the payment used it may still tell the client a new key is safe (Idempotency-State).
    private void knowTheFaults() {
        if (known) {
            return;
        }
        known = true;
        if (!enabled() || !idempotency.isActive()) {
            return;
        }
        Recorded recorded = idempotency.scope().map(scope -> OF_OPERATIONS.get(scope.principal() + "\n" + scope.key()))
                .orElse(null);
        if (recorded != null) {
            record(recorded);
        }
    }

    // Set and read through methods: the filter and the interceptor hold the request-scoped proxy.
    void record(Recorded recorded) {
        this.known = true;
        this.delayMillis = recorded.delayMillis();
        this.fail = recorded.fail();
        this.acquirerDelayMillis = recorded.acquirerDelayMillis();
        this.hold = recorded.hold();
    }

    long delayMillis() {
        knowTheFaults();
        return delayMillis;
    }

    String fail() {
        knowTheFaults();
        return fail;
    }

    Long acquirerDelayMillis() {
        knowTheFaults();
        return acquirerDelayMillis;
    }

    String hold() {
        knowTheFaults();
        return hold;
    }

    private static java.util.concurrent.CountDownLatch latch(String hold) {
        return HOLDS.computeIfAbsent(hold, name -> new java.util.concurrent.CountDownLatch(1));
    }

    /**
     * Keeps this request's faults for the operation {@code key} of {@code caller}, which another context runs: an
     * asynchronous task, or the listener of a payment command this request sends.
     */
    static void carryTo(String caller, String key) {
        if (!enabled()) {
            return;
        }
        DemoFaults current = CDI.current().select(DemoFaults.class).get();
        OF_OPERATIONS.put(caller + "\n" + key, new Recorded(current.delayMillis(), current.fail(),
                current.acquirerDelayMillis(), current.hold()));
    }

    /** Whether this server honours the fault headers ({@code demo.faults}, default false). */
    static boolean enabled() {
        return ConfigProvider.getConfig().getOptionalValue("demo.faults", Boolean.class).orElse(false);
    }

    /** Where a fault acts. */
    public enum Point {
        /** A payment was written, the acquirer not called yet. */
        BEFORE_CHARGE,
        /** A payment's charge was recorded, its transaction is still open. */
        AFTER_CHARGE,
        /** The acquirer received a payout or a charge and is about to settle or record it. */
        BEFORE_SETTLEMENT
    }

    /** Marks a data-service method as a point where the request's faults act. */
    @InterceptorBinding
    @Retention(RetentionPolicy.RUNTIME)
    @Target({ElementType.METHOD, ElementType.TYPE})
    public @interface At {
        @Nonbinding
        Point value() default Point.AFTER_CHARGE;
    }

    /** Reads the fault headers of a request into its {@link DemoFaults}, when the server honours them. */
    @Provider
    public static class Headers implements ContainerRequestFilter {
        @Override
        public void filter(ContainerRequestContext request) {
            if (!enabled()) {
                return;
            }
            String acquirerDelay = request.getHeaderString(ACQUIRER_DELAY);
            Recorded recorded = new Recorded(millis(request.getHeaderString(DELAY), DELAY),
                    request.getHeaderString(FAIL), acquirerDelay == null ? null : millis(acquirerDelay, ACQUIRER_DELAY),
                    holdName(request.getHeaderString(HOLD)));
            CDI.current().select(DemoFaults.class).get().record(recorded);
            String key = request.getHeaderString("Idempotency-Key");
            java.security.Principal caller = request.getSecurityContext().getUserPrincipal();
            if (key != null && caller != null) {
                carryTo(caller.getName(), key.trim().replaceAll("^\"|\"$", ""));
            }
        }

        private static long millis(String value, String header) {
            if (value == null) {
                return 0;
            }
            try {
                return Math.min(MAX_DELAY_MS, Math.max(0, Long.parseLong(value.trim())));
            } catch (NumberFormatException e) {
                throw DemoProblem.invalid(header + " must be a number of milliseconds");
            }
        }
    }

    static String holdName(String value) {
        if (value != null && !value.matches("[A-Za-z0-9._-]{1,64}")) {
            throw DemoProblem.invalid(HOLD + " must be 1 to 64 letters, digits, '.', '_' or '-'");
        }
        return value;
    }

    /** {@code DELETE /demo-faults/holds/{name}}: lets every request held by {@code X-Demo-Hold: name} go on (204). */
    @jakarta.ws.rs.Path("demo-faults/holds")
    public static class Holds {
        @jakarta.ws.rs.DELETE
        @jakarta.ws.rs.Path("{name}")
        public jakarta.ws.rs.core.Response release(@jakarta.ws.rs.PathParam("name") String name) {
            if (!enabled()) {
                throw DemoProblem.notFound("demo-faults/holds (fault injection is off on this server: demo.faults)");
            }
            latch(holdName(name)).countDown();
            return jakarta.ws.rs.core.Response.noContent().build();
        }
    }

    /** Sends the request's acquirer delay along with a payout to the acquirer. */
    public static class Forwarded implements ClientRequestFilter {
        @Override
        public void filter(ClientRequestContext call) {
            if (!enabled() || !"POST".equals(call.getMethod())) {
                return;
            }
            Long delay;
            try {
                delay = CDI.current().select(DemoFaults.class).get().acquirerDelayMillis();
            } catch (jakarta.enterprise.context.ContextNotActiveException noRequest) {
                return;
            }
            if (delay != null) {
                call.getHeaders().putSingle(DELAY, delay);
            }
        }
    }

    /** The start of the log line of a request that has reached its {@code X-Demo-Delay-Ms} pause. */
    public static final String PAUSED = "DEMO-PAUSED";
    private static final java.util.logging.Logger PAUSES = java.util.logging.Logger.getLogger(DemoFaults.class.getName());

    /** Makes the request's faults happen at the points marked {@link At}. */
    @At
    @Interceptor
    @Priority(Interceptor.Priority.APPLICATION)
    public static class Injector {
        @Inject
        DemoFaults faults;
        @jakarta.annotation.Resource
        TransactionSynchronizationRegistry transaction;

        @AroundInvoke
        public Object inject(InvocationContext invocation) throws Exception {
            Point point = invocation.getMethod().getAnnotation(At.class).value();
            if (point == Point.BEFORE_CHARGE) {
                if ("before-charge".equalsIgnoreCase(faults.fail())) {
                    throw DemoProblem.notStarted();
                }
                return invocation.proceed();
            }
            if (point == Point.BEFORE_SETTLEMENT) {
                pause(faults.delayMillis(), faults.hold());
                return invocation.proceed();
            }
            Object result = invocation.proceed();
            pause(faults.delayMillis(), faults.hold());
            if ("transient".equalsIgnoreCase(faults.fail())) {
                throw DemoProblem.transientFailure();
            }
            if ("at-commit".equalsIgnoreCase(faults.fail())) {
                transaction.registerInterposedSynchronization(new Synchronization() {
                    @Override
                    public void beforeCompletion() {
                        throw new IllegalStateException(FAIL + ": at-commit");
                    }

                    @Override
                    public void afterCompletion(int status) {
                    }
                });
            }
            return result;
        }

        // The line tells a test that watches the log that the request has reached its pause (inside its transaction).
        private static void pause(long millis, String hold) {
            try {
                if (millis > 0) {
                    PAUSES.info(() -> PAUSED + " " + millis + " ms");
                    Thread.sleep(millis);
                }
                if (hold != null) {
                    PAUSES.info(() -> PAUSED + " until " + hold + " is released");
                    latch(hold).await(MAX_DELAY_MS, java.util.concurrent.TimeUnit.MILLISECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
