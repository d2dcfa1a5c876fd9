package dev.idempotency.testing;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * Waiting for a condition another party makes true (a session seen waiting on a lock, a killed session gone), for
 * what has no latch or event to wait on: the condition is checked every few milliseconds until it holds, and a test
 * fails with {@code what} if it has not held within the timeout. Never a fixed pause.
 */
public final class Conditions {
    private static final long CHECK_EVERY_NANOS = Duration.ofMillis(10).toNanos();

    private Conditions() {
    }

    /** A condition; it may read a database or ask a server, and fail doing so. */
    @FunctionalInterface
    public interface Condition {
        boolean holds() throws Exception;
    }

    /** Returns once {@code condition} holds; fails the test with {@code what} after {@code timeout}. */
    public static void await(String what, Duration timeout, Condition condition) {
        await(what, timeout, Duration.ofNanos(CHECK_EVERY_NANOS), condition);
    }

    /**
     * {@link #await(String, Duration, Condition)}, checking every {@code interval}: for a source that must not be
     * read more often (InnoDB refreshes {@code information_schema.innodb_trx} only when it was not read for 0.1 s).
     */
    public static void await(String what, Duration timeout, Duration interval, Condition condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!check(what, condition)) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not within " + timeout + ": " + what);
            }
            LockSupport.parkNanos(interval.toNanos());
            if (Thread.interrupted()) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting: " + what);
            }
        }
    }

    private static boolean check(String what, Condition condition) {
        try {
            return condition.holds();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("checking whether " + what + ": " + e, e);
        }
    }
}
