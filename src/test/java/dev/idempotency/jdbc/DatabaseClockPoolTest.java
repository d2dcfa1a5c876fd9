package dev.idempotency.jdbc;

import dev.idempotency.jta.JtaTransactions;
import dev.idempotency.testing.Databases;
import dev.idempotency.testing.Narayana;
import dev.idempotency.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The database clock on a saturated pool: more threads than connections, reading the time inside a JTA
 * transaction that holds a connection (as the finish does) and outside any (as admission does, holding none).
 * A measurement outside a transaction that made the others wait on a lock while it waited for a connection
 * would wait until the pool's timeout and fail: every connection would be held by a thread waiting on it.
 */
class DatabaseClockPoolTest {

    @Test
    void readingTheTimeNeverStallsASaturatedPool() throws Exception {
        TestDatabase small = Databases.named("postgresql").withPool(2, Duration.ofSeconds(20));
        JtaTransactions transactions = new JtaTransactions(Narayana.transactionManager());
        // Stale at every read: every read would like to measure.
        DatabaseClock clock = new DatabaseClock(Clock.systemUTC(), small.dataSource(), Dialect.POSTGRESQL,
                Duration.ofNanos(1));
        clock.refresh();
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Integer>> all = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                all.add(pool.submit(() -> {
                    start.await();
                    int done = 0;
                    for (int i = 0; i < 40; i++) {
                        transactions.requiresNew(() -> {
                            try (Connection c = small.dataSource().getConnection();
                                 PreparedStatement ps = c.prepareStatement("SELECT 1"); ResultSet rs = ps.executeQuery()) {
                                rs.next();
                                clock.instant();
                            } catch (java.sql.SQLException e) {
                                throw new IllegalStateException(e);
                            }
                            return null;
                        });
                        clock.instant();
                        done++;
                    }
                    return done;
                }));
            }
            start.countDown();
            int total = 0;
            for (Future<Integer> f : all) {
                total += f.get();
            }
            assertThat(total).isEqualTo(threads * 40);
        } finally {
            pool.shutdownNow();
        }
        assertThat(clock.failedMeasurements()).as("no measurement waited out the pool").isZero();
    }
}
