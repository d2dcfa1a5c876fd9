package dev.idempotency.deployment;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.core.LeaseKeeper;
import dev.idempotency.core.RecoveryPhase;
import dev.idempotency.core.Settler;
import dev.idempotency.core.TaskResumption;
import dev.idempotency.jdbc.DatabaseClock;
import dev.idempotency.metrics.IdempotencyMeters;
import jakarta.enterprise.concurrent.ManagedScheduledExecutorService;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The work that runs off request threads, on the server's managed scheduler: the renewal of running executions'
 * leases, the settling of stuck operations, the purge of expired records and the database clock's refresh — and the
 * same settle and purge when the application calls them ({@link dev.idempotency.IdempotencyMaintenance}).
 */
public final class MaintenanceSchedule {
    private static final Logger LOG = Logger.getLogger(MaintenanceSchedule.class.getName());
    static final String DEFAULT_SCHEDULER = "java:comp/DefaultManagedScheduledExecutorService";
    /** How often the database's time is read again. */
    public static final Duration CLOCK_REFRESH = Duration.ofMinutes(1);
    private static final int STUCK_COUNT_LIMIT = 10_000;
    private static final int PURGE_MAX_BATCHES = 1000;

    private final LeaseKeeper leases;
    private final Settler settler;
    private final RecoveryPhase recovery;
    private final int purgeBatchSize;
    private final TaskResumption resumption;
    private final TaskResumption.Runner runner;
    private final Optional<IdempotencyMeters> meters;
    private final List<ScheduledFuture<?>> tasks = new ArrayList<>();
    // PROCESSING records whose lease ran out, as the last settle pass left them.
    private volatile long stuckOperations;

    public MaintenanceSchedule(LeaseKeeper leases, Settler settler, TaskResumption resumption,
                               TaskResumption.Runner runner, RecoveryPhase recovery, int purgeBatchSize,
                               Optional<IdempotencyMeters> meters) {
        this.leases = leases;
        this.settler = settler;
        this.resumption = resumption;
        this.runner = runner;
        this.recovery = recovery;
        this.purgeBatchSize = purgeBatchSize;
        this.meters = meters;
    }

    /**
     * Schedules the work on the server's managed scheduler; without one, says what then does not happen.
     *
     * @param shortestLease the shortest lease of the deployment's endpoints; empty when it has none
     * @param settleEvery   how often stuck operations are settled (zero: never on a schedule)
     * @param purgeEvery    how often expired records are purged (zero: never on a schedule)
     * @param resumeEvery   how often accepted operations whose node died are run again (zero: never on a schedule)
     */
    public synchronized void start(Optional<Duration> shortestLease, Duration settleEvery, Duration purgeEvery,
                                   Duration resumeEvery, Optional<DatabaseClock> databaseClock) {
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
            if (shortestLease.isPresent()) {
                LOG.warning("IDEM-W008 leases are not renewed without a managed scheduled executor: an @Idempotent"
                        + " method that runs longer than its lease (idempotency.lease) can be taken over by a retry"
                        + " and run twice");
            }
            return;
        }
        if (shortestLease.isPresent()) {
            long millis = LeaseKeeper.interval(shortestLease.get()).toMillis();
            tasks.add(scheduler.scheduleWithFixedDelay(this::renewLeases, millis, millis, TimeUnit.MILLISECONDS));
            if (!settleEvery.isZero()) {
                meters.ifPresent(measured -> measured.stuckOperations(() -> stuckOperations));
                tasks.add(scheduler.scheduleWithFixedDelay(this::scheduledSettle, settleEvery.toMillis(),
                        settleEvery.toMillis(), TimeUnit.MILLISECONDS));
            }
            if (!resumeEvery.isZero() && resumption.any()) {
                tasks.add(scheduler.scheduleWithFixedDelay(this::scheduledResume, resumeEvery.toMillis(),
                        resumeEvery.toMillis(), TimeUnit.MILLISECONDS));
            }
        }
        if (!purgeEvery.isZero()) {
            long millis = purgeEvery.toMillis();
            tasks.add(scheduler.scheduleWithFixedDelay(this::scheduledPurge, millis, millis, TimeUnit.MILLISECONDS));
        }
        if (databaseClock.isPresent()) {
            long millis = CLOCK_REFRESH.toMillis();
            tasks.add(scheduler.scheduleWithFixedDelay(databaseClock.get()::refresh, millis, millis,
                    TimeUnit.MILLISECONDS));
            databaseClock.get().refreshInBackground();
        }
    }

    /** Cancels the scheduled work (the deployment ends). */
    public synchronized void stop() {
        tasks.forEach(task -> task.cancel(false));
        tasks.clear();
    }

    /** Settles the operations whose lease ran out and that no client retried; how many. */
    public int settleStuck() {
        List<IdempotencyEvent.Settled> settled = settler.settleDue();
        for (IdempotencyEvent.Settled s : settled) {
            LOG.warning("IDEM-W011 settled stuck operation " + s.scopeKey() + " of endpoint '" + s.endpoint()
                    + "': its lease ran out and no client retried it; now " + s.status() + " ("
                    + s.resolution().name().toLowerCase(Locale.ROOT).replace('_', ' ') + ")");
        }
        return settled.size();
    }

    /** Runs again the accepted operations whose node died (docs/adr/0020); how many. */
    public int resumeAccepted() {
        int resumed = 0;
        for (TaskResumption.Resumption r : resumption.resumeDue(runner)) {
            if (r.resumed()) {
                resumed++;
                LOG.warning("IDEM-W027 running accepted operation " + r.scopeKey() + " of endpoint '" + r.endpoint()
                        + "' again on this node (attempt " + r.attempt() + "): the node that accepted it stopped"
                        + " renewing its lease");
            } else {
                LOG.warning("IDEM-W028 accepted operation " + r.scopeKey() + " of endpoint '" + r.endpoint()
                        + "' is not run again now: " + r.why() + "; it is given back after idempotency.settle.after"
                        + " unless a retry or a later pass runs it");
            }
        }
        return resumed;
    }

    /** Deletes expired, finished records; how many. */
    public int purgeExpired() {
        return recovery.purgeExpired(purgeBatchSize, PURGE_MAX_BATCHES);
    }

    private void renewLeases() {
        try {
            leases.renewDue();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "IDEM-W009 renewing the leases of running executions failed; tried again", e);
        }
    }

    private void scheduledPurge() {
        try {
            purgeExpired();
        } catch (RuntimeException e) {
            // The next run tries again; a failed purge only delays cleanup.
            LOG.log(Level.WARNING, "IDEM-W002 scheduled purge of expired idempotency records failed", e);
        }
    }

    private void scheduledResume() {
        try {
            resumeAccepted();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "IDEM-W029 running again accepted operations whose node died failed; tried again at"
                    + " the next run", e);
        }
    }

    private void scheduledSettle() {
        try {
            settleStuck();
            if (meters.isPresent()) {
                stuckOperations = settler.countStuck(STUCK_COUNT_LIMIT);
            }
        } catch (RuntimeException e) {
            // The next run tries again; the window it did not finish is kept.
            LOG.log(Level.WARNING, "IDEM-W012 settling stuck operations failed; tried again at the next run", e);
        }
    }
}
