package dev.idempotency.it.messages;

import dev.idempotency.IdempotencyEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.TransactionPhase;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The library's MessageHandled events, each seen once the delivery's transaction has ended (committed and
 * acknowledged, or rolled back), so that what the test reads next is what that end left.
 */
@ApplicationScoped
public class HandledLog {
    private final List<IdempotencyEvent.MessageHandled> handled = new ArrayList<>();

    void on(@Observes(during = TransactionPhase.AFTER_COMPLETION) IdempotencyEvent.MessageHandled event) {
        synchronized (handled) {
            handled.add(event);
            handled.notifyAll();
        }
    }

    /** How each delivery of the operation {@code scopeKey} was handled, in order. */
    public List<String> of(String scopeKey) {
        synchronized (handled) {
            return handled.stream().filter(e -> e.scopeKey().equals(scopeKey)).map(e -> e.handling().name()).toList();
        }
    }

    /** Waits at most {@code seconds} until {@code scopeKey} has {@code atLeast} deliveries handled so. */
    public long await(String scopeKey, IdempotencyEvent.MessageHandled.Handling handling, int atLeast, long seconds)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        synchronized (handled) {
            while (true) {
                long count = handled.stream().filter(e -> e.scopeKey().equals(scopeKey) && e.handling() == handling)
                        .count();
                long left = deadline - System.nanoTime();
                if (count >= atLeast || left <= 0) {
                    return count;
                }
                TimeUnit.NANOSECONDS.timedWait(handled, left);
            }
        }
    }
}
