package dev.idempotency.endpoint;

import dev.idempotency.IdempotencyExecutor;
import jakarta.enterprise.inject.Produces;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The executor of the test application's asynchronous endpoints, as a server's managed executor would be:
 * threads of its own, outside any request; a test can make it refuse tasks, as a saturated one does.
 */
public class TaskExecutor extends AbstractExecutorService {
    @Produces
    @IdempotencyExecutor
    static final TaskExecutor TASKS = new TaskExecutor();

    static volatile boolean refusing;

    private final ExecutorService threads = Executors.newFixedThreadPool(2, task -> {
        Thread thread = new Thread(task, "test-tasks");
        thread.setDaemon(true);
        return thread;
    });

    @Override
    public void execute(Runnable command) {
        if (refusing) {
            throw new RejectedExecutionException("the test made the executor refuse tasks");
        }
        threads.execute(command);
    }

    @Override
    public void shutdown() {
        threads.shutdown();
    }

    @Override
    public List<Runnable> shutdownNow() {
        return threads.shutdownNow();
    }

    @Override
    public boolean isShutdown() {
        return threads.isShutdown();
    }

    @Override
    public boolean isTerminated() {
        return threads.isTerminated();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return threads.awaitTermination(timeout, unit);
    }
}
