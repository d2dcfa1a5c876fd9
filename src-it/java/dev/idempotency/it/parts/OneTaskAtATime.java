package dev.idempotency.it.parts;

import dev.idempotency.IdempotencyExecutor;
import jakarta.annotation.Resource;
import jakarta.enterprise.concurrent.ManagedExecutorService;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The application's executor for its asynchronous endpoints, as an application that bounds its background work
 * would write one: the server's managed executor, one task at a time, and a refusal
 * ({@link RejectedExecutionException}) when that one slot is taken, as any saturated bounded executor refuses.
 */
@ApplicationScoped
public class OneTaskAtATime {
    private final Semaphore slot = new Semaphore(1);
    @Resource
    ManagedExecutorService server;

    @Produces
    @IdempotencyExecutor
    ExecutorService executor() {
        return new Bounded();
    }

    /** Whether the slot is free within {@code seconds} (a task that ended gives it back after its last event). */
    public boolean awaitFree(long seconds) throws InterruptedException {
        if (!slot.tryAcquire(seconds, TimeUnit.SECONDS)) {
            return false;
        }
        slot.release();
        return true;
    }

    private final class Bounded extends AbstractExecutorService {
        @Override
        public void execute(Runnable task) {
            if (!slot.tryAcquire()) {
                throw new RejectedExecutionException("the application's one task slot is taken");
            }
            try {
                server.execute(() -> {
                    try {
                        task.run();
                    } finally {
                        slot.release();
                    }
                });
            } catch (RuntimeException refused) {
                slot.release();
                throw refused;
            }
        }

        // The server's executor: its life cycle is the server's, as a managed executor's is.
        @Override
        public void shutdown() {
            throw new IllegalStateException("the server's executor is shut down with the server");
        }

        @Override
        public List<Runnable> shutdownNow() {
            throw new IllegalStateException("the server's executor is shut down with the server");
        }

        @Override
        public boolean isShutdown() {
            return false;
        }

        @Override
        public boolean isTerminated() {
            return false;
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            throw new IllegalStateException("the server's executor is shut down with the server");
        }
    }
}
