package dev.idempotency.reliability;

import dev.idempotency.it.Health;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Scenarios 6 (the destructive part) and 7: a WildFly node (Byteman agent, server transaction timeout 2 s)
 * on a PostgreSQL cluster of the suite's own, reached through a TCP proxy. The tests crash and restart the
 * database, kill its connections at exact points, let business transactions outlive the server's timeout,
 * and cut a connection right after its COMMIT. The machine's shared databases are not touched.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DatabaseFaultsIT {
    private final Scale scale = Scale.current();
    private static final int PROXY_PORT = 15434;
    private DedicatedPostgres db;
    private CommitCutter proxy;
    private static final long OUTAGE_MILLIS = 3000;
    private WildFlyNode node;

    @BeforeAll
    void start() throws Exception {
        db = DedicatedPostgres.create();
        proxy = new CommitCutter(PROXY_PORT, "127.0.0.1", DedicatedPostgres.PORT);
        node = WildFlyNode.start(4, Map.of(), true, db.nodeUrl(4, PROXY_PORT),
                List.of("/subsystem=transactions:write-attribute(name=default-timeout, value=2)"));
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close();
        }
        if (proxy != null) {
            proxy.close();
        }
        if (db != null) {
            db.close();
        }
    }

    @Test
    void theDatabaseCrashesAndRestartsWhileRequestsRun() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> ops = Operations.create(run(), 3 * scale.crashKeys / 2);
        int third = ops.size() / 3;
        List<Operations.Operation> before = ops.subList(0, third);
        List<Operations.Operation> inFlight = ops.subList(third, 2 * third);
        List<Operations.Operation> whileDown = ops.subList(2 * third, ops.size());
        long start = System.nanoTime();
        for (Operations.Operation op : before) {
            assertThat(client.settle(node.base(), op).status()).isEqualTo(201);
        }
        List<CompletableFuture<LoadClient.Answer>> held;
        try (LogWatch paused = node.watchLog()) {
            held = client.holdInTransaction(node.base(), inFlight, 1500);
            paused.await(WildFlyNode.PAUSED, inFlight.size(), 30);
        }
        db.crash();
        int refused = 0;
        try {
            for (CompletableFuture<LoadClient.Answer> f : held) {
                LoadClient.Answer answer = f.get(60, TimeUnit.SECONDS);
                assertThat(answer.isRetryLater()).as("in flight when the database crashed: " + answer).isTrue();
            }
            for (Operations.Operation op : whileDown) {
                LoadClient.Answer answer = client.send(node.base(), op, true);
                assertThat(answer.isRetryLater()).as("while the database is down: " + answer).isTrue();
                assertThat(answer.body()).as("the README's 503 row").contains("/problems/store-unavailable");
                refused++;
            }
            for (Operations.Operation op : before) {
                assertThat(client.send(node.base(), op, true).isRetryLater()).as("a replay needs the database too").isTrue();
                refused++;
            }
        } finally {
            db.start();
        }
        // The same application, not restarted: its pool replaces the dead connections.
        for (Operations.Operation op : ops) {
            assertThat(client.settle(node.base(), op).status()).isEqualTo(201);
        }
        Checker.awaitLeasesRunOut(db, ops);
        Checker.Result result = Checker.check(ops, history, db);
        Report.write("6b. Database crashed and restarted", ops.size() + " keys on a node of a dedicated PostgreSQL: "
                        + third + " paid before, " + inFlight.size() + " in their transaction at the crash, "
                        + whileDown.size() + " new and " + before.size() + " replays while down (" + refused + " refused"
                        + " with 503), then all retried", "pg_ctlcluster stop -m immediate of the dedicated cluster"
                        + " once every one is paused inside its 1.5 s transaction; start again; the application is not restarted",
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(ops.size());
    }

    // Issue 12: the database dies while a node consumes payment commands (each sent twice); the broker redelivers
    // what rolled back, with its backoff, until the database is back.
    @Test
    void theDatabaseCrashesAndRestartsWhileMessagesAreConsumed() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> ops = Operations.create(run(), scale.crashKeys, null, Operations.COMMANDS);
        long start = System.nanoTime();
        client.queueTwice(node.base(), ops, 1500);
        awaitProcessing(ops.get(0));
        db.crash();
        // Down for a few redeliveries of every message (the demo's queue: 0.5 s, doubling, 10 attempts): the
        // outage's length, part of the scenario, not a wait for the system.
        LoadClient.pause(OUTAGE_MILLIS);
        db.start();
        client.awaitSucceeded(node, ops, Duration.ofMinutes(2));
        Checker.Result result = Checker.check(ops, history, db);
        Report.write("6f. Database crashed and restarted while messages are consumed", ops.size() + " payment"
                        + " commands, each sent twice to the node's queue (2 messages), consumed by its message-driven"
                        + " bean on a dedicated PostgreSQL (XA with the broker)", "pg_ctlcluster stop -m immediate while"
                        + " the first commands were held 1.5 s inside their transactions; down 3 s; the application is"
                        + " not restarted", Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(ops.size());
    }

    // Issue 13: the library's readiness check on the node's MicroProfile Health follows its database: DOWN while the
    // database is down (a load balancer takes the node out instead of its clients getting 503), UP once it is back,
    // without restarting the application.
    @Test
    void theReadinessCheckIsDownWhileTheDatabaseIsAndUpAgainAfter() throws Exception {
        Health up = Health.ready(node.readiness());
        assertThat(up.status()).as(up.body().toString()).isEqualTo(200);
        assertThat(up.check("idempotency").path("status").asText()).isEqualTo("UP");
        assertThat(up.check("idempotency").path("data").path("clock").asText()).isEqualTo("database");
        db.crash();
        try {
            Health down = awaitReadiness(503);
            assertThat(down.check("idempotency").path("status").asText()).as(down.body().toString()).isEqualTo("DOWN");
            assertThat(down.check("idempotency").path("data").path("store").asText()).startsWith("unavailable");
        } finally {
            db.start();
        }
        Health again = awaitReadiness(200);
        assertThat(again.check("idempotency").path("status").asText()).isEqualTo("UP");
        assertThat(again.check("idempotency").path("data").path("store").asText()).isEqualTo("reachable");
    }

    // Polls the node's readiness (each read is a real probe of the database) until it answers with the status.
    private Health awaitReadiness(int status) {
        java.util.concurrent.atomic.AtomicReference<Health> health = new java.util.concurrent.atomic.AtomicReference<>();
        dev.idempotency.testing.Conditions.await("readiness answered " + status, Duration.ofSeconds(60), () -> {
            health.set(Health.ready(node.readiness()));
            return health.get().status() == status;
        });
        return health.get();
    }

    private void awaitProcessing(Operations.Operation op) throws Exception {
        Checker.await(db, op.key() + " claimed", "SELECT COUNT(*) FROM idempotency_record WHERE scope_key = ?"
                + " AND status = 'PROCESSING'", op.scopeKey());
    }

    @Test
    void aBusinessTransactionThatOutlivesTheServersTimeoutLeavesNothingAndIsRetried() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> ops = Operations.create(run(), 2);
        long start = System.nanoTime();
        List<CompletableFuture<LoadClient.Answer>> slow = client.holdInTransaction(node.base(), ops, 4000);
        for (CompletableFuture<LoadClient.Answer> f : slow) {
            LoadClient.Answer answer = f.get(60, TimeUnit.SECONDS);
            assertThat(answer.isRetryLater()).as("rolled back by the transaction timeout: " + answer).isTrue();
        }
        for (Operations.Operation op : ops) {
            assertThat(Checker.number(db, "SELECT COUNT(*) FROM demo_payment WHERE merchant_order_no = ?", op.order()))
                    .as("nothing of the timed-out transaction committed").isZero();
            assertThat(client.settle(node.base(), op).status()).isEqualTo(201);
        }
        Checker.Result result = Checker.check(ops, history, db);
        Report.write("6c. Business transaction longer than the server's transaction timeout", ops.size()
                        + " keys, each first sent with a 4 s business call, then retried",
                "WildFly transactions default-timeout=2 s", Duration.ofNanos(System.nanoTime() - start),
                history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(ops.size());
    }

    @Test
    void connectionsKilledBetweenTheBusinessWorkAndTheRecordUpdate() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> ops = Operations.create(run(), 2);
        long start = System.nanoTime();
        node.inject("before-finish", """
                RULE hold a payment between its business work and its record update
                CLASS dev.idempotency.core.CompletionPhase
                METHOD finish
                AT ENTRY
                IF $1.operation().policy().endpoint().equals("payments.create")
                DO traceln("idempotency-fault-test: held before finish");
                   waitFor("idempotency-fault-test", 2500)
                ENDRULE
                """);
        List<CompletableFuture<LoadClient.Answer>> held;
        try {
            try (LogWatch reached = node.watchLog()) {
                held = client.sendAll(node.base(), ops);
                reached.await("idempotency-fault-test: held before finish", ops.size(), 30);
            }
            assertThat(terminateNodeConnections()).isPositive();
            for (CompletableFuture<LoadClient.Answer> f : held) {
                LoadClient.Answer answer = f.get(60, TimeUnit.SECONDS);
                assertThat(answer.isRetryLater()).as("its connection is gone: " + answer).isTrue();
            }
        } finally {
            node.removeRules();
        }
        for (Operations.Operation op : ops) {
            assertThat(client.settle(node.base(), op).status()).isEqualTo(201);
        }
        Checker.Result result = Checker.check(ops, history, db);
        Report.write("6d. Connections killed between the business work and the record update", ops.size()
                        + " keys held (Byteman) at CompletionPhase.finish entry, then retried",
                "pg_terminate_backend of the node's connections while held", Duration.ofNanos(System.nanoTime() - start),
                history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(ops.size());
    }

    @Test
    void connectionsKilledDuringTheRecordUpdate() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        Operations.Operation op = Operations.create(run(), 1).get(0);
        long start = System.nanoTime();
        CompletableFuture<LoadClient.Answer> answer = client.sendAll(node.base(), List.of(op), "X-Demo-Delay-Ms", "800")
                .get(0);
        try (Connection locker = db.connect()) {
            locker.setAutoCommit(false);
            Checker.await(db, op.key() + " claimed", "SELECT COUNT(*) FROM idempotency_record WHERE scope_key = ?"
                    + " AND status = 'PROCESSING'", op.scopeKey());
            // The record's row locked by the test: the node's conditional update waits inside the statement.
            try (PreparedStatement ps = locker.prepareStatement(
                    "SELECT status FROM idempotency_record WHERE scope_key = ? FOR UPDATE")) {
                ps.setString(1, op.scopeKey());
                ps.executeQuery().close();
            }
            Checker.await(db, "the record update waiting on the lock", "SELECT COUNT(*) FROM pg_stat_activity"
                    + " WHERE application_name = 'idem-node4' AND wait_event_type = 'Lock'"
                    + " AND query LIKE '%UPDATE idempotency_record SET status =%'");
            assertThat(terminateNodeConnections()).isPositive();
            LoadClient.Answer during = answer.get(60, TimeUnit.SECONDS);
            assertThat(during.isRetryLater()).as("killed inside its update: " + during).isTrue();
            locker.rollback();
        }
        assertThat(client.settle(node.base(), op).status()).isEqualTo(201);
        Checker.Result result = Checker.check(List.of(op), history, db);
        Report.write("6e. Connection killed during the record update", "1 key whose conditional update waits on a row"
                        + " lock the test holds", "pg_terminate_backend of the node's connections while the UPDATE waits",
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(1);
    }

    @Test
    void aBusinessCommitWhoseAnswerIsLostIsSettledAsCommittedAndNeverRunsAgain() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> ops = Operations.create(run(), 2);
        long start = System.nanoTime();
        removeCutConnections();
        int cutsBefore = proxy.cuts();
        for (Operations.Operation op : ops) {
            proxy.armFor(DatabaseFaultsIT::isPaymentTransaction, true);
            LoadClient.Answer first = client.send(node.base(), op, true);
            System.out.println("commit cut: first answer " + first);
            assertThat(first.status()).as("settled as committed by the fenced update: the first response").isEqualTo(201);
            assertThat(Checker.number(db, "SELECT COUNT(*) FROM demo_payment WHERE merchant_order_no = ?", op.order()))
                    .as("the database did commit").isEqualTo(1);
            assertThat(client.settle(node.base(), op).status()).isEqualTo(201);
            assertThat(Checker.attempts(db, op)).as("replayed, never run again").isEqualTo(1);
            removeCutConnections();
        }
        assertThat(proxy.cuts() - cutsBefore).as("one commit cut per key").isEqualTo(ops.size());
        Checker.Result result = Checker.check(ops, history, db);
        Report.write("7a. Commit outcome unknown: the connection cut right after the business COMMIT", ops.size()
                        + " keys, each retried after its lost commit", "NetCrusher proxy between the node and PostgreSQL"
                        + " lets the payment transaction's COMMIT through, drops the answer and closes the connection",
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(ops.size());
    }

    @Test
    void aBusinessCommitLostBeforeTheDatabaseIsRetryableNeverAcknowledged() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> ops = Operations.create(run(), 2);
        long start = System.nanoTime();
        removeCutConnections();
        int cutsBefore = proxy.cuts();
        for (Operations.Operation op : ops) {
            proxy.armFor(DatabaseFaultsIT::isPaymentTransaction, false);
            LoadClient.Answer first = client.send(node.base(), op, true);
            System.out.println("commit dropped: first answer " + first);
            assertThat(first.isRetryLater()).as("nothing committed, the fenced update released the claim: " + first)
                    .isTrue();
            assertThat(Checker.number(db, "SELECT COUNT(*) FROM demo_payment WHERE merchant_order_no = ?", op.order()))
                    .as("the database never saw the COMMIT").isZero();
            assertThat(client.settle(node.base(), op).status()).isEqualTo(201);
            assertThat(Checker.attempts(db, op)).as("run again once").isEqualTo(2);
            removeCutConnections();
        }
        assertThat(proxy.cuts() - cutsBefore).as("one commit dropped per key").isEqualTo(ops.size());
        Checker.Result result = Checker.check(ops, history, db);
        Report.write("7c. Commit outcome unknown: the business COMMIT lost on its way to the database", ops.size()
                        + " keys, each retried", "NetCrusher proxy drops the payment transaction's COMMIT and closes the"
                        + " connection (the database rolls back)", Duration.ofNanos(System.nanoTime() - start),
                history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(ops.size());
    }

    // Issue 31: the one-commit mode (claim = IN_TRANSACTION): the claim, the payment and the record's finish are one
    // transaction, so a COMMIT whose answer is lost leaves all or nothing of it; the retry meets either the committed
    // outcome (replayed, never run again) or nothing (run once, as a first attempt).
    @Test
    void aOneCommitTransactionWhoseCommitAnswerIsLostIsSettledAndNeverRunsAgain() throws Exception {
        oneCommitCut(true, "7d. Commit outcome unknown, one commit: the connection cut right after the COMMIT",
                "NetCrusher proxy lets the one transaction's COMMIT (claim, payment, finish) through, drops the answer"
                        + " and closes the connection", 1, 1);
    }

    @Test
    void aOneCommitTransactionWhoseCommitIsLostBeforeTheDatabaseRunsOnceOnRetry() throws Exception {
        oneCommitCut(false, "7e. Commit outcome unknown, one commit: the COMMIT lost on its way to the database",
                "NetCrusher proxy drops the one transaction's COMMIT and closes the connection (the database rolls back"
                        + " the claim with the payment)", 0, 1);
    }

    private void oneCommitCut(boolean afterCommit, String title, String fault, int paidAfterTheCut, int attempts)
            throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> ops = Operations.create(run(), 2, null, Operations.ONE_COMMIT_PAYMENTS);
        long start = System.nanoTime();
        removeCutConnections();
        int cutsBefore = proxy.cuts();
        for (Operations.Operation op : ops) {
            proxy.armFor(DatabaseFaultsIT::isOneCommitTransaction, afterCommit);
            LoadClient.Answer first = client.send(node.base(), op, true);
            System.out.println("one-commit cut (after commit: " + afterCommit + "): first answer " + first);
            assertThat(first.status() == 201 || first.isRetryLater()).as("the outcome or 503 to retry: " + first).isTrue();
            assertThat(Checker.number(db, "SELECT COUNT(*) FROM demo_payment WHERE merchant_order_no = ?", op.order()))
                    .as("what the database did with the one COMMIT").isEqualTo(paidAfterTheCut);
            assertThat(client.settle(node.base(), op).status()).isEqualTo(201);
            assertThat(Checker.attempts(db, op)).as("one execution in all").isEqualTo(attempts);
            removeCutConnections();
        }
        assertThat(proxy.cuts() - cutsBefore).as("one commit cut per key").isEqualTo(ops.size());
        Checker.Result result = Checker.check(ops, history, db);
        Report.write(title, ops.size() + " keys on payments.one-commit, each retried", fault,
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(ops.size());
    }

    /** The one-commit mode's transaction: the claim's INSERT and the payment row, then COMMIT. */
    private static boolean isOneCommitTransaction(String statements) {
        String sql = statements.toLowerCase();
        return sql.contains("insert into idempotency_record") && sql.contains("insert into demo_payment");
    }

    /** The payment's transaction: the payment row and the record's conditional update, then COMMIT. */
    private static boolean isPaymentTransaction(String statements) {
        String sql = statements.toLowerCase();
        return sql.contains("insert into demo_payment") && sql.contains("update idempotency_record");
    }

    @Test
    void aClaimCommitWhoseAnswerIsLostEndsInOneExecution() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> ops = Operations.create(run(), 2);
        long start = System.nanoTime();
        removeCutConnections();
        int cutsBefore = proxy.cuts();
        for (Operations.Operation op : ops) {
            proxy.armFor(tx -> tx.toLowerCase().contains("insert into idempotency_record")
                    && tx.contains("payments.create"), true);
            LoadClient.Answer first = client.send(node.base(), op, true);
            System.out.println("claim commit cut: first answer " + first);
            assertThat(first.isRetryLater()).as("the first answer: " + first).isTrue();
            assertThat(client.settle(node.base(), op).status()).isEqualTo(201);
            assertThat(Checker.attempts(db, op)).as("the given-back claim, then one execution").isEqualTo(2);
            removeCutConnections();
        }
        assertThat(proxy.cuts() - cutsBefore).as("one commit cut per key").isEqualTo(ops.size());
        Checker.Result result = Checker.check(ops, history, db);
        Report.write("7b. Commit outcome unknown: the connection cut right after the claim's COMMIT", ops.size()
                        + " keys, each retried", "NetCrusher proxy lets the claim's COMMIT through, drops the answer and"
                        + " closes the connection", Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(ops.size());
    }

    /**
     * The cut connection stays idle in the pool in a state its next transaction cannot use (pgjdbc's XA state) until
     * the datasource's validation removes it: removed at once, so that the next key meets a sound pool and each key
     * gets exactly one cut.
     */
    private void removeCutConnections() throws Exception {
        node.flushInvalidConnections();
    }

    private int terminateNodeConnections() throws Exception {
        return Checker.number(db, "SELECT COUNT(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity"
                + " WHERE application_name = 'idem-node4'");
    }

    private static String run() {
        return UUID.randomUUID().toString().substring(0, 8);
    }
}
