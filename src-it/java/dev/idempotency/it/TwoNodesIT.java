package dev.idempotency.it;

import com.fasterxml.jackson.databind.JsonNode;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URL;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two WildFly nodes on one database race the same keys: every key is executed exactly once, charged
 * exactly once, and every success a client saw for a key carries the same bytes. Run for WildFly on
 * PostgreSQL (scripts/test.sh).
 */
@ExtendWith(ArquillianExtension.class)
class TwoNodesIT {
    private static final int KEYS = 60;
    private static final int SENDS_PER_KEY = 4;
    private static final int CLIENTS = 12;
    private static final List<String> USERS = List.of("alice", "bob", "carol");

    @Deployment(testable = false)
    static WebArchive demo() {
        return PaymentsContractIT.demo();
    }

    @ArquillianResource
    URL base;
    // Configured as the demo would be where it was copied into an application: no demo.faults.
    private static dev.idempotency.reliability.WildFlyNode second;

    // The fault tests' node (port offset 100): a copy of this stage's server configuration, secret and properties.
    @BeforeAll
    static void startSecondNode() throws Exception {
        second = dev.idempotency.reliability.WildFlyNode.start(0, Map.of("demo.faults", "false"));
    }

    @AfterAll
    static void stopSecondNode() {
        if (second != null) {
            second.close();
        }
    }

    @Test
    void aServerWithoutDemoFaultsIgnoresTheDemosFaultHeaders() throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        String body = "{\"merchantOrderNo\":\"F-" + run + "\",\"amount\":3,\"currency\":\"EUR\"}";
        Api.Reply failed = new Api(base.toURI()).post("payments", body).key("faults-a-" + run)
                .header("X-Demo-Fail", "transient").send();
        assertThat(failed.status()).as("the first node honours them (demo.faults=true)").isEqualTo(503);
        Api.Reply ignored = new Api(second.base()).post("payments", body).key("faults-b-" + run)
                .header("X-Demo-Fail", "transient").header("X-Demo-Delay-Ms", "not a number").send();
        assertThat(ignored.status()).as(ignored.text()).isEqualTo(201);
        // The demo's hold release: absent where fault injection is off, and a name it could never hold is refused.
        Api.Reply off = new Api(second.base()).delete("demo-faults/holds/h-" + run).send();
        assertThat(off.status()).as(off.text()).isEqualTo(404);
        assertThat(off.text()).contains("demo.faults");
        Api.Reply invalid = new Api(base.toURI()).delete("demo-faults/holds/" + "h".repeat(65)).send();
        assertThat(invalid.status()).as(invalid.text()).isEqualTo(400);
        assertThat(invalid.text()).contains("1 to 64");
    }

    @Test
    void twoNodesRacingTheSameKeysExecuteEachOnce() throws Exception {
        List<Api> nodes = List.of(new Api(base.toURI()), new Api(second.base()));
        String run = UUID.randomUUID().toString().substring(0, 8);
        // Each key's sends are adjacent in the queue, so they run at once on both nodes; the keys are shuffled.
        List<List<Runnable>> groups = new ArrayList<>();
        Map<String, List<Api.Reply>> replies = new ConcurrentHashMap<>();
        Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        for (int k = 0; k < KEYS; k++) {
            String key = "race-" + run + "-" + k;
            String order = "R" + k + "-" + run;
            String body = "{\"merchantOrderNo\":\"" + order + "\",\"amount\":" + (k + 1) + ",\"currency\":\"EUR\"}";
            String user = USERS.get(k % USERS.size());
            replies.put(key, new CopyOnWriteArrayList<>());
            List<Runnable> sends = new ArrayList<>();
            groups.add(sends);
            for (int s = 0; s < SENDS_PER_KEY; s++) {
                Api node = nodes.get(s % 2);
                sends.add(() -> {
                    Api.Reply reply = node.post("payments", body).as(user).key(key).send();
                    replies.get(key).add(reply);
                    statuses.computeIfAbsent(reply.status(), x -> new AtomicInteger()).incrementAndGet();
                });
            }
        }
        Collections.shuffle(groups, new Random(42));
        List<Runnable> sends = groups.stream().flatMap(List::stream).toList();
        ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
        long started = System.nanoTime();
        List<Future<?>> done = new ArrayList<>();
        sends.forEach(send -> done.add(clients.submit(send)));
        for (Future<?> f : done) {
            f.get(5, TimeUnit.MINUTES);
        }
        clients.shutdown();
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        System.out.printf("two nodes: %d requests in %d ms, statuses %s%n", sends.size(), millis, new TreeMap<>(
                statuses.entrySet().stream().collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, e -> e.getValue().get()))));

        // 409: the same key in flight on either node; 429: the user's 5 operations in flight (the demo's limit);
        // 503: a retryable failure (the acquirer busy with the same derived key). Never anything else.
        assertThat(statuses.keySet()).isSubsetOf(201, 409, 429, 503);
        for (int k = 0; k < KEYS; k++) {
            String key = "race-" + run + "-" + k;
            String order = "R" + k + "-" + run;
            String user = USERS.get(k % USERS.size());
            Api check = nodes.get(0);
            // Settle: a client retrying every key until it has its answer gets the one outcome.
            Api.Reply settled = settle(nodes.get(k % 2), user, key,
                    "{\"merchantOrderNo\":\"" + order + "\",\"amount\":" + (k + 1) + ",\"currency\":\"EUR\"}");
            assertThat(settled.status()).as(settled.text()).isEqualTo(201);
            for (Api.Reply r : replies.get(key)) {
                if (r.status() == 201) {
                    assertThat(r.body()).as("every success for " + key + " is the same bytes").isEqualTo(settled.body());
                }
            }
            List<JsonNode> payments = check.get("payments?merchantOrderNo=" + order).as(user).send().list();
            List<JsonNode> charges = check.get("acquirer/charges?merchantOrderNo=" + order).send().list();
            assertThat(payments).as("payments of " + order).hasSize(1);
            assertThat(charges).as("charges of " + order).hasSize(1);
        }
    }

    private static Api.Reply settle(Api node, String user, String key, String body) throws InterruptedException {
        Api.Reply reply = node.post("payments", body).as(user).key(key).send();
        for (int attempt = 0; attempt < 20 && reply.status() != 201; attempt++) {
            String retryAfter = reply.header("Retry-After");
            // The client's own pause before its retry, as the answer told it: part of the client, not a wait for it.
            Thread.sleep(retryAfter == null ? 500 : Math.min(5000, Long.parseLong(retryAfter) * 1000));
            reply = node.post("payments", body).as(user).key(key).send();
        }
        return reply;
    }

}
