package dev.idempotency.reliability;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Scenario 1 on the run's database (-Dit.db: PostgreSQL, MariaDB, or H2 through its TCP server): two WildFly
 * nodes, many clients, each key sent several times with random delays to either node, some with another
 * body; then the checker over the database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StormIT {
    private final Scale scale = Scale.current();
    private final ItDatabase db = ItDatabase.current();
    private WildFlyNode a;
    private WildFlyNode b;

    @BeforeAll
    void startNodes() throws Exception {
        db.start();
        a = WildFlyNode.start(1, Map.of());
        b = WildFlyNode.start(2, Map.of());
    }

    @AfterAll
    void stopNodes() {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
        db.stop();
    }

    @Test
    void stormOnTwoNodes() throws Exception {
        storm(Operations.PAYMENTS, "1. Storm: 2 WildFly nodes, " + db.title);
    }

    // ClaimMode.IN_TRANSACTION (POST /payments/one-commit): duplicates wait on the first's uncommitted claim, on the
    // same node or the other; the same checker, the same bad counts.
    @Test
    void stormOnTwoNodesClaimingInTheBusinessTransaction() throws Exception {
        storm(Operations.ONE_COMMIT_PAYMENTS, "1b. Storm, claims in the business transaction (one commit): 2 WildFly"
                + " nodes, " + db.title);
    }

    private void storm(String endpoint, String title) throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> ops = Operations.create(UUID.randomUUID().toString().substring(0, 8), scale.keys,
                null, endpoint);
        Duration took = client.storm(List.of(a.base(), b.base()), ops, scale.clients, scale.minSends, scale.maxSends, 7);
        Checker.awaitLeasesRunOut(ops);
        for (int i = 0; i < ops.size(); i++) {
            client.settle(i % 2 == 0 ? a.base() : b.base(), ops.get(i));
        }
        Checker.Result result = Checker.check(ops, history);
        Report.write(title,
                scale.clients + " clients, " + ops.size() + " keys, " + history.ops().size() + " requests ("
                        + scale.minSends + "-" + scale.maxSends + " per key, 3% with another body)",
                "none (concurrency only)", took, history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        if (!Operations.ONE_COMMIT_PAYMENTS.equals(endpoint)) {
            assertThat(result.executed()).isEqualTo(ops.size());
            return;
        }
        // A claim in the business transaction leaves nothing of an attempt that rolled back, so the storm's other body
        // under a key (a misuse) may run, charge the acquirer under the key's derived key, and roll back here; the
        // acquirer then refuses the key's own payment (another payment under that key: 503
        // acquirer-holds-another-payment) for good. Such a key ends unpaid, its one charge the misuse's; every other
        // key is paid once.
        List<Operations.Operation> blocked = Checker.blockedByAMisuseDownstream(ops, history);
        assertThat(result.executed() + blocked.size()).as("paid, or blocked by a misuse's charge: %s", blocked)
                .isEqualTo(ops.size());
        Report.note(title, blocked.size() + " keys unpaid because a request with another body under the key charged"
                + " the acquirer and rolled back here (claims in the business transaction keep no trace of it)");
    }
}
