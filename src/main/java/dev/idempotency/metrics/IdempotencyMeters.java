package dev.idempotency.metrics;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.core.ProtocolEvents;

import java.time.Duration;
import java.util.Locale;
import java.util.function.DoubleSupplier;

/**
 * Every meter of the library, named and tagged in one place (the README's metrics table lists them): counters
 * from the protocol's events, timers from its steps, the gauge of stuck operations. Tag values are lower case;
 * {@code endpoint} is the endpoint's name as configured.
 */
public final class IdempotencyMeters {
    static final String ENDPOINT = "endpoint";
    private final MeterBackend backend;

    public IdempotencyMeters(MeterBackend backend) {
        this.backend = backend;
    }

    /** Which metrics library records them. */
    public String backend() {
        return backend.name();
    }

    /** Counts an event; a {@link IdempotencyEvent.Completed} only once its transaction committed (the caller's part). */
    public void count(IdempotencyEvent event) {
        String endpoint = event.endpoint();
        if (event instanceof IdempotencyEvent.Claimed) {
            backend.increment("idempotency.claims", 1, ENDPOINT, endpoint);
        } else if (event instanceof IdempotencyEvent.Completed completed) {
            backend.increment("idempotency.executions", 1, ENDPOINT, endpoint, "outcome", tag(completed.status()));
        } else if (event instanceof IdempotencyEvent.Replayed replayed) {
            backend.increment("idempotency.replays", 1, ENDPOINT, endpoint, "outcome", tag(replayed.status()));
        } else if (event instanceof IdempotencyEvent.InFlightRejected inFlight) {
            backend.increment("idempotency.in.flight", 1, ENDPOINT, endpoint, "answer", tag(inFlight.policy()));
        } else if (event instanceof IdempotencyEvent.WaitingForOutcome) {
            backend.increment("idempotency.in.flight.waits", 1, ENDPOINT, endpoint);
        } else if (event instanceof IdempotencyEvent.Mismatched) {
            backend.increment("idempotency.mismatches", 1, ENDPOINT, endpoint);
        } else if (event instanceof IdempotencyEvent.LimitReached limited) {
            backend.increment("idempotency.limited", 1, ENDPOINT, endpoint, "limit", limited.limit().slug());
        } else if (event instanceof IdempotencyEvent.Rejected rejected) {
            backend.increment("idempotency.rejections", 1, ENDPOINT, endpoint, "reason", rejected.reason().slug());
        } else if (event instanceof IdempotencyEvent.StoreUnavailable) {
            backend.increment("idempotency.store.unavailable", 1, ENDPOINT, endpoint);
        } else if (event instanceof IdempotencyEvent.Fenced) {
            backend.increment("idempotency.fenced", 1, ENDPOINT, endpoint);
        } else if (event instanceof IdempotencyEvent.LeaseLost) {
            backend.increment("idempotency.leases.lost", 1, ENDPOINT, endpoint);
        } else if (event instanceof IdempotencyEvent.TakenOver takenOver) {
            backend.increment("idempotency.takeovers", 1, ENDPOINT, endpoint, "previous", tag(takenOver.previousStatus()));
        } else if (event instanceof IdempotencyEvent.Released) {
            backend.increment("idempotency.releases", 1, ENDPOINT, endpoint);
        } else if (event instanceof IdempotencyEvent.Settled settled) {
            backend.increment("idempotency.settled", 1, ENDPOINT, endpoint, "outcome", tag(settled.status()),
                    "resolution", tag(settled.resolution()));
        } else if (event instanceof IdempotencyEvent.Purged purged) {
            backend.increment("idempotency.purged", purged.count());
        } else if (event instanceof IdempotencyEvent.MessageHandled handled) {
            backend.increment("idempotency.messages", 1, ENDPOINT, endpoint, "handling", tag(handled.handling()));
        } else if (event instanceof IdempotencyEvent.TaskEnded ended) {
            backend.increment("idempotency.tasks.ended", 1, ENDPOINT, endpoint, "outcome", tag(ended.status()));
        }
    }

    /** Records how long a step of the protocol took. */
    public void time(ProtocolEvents.Step step, String endpoint, Duration took) {
        backend.record("idempotency." + tag(step), took, ENDPOINT, endpoint);
    }

    /** Counts a read of the outcome cache (Redis) by its result. */
    public void cacheRead(String endpoint, ProtocolEvents.CacheRead read) {
        backend.increment("idempotency.cache.reads", 1, ENDPOINT, endpoint, "result", tag(read));
    }

    /** Counts a cache command that failed (refused, timed out, unreadable); {@code command}: {@code get}, {@code set}. */
    public void cacheFailed(String command) {
        backend.increment("idempotency.cache.failures", 1, "command", command);
    }

    /** The gauge that is 1 while the cache is skipped after failures in a row (the requests read the database). */
    public void cacheSkipped(DoubleSupplier skipped) {
        backend.gauge("idempotency.cache.skipped", skipped);
    }

    /** The gauge of operations whose lease ran out and that are not settled yet. */
    public void stuckOperations(DoubleSupplier count) {
        backend.gauge("idempotency.operations.stuck", count);
    }

    private static String tag(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }
}
