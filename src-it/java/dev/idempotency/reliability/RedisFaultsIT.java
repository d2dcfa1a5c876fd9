package dev.idempotency.reliability;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Scenario 17 (issue 14): two WildFly nodes keep finished payments in a Redis of the suite's own
 * (idempotency.redis.url), and a storm goes on while that Redis is flushed, stopped (kill -STOP: it accepts and
 * answers nothing), killed and restarted empty; then a node is killed right after its outcomes reached Redis (design
 * guide §7: the commit done and the cache write failed; the cache written and the application crashed). The same
 * checker: Redis must never cause a duplicate, a lost acknowledgement, a replay that differs or a 5xx.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisFaultsIT {
    private final Scale scale = Scale.current();
    private final ItDatabase db = ItDatabase.current();
    private dev.idempotency.testing.OwnRedis redis;
    private WildFlyNode a;
    private WildFlyNode b;

    @BeforeAll
    void start() throws Exception {
        db.start();
        redis = dev.idempotency.testing.OwnRedis.start();
        Map<String, String> withRedis = Map.of("idempotency.redis.url", redis.url());
        a = WildFlyNode.start(1, withRedis);
        b = WildFlyNode.start(2, withRedis);
    }

    @AfterAll
    void stop() throws Exception {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
        if (redis != null) {
            redis.close();
        }
        db.stop();
    }

    @Test
    void aStormWhileRedisIsFlushedStoppedKilledAndRestartedEmptyChangesNoOutcome() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        String run = UUID.randomUUID().toString().substring(0, 8);
        List<URI> nodes = List.of(a.base(), b.base());
        List<Operations.Operation> all = new ArrayList<>();
        long start = System.nanoTime();
        List<String> faults = new ArrayList<>();

        List<Operations.Operation> first = Operations.create(run + "a", scale.keys);
        all.addAll(first);
        client.storm(nodes, first, scale.clients, scale.minSends, scale.maxSends, 17);
        long cached = redis.size();
        assertThat(cached).as("finished outcomes reached Redis after their commits").isPositive();
        faults.add("healthy: " + cached + " outcomes in Redis");

        redis.flushAll();
        client.storm(nodes, first, scale.clients, 1, 2, 18);
        faults.add("FLUSHALL, then every key again: " + redis.size() + " outcomes back in Redis (read through)");

        // Stopped: every call waits out the timeout, then Redis is skipped; new keys commit while their cache
        // writes fail.
        redis.pause();
        List<Operations.Operation> whileStopped = Operations.create(run + "b", scale.keys / 2);
        all.addAll(whileStopped);
        client.storm(nodes, concat(first, whileStopped), scale.clients, 1, 3, 19);
        redis.resume();
        faults.add("kill -STOP for a storm of old and " + whileStopped.size() + " new keys, then kill -CONT");

        redis.kill();
        List<Operations.Operation> whileDead = Operations.create(run + "c", scale.keys / 2);
        all.addAll(whileDead);
        client.storm(nodes, concat(whileStopped, whileDead), scale.clients, 1, 3, 20);
        redis.boot();
        client.storm(nodes, concat(first, whileDead), scale.clients, 1, 2, 21);
        faults.add("kill -9 for a storm of " + whileDead.size() + " new keys, restart empty, every key again");

        // Outcomes written to Redis by node A, then A dies: B replays them (from Redis) as A answered them.
        List<Operations.Operation> beforeCrash = Operations.create(run + "d", Math.max(4, scale.keys / 4));
        all.addAll(beforeCrash);
        for (Operations.Operation op : beforeCrash) {
            assertThat(client.send(a.base(), op, true).status()).isEqualTo(201);
        }
        a.crash();
        try {
            for (Operations.Operation op : beforeCrash) {
                assertThat(client.send(b.base(), op, true).status()).isEqualTo(201);
            }
        } finally {
            a.boot();
        }
        faults.add("kill -9 of node A right after its outcomes reached Redis; B replays them");

        // The clients' last retries, each until a final answer (settle follows Retry-After).
        for (int i = 0; i < all.size(); i++) {
            client.settle(i % 2 == 0 ? a.base() : b.base(), all.get(i));
        }
        Checker.Result result = Checker.check(all, history);
        Report.write("17. Redis faults under a storm: 2 WildFly nodes with Redis, " + db.title,
                scale.clients + " clients, " + all.size() + " keys, " + history.ops().size() + " requests",
                String.join("; ", faults), Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(all.size());
    }

    private static List<Operations.Operation> concat(List<Operations.Operation> x, List<Operations.Operation> y) {
        List<Operations.Operation> both = new ArrayList<>(x);
        both.addAll(y);
        return both;
    }
}
