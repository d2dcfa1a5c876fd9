package dev.idempotency.endpoint;

import dev.idempotency.IdempotencyEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** An application observer of the library's events. */
@ApplicationScoped
public class EventLog {
    private final List<IdempotencyEvent> events = new CopyOnWriteArrayList<>();

    void on(@Observes IdempotencyEvent event) {
        synchronized (events) {
            events.add(event);
            events.notifyAll();
        }
    }

    /** The first event that matches, once it has been fired (waiting at most 10 s for it). */
    public <T extends IdempotencyEvent> T await(Class<T> type, java.util.function.Predicate<T> matching)
            throws InterruptedException {
        return await(type, matching, 1);
    }

    /** The {@code nth} event that matches (1 for the first), once it has been fired (waiting at most 10 s). */
    public <T extends IdempotencyEvent> T await(Class<T> type, java.util.function.Predicate<T> matching, int nth)
            throws InterruptedException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        synchronized (events) {
            while (true) {
                int seen = 0;
                for (IdempotencyEvent event : events) {
                    if (type.isInstance(event) && matching.test(type.cast(event)) && ++seen == nth) {
                        return type.cast(event);
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("no " + type.getSimpleName() + " as expected among " + events);
                }
                java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(events, left);
            }
        }
    }

    public List<IdempotencyEvent> events() {
        return List.copyOf(events);
    }

    public void clear() {
        events.clear();
    }
}
