package dev.idempotency.internal;

import dev.idempotency.IdempotencyDefinitionException;
import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyMaintenance;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.RecordStatus;
import dev.idempotency.config.IdempotencySettings;
import dev.idempotency.config.SettingsSource;
import dev.idempotency.core.Admission;
import dev.idempotency.core.CanonicalJson;
import dev.idempotency.core.Claim;
import dev.idempotency.core.DefaultScopeResolver;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.core.Fingerprinter;
import dev.idempotency.core.IdempotencyProtocol;
import dev.idempotency.core.KeyRules;
import dev.idempotency.core.CommitSettlement;
import dev.idempotency.core.Execution;
import dev.idempotency.core.LeaseGuard;
import dev.idempotency.core.LeaseKeeper;
import dev.idempotency.core.MessageFacts;
import dev.idempotency.core.MessageScopeResolver;
import dev.idempotency.core.CallScopeResolver;
import dev.idempotency.core.CallFacts;
import dev.idempotency.core.Settler;
import dev.idempotency.core.Operation;
import dev.idempotency.core.OutcomeStorage;
import dev.idempotency.core.RequestPreparation;
import dev.idempotency.core.ResponseSealer;
import dev.idempotency.core.ScopeDigest;
import dev.idempotency.jdbc.DatabaseClock;
import dev.idempotency.jdbc.JdbcRecordStore;
import dev.idempotency.json.JacksonCanonicalJson;
import dev.idempotency.json.JsonRedactor;
import dev.idempotency.jta.JtaTransactions;
import dev.idempotency.jta.TransactionManagerLookup;
import dev.idempotency.metrics.IdempotencyMeters;
import dev.idempotency.metrics.MeterBackend;
import dev.idempotency.core.ProtocolEvents;
import dev.idempotency.spi.StoreUnavailableException;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.OutcomeResolver;
import dev.idempotency.spi.RecordStore;
import dev.idempotency.spi.ScopeResolver;
import dev.idempotency.spi.StoredResponse;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.concurrent.ManagedScheduledExecutorService;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.spi.BeanManager;
import jakarta.inject.Inject;
import jakarta.transaction.TransactionManager;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;
import java.lang.reflect.Method;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The library inside one application: configuration, the protocol and its collaborators, resolved
 * once when the deployment is validated. Collaborators the application provides as beans
 * ({@link RecordStore}, {@link ScopeResolver}, {@link OutcomeResolver}, {@link Clock},
 * {@link TransactionManager}) replace the defaults.
 */
@ApplicationScoped
public class IdempotencyRuntime implements IdempotencyMaintenance {
    private static final Logger LOG = Logger.getLogger(IdempotencyRuntime.class.getName());
    static final String DEFAULT_SCHEDULER = "java:comp/DefaultManagedScheduledExecutorService";
    static final String DEFAULT_EXECUTOR = "java:comp/DefaultManagedExecutorService";
    private static final Duration CLOCK_REFRESH = Duration.ofMinutes(1);
    /** A scope key no operation has (scope keys are digests in hex): reading it proves the table answers. */
    private static final String READINESS_PROBE_KEY = "readiness-probe";

    @Inject
    Instance<RecordStore> stores;
    @Inject
    Instance<dev.idempotency.spi.OutcomeCache> outcomeCaches;
    @Inject
    Instance<TransactionManager> transactionManagers;
    @Inject
    Instance<Clock> clocks;
    @Inject
    Instance<java.security.Principal> principals;
    @Inject
    BeanManager beanManager;

    private volatile boolean started;
    private IdempotencySettings settings;
    private RecordStore store;
    private dev.idempotency.spi.OutcomeCache cache;
    private boolean ownCache;
    private JtaTransactions transactions;
    private IdempotencyProtocol protocol;
    private Fingerprinter fingerprinter;
    private CanonicalJson canonicalJson;
    private OutcomeStorage outcomes;
    private RequestPreparation preparation;
    private RequestPreparation messagePreparation;
    private RequestPreparation callPreparation;
    private final Map<String, CallScopeResolver.Sources> callSources = new HashMap<>();
    private MethodCall methodCall;
    private MessageDelivery messageDelivery;
    private final Map<String, java.util.concurrent.atomic.LongAdder> messageCounts = new java.util.concurrent.ConcurrentHashMap<>();
    private ScopeDigest scopeDigest;
    private Clock clock;
    private Administration administration;
    private final Map<Method, IdempotentMethod> methods = new HashMap<>();
    private final Map<String, EndpointPolicy> policies = new HashMap<>();
    private ScheduledFuture<?> purgeTask;
    private ProblemResponses problems;
    private CommitSettlement commits;
    private LeaseGuard leaseGuard;
    private Execution execution;
    // Selected once: a request only fires.
    private jakarta.enterprise.event.Event<IdempotencyEvent> events;
    private int maxRequestBytes;
    private ScheduledFuture<?> clockTask;
    private ScheduledFuture<?> leaseTask;
    private LeaseKeeper leases;
    private Settler settler;
    private ScheduledFuture<?> settleTask;
    private ExecutorService executor;
    private java.util.concurrent.Semaphore statusWaiters = new java.util.concurrent.Semaphore(0);
    private static final long STATUS_POLL_MILLIS = 50;
    // The application's resolvers, as the extension found them among all the deployment's beans (an injected
    // Instance sees only what the library's bean archive may see: on Payara not the WAR's own classes).
    private List<OutcomeResolver> outcomeResolvers = List.of();
    // The server's metrics, when it offers a library the extension knows; null otherwise.
    private IdempotencyMeters meters;
    // PROCESSING records whose lease ran out, as the last settle pass left them.
    private volatile long stuckOperations;
    private static final int STUCK_COUNT_LIMIT = 10_000;

    /**
     * Reads the configuration and builds everything; called once at deployment validation.
     *
     * @param scopeResolver   the application's {@link ScopeResolver} bean, if it has one
     * @param outcomeResolvers the application's {@link OutcomeResolver} beans
     * @throws IdempotencyDefinitionException for any invalid setting or annotation value
     */
    public synchronized void start(Collection<IdempotentMethod> found, ClassLoader loader,
                                   Optional<ScopeResolver> scopeResolver, List<OutcomeResolver> outcomeResolvers,
                                   Optional<ExecutorService> executorBean) {
        if (started) {
            return;
        }
        this.outcomeResolvers = List.copyOf(outcomeResolvers);
        settings = new IdempotencySettings(SettingsSource.detect(loader));
        events = beanManager.getEvent().select(IdempotencyEvent.class);
        meters = MeterBackend.detect(IdempotencyRuntime.class.getClassLoader(), this::soleBean)
                .map(IdempotencyMeters::new).orElse(null);
        if (meters != null) {
            LOG.info("IDEM-I008 the library's metrics are recorded with " + meters.backend() + " (idempotency.*)");
        }
        problems = new ProblemResponses(settings.problemBase());
        maxRequestBytes = settings.maxRequestBytes();
        statusWaiters = new java.util.concurrent.Semaphore(settings.maxWaiters());
        if (settings.usesDevelopmentSecret()) {
            LOG.warning("IDEM-W001 idempotency.insecure-development-secret=true: request fingerprints use a publicly"
                    + " known secret. Never run like this in production.");
        }
        for (IdempotentMethod method : found) {
            EndpointPolicy policy = method.trigger() == IdempotentMethod.Trigger.CALL
                    ? settings.policyForCall(method.endpoint(), method.annotation())
                    : settings.policyFor(method.endpoint(), method.annotation(),
                    method.trigger() == IdempotentMethod.Trigger.MESSAGE);
            if (method.trigger() == IdempotentMethod.Trigger.CALL) {
                callSources.put(method.endpoint(), settings.callSources(method.endpoint()));
            }
            methods.put(method.method(), method);
            policies.put(method.endpoint(), policy);
            if (policy.externalSideEffects() && resolverFor(policy).isEmpty()) {
                // Without one, an abandoned attempt would simply run again, calling downstream a second time.
                throw new IdempotencyDefinitionException("IDEM-D012 endpoint '" + policy.endpoint() + "' declares"
                        + " externalSideEffects = true but no OutcomeResolver bean handles it: provide one that asks"
                        + " the downstream system whether an earlier attempt acted, or drop externalSideEffects");
            }
        }
        if (policies.values().stream().anyMatch(EndpointPolicy::asynchronous)) {
            executor = executorBean.orElseGet(IdempotencyRuntime::defaultExecutor);
        }
        clock = clocks.isResolvable() ? clocks.get() : Clock.systemUTC();
        canonicalJson = new JacksonCanonicalJson();
        fingerprinter = new Fingerprinter(settings.secret(), settings.previousSecrets(), canonicalJson);
        scopeDigest = new ScopeDigest(settings.secret(), settings.previousSecrets());
        outcomes = new OutcomeStorage(new ResponseSealer(settings.encryptionKeys(), settings.activeEncryptionKey(),
                new SecureRandom()), new JsonRedactor());
        TransactionManager tm = transactionManagers.isResolvable() ? transactionManagers.get()
                : TransactionManagerLookup.fromJndi();
        if (tm == null) {
            throw new IdempotencyDefinitionException("IDEM-D010 no JTA TransactionManager found (looked for a CDI bean"
                    + " and at the JNDI names of WildFly and Payara)");
        }
        transactions = new JtaTransactions(tm);
        store = stores.isResolvable() ? stores.get() : jdbcStore();
        refuseClaimsInTransactionWithout(store);
        if (settings.createSchema() && store instanceof JdbcRecordStore jdbc) {
            transactions.requiresNew(() -> {
                jdbc.createSchema();
                return null;
            });
        }
        DatabaseClock databaseClock = null;
        if (settings.usesDatabaseClock() && store instanceof JdbcRecordStore jdbc) {
            // One time for every node: a node whose own clock runs ahead must not take over a live lease.
            databaseClock = jdbc.databaseClock(clock, CLOCK_REFRESH);
            databaseClock.refresh();
            clock = databaseClock;
        }
        preparation = new RequestPreparation(settings.keyRules(), canonicalJson, fingerprinter, scopeDigest,
                scopeResolver.orElseGet(() -> new DefaultScopeResolver(settings.tenantSource().fromHeader(),
                        settings.tenantSource().value(), settings.anonymousAllowed())), clock);
        // A message has no caller whom the application's resolver could ask about: its scope comes from its policy.
        messagePreparation = new RequestPreparation(settings.keyRules(), canonicalJson, fingerprinter, scopeDigest,
                new MessageScopeResolver(policies.values().stream().filter(p -> p.messages().isPresent())
                        .collect(java.util.stream.Collectors.toMap(EndpointPolicy::endpoint, p -> p.messages().get()))),
                clock);
        messageDelivery = new MessageDelivery(this);
        // Nor has a call of a business method a request: its scope comes from the call.* settings.
        callPreparation = new RequestPreparation(settings.keyRules(), canonicalJson, fingerprinter, scopeDigest,
                new CallScopeResolver(callSources), clock);
        methodCall = new MethodCall(this);
        cache = outcomeCache(settings, clock);
        protocol = new IdempotencyProtocol(store, cache, transactions, clock, new SecureRandom(), new ProtocolEvents() {
            @Override
            public void publish(IdempotencyEvent event) {
                fire(event);
            }

            @Override
            public void timed(Step step, String endpoint, Duration took) {
                if (meters != null) {
                    meters.time(step, endpoint, took);
                }
            }

            @Override
            public void cacheRead(String endpoint, CacheRead read) {
                if (meters != null) {
                    meters.cacheRead(endpoint, read);
                }
            }
        }, settings.maxWaiters());
        commits = new CommitSettlement(protocol);
        leases = new LeaseKeeper(store, transactions, clock, this::fire);
        leaseGuard = new LeaseGuard(leases, commits);
        execution = new Execution(protocol, leaseGuard, commits, outcomes);
        settler = new Settler(protocol, store, transactions, clock, policies.values().stream()
                .map(policy -> new Settler.Endpoint(policy, resolverFor(policy))).toList(),
                settings.settleAfter(), settings.settleLookBack(), settings.purgeBatchSize());
        administration = new Administration(store, protocol, clock, policies::get, this::purgeExpired, this::fire);
        scheduleMaintenance(databaseClock);
        DocumentedOperations.publish(new DocumentedOperations(found.stream()
                .filter(method -> method.trigger() == IdempotentMethod.Trigger.REQUEST)
                .flatMap(method -> DocumentedOperations.of(method.method(), policies.get(method.endpoint())).stream())
                .toList(), settings.keyRules(), maxRequestBytes));
        started = true;
    }

    /**
     * Whether this node can serve idempotent requests now: the record store answers a read of its table (a key no
     * operation has), and the protocol's time is known (the database's, once it answered since deployment; an
     * offset kept from an earlier answer is still known). Asked by the health check, on the caller's thread and
     * outside any transaction.
     */
    public ReadinessReport readiness() {
        Map<String, Object> data = new java.util.LinkedHashMap<>();
        if (!started) {
            data.put("store", "not started");
            return new ReadinessReport(false, data);
        }
        boolean up = true;
        try {
            store.find(READINESS_PROBE_KEY);
            data.put("store", "reachable");
        } catch (RuntimeException e) {
            up = false;
            data.put("store", "unavailable: " + e.getMessage());
        }
        if (clock instanceof DatabaseClock databaseClock) {
            Optional<Duration> sinceAnswer = databaseClock.sinceLastAnswer();
            if (sinceAnswer.isPresent()) {
                data.put("clock", "database");
                data.put("clock-offset-ms", databaseClock.offset().toMillis());
                data.put("clock-measured-seconds-ago", sinceAnswer.get().toSeconds());
            } else {
                up = false;
                data.put("clock", "unknown: the database has not told its time since deployment");
            }
        } else {
            data.put("clock", "local");
        }
        return new ReadinessReport(up, data);
    }

    /**
     * The deployment's one bean of a type, looked up through an injection point of its own: a server's producer
     * may read it (see {@link LookupInjectionPoint}). A bean that cannot be had costs the library its metrics, not
     * the deployment.
     */
    private Optional<Object> soleBean(Class<?> type) {
        try {
            if (!beanManager.createInstance().select(type).isResolvable()) {
                return Optional.empty();
            }
            return Optional.of(beanManager.getInjectableReference(new LookupInjectionPoint(type),
                    beanManager.createCreationalContext(null)));
        } catch (RuntimeException | LinkageError e) {
            LOG.warning("IDEM-W019 the deployment's " + type.getName() + " bean could not be obtained, so the"
                    + " library records no metrics with it: " + e);
            return Optional.empty();
        }
    }

    private static ExecutorService defaultExecutor() {
        try {
            if (new InitialContext().lookup(DEFAULT_EXECUTOR) instanceof ExecutorService managed) {
                return managed;
            }
        } catch (NamingException | LinkageError e) {
            // Reported below.
        }
        throw new IdempotencyDefinitionException("IDEM-D014 an asynchronous @Idempotent endpoint needs an executor:"
                + " none at " + DEFAULT_EXECUTOR + " and no ExecutorService bean qualified @IdempotencyExecutor");
    }

    /** The executor of asynchronous endpoints' tasks; null when no endpoint is asynchronous. */
    public ExecutorService executor() {
        return executor;
    }

    private RecordStore jdbcStore() {
        DataSource dataSource;
        try {
            dataSource = (DataSource) new InitialContext().lookup(settings.datasource());
        } catch (NamingException | ClassCastException e) {
            throw new IdempotencyDefinitionException("IDEM-D011 no DataSource at " + settings.datasource()
                    + " (set idempotency.datasource to the JNDI name of the record table's JTA DataSource)", e);
        }
        return JdbcRecordStore.forDataSource(dataSource, settings.table());
    }

    // The purge, the database clock's refresh and the lease renewal run on the server's managed scheduler,
    // off request threads.
    private void scheduleMaintenance(DatabaseClock databaseClock) {
        Duration interval = settings.purgeInterval();
        ManagedScheduledExecutorService scheduler = null;
        try {
            Object found = new InitialContext().lookup(DEFAULT_SCHEDULER);
            if (found instanceof ManagedScheduledExecutorService managed) {
                scheduler = managed;
            }
        } catch (NamingException | LinkageError e) {
            // Reported below.
        }
        if (scheduler == null) {
            LOG.info("IDEM-I002 no managed scheduled executor at " + DEFAULT_SCHEDULER
                    + "; expired records are purged only when IdempotencyMaintenance.purgeExpired() is called, stuck"
                    + " operations settled only when IdempotencyMaintenance.settleStuck() is");
            if (!policies.isEmpty()) {
                LOG.warning("IDEM-W008 leases are not renewed without a managed scheduled executor: an @Idempotent"
                        + " method that runs longer than its lease (idempotency.lease) can be taken over by a retry"
                        + " and run twice");
            }
            return;
        }
        if (!policies.isEmpty()) {
            Duration shortest = policies.values().stream().map(EndpointPolicy::lease).min(Duration::compareTo)
                    .orElseThrow();
            long millis = LeaseKeeper.interval(shortest).toMillis();
            leaseTask = scheduler.scheduleWithFixedDelay(this::renewLeases, millis, millis, TimeUnit.MILLISECONDS);
            Duration settleEvery = settings.settleInterval();
            if (!settleEvery.isZero()) {
                if (meters != null) {
                    meters.stuckOperations(() -> stuckOperations);
                }
                settleTask = scheduler.scheduleWithFixedDelay(this::scheduledSettle, settleEvery.toMillis(),
                        settleEvery.toMillis(), TimeUnit.MILLISECONDS);
            }
        }
        if (!interval.isZero()) {
            long millis = interval.toMillis();
            purgeTask = scheduler.scheduleWithFixedDelay(this::scheduledPurge, millis, millis, TimeUnit.MILLISECONDS);
        }
        if (databaseClock != null) {
            long millis = CLOCK_REFRESH.toMillis();
            clockTask = scheduler.scheduleWithFixedDelay(databaseClock::refresh, millis, millis, TimeUnit.MILLISECONDS);
            databaseClock.refreshInBackground();
        }
    }

    private void renewLeases() {
        try {
            leases.renewDue();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "IDEM-W009 renewing the leases of running executions failed; tried again", e);
        }
    }

    /** The leases of running executions, renewed on the managed scheduler. */
    public LeaseKeeper leases() {
        return leases;
    }

    private void scheduledPurge() {
        try {
            purgeExpired();
        } catch (RuntimeException e) {
            // The next run tries again; a failed purge only delays cleanup.
            LOG.log(Level.WARNING, "IDEM-W002 scheduled purge of expired idempotency records failed", e);
        }
    }

    private void scheduledSettle() {
        try {
            settleStuck();
            if (meters != null) {
                stuckOperations = settler.countStuck(STUCK_COUNT_LIMIT);
            }
        } catch (RuntimeException e) {
            // The next run tries again; the window it did not finish is kept.
            LOG.log(Level.WARNING, "IDEM-W012 settling stuck operations failed; tried again at the next run", e);
        }
    }

    @Override
    public int settleStuck() {
        if (!started) {
            throw new IdempotencyException(Problem.of(ProblemType.NOT_CONFIGURED, "the idempotency library has not started"));
        }
        List<IdempotencyEvent.Settled> settled = settler.settleDue();
        for (IdempotencyEvent.Settled s : settled) {
            LOG.warning("IDEM-W011 settled stuck operation " + s.scopeKey() + " of endpoint '" + s.endpoint()
                    + "': its lease ran out and no client retried it; now " + s.status() + " ("
                    + s.resolution().name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ') + ")");
        }
        return settled.size();
    }

    // The application's OutcomeCache bean, else Redis at idempotency.redis.url (Jedis must be in the application),
    // else none.
    private dev.idempotency.spi.OutcomeCache outcomeCache(IdempotencySettings settings, Clock time) {
        if (outcomeCaches.isResolvable()) {
            return outcomeCaches.get();
        }
        Optional<dev.idempotency.redis.RedisAddress> address = settings.redisAddress();
        if (address.isEmpty()) {
            return dev.idempotency.spi.OutcomeCache.NONE;
        }
        try {
            Class.forName("redis.clients.jedis.UnifiedJedis", false, IdempotencyRuntime.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError missing) {
            throw new IdempotencyDefinitionException("IDEM-C004 " + dev.idempotency.config.Setting.REDIS_URL.key() + " is set, but Jedis"
                    + " (redis.clients:jedis) is not in the application: add it to the WAR, or unset the setting");
        }
        LOG.info("IDEM-I013 finished outcomes are kept in Redis (" + address.get() + ") and replayed from there;"
                + " the database decides every claim");
        ownCache = true;
        IdempotencyMeters measured = meters;
        dev.idempotency.redis.RedisOutcomeCache redis = dev.idempotency.redis.RedisOutcomeCache.connect(address.get(),
                settings.redisTimeout(), time, measured == null ? command -> { } : measured::cacheFailed);
        if (measured != null) {
            measured.cacheSkipped(() -> redis.skipping() ? 1 : 0);
        }
        return redis;
    }

    @PreDestroy
    void stop() {
        DocumentedOperations.withdraw();
        // The Redis client the library made; an application's own cache bean is the application's to close.
        if (ownCache && cache instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception e) {
                LOG.log(Level.FINE, "closing the outcome cache", e);
            }
        }
        if (settleTask != null) {
            settleTask.cancel(false);
        }
        if (purgeTask != null) {
            purgeTask.cancel(false);
        }
        if (clockTask != null) {
            clockTask.cancel(false);
        }
        if (leaseTask != null) {
            leaseTask.cancel(false);
        }
    }

    @Override
    public int purgeExpired() {
        return protocol().recovery().purgeExpired(settings.purgeBatchSize(), 1000);
    }

    /** What the admin resource does. */
    public Administration administration() {
        protocol();
        return administration;
    }

    public IdempotencyProtocol protocol() {
        if (!started) {
            throw new IdempotencyException(Problem.of(ProblemType.NOT_CONFIGURED, "the idempotency library has not started"));
        }
        return protocol;
    }

    public IdempotencySettings settings() {
        return settings;
    }

    /** Problem responses under the configured type base, resolved at deployment. */
    public ProblemResponses problems() {
        return problems;
    }

    /** {@code idempotency.max-request-bytes}, resolved at deployment. */
    public int maxRequestBytes() {
        return maxRequestBytes;
    }

    public JtaTransactions transactions() {
        return transactions;
    }

    public KeyRules keyRules() {
        return settings.keyRules();
    }


    /** The method descriptor for an intercepted method, matching overrides by signature; null if not idempotent. */
    public IdempotentMethod method(Method invoked) {
        IdempotentMethod direct = methods.get(invoked);
        if (direct != null) {
            return direct;
        }
        for (IdempotentMethod candidate : methods.values()) {
            Method m = candidate.method();
            if (m.getName().equals(invoked.getName())
                    && java.util.Arrays.equals(m.getParameterTypes(), invoked.getParameterTypes())
                    && (m.getDeclaringClass().isAssignableFrom(invoked.getDeclaringClass())
                    || invoked.getDeclaringClass().isAssignableFrom(m.getDeclaringClass()))) {
                return candidate;
            }
        }
        return null;
    }

    public EndpointPolicy policy(String endpoint) {
        return policies.get(endpoint);
    }

    public Optional<OutcomeResolver> resolverFor(EndpointPolicy policy) {
        if (!policy.externalSideEffects()) {
            return Optional.empty();
        }
        for (OutcomeResolver resolver : outcomeResolvers) {
            if (resolver.handles(policy.endpoint())) {
                return Optional.of(resolver);
            }
        }
        return Optional.empty();
    }

    /**
     * Everything the protocol needs of a request, checked before the JAX-RS runtime reads its entity: the
     * key (from the header or the body field), the scope and the fingerprint.
     *
     * @return empty when the request carries no key and the endpoint does not require one
     * @throws IdempotencyException for a missing or malformed key, a malformed body or a missing principal
     */
    public Optional<Operation> prepare(CapturedRequest request, IdempotentMethod method) {
        EndpointPolicy policy = policy(method.endpoint());
        return preparation.prepare(request, policy, resolverFor(policy));
    }

    /**
     * Key, scope and fingerprint of a message to a listener.
     *
     * @return empty when the message carries no key and the endpoint does not require one
     * @throws IdempotencyException for a missing or malformed key, a malformed body or a missing principal
     */
    public Optional<Operation> prepareMessage(MessageFacts message, IdempotentMethod method) {
        EndpointPolicy policy = policy(method.endpoint());
        return messagePreparation.prepare(message, policy, resolverFor(policy));
    }

    /**
     * Key, scope and fingerprint of a call of a business method.
     *
     * @throws IdempotencyException for a malformed key or a missing caller
     */
    public Optional<Operation> prepareCall(CallFacts call, IdempotentMethod method) {
        EndpointPolicy policy = policy(method.endpoint());
        return callPreparation.prepare(call, policy, resolverFor(policy));
    }

    /** The path of business methods. */
    public MethodCall calls() {
        return methodCall;
    }

    /**
     * The container's authenticated caller on this thread (the {@link java.security.Principal} bean), if any;
     * empty where there is no such bean (outside a server) or it names nobody.
     */
    public Optional<String> callerName() {
        if (!principals.isResolvable()) {
            return Optional.empty();
        }
        try {
            java.security.Principal caller = principals.get();
            return Optional.ofNullable(caller == null ? null : caller.getName()).filter(name -> !name.isEmpty());
        } catch (RuntimeException noSecurityContext) {
            return Optional.empty();
        }
    }

    /** The path of message listeners. */
    public MessageDelivery messages() {
        return messageDelivery;
    }

    @Override
    public long messagesHandled(String endpoint, IdempotencyEvent.MessageHandled.Handling handling) {
        java.util.concurrent.atomic.LongAdder count = messageCounts.get(endpoint + "\n" + handling);
        return count == null ? 0 : count.sum();
    }

    /**
     * Admission before the JAX-RS runtime reads the entity: one read of the record, and when it alone
     * answers (a replay, an in-flight answer, a rejection), that answer; nothing is parsed or claimed for it.
     * Otherwise the read goes with the exchange to the interceptor, which claims from there.
     *
     * @throws IdempotencyException for a rejection (mismatch, in flight, store unavailable)
     */
    public Optional<ExchangeStage.Reply> answerFromRecord(IdempotentExchange exchange, CapturedRequest request,
                                                          Operation op) {
        dev.idempotency.core.AdmissionPhase.LookUp lookUp = protocol().admission().lookUp(op);
        Optional<Admission> answer = lookUp.answer();
        if (answer.isEmpty()) {
            exchange.read(lookUp.record());
            return Optional.empty();
        }
        ExchangeStage.Reply reply;
        if (answer.get() instanceof Admission.Replay replay) {
            IdempotencyRecord record = replay.record();
            reply = new ExchangeStage.Reply(outcomes.replayed(record), true);
        } else if (answer.get() instanceof Admission.Accepted accepted) {
            reply = new ExchangeStage.Reply(OperationStatus.accepted(accepted.record(), request,
                    op.policy().statusPath(), op.scope().key(), accepted.retryAfter()), false);
        } else {
            throw new IllegalStateException("IDEM-X003 an answer without a claim cannot be " + answer.get());
        }
        exchange.answered(op, reply);
        return Optional.of(reply);
    }

    /** The scope of a status lookup: the same resolver, so another caller's key lands in another scope. */
    public Optional<IdempotencyRecord> findOwn(CapturedRequest request, String endpoint, String rawKey) {
        if (!policies.containsKey(endpoint)) {
            throw new IdempotencyException(Problem.of(ProblemType.OPERATION_NOT_FOUND, "no such endpoint"));
        }
        String key = keyRules().parse(rawKey);
        return protocol.admission().read(scopeDigest.keys(preparation.scope(request, endpoint, key)))
                .filter(r -> r.expiresAt().isAfter(clock.instant()));
    }

    /**
     * {@link #findOwn}, and while the operation still runs, read again until it has ended or {@code wait} has
     * passed (a client's {@code Prefer: wait=N} on an asynchronous endpoint's status, RFC 7240): one read every
     * 50 ms, at most {@code idempotency.in-flight-max-waiters} requests waiting at once (the others are answered
     * with what the first read found). {@code whileAbsent}: also while there is no record yet (a message in its
     * queue).
     */
    public Optional<IdempotencyRecord> findOwnWaiting(CapturedRequest request, String endpoint, String rawKey,
                                                      Duration wait, boolean whileAbsent) {
        Optional<IdempotencyRecord> found = findOwn(request, endpoint, rawKey);
        if (wait.isZero() || !undecided(found, whileAbsent) || !statusWaiters.tryAcquire()) {
            return found;
        }
        try {
            long deadline = System.nanoTime() + wait.toNanos();
            while (undecided(found, whileAbsent) && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(STATUS_POLL_MILLIS);
                found = findOwn(request, endpoint, rawKey);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            statusWaiters.release();
        }
        return found;
    }

    private static boolean undecided(Optional<IdempotencyRecord> found, boolean whileAbsent) {
        return found.isEmpty() ? whileAbsent : found.get().status() == RecordStatus.PROCESSING;
    }

    // A store of the application's that cannot claim in the business transaction fails the deployment, not a request.
    private void refuseClaimsInTransactionWithout(RecordStore chosen) {
        List<String> inTransaction = policies.values().stream().filter(EndpointPolicy::claimInTransaction)
                .map(EndpointPolicy::endpoint).sorted().toList();
        if (inTransaction.isEmpty()) {
            return;
        }
        if (!chosen.capabilities().contains(dev.idempotency.spi.StoreCapability.CLAIMS_IN_BUSINESS_TRANSACTION)) {
            throw new IdempotencyDefinitionException("IDEM-D020 endpoints " + inTransaction + " claim in the business"
                    + " transaction (claim = IN_TRANSACTION), which the RecordStore " + beanClass(chosen).getName()
                    + " does not declare among its capabilities (StoreCapability.CLAIMS_IN_BUSINESS_TRANSACTION: insertInTransaction,"
                    + " takeOverInTransaction, finishInTransaction)");
        }
        if (!chosen.uncommittedClaimsBlock()) {
            throw new IdempotencyDefinitionException("IDEM-D022 endpoints " + inTransaction + " claim in the business"
                    + " transaction (claim = IN_TRANSACTION), which is unsafe on this record store: its database lets"
                    + " two nodes hold uncommitted claims of one key at once (a multi-primary cluster such as MariaDB"
                    + " Galera certifies them only at commit), so both methods would run. Use claim = OWN_TRANSACTION");
        }
    }

    // The bean's own class, for messages: not the container's client proxy's.
    private static Class<?> beanClass(Object bean) {
        Class<?> type = bean.getClass();
        while (type.getName().contains("$Proxy$_$$_") && type.getSuperclass() != null) {
            type = type.getSuperclass();
        }
        return type;
    }

    /** What of an outcome is stored, and how a stored one is read back for a replay. */
    public OutcomeStorage outcomes() {
        return outcomes;
    }

    /** Whether the business transaction committed, when its end did not say so plainly, and what then. */
    public CommitSettlement commits() {
        return commits;
    }

    /** The stages every trigger runs once its operation is claimed. */
    public Execution execution() {
        return execution;
    }

    /** The stored outcome of a failure without a response: a problem naming the exception's type, not its message. */
    StoredResponse failureOutcome(ProblemType type, String detail) {
        return new StoredResponse(type.defaultStatus(), Map.of("Content-Type", List.of(ProblemResponses.PROBLEM_JSON)),
                problems().body(Problem.of(type, detail)), StoredResponse.PLAIN);
    }

    /** Records a thrown failure as rendered by the application's mappers: final (replayed) or retryable. */
    public void recordFailure(IdempotentExchange exchange, ExchangeStage.Failed failed, StoredResponse response,
                              boolean retryable) {
        // Called from the response filter, where a throw would become the container's 500: the client keeps the
        // answer its failure was mapped to (a failure to record is logged; the lease bounds the record).
        Claim claim = failed.claim();
        execution.recordFailure(claim, retryable ? RecordStatus.FAILED_RETRYABLE : RecordStatus.FAILED_FINAL,
                retryable ? Optional.empty() : Optional.of(outcomes.forStorage(response, claim.operation().policy(),
                        claim.operation().scopeKey())));
        exchange.settled(Optional.empty());
    }

    /**
     * A request turned away with one of the library's problems: its event (and, when the store could not answer,
     * {@link IdempotencyEvent.StoreUnavailable} first) and its log line.
     *
     * @param scopeKey the operation's key, or {@code ""} when the request could not be keyed
     */
    public void rejected(String endpoint, String scopeKey, IdempotencyException rejection) {
        Problem problem = rejection.problem();
        if (rejection.getCause() instanceof StoreUnavailableException unavailable) {
            fire(new IdempotencyEvent.StoreUnavailable(endpoint, String.valueOf(unavailable.getMessage())));
        }
        fire(new IdempotencyEvent.Rejected(endpoint, scopeKey, problem.type(), problem.status()));
    }

    /** Fires an event of the library for the application's observers (an observer's failure is logged). */
    public void fire(IdempotencyEvent event) {
        if (event instanceof IdempotencyEvent.MessageHandled handled) {
            messageCounts.computeIfAbsent(handled.endpoint() + "\n" + handled.handling(),
                    k -> new java.util.concurrent.atomic.LongAdder()).increment();
        }
        logged(event);
        if (meters != null) {
            // An outcome counts once it is committed: an execution whose transaction rolls back executed nothing.
            if (event instanceof IdempotencyEvent.Completed) {
                transactions.afterCommit(() -> meters.count(event));
            } else {
                meters.count(event);
            }
        }
        try {
            events.fire(event);
        } catch (RuntimeException e) {
            // An observer's failure must not change the outcome of the operation it observes.
            LOG.log(Level.WARNING, "IDEM-W004 an observer of " + event.getClass().getSimpleName() + " failed", e);
        }
    }

    // One line per operation turned away or fenced out, in key=value form for log search; never the client's key.
    private static void logged(IdempotencyEvent event) {
        if (event instanceof IdempotencyEvent.Rejected rejected) {
            LOG.info(() -> "IDEM-I009 rejected endpoint=" + rejected.endpoint() + " reason=" + rejected.reason().slug()
                    + " status=" + rejected.status() + " scope=" + shortKey(rejected.scopeKey()));
        } else if (event instanceof IdempotencyEvent.LeaseLost lost) {
            LOG.warning("IDEM-W010 lease-lost endpoint=" + lost.endpoint() + " scope=" + shortKey(lost.scopeKey())
                    + ": the lease could not be renewed while the method ran; nothing of this run will commit");
        } else if (event instanceof IdempotencyEvent.Fenced fenced) {
            LOG.warning("IDEM-W017 fenced endpoint=" + fenced.endpoint() + " scope=" + shortKey(fenced.scopeKey())
                    + ": its lease ran out and the operation was taken over; nothing of this execution commits");
        } else if (event instanceof IdempotencyEvent.Administered acted) {
            LOG.info(() -> "IDEM-I011 administered action=" + acted.action() + " by=" + acted.administrator()
                    + " endpoint=" + (acted.endpoint().isEmpty() ? "-" : acted.endpoint()) + " scope="
                    + shortKey(acted.scopeKey()) + " result=" + acted.result());
        } else if (event instanceof IdempotencyEvent.StoreUnavailable unavailable) {
            LOG.warning("IDEM-W018 store-unavailable endpoint=" + unavailable.endpoint() + " reason="
                    + unavailable.reason());
        }
    }

    // A scope key's first 12 hex digits: enough to find its record, and a digest, never the client's key.
    private static String shortKey(String scopeKey) {
        return scopeKey.isEmpty() ? "-" : scopeKey.substring(0, Math.min(12, scopeKey.length()));
    }
}
