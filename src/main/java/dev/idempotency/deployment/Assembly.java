package dev.idempotency.deployment;

import dev.idempotency.endpoints.IdempotentMethod;
import dev.idempotency.endpoints.IdempotentEndpoint;
import dev.idempotency.endpoints.IdempotentEndpoints;
import dev.idempotency.http.ProblemResponses;
import dev.idempotency.call.MethodCall;
import dev.idempotency.jms.MessageDelivery;
import dev.idempotency.admin.Administration;
import dev.idempotency.openapi.DocumentedOperations;

import dev.idempotency.IdempotencyDefinitionException;
import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyMaintenance;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.config.IdempotencySettings;
import dev.idempotency.config.SettingsSources;
import dev.idempotency.core.CanonicalJson;
import dev.idempotency.core.DefaultScopeResolver;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.core.Fingerprinter;
import dev.idempotency.core.IdempotencyProtocol;
import dev.idempotency.core.CommitSettlement;
import dev.idempotency.core.Execution;
import dev.idempotency.core.LeaseGuard;
import dev.idempotency.core.LeaseKeeper;
import dev.idempotency.core.Settler;
import dev.idempotency.core.TaskResumption;
import dev.idempotency.core.OutcomeStorage;
import dev.idempotency.core.RequestPreparation;
import dev.idempotency.core.ResponseSealer;
import dev.idempotency.core.ScopeDigest;
import dev.idempotency.json.JacksonCanonicalJson;
import dev.idempotency.json.JsonRedactor;
import dev.idempotency.jta.JtaTransactions;
import dev.idempotency.metrics.IdempotencyMeters;
import dev.idempotency.spi.OutcomeResolver;
import dev.idempotency.spi.RecordStore;
import dev.idempotency.spi.ScopeResolver;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Singleton;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.spi.BeanManager;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import jakarta.transaction.TransactionManager;

import java.lang.reflect.Method;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The library's parts as one deployment assembles them, once, when it is validated: the settings, the record store,
 * the protocol and the execution pipeline, the endpoints' registry, the triggers' paths and the maintenance — and
 * handed out from here (the pipeline's parts as beans). Collaborators the application provides as beans
 * ({@link RecordStore}, {@link ScopeResolver}, {@link OutcomeResolver}, {@link Clock}, {@link TransactionManager})
 * replace the defaults. One class, over 350 lines, because it is the one place where the parts meet: it decides
 * nothing a request asks; every accessor returns what {@link #start} built.
 */
@ApplicationScoped
public class Assembly implements IdempotencyMaintenance {
    private static final Logger LOG = Logger.getLogger(Assembly.class.getName());

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
    private MethodCall methodCall;
    private MessageDelivery messageDelivery;
    private ScopeDigest scopeDigest;
    private Clock clock;
    private Administration administration;
    private IdempotentEndpoints endpoints = IdempotentEndpoints.none();
    private ProblemResponses problems;
    private CommitSettlement commits;
    private Execution execution;
    // Selected once: a request only fires.
    private EventPublisher events;
    private LeaseKeeper leases;
    private Settler settler;
    private TaskResumption resumption;
    private MaintenanceSchedule maintenance;
    private ExecutorService executor;
    private StatusLookups statusLookups;
    // The application's resolvers, as the extension found them among all the deployment's beans (an injected
    // Instance sees only what the library's bean archive may see: on Payara not the WAR's own classes).
    private List<OutcomeResolver> outcomeResolvers = List.of();
    // The server's metrics, when it offers a library the extension knows; null otherwise.
    private IdempotencyMeters meters;

    /**
     * Reads the configuration and builds everything; called once at deployment validation.
     *
     * @param scopeResolver   the application's {@link ScopeResolver} bean, if it has one
     * @param outcomeResolvers the application's {@link OutcomeResolver} beans
     * @throws IdempotencyDefinitionException for any invalid setting or annotation value
     */
    public synchronized void start(Collection<IdempotentMethod> found, ClassLoader loader,
                                   Optional<ScopeResolver> scopeResolver, List<OutcomeResolver> outcomeResolvers,
                                   Optional<ExecutorService> executorBean, TaskResumption.Runner tasks) {
        if (started) {
            return;
        }
        this.outcomeResolvers = List.copyOf(outcomeResolvers);
        settings = new IdempotencySettings(SettingsSources.detect(loader));
        meters = ServerMetrics.detect(beanManager).orElse(null);
        problems = new ProblemResponses(settings.problemBase());
        if (settings.usesDevelopmentSecret()) {
            LOG.warning("IDEM-W001 idempotency.insecure-development-secret=true: request fingerprints use a publicly"
                    + " known secret. Never run like this in production.");
        }
        EndpointResolution resolution = new EndpointResolution(found, settings, this.outcomeResolvers);
        Collection<EndpointPolicy> policies = resolution.policies();
        if (policies.stream().anyMatch(EndpointPolicy::asynchronous)) {
            executor = executorBean.orElseGet(ServerResources::defaultExecutor);
        }
        clock = clocks.isResolvable() ? clocks.get() : Clock.systemUTC();
        canonicalJson = new JacksonCanonicalJson();
        fingerprinter = new Fingerprinter(settings.secret(), settings.previousSecrets(), canonicalJson);
        scopeDigest = new ScopeDigest(settings.secret(), settings.previousSecrets());
        outcomes = new OutcomeStorage(new ResponseSealer(settings.encryptionKeys(), settings.activeEncryptionKey(),
                new SecureRandom()), new JsonRedactor());
        TransactionManager tm = transactionManagers.isResolvable() ? transactionManagers.get()
                : ServerResources.transactionManager();
        transactions = new JtaTransactions(tm);
        events = new EventPublisher(beanManager.getEvent().select(IdempotencyEvent.class), Optional.ofNullable(meters),
                transactions);
        StorageSetup storage = StorageSetup.assemble(settings, policies,
                stores.isResolvable() ? Optional.of(stores.get()) : Optional.empty(),
                outcomeCaches.isResolvable() ? Optional.of(outcomeCaches.get()) : Optional.empty(), clock,
                Optional.ofNullable(meters));
        store = storage.store();
        cache = storage.cache();
        ownCache = storage.ownCache();
        clock = storage.clock();
        preparation = new RequestPreparation(settings.keyRules(), canonicalJson, fingerprinter, scopeDigest,
                scopeResolver.orElseGet(() -> new DefaultScopeResolver(settings.tenantSource().fromHeader(),
                        settings.tenantSource().value(), settings.anonymousAllowed())), clock);
        endpoints = resolution.registry(preparation, settings.keyRules(), canonicalJson, fingerprinter, scopeDigest,
                clock);
        protocol = new IdempotencyProtocol(store, cache, transactions, clock, new SecureRandom(), events,
                settings.maxWaiters());
        commits = new CommitSettlement(protocol);
        leases = new LeaseKeeper(store, transactions, clock, events);
        execution = new Execution(protocol, new LeaseGuard(leases, commits), commits, outcomes);
        settler = new Settler(protocol, store, transactions, clock, endpoints.all().stream()
                .map(endpoint -> new Settler.Endpoint(endpoint.policy(), endpoint.resolver())).toList(),
                settings.settleAfter(), settings.settleLookBack(), settings.purgeBatchSize());
        methodCall = new MethodCall(transactions, protocol.admission(), execution, commits, outcomes, problems::storedOutcome,
                new ContainerCaller(principals));
        messageDelivery = new MessageDelivery(transactions, protocol.admission(), execution, problems::storedOutcome,
                events);
        statusLookups = new StatusLookups(endpoints, settings.keyRules(), preparation, scopeDigest,
                protocol.admission(), clock, settings.maxWaiters());
        administration = new Administration(store, protocol, clock, endpoints.policies(), this::purgeExpired, events::fire);
        resumption = new TaskResumption(protocol.admission(), store, transactions, clock, outcomes, preparation,
                endpoints.all().stream().map(endpoint -> new Settler.Endpoint(endpoint.policy(), endpoint.resolver()))
                        .toList(), settings.settleAfter(), settings.settleAcceptedMaxAttempts(), settings.purgeBatchSize());
        warnOfAcceptedOperationsNotResumed();
        maintenance = new MaintenanceSchedule(leases, settler, resumption, tasks, protocol.recovery(),
                settings.purgeBatchSize(), Optional.ofNullable(meters));
        maintenance.start(endpoints.all().stream().map(endpoint -> endpoint.policy().lease()).min(Duration::compareTo),
                settings.settleInterval(), settings.purgeInterval(), settings.settleAcceptedInterval(),
                storage.databaseClock());
        DocumentedOperations.publish(new DocumentedOperations(found.stream()
                .filter(method -> method.trigger() == IdempotentMethod.Trigger.REQUEST)
                .flatMap(method -> DocumentedOperations.of(method.method(), endpoints.policy(method.endpoint())).stream())
                .toList(), settings.keyRules(), settings.maxRequestBytes()));
        started = true;
    }

    // A 202 promises the outcome (docs/adr/0020): where another node cannot keep that promise when this one dies,
    // the deployment says so, naming the reason.
    private void warnOfAcceptedOperationsNotResumed() {
        boolean keeps = store.capabilities().contains(dev.idempotency.spi.StoreCapability.TASK_INPUT);
        for (IdempotentEndpoint endpoint : endpoints.all()) {
            if (!endpoint.policy().asynchronous()) {
                continue;
            }
            Optional<String> why = keeps ? TaskResumption.whyNotResumed(endpoint.policy(), endpoint.resolver())
                    .or(() -> dev.idempotency.http.TaskArguments.whyNotKept(endpoint.declared().method()))
                    : Optional.of("the record store " + store.getClass().getName() + " keeps no task inputs");
            why.ifPresent(reason -> LOG.warning("IDEM-W030 the accepted operations of endpoint '"
                    + endpoint.policy().endpoint() + "' are not run again by another node when the node that accepted"
                    + " them dies: " + reason + "; they are given back after idempotency.settle.after, and their"
                    + " clients must send them again"));
        }
    }

    /**
     * Whether this node can serve idempotent requests now: the record store answers a read of its table (a key no
     * operation has), and the protocol's time is known (the database's, once it answered since deployment; an
     * offset kept from an earlier answer is still known). Asked by the health check, on the caller's thread and
     * outside any transaction.
     */
    public ReadinessReport readiness() {
        return started ? ReadinessReport.probe(store, clock) : ReadinessReport.notStarted();
    }

    /** The executor of asynchronous endpoints' tasks; null when no endpoint is asynchronous. */
    public ExecutorService executor() {
        return executor;
    }

    /** The leases of running executions, renewed on the managed scheduler. */
    public LeaseKeeper leases() {
        return leases;
    }

    @Override
    public int settleStuck() {
        if (!started) {
            throw new IdempotencyException(Problem.of(ProblemType.NOT_CONFIGURED, "the idempotency library has not started"));
        }
        return maintenance.settleStuck();
    }

    @Override
    public int resumeAccepted() {
        protocol();
        return maintenance.resumeAccepted();
    }

    /** What accepted operations keep with their claims, and who runs them again when their node dies. */
    public TaskResumption resumption() {
        protocol();
        return resumption;
    }

    /** From a request to the operation it asks for. */
    public RequestPreparation preparation() {
        return preparation;
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
        if (maintenance != null) {
            maintenance.stop();
        }
    }

    @Override
    public int purgeExpired() {
        protocol();
        return maintenance.purgeExpired();
    }

    /** A caller's look-ups of its own operations, for the status resource. */
    public StatusLookups statusLookups() {
        protocol();
        return statusLookups;
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
        return settings.maxRequestBytes();
    }

    public JtaTransactions transactions() {
        return transactions;
    }

    /** The endpoint of an intercepted method, matching overrides by signature; null if not idempotent. */
    public IdempotentEndpoint method(Method invoked) {
        return endpoints.of(invoked);
    }

    /** The deployment's idempotent endpoints, resolved once. */
    public IdempotentEndpoints endpoints() {
        return endpoints;
    }

    public EndpointPolicy policy(String endpoint) {
        return endpoints.policy(endpoint);
    }

    /** The path of business methods. */
    public MethodCall calls() {
        return methodCall;
    }

    /** The path of message listeners. */
    public MessageDelivery messages() {
        return messageDelivery;
    }

    @Override
    public long messagesHandled(String endpoint, IdempotencyEvent.MessageHandled.Handling handling) {
        return events.messagesHandled(endpoint, handling);
    }

    /** Where the library's events go: observers, metrics, the log. */
    public EventPublisher events() {
        return events;
    }

    // The pipeline's parts, published as beans for what injects them. Singletons, not dependent: the request-scoped
    // exchange injects three of them per request, and a dependent producer is a proxied call with its own
    // creational context at every injection, which the replay's server CPU per request showed (JFR, issue 30).

    /** What of an outcome is stored, and how a stored one is read back for a replay. */
    @Produces
    @Singleton
    public OutcomeStorage outcomes() {
        return outcomes;
    }

    /** Whether the business transaction committed, when its end did not say so plainly, and what then. */
    @Produces
    @Singleton
    public CommitSettlement commits() {
        return commits;
    }

    /** The stages every trigger runs once its operation is claimed. */
    @Produces
    @Singleton
    public Execution execution() {
        return execution;
    }
}
