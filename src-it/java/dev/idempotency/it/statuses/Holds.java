package dev.idempotency.it.statuses;

import dev.idempotency.IdempotencyEvent;
import jakarta.enterprise.event.Observes;

import jakarta.enterprise.context.ApplicationScoped;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Executions held on latches, by idempotency key: a held method reports that it entered and waits until
 * the test releases it (never longer than {@link #LONGEST_HOLD_SECONDS}, so that a failed test leaves no
 * server thread behind). Also counts executions per key.
 */
@ApplicationScoped
public class Holds {
    static final long LONGEST_HOLD_SECONDS = 60;

    private final Map<String, CountDownLatch> entered = new ConcurrentHashMap<>();
    private final Map<String, CountDownLatch> released = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> executions = new ConcurrentHashMap<>();

    /** Counts one execution of {@code key}. */
    public void ran(String key) {
        executions.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
    }

    public int executions(String key) {
        AtomicInteger count = executions.get(key);
        return count == null ? 0 : count.get();
    }

    /** Called by the held execution: reports it entered, then waits for its release. */
    public void hold(String key) {
        latch(entered, key).countDown();
        try {
            latch(released, key).await(LONGEST_HOLD_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Whether the execution of {@code key} entered its hold within {@code seconds}. */
    public boolean awaitEntered(String key, long seconds) throws InterruptedException {
        return latch(entered, key).await(seconds, TimeUnit.SECONDS);
    }

    public void release(String key) {
        latch(released, key).countDown();
    }

    void taskEnded(@Observes IdempotencyEvent.TaskEnded ended) {
        tasksEnded.add(ended.status().name());
    }

    /** The state the next asynchronous task ended in, waiting for it at most {@code seconds}; null if none. */
    public String awaitTaskEnded(long seconds) throws InterruptedException {
        return tasksEnded.poll(seconds, TimeUnit.SECONDS);
    }

    private final java.util.concurrent.BlockingQueue<String> tasksEnded = new java.util.concurrent.LinkedBlockingQueue<>();

    private static CountDownLatch latch(Map<String, CountDownLatch> latches, String key) {
        return latches.computeIfAbsent(key, k -> new CountDownLatch(1));
    }
}
