package dev.idempotency.reliability;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Scenario 15 on the run's database: a node that keeps payments records 5 s and purges every second in
 * batches of 20, under a steady load of new keys and retries. The purge never removes a PROCESSING or an
 * unexpired record and claims keep flowing (latencies reported); a key retried after its record was purged
 * runs again only to be refused by the business unique constraint: still one payment per order, one charge.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PurgeUnderLoadIT {
    private static final Duration RETENTION = Duration.ofSeconds(5);
    private final Scale scale = Scale.current();
    private final ItDatabase db = ItDatabase.current();
    private WildFlyNode node;

    @BeforeAll
    void startNode() throws Exception {
        db.start();
        node = WildFlyNode.start(3, Map.of("idempotency.endpoints.payments.create.retention", RETENTION.toString(),
                "idempotency.purge.interval", "PT1S", "idempotency.purge.batch-size", "20"));
    }

    @AfterAll
    void stopNode() {
        if (node != null) {
            node.close();
        }
        db.stop();
    }

    @Test
    void purgeInBatchesUnderLoadKeepsLiveRecordsAndTheBusinessConstraint() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        String run = UUID.randomUUID().toString().substring(0, 8);
        List<Operations.Operation> ops = Operations.create(run, scale.keys);
        // Held in their transaction past the retention: PROCESSING records whose expiry time has passed.
        List<Operations.Operation> held = Operations.create(run + "-held", 2, "bob");
        long start = System.nanoTime();
        List<CompletableFuture<LoadClient.Answer>> holding = client.holdInTransaction(node.base(), held,
                RETENTION.toMillis() + 3000);
        List<Operations.Operation> sent = new CopyOnWriteArrayList<>();
        AtomicBoolean running = new AtomicBoolean(true);
        Thread load = client.steady(Set.of(node.base()), sent, 8, 30, running);
        long pace = TimeUnit.SECONDS.toMillis(scale.purgeSeconds) / ops.size();
        boolean heldChecked = false;
        try {
            for (Operations.Operation op : ops) {
                client.send(node.base(), op, true);
                sent.add(op);
                LoadClient.pause(pace);
                long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                if (!heldChecked && elapsed > RETENTION.toMillis() + 1500) {
                    // Past their expiry time and after at least one purge: still there, still PROCESSING.
                    for (Operations.Operation h : held) {
                        assertThat(Checker.recordStatus(h.scopeKey())).as("a PROCESSING record is never purged")
                                .isEqualTo("PROCESSING");
                    }
                    heldChecked = true;
                }
            }
        } finally {
            running.set(false);
            load.join();
        }
        assertThat(heldChecked).isTrue();
        for (CompletableFuture<LoadClient.Answer> f : holding) {
            assertThat(f.get(60, TimeUnit.SECONDS).status()).as("the held executions finish their own record").isEqualTo(201);
        }
        // Every key once more after its retention: its record was purged, it runs again and the order is refused.
        Checker.awaitPurged(ops);
        List<History.Op> answered = new ArrayList<>();
        for (Operations.Operation op : ops) {
            client.send(node.base(), op, true);
        }
        Map<String, List<History.Op>> byKey = new HashMap<>();
        history.ops().forEach(h -> byKey.computeIfAbsent(h.key(), k -> new ArrayList<>()).add(h));
        List<String> violations = new ArrayList<>();
        int executed = 0;
        int duplicatePayments = 0;
        int duplicateCharges = 0;
        int serverErrors = 0;
        int refusedAfterPurge = 0;
        List<Operations.Operation> all = new ArrayList<>(ops);
        all.addAll(held);
        for (Operations.Operation op : all) {
            int payments = Checker.number("SELECT COUNT(*) FROM demo_payment WHERE merchant_order_no = ?", op.order());
            int charges = Checker.number("SELECT COUNT(*) FROM demo_charge WHERE idempotency_key = ?", op.chargeKey());
            executed += Math.min(payments, 1);
            if (payments != 1) {
                duplicatePayments += payments > 1 ? 1 : 0;
                violations.add(op.key() + ": " + payments + " payments");
            }
            if (charges > 1) {
                duplicateCharges++;
                violations.add(op.key() + ": " + charges + " charges");
            }
            List<History.Op> seen = byKey.getOrDefault(op.key(), List.of());
            seen.sort(Comparator.comparingLong(History.Op::atMillis));
            Long firstSuccess = null;
            for (History.Op h : seen) {
                if (h.status() >= 500 && !(h.status() == 503 && h.retryAfter())) {
                    serverErrors++;
                    violations.add(op.key() + ": " + h.status());
                }
                if (h.status() == 201 && firstSuccess == null) {
                    firstSuccess = h.atMillis();
                }
                // 409 without Retry-After: the demo's "order already paid", i.e. the key's record was gone.
                if (h.status() == 409 && !h.retryAfter()) {
                    refusedAfterPurge++;
                    if (firstSuccess == null || h.atMillis() - firstSuccess < RETENTION.toMillis() - 500) {
                        violations.add(op.key() + ": its record was gone " + (firstSuccess == null ? "before any success"
                                : (h.atMillis() - firstSuccess) + " ms after its success, before its retention ended"));
                    }
                }
                if (h.kind() == History.Kind.OK && !Set.of(201, 409, 429, 503).contains(h.status())) {
                    violations.add(op.key() + ": unexpected " + h.status());
                }
            }
            if (!held.contains(op)) {
                answered.addAll(seen);
            }
        }
        int stuck = Checker.number("SELECT COUNT(*) FROM idempotency_record WHERE status = 'PROCESSING' AND lease_until < "
                + db.utcNow());
        if (stuck > 0) {
            violations.add(stuck + " PROCESSING records past their lease");
        }
        long[] latencies = answered.stream().filter(h -> h.kind() == History.Kind.OK).mapToLong(History.Op::tookMillis)
                .sorted().toArray();
        String latency = "latency of the load's requests p50 " + latencies[latencies.length / 2] + " ms, p99 "
                + latencies[(int) (latencies.length * 0.99)] + " ms, max " + latencies[latencies.length - 1] + " ms";
        Map<String, Long> mix = new TreeMap<>(history.statusMix());
        mix.put("409 order already paid (record purged)", (long) refusedAfterPurge);
        Report.write("15. Retention: purge in batches under load, " + db.title, all.size() + " keys (" + held.size()
                        + " held in their transaction past their expiry), 8 clients retrying for " + scale.purgeSeconds
                        + " s, then every key once more; " + latency,
                "retention PT5S for payments.create, purge every second in batches of 20",
                Duration.ofNanos(System.nanoTime() - start), mix,
                new Checker.Result(all.size(), executed, duplicatePayments, duplicateCharges, 0, 0, 0, stuck, serverErrors,
                        0, violations));
        assertThat(violations).isEmpty();
        assertThat(executed).isEqualTo(all.size());
        assertThat(refusedAfterPurge).as("keys retried after their purge met the business constraint")
                .isGreaterThanOrEqualTo(ops.size());
    }
}
