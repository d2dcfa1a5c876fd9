package dev.idempotency.reliability;

import dev.idempotency.testing.OwnGalera;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Scenario 18: the record store on a MariaDB Galera Cluster of the test's own (three local nodes from Debian's
 * galera-4, on ports of their own; the machine's MariaDB is not touched). WildFly node A reaches Galera node 1 first,
 * node B Galera node 2 first (Connector/J's sequential multi-host URL, node 3 next), both reading causally
 * ({@code wsrep_sync_wait=1}). The storm of scenario 1 runs on them; then again while a Galera node is killed with
 * {@code kill -9} and rejoins, and while a node is cut off from the group ({@code gmcast.isolate}) so that it loses
 * quorum and refuses every statement with 1047. The same checker, on the cluster, afterwards.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GaleraFaultsIT {
    private static final String SESSION = "sessionVariables=wsrep_sync_wait=1";
    private final Scale scale = Scale.current();
    private OwnGalera galera;
    private WildFlyNode a;
    private WildFlyNode b;

    @BeforeAll
    void start() throws Exception {
        galera = OwnGalera.start(3);
        galera.node(1).sql("CREATE DATABASE idem_it");
        // Galera certifies a claim only at COMMIT, so one that holds its claim in the business transaction is
        // refused at deployment (IDEM-D022): the demo's one-commit endpoint claims in a transaction of its own here.
        Map<String, String> ownTransaction = Map.of("idempotency.endpoints.payments.one-commit.claim", "own-transaction");
        // Node A with Byteman's agent, for scenario 18d.
        a = WildFlyNode.start(5, ownTransaction, true, url(1, 3), List.of());
        b = WildFlyNode.start(6, ownTransaction, false, url(2, 3), List.of());
    }

    // A sequential multi-host URL: the first node while it accepts connections, then the next.
    private String url(int first, int then) {
        return "jdbc:mariadb:sequential://127.0.0.1:" + galera.node(first).sqlPort() + ",127.0.0.1:"
                + galera.node(then).sqlPort() + "/idem_it?" + SESSION;
    }

    @AfterAll
    void stop() {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
        if (galera != null) {
            galera.close();
        }
    }

    @Test
    void stormOnTwoWildFlyNodesOnTwoGaleraNodes() throws Exception {
        storm("18a. Galera: storm on 2 WildFly nodes, each on its own Galera node", "none (concurrency only)",
                () -> { });
    }

    @Test
    void aGaleraNodeKilledMidStormRejoinsAndNothingIsLostOrDoubled() throws Exception {
        OwnGalera.Node second = galera.node(2);
        try {
            storm("18b. Galera: kill -9 of a Galera node mid-storm, and its rejoin",
                    "Galera node 2 (node B's first) killed 1 s into the storm, restarted 3 s later (it rejoins by a state"
                            + " transfer while the storm goes on)", () -> {
                        LoadClient.pause(1000);
                        second.kill();
                        LoadClient.pause(3000);
                        second.restart();
                    });
        } finally {
            if (!second.running()) {
                second.restart();
            }
        }
        assertThat(second.status("wsrep_cluster_size")).as("the killed node is back in the cluster").isEqualTo("3");
    }

    @Test
    void aGaleraNodeCutOffFromTheGroupRefusesAndCatchesUpWhenItRejoins() throws Exception {
        OwnGalera.Node first = galera.node(1);
        try {
            storm("18c. Galera: a Galera node cut off from the group mid-storm (no quorum: 1047), then rejoined",
                    "Galera node 1 (node A's first) isolated (gmcast.isolate=1) 1 s into the storm, for 5 s", () -> {
                        LoadClient.pause(1000);
                        first.isolate();
                        LoadClient.pause(5000);
                        first.rejoin();
                    });
        } finally {
            first.rejoin();
        }
    }

    // The refused business commit through WildFly's own stack (IronJacamar's local XA resource, Narayana): A's record
    // update is done on Galera node 1 but not committed when B, past A's lease, takes the record over on node 2 and
    // pays. A's COMMIT then fails certification (1213, SQLState 40001: Galera aborts it when B's write set arrives);
    // nothing of A's may commit, A's answer is never a 500, and its retry gets B's outcome.
    @Test
    void aBusinessCommitThatLosesCertificationToATakeoverOnAnotherNodeAnswersTheWinnersOutcome() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(60));
        Operations.Operation op = Operations.create(UUID.randomUUID().toString().substring(0, 8), 1, null,
                Operations.PAYMENTS).get(0);
        long start = System.nanoTime();
        a.holdBeforeCommit("payments.create", 6000);
        LoadClient.Answer first;
        LoadClient.Answer takeover;
        try {
            java.util.concurrent.CompletableFuture<LoadClient.Answer> held = client.sendAll(a.base(), List.of(op)).get(0);
            a.awaitLog(WildFlyNode.HELD_BEFORE_COMMIT);
            // Past A's lease: B takes the record over on its own Galera node, runs the payment and commits first.
            Checker.awaitLeaseRunOut(new Cluster(), op);
            takeover = client.send(b.base(), op, true);
            first = held.get(60, TimeUnit.SECONDS);
        } finally {
            a.removeRules();
        }
        LoadClient.Answer after = client.settle(a.base(), op);
        Checker.Result result = Checker.check(List.of(op), history, new Cluster());
        Report.write("18d. Galera: a business commit that loses certification to a takeover on another node",
                "1 key: A held after its record update, before its commit, past its lease; B's retry on another"
                        + " Galera node takes it over and commits first; A's commit is refused",
                "Byteman rule holds A 6 s after CompletionPhase.finish (lease 3 s)",
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(takeover.status()).as("B's takeover ran the payment").isEqualTo(201);
        // The demo's method is @Transactional: the commit is the application's, and its failure reaches the demo's
        // exception mapper (503 commit-failed, Retry-After) above the library; the library's own commit would answer
        // with B's outcome (or 409). Never a 500, and A's retry gets B's payment.
        assertThat(first.status() == 201 || first.status() == 409 || first.isRetryLater())
                .as("A's answer after its refused commit: " + first).isTrue();
        if (first.status() == 201) {
            assertThat(first.body()).as("B's outcome, replayed").isEqualTo(takeover.body());
        }
        assertThat(after.body()).as("A's retry: B's outcome").isEqualTo(takeover.body());
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(1);
    }

    @FunctionalInterface
    private interface Fault {
        void inject() throws Exception;
    }

    private void storm(String title, String faults, Fault fault) throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> ops = Operations.create(UUID.randomUUID().toString().substring(0, 8), scale.keys,
                null, Operations.PAYMENTS);
        CompletableFuture<Void> injected = CompletableFuture.runAsync(() -> {
            try {
                fault.inject();
            } catch (Exception e) {
                throw new IllegalStateException("the fault could not be injected", e);
            }
        });
        Duration took = client.storm(List.of(a.base(), b.base()), ops, scale.clients, scale.minSends, scale.maxSends, 18);
        injected.get(2, TimeUnit.MINUTES);
        Checker.awaitLeasesRunOut(new Cluster(), ops);
        List<String> unsettled = new java.util.ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            URI node = i % 2 == 0 ? a.base() : b.base();
            LoadClient.Answer last = client.settle(node, ops.get(i));
            if (last.status() == 422) {
                // The key's first request was the misuse (the other body), and it was given back (FAILED_RETRYABLE)
                // after a fault: the key stays bound to that request, whose own client retries it to the end.
                last = client.settle(node, ops.get(i), false);
            }
            if (last.status() != 201) {
                unsettled.add(ops.get(i).key() + ": " + last.status() + " " + last.body() + ", record "
                        + Checker.text(new Cluster(), "SELECT CONCAT(status, ' attempts ', attempts, ' ', request_hash)"
                        + " FROM idempotency_record WHERE scope_key = ?", ops.get(i).scopeKey()));
            }
        }
        Checker.Result result = Checker.check(ops, history, new Cluster());
        Report.write(title, scale.clients + " clients, " + ops.size() + " keys, " + history.ops().size()
                        + " requests (" + scale.minSends + "-" + scale.maxSends + " per key, 3% with another body)",
                faults, took, history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).as("operations executed; the last answer of those not settled by 201: "
                + unsettled).isEqualTo(ops.size());
    }

    /** The checker's view: node 3 (never faulted here), read causally. */
    private final class Cluster implements Checker.Database {
        @Override
        public Connection connect() throws SQLException {
            return DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + galera.node(3).sqlPort() + "/idem_it?"
                    + SESSION, "root", "");
        }

        @Override
        public String utcNow() {
            return "(" + ItDatabase.MARIADB.dialect.utcNowQuery() + ")";
        }
    }
}
