package dev.idempotency.deployment;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.core.ProtocolEvents;
import dev.idempotency.core.TransactionBoundary;
import dev.idempotency.metrics.IdempotencyMeters;
import dev.idempotency.spi.StoreUnavailableException;
import jakarta.enterprise.event.Event;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Where the library's events go: to the application's observers (CDI events), to the server's metrics when it has
 * a library the extension knows, and to the log — one {@code IDEM-*} line, in key=value form, per operation turned
 * away, fenced out, administered or cut off from its store. The protocol publishes through it.
 */
public final class EventPublisher implements ProtocolEvents {
    private static final Logger LOG = Logger.getLogger(EventPublisher.class.getName());

    private final Event<IdempotencyEvent> observers;
    private final Optional<IdempotencyMeters> meters;
    private final TransactionBoundary transactions;
    private final Map<String, LongAdder> messageCounts = new ConcurrentHashMap<>();

    public EventPublisher(Event<IdempotencyEvent> observers, Optional<IdempotencyMeters> meters,
                          TransactionBoundary transactions) {
        this.observers = observers;
        this.meters = meters;
        this.transactions = transactions;
    }

    /** Fires an event of the library for the application's observers (an observer's failure is logged). */
    public void fire(IdempotencyEvent event) {
        if (event instanceof IdempotencyEvent.MessageHandled handled) {
            messageCounts.computeIfAbsent(handled.endpoint() + "\n" + handled.handling(), k -> new LongAdder())
                    .increment();
        }
        logged(event);
        meters.ifPresent(measured -> {
            // An outcome counts once it is committed: an execution whose transaction rolls back executed nothing.
            if (event instanceof IdempotencyEvent.Completed) {
                transactions.afterCommit(() -> measured.count(event));
            } else {
                measured.count(event);
            }
        });
        try {
            observers.fire(event);
        } catch (RuntimeException e) {
            // An observer's failure must not change the outcome of the operation it observes.
            LOG.log(Level.WARNING, "IDEM-W004 an observer of " + event.getClass().getSimpleName() + " failed", e);
        }
    }

    @Override
    public void publish(IdempotencyEvent event) {
        fire(event);
    }

    @Override
    public void timed(Step step, String endpoint, Duration took) {
        meters.ifPresent(measured -> measured.time(step, endpoint, took));
    }

    @Override
    public void cacheRead(String endpoint, CacheRead read) {
        meters.ifPresent(measured -> measured.cacheRead(endpoint, read));
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

    /** How many messages of an endpoint were handled so, since deployment. */
    public long messagesHandled(String endpoint, IdempotencyEvent.MessageHandled.Handling handling) {
        LongAdder count = messageCounts.get(endpoint + "\n" + handling);
        return count == null ? 0 : count.sum();
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
