package dev.idempotency.endpoint;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Holds the method of the request with this key inside its business transaction until released. */
final class HeldExecution {
    private final CountDownLatch running = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);

    HeldExecution(String key) {
        PaymentResource.duringExecution = k -> {
            if (k.equals(key) && running.getCount() > 0) {
                running.countDown();
                await(released);
            }
        };
    }

    void awaitRunning() {
        await(running);
    }

    void release() {
        released.countDown();
    }

    static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
