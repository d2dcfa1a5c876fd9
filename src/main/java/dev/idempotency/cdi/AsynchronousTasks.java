package dev.idempotency.cdi;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyState;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.RecordStatus;
import dev.idempotency.core.AnswerStates;
import dev.idempotency.core.Claim;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.core.KeptRequest;
import dev.idempotency.core.Operation;
import dev.idempotency.core.OutcomeClassification;
import dev.idempotency.core.TaskResumption;
import dev.idempotency.deployment.Assembly;
import dev.idempotency.endpoints.IdempotentEndpoint;
import dev.idempotency.http.CapturedRequest;
import dev.idempotency.http.ExchangeStage;
import dev.idempotency.http.IdempotentExchange;
import dev.idempotency.http.OperationStatus;
import dev.idempotency.http.ResponseSnapshots;
import dev.idempotency.http.RollbackRules;
import dev.idempotency.http.TaskArguments;
import dev.idempotency.http.TaskProviders;
import dev.idempotency.spi.IdempotencyRecord;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.control.RequestContextController;
import jakarta.enterprise.context.spi.CreationalContext;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.spi.Bean;
import jakarta.enterprise.inject.spi.BeanManager;
import jakarta.inject.Inject;
import jakarta.interceptor.InvocationContext;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The tasks of asynchronous endpoints (ADR 10): an accepted operation's method run on the executor, in a request
 * context of its own, under its claim — the one its request made (with what another node needs to run it again kept
 * beside the claim), or one that {@link TaskResumption} took over when the node that accepted it died, called again
 * through the bean's proxy with the arguments read back from what was kept (docs/adr/0020).
 */
@ApplicationScoped
public class AsynchronousTasks implements TaskResumption.Runner {
    private static final Logger LOG = Logger.getLogger(AsynchronousTasks.class.getName());

    @Inject
    Assembly assembly;
    @Inject
    IdempotentExchange exchange;
    // One per task: a controller is used on the thread that activated it.
    @Inject
    Instance<RequestContextController> requestContexts;
    @Inject
    BeanManager beans;
    // The providers each method's task last took on a request thread of this node: a resumed task has none of its own.
    private final Map<Method, TaskProviders> providersTaken = new ConcurrentHashMap<>();
    // The bean manager of the deployment and the bean of each class that declares an asynchronous endpoint, as the
    // extension saw them: the library's own bean manager may not resolve the application's classes (Payara).
    private volatile BeanManager deploymentBeans;
    private volatile Map<Class<?>, Bean<?>> taskBeans = Map.of();
    // Methods whose arguments were found not to be keepable, reported once each.
    private final Map<Method, Boolean> reported = new ConcurrentHashMap<>();

    /**
     * The claimed operation runs as a task on the executor, and the client gets 202 with the status resource's
     * Location at once, as every duplicate does until the task is done. What the task needs of the request thread
     * is taken here (ADR 10), and what another node needs to run it again is kept with the claim.
     */
    Object submit(InvocationContext invocation, Claim claim, CapturedRequest request) {
        // Held by this request until the task has it: a failure before gives it back at the request's end.
        exchange.running(claim);
        Operation op = claim.operation();
        EndpointPolicy policy = op.policy();
        TaskProviders providers = TaskProviders.capture(request.providers(), invocation.getMethod(),
                java.util.stream.Stream.concat(policy.finalOn().stream(), policy.retryOn().stream()).toList());
        providersTaken.put(invocation.getMethod(), providers);
        CapturedRequest detached = request.withProviders(providers);
        keep(invocation, claim, detached, providers);
        IdempotencyRecord running = assembly.protocol().admission().read(op).orElseThrow(() -> new IllegalStateException(
                "IDEM-X005 the claimed operation has no record: " + op.scopeKey()));
        try {
            assembly.executor().execute(() -> run(invocation, claim, detached));
        } catch (java.util.concurrent.RejectedExecutionException rejected) {
            // Nothing ran: as a run that committed nothing, with the proof its claim gives.
            IdempotencyState nothingRan = exchange.notApplied();
            assembly.protocol().completion().release(claim);
            exchange.settled(Optional.empty());
            assembly.events().fire(new IdempotencyEvent.TaskEnded(policy.endpoint(), op.scopeKey(), RecordStatus.FAILED_RETRYABLE));
            throw new IdempotencyException(Problem.of(ProblemType.TASK_NOT_ACCEPTED,
                    "the server's executor did not accept the operation's task; retry later")
                    .retryAfter(policy.retryAfterMax()).withState(nothingRan), rejected);
        }
        exchange.settled(OperationStatus.accepted(running, request, policy.statusPath(), op.scope().key(),
                policy.retryAfterMax()), false, AnswerStates.IN_PROGRESS);
        return null;
    }

    // Kept only where the endpoint's tasks run again on another node; a failure to keep leaves the operation as
    // before (given back by the settler when its node dies).
    private void keep(InvocationContext invocation, Claim claim, CapturedRequest request, TaskProviders providers) {
        TaskResumption resumption = assembly.resumption();
        Method method = invocation.getMethod();
        if (!resumption.resumes(claim.operation().policy().endpoint())) {
            return;
        }
        Optional<String> notKept = TaskArguments.whyNotKept(method);
        try {
            if (notKept.isEmpty()) {
                byte[] arguments = TaskArguments.encode(method, invocation.getParameters(), providers);
                resumption.keep(claim, assembly.preparation().keep(request, claim.operation(),
                        String.valueOf(request.baseUri()), arguments));
                return;
            }
        } catch (RuntimeException failed) {
            notKept = Optional.of(String.valueOf(failed));
        }
        if (reported.putIfAbsent(method, Boolean.TRUE) == null) {
            LOG.warning("IDEM-W025 the accepted operations of " + method.getDeclaringClass().getName() + "#"
                    + method.getName() + " keep no input, so another node cannot run one again when its node dies"
                    + " (it is given back after idempotency.settle.after): " + notKept.get());
        }
    }

    /** How a resumed task reaches the bean that declares its method (given once, at deployment validation). */
    void callThrough(BeanManager deployment, Map<Class<?>, Bean<?>> beansOfTasks) {
        this.deploymentBeans = deployment;
        this.taskBeans = Map.copyOf(beansOfTasks);
    }

    /**
     * Runs an operation that {@link TaskResumption} took over, on the executor: its method called through the
     * bean's proxy (the application's interceptors run; the library's sees the operation running and proceeds),
     * with the arguments and the request read back from what its claim kept.
     */
    @Override
    public void run(Claim claim, KeptRequest kept) {
        EndpointPolicy policy = claim.operation().policy();
        IdempotentEndpoint endpoint = assembly.endpoints().all().stream()
                .filter(e -> e.policy().endpoint().equals(policy.endpoint())).findFirst().orElseThrow();
        Method method = endpoint.declared().method();
        TaskProviders providers = providersTaken.computeIfAbsent(method, m -> TaskProviders.capture(null, m,
                java.util.stream.Stream.concat(policy.finalOn().stream(), policy.retryOn().stream()).toList()));
        CapturedRequest request = new CapturedRequest(kept.method(), kept.path(), kept.query(),
                java.net.URI.create(kept.baseUri()), kept.contentType(), Map.of(), kept.body(), null, providers);
        try {
            assembly.executor().execute(() -> {
                BeanManager manager = deploymentBeans == null ? beans : deploymentBeans;
                CreationalContext<?> creation = manager.createCreationalContext(null);
                try {
                    Bean<?> bean = taskBeans.get(method.getDeclaringClass());
                    if (bean == null) {
                        bean = manager.resolve(manager.getBeans(method.getDeclaringClass()));
                    }
                    Object target = manager.getReference(java.util.Objects.requireNonNull(bean, "no bean declares "
                            + method), method.getDeclaringClass(), creation);
                    Object[] arguments = TaskArguments.decode(method, kept.arguments(), providers);
                    run(new ResumedInvocation(target, method, arguments), claim, request);
                } catch (RuntimeException unrunnable) {
                    LOG.log(Level.WARNING, "IDEM-W026 the resumed task of " + claim + " could not be started; its"
                            + " claim is given back", unrunnable);
                    assembly.protocol().completion().release(claim);
                } finally {
                    creation.release();
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException rejected) {
            // Given back at once: the next pass, here or on another node, takes it again.
            assembly.protocol().completion().release(claim);
        }
    }

    // On the executor's thread, in a request context of its own: the synchronous execution, and what the
    // response filter does for it on a request thread (a thrown failure rendered by the application's mappers,
    // recorded final or given back).
    private void run(InvocationContext invocation, Claim claim, CapturedRequest request) {
        RequestContextController context = requestContexts.get();
        context.activate();
        RecordStatus ended = RecordStatus.FAILED_RETRYABLE;
        try {
            exchange.runningTask(request, claim);
            try {
                IdempotentEndpoint method = assembly.method(invocation.getMethod());
                assembly.execution().run(claim, assembly.transactions().joinOrBegin(),
                        new ResponseCodec(exchange, assembly.outcomes(), invocation, method, request));
            } catch (Exception | Error thrown) {
                if (exchange.stage() instanceof ExchangeStage.Failed) {
                    ended = exchange.recordFailure(ResponseSnapshots.ofResult(RollbackRules.rendered(thrown,
                            request.providers()), invocation.getMethod(), request, claim.operation().policy()));
                }
                LOG.log(Level.INFO, "IDEM-I003 the task of " + claim + " ended with " + thrown
                        + "; its record is " + ended, thrown);
            }
            // What went out settled: a success, or a final failure recorded with it (one the application
            // declared not to roll back is thrown after it was finished); a 5xx was given back.
            if (exchange.stage() instanceof ExchangeStage.Settled settled && settled.reply().isPresent()) {
                RecordStatus sent = OutcomeClassification.ofStatus(settled.reply().get().response().status());
                ended = sent == RecordStatus.FAILED_RETRYABLE ? ended : sent;
            }
        } catch (RuntimeException | Error unexpected) {
            LOG.log(Level.WARNING, "IDEM-W013 the task of " + claim + " failed; its claim is given"
                    + " back at the end of its context, or taken over when its lease ends", unexpected);
        } finally {
            // Ends the task's exchange: a claim nobody settled is given back there.
            context.deactivate();
            assembly.events().fire(new IdempotencyEvent.TaskEnded(claim.operation().policy().endpoint(),
                    claim.operation().scopeKey(), ended));
        }
    }

    /** A resumed task's call of its method: through the bean's proxy, with the kept arguments. */
    private record ResumedInvocation(Object target, Method method, Object[] arguments) implements InvocationContext {
        @Override
        public Object getTarget() {
            return target;
        }

        @Override
        public Object getTimer() {
            return null;
        }

        @Override
        public Method getMethod() {
            return method;
        }

        @Override
        public java.lang.reflect.Constructor<?> getConstructor() {
            return null;
        }

        @Override
        public Object[] getParameters() {
            return arguments.clone();
        }

        @Override
        public void setParameters(Object[] params) {
            throw new IllegalStateException("a resumed task's arguments are the kept ones");
        }

        @Override
        public Map<String, Object> getContextData() {
            return new java.util.HashMap<>();
        }

        @Override
        public Object proceed() throws Exception {
            try {
                return method.invoke(target, arguments);
            } catch (java.lang.reflect.InvocationTargetException e) {
                if (e.getCause() instanceof Exception thrown) {
                    throw thrown;
                }
                if (e.getCause() instanceof Error error) {
                    throw error;
                }
                throw e;
            }
        }
    }
}
