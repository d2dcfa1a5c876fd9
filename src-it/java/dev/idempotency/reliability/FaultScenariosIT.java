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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The bad day, on real servers: two WildFly nodes (started, crashed, paused and resumed by this test)
 * on one PostgreSQL (the storm, on every database, is {@link StormIT}), the payments demo deployed on both, a recorded history of every request and a
 * checker over the database afterwards. Figures go to target/reliability-report.md.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FaultScenariosIT {
    private final Scale scale = Scale.current();
    private WildFlyNode a;
    private WildFlyNode b;
    private final String firstEncryptionKey = randomBase64(32);

    @BeforeAll
    void startNodes() throws Exception {
        assertThat(ItDatabase.current()).as("the fault scenarios kill PostgreSQL backends: run them with -Dit.db=postgresql")
                .isEqualTo(ItDatabase.POSTGRESQL);
        // First responses of payments are kept encrypted (AES-GCM, key k1) on both nodes.
        Map<String, String> encrypted = Map.of("idempotency.endpoints.payments.create.storage", "encrypted",
                "idempotency.encryption.keys", "k1:" + firstEncryptionKey, "idempotency.encryption.active-key", "k1");
        a = WildFlyNode.start(1, encrypted, true);
        // Node B's own clock runs a minute ahead (the demo's Clock bean); the library reads the database's time.
        Map<String, String> skewed = new java.util.HashMap<>(encrypted);
        skewed.put("demo.clock-skew", "PT60S");
        b = WildFlyNode.start(2, skewed);
    }

    @AfterAll
    void stopNodes() {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
    }

    @Test
    void crashInsideTheBusinessTransaction() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> ops = Operations.create(run(), scale.crashKeys);
        long start = System.nanoTime();
        crashInsideTheirTransactions(client, ops, ops.size());
        // Retries on both nodes: refused while the dead lease lasts, then taken over and run once more.
        for (int i = 0; i < ops.size(); i++) {
            assertThat(client.settle(i % 2 == 0 ? a.base() : b.base(), ops.get(i)).status()).isEqualTo(201);
        }
        Checker.Result result = Checker.check(ops, history);
        Report.write("4a. Crash: kill -9 inside the business transaction", ops.size() + " keys in flight on node A, then"
                        + " retried on A (restarted) and B", "kill -9 of node A's JVM once every operation is paused inside its 4 s transaction; restart on the same data",
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(ops.size());
        for (Operations.Operation op : ops) {
            // Taken over after the dead lease. More than 2 when a retry met the acquirer still holding the crashed
            // node's charge call (its own lease), answered 503 and left the operation retryable for the next one.
            assertThat(Checker.attempts(op)).as("executions started").isGreaterThanOrEqualTo(2);
        }
    }

    // The checker's comparison of each answer's Idempotency-State with the database can fail: one broken state at a
    // time, as a library that said the wrong thing would leave it.
    @Test
    void theCheckerCatchesEveryAnswerWhoseStateTheDatabaseContradicts() {
        assertThat(Checker.contradiction(answer(201, "applied;next=stop"), 1, "SUCCEEDED", true)).isNull();
        assertThat(Checker.contradiction(answer(201, "applied;next=stop"), 0, "FAILED_RETRYABLE", true))
                .as("applied, but nothing committed").isNotNull();
        assertThat(Checker.contradiction(answer(402, "applied;next=stop"), 0, "PROCESSING", true))
                .as("a final answer applied, but no outcome recorded").isNotNull();
        assertThat(Checker.contradiction(answer(400, "not-applied;next=stop"), 0, "FAILED_FINAL", true)).isNull();
        assertThat(Checker.contradiction(answer(400, "not-applied;next=stop"), 1, "FAILED_FINAL", true))
                .as("not applied, but paid").isNotNull();
        assertThat(Checker.contradiction(answer(201, "not-applied;next=new-key"), 1, "SUCCEEDED", true))
                .as("a success that says nothing was done").isNotNull();
        assertThat(Checker.contradiction(answer(201, null), 1, "SUCCEEDED", true)).as("a success that says nothing").isNotNull();
        assertThat(Checker.contradiction(answer(409, "in-progress;next=same-key"), 1, "SUCCEEDED", true)).isNull();
        assertThat(Checker.contradiction(answer(503, null), 0, "FAILED_RETRYABLE", true)).as("the server's own 503").isNull();
        assertThat(Checker.contradiction(answer(202, null), 0, null, false)).as("the demo's own command queue").isNull();
    }

    private static History.Op answer(int status, String state) {
        return new History.Op("k", "a", true, History.Kind.OK, status, "", false, state, null, 0, 0);
    }

    // ClaimMode.IN_TRANSACTION: the claim dies with the transaction, so there is no lease to wait out: the first
    // retry after the crash runs the operation (once), on either node.
    @Test
    void crashInsideABusinessTransactionThatHoldsTheClaim() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> ops = Operations.create(run(), scale.crashKeys, null, Operations.ONE_COMMIT_PAYMENTS);
        long start = System.nanoTime();
        // One operation per caller at a time: a caller's claims in the business transaction wait for each other's
        // counter row, locked until the transaction ends (seen in .ci/run: waiting for all, the first had answered).
        crashInsideTheirTransactions(client, ops, (int) ops.stream().map(Operations.Operation::user).distinct().count());
        assertThat(Checker.number("SELECT COUNT(*) FROM idempotency_record WHERE endpoint = ? AND scope_key IN ("
                + String.join(",", java.util.Collections.nCopies(ops.size(), "?")) + ")", params(ops)))
                .as("the claims rolled back with the crashed transactions").isZero();
        for (int i = 0; i < ops.size(); i++) {
            assertThat(client.settle(i % 2 == 0 ? a.base() : b.base(), ops.get(i)).status()).isEqualTo(201);
        }
        Checker.Result result = Checker.check(ops, history);
        Report.write("4h. Crash: kill -9 inside a business transaction that holds the claim (one commit)", ops.size()
                        + " keys of POST /payments/one-commit in flight on node A, then retried on A (restarted) and B",
                "kill -9 of node A's JVM once each caller's first operation is paused inside its 4 s transaction (the"
                        + " others wait on it); restart on the same data",
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(ops.size());
    }

    // Sends every operation to node A, held 4 s inside its business transaction (after the charge), and kills A
    // once A has logged the pause of the {@code together} that run at once (the others wait their turn): nobody gets
    // an answer; A is started again on the same data.
    private void crashInsideTheirTransactions(LoadClient client, List<Operations.Operation> ops, int together)
            throws Exception {
        List<CompletableFuture<LoadClient.Answer>> inFlight;
        try (LogWatch paused = a.watchLog()) {
            inFlight = client.holdInTransaction(a.base(), ops, 4000);
            paused.await(WildFlyNode.PAUSED, together, 30);
        }
        a.crash();
        try {
            for (CompletableFuture<LoadClient.Answer> f : inFlight) {
                assertThat(f.get(30, TimeUnit.SECONDS).status()).as("nothing was answered by the crashed node").isZero();
            }
        } finally {
            a.boot();
        }
    }

    /** Sends {@code op} to node A, held {@code millis} inside its business transaction; returns once A is there. */
    private CompletableFuture<LoadClient.Answer> pausedOnA(LoadClient client, Operations.Operation op, long millis)
            throws Exception {
        try (LogWatch paused = a.watchLog()) {
            CompletableFuture<LoadClient.Answer> answer = CompletableFuture.supplyAsync(() ->
                    client.send(a.base(), op, true, "X-Demo-Delay-Ms", Long.toString(millis)));
            paused.await(WildFlyNode.PAUSED, 1, 30);
            return answer;
        }
    }

    private static Object[] params(List<Operations.Operation> ops) {
        List<Object> values = new java.util.ArrayList<>();
        values.add(Operations.ONE_COMMIT_PAYMENTS);
        ops.forEach(op -> values.add(op.scopeKey()));
        return values.toArray();
    }

    // Issue 11 item 3: the node that runs asynchronous tasks dies; they are leases like any other. Issue 33 item 4: a
    // 202 is a promise kept — the clients only poll the status resource, on node B, and never send a payment again;
    // B runs each task again from the input its claim kept once the dead node's lease has run out (docs/adr/0020).
    @Test
    void crashInsideAnAsynchronousTask() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> ops = Operations.create(run(), scale.crashKeys, null, Operations.ASYNC_PAYMENTS);
        long start = System.nanoTime();
        // Accepted at once; each task is held 4 s inside its transaction, after the charge; the node dies once the
        // first task has logged its pause (the executor runs a few at a time: the others are queued, their claims made).
        try (LogWatch paused = a.watchLog()) {
            for (CompletableFuture<LoadClient.Answer> accepted : client.holdInTransaction(a.base(), ops, 4000)) {
                assertThat(accepted.get(30, TimeUnit.SECONDS).status()).as("answered before the task ran").isEqualTo(202);
            }
            paused.await(WildFlyNode.PAUSED, 1, 30);
        }
        a.crash();
        long crashed = System.nanoTime();
        List<String> notInProgress = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        List<CompletableFuture<Long>> outcomes = new java.util.ArrayList<>();
        try {
            for (Operations.Operation op : ops) {
                outcomes.add(CompletableFuture.supplyAsync(() -> {
                    LoadClient.Answer outcome = client.pollAccepted(b.base(), op, Duration.ofMinutes(3), seen -> {
                        if (seen.status() != 202 && seen.status() != 201) {
                            notInProgress.add(op.key() + ": " + seen.status() + " " + seen.body());
                        }
                    });
                    assertThat(outcome.status()).as(op.key() + " " + outcome.body()).isEqualTo(201);
                    return Duration.ofNanos(System.nanoTime() - crashed).toMillis();
                }));
            }
            List<Long> seconds = new java.util.ArrayList<>();
            for (CompletableFuture<Long> outcome : outcomes) {
                seconds.add(outcome.get(4, TimeUnit.MINUTES));
            }
            java.util.Collections.sort(seconds);
            assertThat(notInProgress).as("pollers saw 202, then the outcome; never a retryable failure").isEmpty();
            Checker.Result result = Checker.check(ops, history);
            Report.write("4e. Crash: kill -9 inside an asynchronous task", ops.size() + " asynchronous payments"
                            + " accepted by node A (202); their clients then only poll the status resource on node B"
                            + " (never sending a payment again); B runs each again from the input its claim kept",
                    "kill -9 of node A's JVM once the first task is paused inside its 4 s transaction (the rest running"
                            + " or queued); outcomes seen by the pollers " + seconds.get(0) / 1000.0 + "–"
                            + seconds.get(seconds.size() - 1) / 1000.0 + " s after the kill (lease 30 s; target lease"
                            + " + 15 s)",
                    Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
            assertThat(result.violations()).isEmpty();
            assertThat(result.executed()).isEqualTo(ops.size());
            for (Operations.Operation op : ops) {
                assertThat(Checker.attempts(op)).as("taken over after the dead lease").isGreaterThanOrEqualTo(2);
            }
            assertThat(seconds.get(seconds.size() - 1)).as("every outcome within the lease + 15 s of the kill")
                    .isLessThanOrEqualTo(45_000L);
        } finally {
            a.boot();
        }
    }

    // Issue 33: clients that do what every answer says, literally — the same key again, or a new one wherever an
    // answer says next=new-key — while sends fail before the acquirer is called (a first attempt there says new-key),
    // after it (same-key), at the commit (same-key), and node A dies by kill -9 in the middle. A wrong new-key would
    // show as a second charge for one merchant order; the checker's self-test breaks the advice on purpose and sees it.
    @Test
    void clientsThatObeyEveryAnswerLiterally() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> firsts = Operations.create(run(), scale.keys / 2);
        java.util.Random random = new java.util.Random(33);
        java.util.function.Supplier<java.net.URI> anyNode = () -> {
            synchronized (random) {
                return random.nextBoolean() ? a.base() : b.base();
            }
        };
        long start = System.nanoTime();
        java.util.concurrent.ExecutorService clients = java.util.concurrent.Executors.newFixedThreadPool(scale.clients);
        List<LiteralClients.Order> orders = new java.util.ArrayList<>();
        try {
            java.util.concurrent.atomic.AtomicInteger paid = new java.util.concurrent.atomic.AtomicInteger();
            List<java.util.concurrent.Future<LiteralClients.Order>> paying = new java.util.ArrayList<>();
            for (Operations.Operation first : firsts) {
                paying.add(clients.submit(() -> {
                    LiteralClients.Order order = LiteralClients.pay(client, first, anyNode,
                            LiteralClients.someFaults(random, 3), LiteralClients.Obedience.LITERAL);
                    paid.incrementAndGet();
                    return order;
                }));
            }
            dev.idempotency.testing.Conditions.await("a third of the orders paid", Duration.ofMinutes(3),
                    () -> paid.get() >= firsts.size() / 3);
            a.crash();
            a.boot();
            for (java.util.concurrent.Future<LiteralClients.Order> order : paying) {
                orders.add(order.get(10, TimeUnit.MINUTES));
            }
        } finally {
            clients.shutdownNow();
        }
        List<String> literal = LiteralClients.violations(orders, ItDatabase.current());
        List<Operations.Operation> lastKeys = orders.stream().map(o -> o.keys().get(o.keys().size() - 1)).toList();
        Checker.Result result = Checker.check(lastKeys, history);
        long switched = orders.stream().mapToLong(o -> o.abandoned().size()).sum();

        // The self-test: two clients that take a same-key answer after the charge as leave to switch keys.
        List<LiteralClients.Order> disobeyed = new java.util.ArrayList<>();
        List<Operations.Operation> disobedient = Operations.create(run(), 2);
        for (Operations.Operation first : disobedient) {
            disobeyed.add(LiteralClients.pay(client, first, b::base, LiteralClients.failingAfterTheChargeOnce(),
                    LiteralClients.Obedience.SWITCHES_KEYS_ON_ANY_RETRYABLE_ANSWER));
        }
        List<String> caught = LiteralClients.violations(disobeyed, ItDatabase.current());

        Report.write("4j. Clients that obey every answer literally", firsts.size() + " merchant orders, each paid by a"
                        + " client that sends the same key again or a new one exactly as each answer's Idempotency-State"
                        + " says, on both nodes; " + switched + " switches to a new key, " + orders.stream()
                        .mapToInt(o -> o.keys().size()).sum() + " keys in all",
                "one send in three fails (X-Demo-Fail: before-charge, transient after the charge, at-commit; or the"
                        + " acquirer's answer is lost: it charges after the service's read timeout); kill -9"
                        + " of node A once a third of the orders are paid, restart; per merchant order: payments and"
                        + " acquirer charges counted by order (no unique constraint there), keys left after new-key"
                        + " checked for anything applied under them: " + literal.size() + " violations; self-test (two"
                        + " clients that switch keys after a same-key answer): " + caught.size() + " violations caught",
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(literal).as("what the literal clients left in the database").isEmpty();
        assertThat(result.violations()).isEmpty();
        assertThat(switched).as("answers said a new key was safe, and clients used one").isPositive();
        for (Operations.Operation first : disobedient) {
            assertThat(caught).as("the checker sees a client that switched keys where it was told not to")
                    .anyMatch(v -> v.startsWith(first.order() + ": 1 payments, 2 charges"));
        }
    }

    // Issue 12: the node consuming payment commands dies inside their messages' transactions. Each command was sent
    // twice (two messages); the broker's journal brings every unacknowledged message back with the node.
    @Test
    void crashInsideAMessagesTransaction() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> ops = Operations.create(run(), scale.crashKeys, null, Operations.COMMANDS);
        long start = System.nanoTime();
        // Queued twice each; every execution is held 4 s inside its transaction, after the charge.
        client.queueTwice(a.base(), ops, 4000);
        // As many commands as the node's consumers hold at once are inside their transactions when it dies.
        awaitRecords(ops.subList(0, Math.min(ops.size(), 4)), "PROCESSING");
        List<Operations.Operation> held = new java.util.ArrayList<>();
        for (Operations.Operation op : ops) {
            if ("PROCESSING".equals(Checker.recordStatus(op.scopeKey()))) {
                held.add(op);
            }
        }
        a.crash();
        // Held when it died: a command that was PROCESSING when looked at may have committed before the kill (at full
        // size the look over every command takes a while), and its record says so now.
        for (Operations.Operation op : List.copyOf(held)) {
            if (!"PROCESSING".equals(Checker.recordStatus(op.scopeKey()))) {
                held.remove(op);
            }
        }
        a.boot();
        // Redelivered on the restarted node: they meet their dead claims until the 3 s lease runs out, then take
        // them over; the copies are acknowledged as duplicates. The senders ask for each command's outcome.
        client.awaitSucceeded(a, ops, Duration.ofMinutes(2));
        Checker.Result result = Checker.check(ops, history);
        Report.write("4f. Crash: kill -9 inside a message's transaction", ops.size() + " payment commands, each sent"
                        + " twice to node A's queue (2 messages), consumed by its message-driven bean",
                "kill -9 of node A's JVM while the commands were held 4 s inside their transactions; restart on the"
                        + " same data (broker journal, transaction log)",
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(ops.size());
        assertThat(held).as("commands inside their transactions when the node died").isNotEmpty();
        for (Operations.Operation op : held) {
            assertThat(Checker.attempts(op)).as("taken over after the dead lease").isGreaterThanOrEqualTo(2);
        }
    }

    // Issue 12: the node dies between the two commits of a message's two-phase commit, the broker's branch (the
    // acknowledgement) and the database's (the payment and the record's SUCCEEDED): one is committed, the other only
    // prepared. The decision was logged before the first commit: the restarted node's recovery commits the other.
    @Test
    void crashBetweenTheTwoCommitsOfAMessagesTransaction() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> ops = Operations.create(run(), 2, null, Operations.COMMANDS);
        long start = System.nanoTime();
        a.inject("between-the-commits", """
                RULE halt the node once the first branch of a message's two-phase commit has committed
                CLASS com.arjuna.ats.internal.jta.resources.arjunacore.XAResourceRecord
                METHOD topLevelCommit
                AT EXIT
                IF Thread.currentThread().getName().toLowerCase().contains("activemq")
                DO traceln("idempotency-fault-test: halted after committing the branch of " + $0.getXid()
                        + " on " + $0.value());
                   killJVM()
                ENDRULE
                """);
        // Held 1.5 s inside their transactions, so that every copy is queued before the first commit halts the node.
        try {
            client.queueTwice(a.base(), ops, 1500);
            a.awaitExit(Duration.ofSeconds(60));
        } catch (Exception | AssertionError notHalted) {
            a.removeRules();
            throw notHalted;
        }
        String halted = a.log().lines().filter(l -> l.contains("idempotency-fault-test: halted")).findFirst()
                .orElseThrow(() -> new AssertionError("the node ended, but not by the rule"));
        a.boot();
        client.awaitSucceeded(a, ops, Duration.ofMinutes(3));
        Checker.Result result = Checker.check(ops, history);
        boolean brokerFirst = halted.toLowerCase().contains("activemq");
        Report.write("4g. Crash between the two commits of a message's transaction", ops.size() + " payment commands,"
                        + " each sent twice to node A's queue (2 messages), consumed by its message-driven bean (XA:"
                        + " the broker and PostgreSQL)", "Byteman rule halts node A's JVM (Runtime.halt) as soon as the"
                        + " first branch of a delivery's two-phase commit has committed (here the "
                        + (brokerFirst ? "broker's: acknowledged, the database's branch prepared"
                        : "database's: committed, the acknowledgement prepared") + "); restart on the same data,"
                        + " where Narayana's recovery commits the other branch",
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(ops.size());
    }

    @Test
    void crashBetweenTheClaimsCommitAndTheBusinessTransaction() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> ops = Operations.create(run(), scale.crashKeys);
        long start = System.nanoTime();
        List<CompletableFuture<LoadClient.Answer>> inFlight = parkAfterTheirClaimsOnA(client, ops);
        a.crash();
        try {
            assertUnanswered(inFlight);
        } finally {
            a.boot();
        }
        for (int i = 0; i < ops.size(); i++) {
            assertThat(client.settle(i % 2 == 0 ? a.base() : b.base(), ops.get(i)).status()).isEqualTo(201);
        }
        Checker.Result result = Checker.check(ops, history);
        Report.write("4b. Crash: kill -9 between the claim's commit and the business transaction", ops.size()
                        + " keys claimed on node A, then retried on A (restarted) and B",
                "Byteman rule parks each request at IdempotentInterceptor.execute entry (claim committed); kill -9 of"
                        + " node A once all are parked; restart on the same data",
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(ops.size());
        for (Operations.Operation op : ops) {
            assertThat(Checker.attempts(op)).as("the dead claim taken over once after its lease").isEqualTo(2);
        }
    }

    @Test
    void anOperationLeftByACrashedNodeThatNoClientRetriesIsSettledByTheOtherNode() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> ops = Operations.create(run(), scale.crashKeys);
        long start = System.nanoTime();
        List<CompletableFuture<LoadClient.Answer>> inFlight = parkAfterTheirClaimsOnA(client, ops);
        a.crash();
        try {
            assertUnanswered(inFlight);
            // Nobody retries. Node B settles every second what has had its lease out for 2 s; its first pass
            // looks back an hour.
            b.reloadWith(Map.of("idempotency.settle.interval", "PT1S", "idempotency.settle.after", "PT2S"));
            awaitRecords(ops, "FAILED_RETRYABLE");
            for (Operations.Operation op : ops) {
                assertThat(payments(op)).as("settled without running it").isZero();
            }
        } finally {
            a.boot();
            b.reloadWith(Map.of("idempotency.settle.interval", "PT1M", "idempotency.settle.after", "PT1M"));
        }
        // A late retry runs at once (no lease to wait out) and exactly once.
        for (int i = 0; i < ops.size(); i++) {
            assertThat(client.settle(i % 2 == 0 ? a.base() : b.base(), ops.get(i)).status()).isEqualTo(201);
        }
        Checker.Result result = Checker.check(ops, history);
        Report.write("4d. Crash with nobody retrying: the other node settles", ops.size()
                        + " keys claimed on node A; no retry until node B's settler has made them retryable; then"
                        + " retried on A (restarted) and B",
                "Byteman rule parks each request after its claim's commit; kill -9 of node A; node B reloaded with"
                        + " idempotency.settle.interval=PT1S, settle.after=PT2S",
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(ops.size());
        for (Operations.Operation op : ops) {
            assertThat(Checker.attempts(op)).as("the settled claim, then the retry").isEqualTo(2);
        }
    }

    @Test
    void crashAfterTheCommitBeforeTheResponse() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> ops = Operations.create(run(), scale.crashKeys);
        long start = System.nanoTime();
        a.inject("after-commit", """
                RULE park a payment's answer after its transaction committed, before the response is written
                CLASS dev.idempotency.jaxrs.IdempotencyResponseFilter
                METHOD filter
                AT ENTRY
                IF $1.getMethod().equals("POST") AND $1.getUriInfo().getPath().endsWith("payments")
                DO waitFor("idempotency-fault-test", 120000)
                ENDRULE
                """);
        List<CompletableFuture<LoadClient.Answer>> inFlight = client.sendAll(a.base(), ops);
        awaitRecords(ops, "SUCCEEDED");
        a.crash();
        try {
            for (CompletableFuture<LoadClient.Answer> f : inFlight) {
                assertThat(f.get(30, TimeUnit.SECONDS).status()).as("the committed answer never left the node").isZero();
            }
        } finally {
            a.boot();
        }
        for (int i = 0; i < ops.size(); i++) {
            assertThat(client.settle(i % 2 == 0 ? a.base() : b.base(), ops.get(i)).status()).isEqualTo(201);
            assertThat(client.send(i % 2 == 0 ? b.base() : a.base(), ops.get(i), true).status()).isEqualTo(201);
        }
        Checker.Result result = Checker.check(ops, history);
        Report.write("4c. Crash: kill -9 after the commit, before the response", ops.size()
                        + " keys committed on node A, then retried on A (restarted) and B",
                "Byteman rule parks each answer at IdempotencyResponseFilter.filter entry (business transaction"
                        + " committed); kill -9 of node A once all are committed; restart on the same data",
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(ops.size());
        for (Operations.Operation op : ops) {
            assertThat(Checker.attempts(op)).as("replayed, never run again").isEqualTo(1);
        }
    }

    @Test
    void rotatingTheSecretAndTheEncryptionKeyUnderLoadGivesNoMismatchAndOldRecordsReplay() throws Exception {
        // A third of the keys is new in each phase: made before the rotation, during it, and after it.
        List<Operations.Operation> ops = Operations.create(run(), scale.keys / 2);
        int third = ops.size() / 3;
        String oldSecret = Operations.runSecretText();
        String newSecret = randomBase64(48);
        String bothKeys = "k1:" + firstEncryptionKey + ",k2:" + randomBase64(32);
        // Phase 1, node by node: the new secret and key are accepted, the old ones still used. Phase 2: the new ones
        // used, the old ones still accepted (records made with them replay). Then the nodes key new records with
        // the new secret, and the checks find each record under its own.
        UnderLoad run = twoRollingReloadsUnderLoad(ops,
                Map.of("idempotency.previous-secrets", newSecret, "idempotency.encryption.keys", bothKeys),
                Map.of("idempotency.secret", newSecret, "idempotency.previous-secrets", oldSecret,
                        "idempotency.encryption.active-key", "k2"),
                () -> Operations.secretsInUse(newSecret, oldSecret));
        History history = run.history();
        long start = run.start();
        Checker.Result result = Checker.check(ops, history);
        int oldSealed = 0;
        int newSealed = 0;
        for (Operations.Operation op : ops) {
            String encoding = Checker.text("SELECT body_encoding FROM idempotency_record WHERE scope_key = ?", op.scopeKey());
            oldSealed += "aes-gcm:k1".equals(encoding) ? 1 : 0;
            newSealed += "aes-gcm:k2".equals(encoding) ? 1 : 0;
        }
        Report.write("14. Rotation of the HMAC secret and the encryption key under load", ops.size() + " keys, 8 clients"
                        + " on the nodes in service, " + history.ops().size() + " requests; records sealed with k1: "
                        + oldSealed + ", with k2: " + newSealed,
                "rolling reloads of A and B (properties over the management API, then reload): phase 1 accepts the new secret and key k2, phase 2 uses them (old ones"
                        + " still accepted)", Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(ops.size());
        assertThat(history.statusMix()).as("no spurious mismatch: every send carried its key's own body")
                .doesNotContainKey("422");
        assertThat(oldSealed).as("records sealed with the old key, replayed after the rotation").isGreaterThanOrEqualTo(third);
        assertThat(newSealed).as("records made after the rotation, sealed with the new key").isGreaterThanOrEqualTo(third);
        assertThat(oldSealed + newSealed).isEqualTo(ops.size());
    }

    @Test
    void changingTheFingerprintRulesByRollingRestartsUnderLoadTurnsNoRetryInto422() throws Exception {
        // Keys first sent under the old rules, during the change, and under the new ones; every one retried
        // throughout, so that retries cross from nodes of one set of rules to nodes of the other.
        List<Operations.Operation> ops = Operations.create(run(), scale.keys / 2);
        int third = ops.size() / 3;
        // The new rules also leave currency out: the same body fingerprints differently under them.
        String oldIgnored = "traceId";
        String newIgnored = "traceId,currency";
        // Step 1, node by node: the new rules accepted, the old ones still used; step 2: the new rules used, the
        // old ones still accepted.
        UnderLoad run = twoRollingReloadsUnderLoad(ops,
                Map.of("idempotency.fingerprint.previous.ignore-fields", newIgnored),
                Map.of("idempotency.fingerprint.ignore-fields", newIgnored,
                        "idempotency.fingerprint.previous.ignore-fields", oldIgnored), () -> { });
        History history = run.history();
        long start = run.start();
        Checker.Result result = Checker.check(ops, history);
        int oldRules = 0;
        for (Operations.Operation op : ops) {
            String hash = Checker.text("SELECT request_hash FROM idempotency_record WHERE scope_key = ?", op.scopeKey());
            oldRules += hash != null && hash.endsWith(":" + rulesId(oldIgnored)) ? 1 : 0;
        }
        Report.write("16. A change of the fingerprint rules under load", ops.size() + " keys, 8 clients on the nodes in"
                        + " service, " + history.ops().size() + " requests; records made under the old rules: " + oldRules,
                "rolling reloads of A and B (properties over the management API, then reload) changing fingerprint.ignore-fields from traceId to traceId,currency: step 1"
                        + " accepts the new rules, step 2 uses them (old ones still accepted)",
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(ops.size());
        assertThat(history.statusMix()).as("no retry called a misuse: every send carried its key's own body")
                .doesNotContainKey("422");
        assertThat(oldRules).as("records made under the old rules, replayed under the new").isGreaterThanOrEqualTo(third);
    }

    private static String rulesId(String ignored) {
        return new dev.idempotency.core.FingerprintRules(java.util.Set.of(ignored.split(",")), Map.of(), true,
                dev.idempotency.core.ApiVersionSource.NONE).id();
    }

    @Test
    void aPayoutWhoseAnswerWasLostIsResolvedByAskingTheAcquirerNeverPaidTwice() throws Exception {
        String key = "payout-" + run();
        String body = "{\"beneficiary\":\"DE89 3704 0044 0532 0130 00\",\"amount\":12.50,\"currency\":\"EUR\"}";
        String reference = dev.idempotency.core.ScopeDigest.derive(Operations.scopeKey(
                new dev.idempotency.Scope("acme", "alice", "payouts.create", key)), "acquirer.payout");
        String payoutsOf = "SELECT COUNT(*) FROM demo_payout WHERE reference = ?";
        long start = System.nanoTime();
        // The acquirer takes 2.5 s; the payouts service waits 1 s: it cannot know whether the money left.
        RawHttp.Response lost = payout(a, key, body, "X-Demo-Acquirer-Delay-Ms", "2500");
        assertThat(lost.status()).isEqualTo(503);
        assertThat(lost.header("Retry-After")).isNotNull();
        assertThat(Checker.number(payoutsOf, reference)).as("the acquirer took it").isEqualTo(1);
        // The retry asks the acquirer first: still processing, so not paid again, and not answered yet.
        RawHttp.Response asked = payout(b, key, body);
        assertThat(asked.status()).as(text(asked)).isEqualTo(503);
        assertThat(asked.header("Retry-After")).isNotNull();
        Checker.await("the acquirer settles the payout",
                "SELECT COUNT(*) FROM demo_payout WHERE reference = ? AND status = 'SETTLED'", reference);
        // Settled: the next retry is answered with that payout, without calling the payouts API again.
        RawHttp.Response resolved = payout(a, key, body);
        assertThat(resolved.status()).as(text(resolved)).isEqualTo(201);
        assertThat(text(resolved)).contains(reference).contains("SETTLED");
        RawHttp.Response replay = payout(b, key, body);
        assertThat(replay.status()).isEqualTo(201);
        assertThat(replay.body()).isEqualTo(resolved.body());
        int paid = Checker.number(payoutsOf, reference);
        String record = Checker.text("SELECT status || ' after ' || attempts || ' attempts' FROM idempotency_record"
                + " WHERE scope_key = ?", Operations.scopeKey(
                new dev.idempotency.Scope("acme", "alice", "payouts.create", key)));
        Report.write("8. Downstream outcome unknown: a payout whose answer was lost", "1 key, 4 requests over 2 nodes;"
                        + " record " + record, "the acquirer's payouts API (not idempotent) takes 2.5 s, the payouts"
                        + " service waits 1 s; retries resolved by the PayoutOutcomeResolver asking the acquirer",
                Duration.ofNanos(System.nanoTime() - start),
                Map.of("503 (unknown, then still processing)", 2L, "201 (resolved, then replayed)", 2L),
                new Checker.Result(1, paid, paid > 1 ? 1 : 0, 0, 0, 0, 0, 0, 0, 0,
                        paid == 1 ? List.of() : List.of(paid + " payouts")));
        assertThat(paid).as("one payout, never a second").isEqualTo(1);
        assertThat(record).isEqualTo("SUCCEEDED after 3 attempts");
    }

    @Test
    void aTakeoverRacingACommitInFlightSeesTheCommittedOutcome() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(60));
        Operations.Operation op = Operations.create(run(), 1).get(0);
        long start = System.nanoTime();
        // A has updated its record (SUCCEEDED, row locked, not committed) and is held there past its lease.
        a.holdBeforeCommit("payments.create", 5000);
        CompletableFuture<LoadClient.Answer> first;
        CompletableFuture<LoadClient.Answer> takeover;
        try {
            first = client.sendAll(a.base(), List.of(op)).get(0);
            Checker.await("A reached its commit", "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = 'idem-node1'"
                    + " AND state = 'idle in transaction' AND query LIKE '%UPDATE idempotency_record SET status =%'");
            // By the lease A is dead: B's takeover (a conditional update) waits on A's row lock, then finds the
            // record SUCCEEDED under A's token and replays it instead of running the payment again.
            Checker.awaitLeaseRunOut(op);
            takeover = CompletableFuture.supplyAsync(() -> client.send(b.base(), op, true));
            LoadClient.Answer committed = first.get(60, TimeUnit.SECONDS);
            assertThat(committed.status()).isEqualTo(201);
            assertThat(takeover.get(60, TimeUnit.SECONDS).status()).as("the committed outcome, not a second run")
                    .isEqualTo(201);
        } finally {
            a.removeRules();
        }
        Checker.Result result = Checker.check(List.of(op), history);
        Report.write("5b. Takeover racing a commit in flight", "1 key: A held after its record update, before"
                        + " its commit, past its lease; B's retry arrives then",
                "Byteman rule holds A 5 s after CompletionPhase.finish (lease 3 s)",
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(1);
        assertThat(Checker.attempts(op)).as("never taken over").isEqualTo(1);
    }

    @Test
    void aPausedExecutorPastItsLeaseIsFencedOut() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(60));
        List<Operations.Operation> ops = Operations.create(run(), 1);
        Operations.Operation op = ops.get(0);
        long start = System.nanoTime();
        CompletableFuture<LoadClient.Answer> stale = pausedOnA(client, op, 1500);
        a.pause();
        CompletableFuture<LoadClient.Answer> takeover;
        try {
            Checker.awaitLeaseRunOut(op);
            // B takes the operation over; its payment insert waits for A's uncommitted one on the unique index.
            takeover = CompletableFuture.supplyAsync(() -> client.settle(b.base(), op));
            Checker.await("B's payment waiting for A's", "SELECT COUNT(*) FROM pg_stat_activity"
                    + " WHERE application_name = 'idem-node2' AND wait_event_type = 'Lock'");
        } finally {
            a.resume();
        }
        LoadClient.Answer staleAnswer = stale.get(60, TimeUnit.SECONDS);
        LoadClient.Answer winner = takeover.get(60, TimeUnit.SECONDS);
        assertThat(winner.status()).isEqualTo(201);
        assertThat(staleAnswer.status()).as("the fenced executor answers with the winner's outcome or 409").isIn(201, 409);
        Checker.Result result = Checker.check(ops, history);
        Report.write("5. Stale executor: kill -STOP past the lease, takeover, kill -CONT", "1 key",
                "kill -STOP of node A once paused inside its transaction, until its lease has run out and B's takeover waits",
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(1);
        assertThat(Checker.attempts(op)).isEqualTo(2);
    }

    @Test
    void badInputGetsA4xxProblemNeverA5xxAndLeavesNoRecord() throws Exception {
        BadInput generator = new BadInput(11, run());
        List<BadInput.Case> cases = new ArrayList<>();
        for (int i = 0; i < scale.fuzzRequests; i++) {
            cases.add(generator.next());
        }
        for (int i = 0; i < scale.hugeBodies; i++) {
            cases.add(generator.tenMegabytes());
        }
        int port = a.base().getPort();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
        long start = System.nanoTime();
        List<java.util.concurrent.Future<RawHttp.Response>> answers = new ArrayList<>();
        for (BadInput.Case c : cases) {
            answers.add(pool.submit(() -> RawHttp.post(port, "/demo/api/payments", c.request())));
        }
        Map<String, Long> mix = new java.util.TreeMap<>();
        List<String> violations = new ArrayList<>();
        for (int i = 0; i < cases.size(); i++) {
            BadInput.Case c = cases.get(i);
            RawHttp.Response r = answers.get(i).get(2, TimeUnit.MINUTES);
            mix.merge(c.kind() + " " + r.status(), 1L, Long::sum);
            boolean success = r.status() >= 200 && r.status() < 300;
            boolean problem = r.status() >= 400 && r.status() < 500 && r.header("Content-Type") != null
                    && r.header("Content-Type").startsWith("application/problem+json");
            if (!success && !problem) {
                violations.add(c.kind() + ": " + r.status() + " " + r.headers());
            }
            // The demo's own validation runs inside the operation: its 400 is a final outcome, stored and replayed.
            // Every other 4xx (the library's, the container's, the JAX-RS runtime's) comes before execution.
            boolean executed = success || (problem && new String(r.body(), java.nio.charset.StandardCharsets.UTF_8)
                    .contains("/problems/invalid-payment"));
            if (c.validKey() != null) {
                String status = Checker.recordStatus(Operations.scopeKey(c.user(), c.validKey()));
                String expected = success ? "SUCCEEDED" : executed ? "FAILED_FINAL" : null;
                if (!java.util.Objects.equals(status, expected)) {
                    violations.add(c.kind() + ": answered " + r.status() + " and left record " + status);
                }
            }
        }
        pool.shutdown();
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        System.out.println("bad input: " + cases.size() + " requests in " + took.toMillis() + " ms: " + mix);
        Checker.Result none = new Checker.Result(0, 0, 0, 0, 0, 0, 0, 0, violations.size(), 0, violations);
        Report.write("11. Bad input", cases.size() + " generated requests from 8 clients on node A ("
                        + scale.hugeBodies + " of 10 MB)", "hostile keys, bodies, content types and credentials",
                took, mix, none);
        assertThat(violations).isEmpty();
    }

    @Test
    void anotherCallerNeverSeesAnOperationAndSecretsAreNotStored() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        Operations.Operation alices = Operations.create(run(), 1).get(0);
        assertThat(client.send(a.base(), alices, true).status()).isEqualTo(201);
        // Carol (another tenant) and Bob (same tenant) reuse Alice's key: each is a new operation of their own.
        Operations.Operation carols = new Operations.Operation(alices.key(), "carol", alices.order(), alices.body(),
                alices.otherBody(), Operations.PAYMENTS);
        Operations.Operation bobs = new Operations.Operation(alices.key(), "bob", alices.order() + "-bob",
                alices.body().replace(alices.order(), alices.order() + "-bob"), alices.otherBody(), Operations.PAYMENTS);
        for (Operations.Operation other : List.of(carols, bobs)) {
            assertThat(client.send(b.base(), other, true).status()).isEqualTo(201);
            assertThat(client.send(b.base(), other, false).status()).as("mismatch against their own operation only").isEqualTo(422);
        }
        for (History.Op op : history.ops()) {
            assertThat(op.status()).isIn(201, 422);
        }
        // Nothing the servers keep or log holds the client's key or the credentials.
        for (WildFlyNode node : List.of(a, b)) {
            assertThat(node.log()).doesNotContain(alices.key());
        }
        int executed;
        try (java.sql.Connection c = ItDatabase.current().connect();
             java.sql.Statement s = c.createStatement();
             java.sql.ResultSet rs = s.executeQuery("SELECT response_headers, response_body, scope_key FROM idempotency_record")) {
            // Computed once: after a rotation each one is looked up among the keys of every accepted secret.
            java.util.Set<String> theirs = java.util.Set.of(alices.scopeKey(), bobs.scopeKey(), carols.scopeKey());
            try (java.sql.PreparedStatement ps = c.prepareStatement(
                    "SELECT COUNT(*) FROM demo_payment WHERE merchant_order_no IN (?, ?)")) {
                ps.setString(1, alices.order());
                ps.setString(2, bobs.order());
                try (java.sql.ResultSet count = ps.executeQuery()) {
                    count.next();
                    executed = count.getInt(1);
                }
            }
            assertThat(executed).as("alice's, bob's and carol's own payments").isEqualTo(3);
            while (rs.next()) {
                String headers = String.valueOf(rs.getString(1));
                String body = rs.getBytes(2) == null ? "" : new String(rs.getBytes(2), java.nio.charset.StandardCharsets.UTF_8);
                assertThat(headers).doesNotContainIgnoringCase("set-cookie").doesNotContainIgnoringCase("authorization");
                assertThat(body).doesNotContain(alices.key());
                if (theirs.contains(rs.getString(3))) {
                    assertThat(body).as("stored encrypted: no plaintext in the table").doesNotContain(alices.order())
                            .doesNotContain("merchantOrderNo");
                }
            }
        }
        Report.write("12. Isolation and secrets", "1 key reused by another user and another tenant",
                "none (the servers' logs and the record table searched for the key and credentials)", Duration.ZERO,
                history.statusMix(), new Checker.Result(3, executed, 0, 0, 0, 0, 0, 0, 0, 0, List.of()));
    }

    // Issue 31: a business method four times longer than its lease (12 s under the nodes' 3 s lease of payments.create,
    // as 40 s under 10 s), its client retrying every 2 s on the other node: the lease is renewed across every period,
    // so each retry is answered in flight until the first answer, then with the replay; one execution.
    @Test
    void aLongOperationOnOneNodeKeepsItsLeaseWhileItsClientRetriesOnTheOther() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(60));
        List<Operations.Operation> ops = Operations.create(run(), 1);
        Operations.Operation op = ops.get(0);
        long start = System.nanoTime();
        CompletableFuture<LoadClient.Answer> first = pausedOnA(client, op, 12_000);
        int inFlight = 0;
        LoadClient.Answer retry = client.send(b.base(), op, true);
        while (!first.isDone()) {
            if (retry.status() != 201) {
                assertThat(retry.status()).as("in flight while the first runs: " + retry).isEqualTo(409);
                assertThat(retry.body()).contains("/problems/request-in-flight");
                assertThat(retry.retryAfter()).isNotNull();
                inFlight++;
            }
            LoadClient.pause(2000); // the client's retry interval
            retry = client.send(b.base(), op, true);
        }
        LoadClient.Answer answered = first.get(60, TimeUnit.SECONDS);
        assertThat(answered.status()).isEqualTo(201);
        // A retry sent while the first's commit was under way may still have met it in flight; the next replays.
        LoadClient.Answer replay = retry.status() == 201 ? retry : client.send(b.base(), op, true);
        assertThat(replay.status()).as("the replay once the first has answered").isEqualTo(201);
        assertThat(replay.body()).isEqualTo(answered.body());
        assertThat(inFlight).as("retries answered in flight over the four lease periods").isGreaterThanOrEqualTo(4);
        Checker.Result result = Checker.check(ops, history);
        Report.write("4i. A long operation: 12 s under a 3 s lease, its client retrying every 2 s on the other node",
                "1 key run on A; " + inFlight + " retries on B answered 409 in flight, then the replay",
                "X-Demo-Delay-Ms 12000 inside the business transaction of node A (lease renewed by its keeper)",
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(1);
        assertThat(Checker.attempts(op)).as("never taken over").isEqualTo(1);
    }

    @Test
    void aNodeWhoseClockRunsAheadNeverTakesOverALiveLease() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> ops = Operations.create(run(), 1);
        Operations.Operation op = ops.get(0);
        long start = System.nanoTime();
        CompletableFuture<LoadClient.Answer> first = pausedOnA(client, op, 2500);
        // By B's own clock A's 3 s lease ended a minute ago; by the database's it has 2 s to run.
        LoadClient.Answer onSkewedNode = client.send(b.base(), op, true);
        assertThat(onSkewedNode.status()).as("in flight, not taken over").isEqualTo(409);
        assertThat(first.get(30, TimeUnit.SECONDS).status()).isEqualTo(201);
        Checker.Result result = Checker.check(ops, history);
        Report.write("9. Clock skew: node B's JVM clock +60 s", "1 key, its retry sent to B while A runs it",
                "demo.clock-skew=PT60S on node B (its Clock bean), idempotency.clock=database",
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(Checker.attempts(op)).as("never taken over").isEqualTo(1);
    }

    @Test
    void aCallerFloodingNewKeysIsLimitedWhileOthersAreServed() throws Exception {
        java.util.regex.Matcher configured = java.util.regex.Pattern.compile("max-keys-per-endpoint=(\\d+)").matcher(
                java.nio.file.Files.readString(java.nio.file.Path.of(System.getProperty("it.server.dir") + ".properties")));
        assertThat(configured.find()).isTrue();
        int cap = Integer.parseInt(configured.group(1));
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> flood = Operations.create(run(), cap + 100, "mallory");
        long start = System.nanoTime();
        // Four at a time: below the 5 operations in flight a caller may have, so the retained-keys bound decides.
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
        List<java.util.concurrent.Future<LoadClient.Answer>> answers = new ArrayList<>();
        for (Operations.Operation op : flood) {
            answers.add(pool.submit(() -> client.send(a.base(), op, true)));
        }
        Operations.Operation alices = Operations.create(run(), 1, "alice").get(0);
        LoadClient.Answer served = client.send(b.base(), alices, true);
        int limited = 0;
        for (java.util.concurrent.Future<LoadClient.Answer> f : answers) {
            LoadClient.Answer answer = f.get(5, TimeUnit.MINUTES);
            assertThat(answer.status()).isIn(201, 429);
            if (answer.status() == 429) {
                limited++;
                assertThat(answer.retryAfter()).isNotNull();
            }
        }
        pool.shutdown();
        assertThat(served.status()).as("another caller is served during the flood").isEqualTo(201);
        assertThat(limited).isGreaterThanOrEqualTo(100 - 4);
        int kept = Checker.number("SELECT COUNT(*) FROM idempotency_record WHERE principal = 'mallory'");
        assertThat(kept).as("the table stays bounded").isLessThanOrEqualTo(cap + 4);
        // Every key of both callers: each 201 has its one payment and record, a 429 left neither.
        List<Operations.Operation> everyKey = new ArrayList<>(flood);
        everyKey.add(alices);
        Checker.Result result = Checker.check(everyKey, history);
        Report.write("13. Limits: one caller floods new keys", flood.size() + " new keys from mallory (4 clients) on A, alice on B",
                "max-keys-per-endpoint=" + cap + " for payments.create (server property)",
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).as("the served keys, and only they, executed").isEqualTo(flood.size() - limited + 1);
    }

    @Test
    void connectionsKilledInsideTheBusinessTransactionAnswer503AndThePoolHeals() throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        List<Operations.Operation> ops = Operations.create(run(), scale.crashKeys);
        long start = System.nanoTime();
        List<CompletableFuture<LoadClient.Answer>> inFlight;
        try (LogWatch paused = a.watchLog()) {
            inFlight = client.holdInTransaction(a.base(), ops, 2000);
            paused.await(WildFlyNode.PAUSED, ops.size(), 30);
        }
        // Node A's connections only: its datasource URL names it (ApplicationName=idem-node1).
        int killed = Checker.number("SELECT COUNT(*) FILTER (WHERE pg_terminate_backend(pid))"
                + " FROM pg_stat_activity WHERE application_name = 'idem-node1'");
        assertThat(killed).as("node A had connections to kill").isPositive();
        for (CompletableFuture<LoadClient.Answer> f : inFlight) {
            LoadClient.Answer answer = f.get(60, TimeUnit.SECONDS);
            assertThat(answer.status()).as("a killed transaction is retryable: " + answer).isIn(201, 503);
        }
        // The same node serves the retries: its pool replaced the dead connections, no restart.
        for (Operations.Operation op : ops) {
            assertThat(client.settle(a.base(), op).status()).isEqualTo(201);
        }
        Checker.Result result = Checker.check(ops, history);
        Report.write("6. Database connections killed inside the business transaction", ops.size()
                        + " keys in flight on node A, retried on A", "pg_terminate_backend of node A's " + killed
                        + " connections once every operation is paused inside its 2 s transaction",
                Duration.ofNanos(System.nanoTime() - start), history.statusMix(), result);
        assertThat(result.violations()).isEmpty();
        assertThat(result.executed()).isEqualTo(ops.size());
    }

    private static RawHttp.Response payout(WildFlyNode node, String key, String body, String... headers) {
        RawHttp.Request request = new RawHttp.Request().header("Content-Type", "application/json")
                .header("Idempotency-Key", key)
                .header("Authorization", "Basic " + java.util.Base64.getEncoder().encodeToString(
                        "alice:alice".getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .body(body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        for (int i = 0; i + 1 < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return RawHttp.post(node.base().getPort(), "/demo/api/payouts", request);
    }

    private static String text(RawHttp.Response response) {
        return new String(response.body(), java.nio.charset.StandardCharsets.UTF_8);
    }

    /** What a run under load left: its history (checked) and when it started. */
    private record UnderLoad(History history, long start) {
    }

    /**
     * Two rolling reloads of A and B, each node by node, under a steady load of 8 clients on the nodes in service:
     * a third of the operations is first sent before the first, a third between them, a third after the second
     * (after {@code afterStepTwo}); then every operation once more on each node, so that each is retried across
     * nodes of both configurations.
     */
    private UnderLoad twoRollingReloadsUnderLoad(List<Operations.Operation> ops, Map<String, String> stepOne,
            Map<String, String> stepTwo, Runnable afterStepTwo) throws Exception {
        History history = new History();
        LoadClient client = new LoadClient(history, Duration.ofSeconds(30));
        int third = ops.size() / 3;
        List<Operations.Operation> sent = new java.util.concurrent.CopyOnWriteArrayList<>(ops.subList(0, third));
        java.util.Set<URI> up = java.util.concurrent.ConcurrentHashMap.newKeySet();
        up.add(a.base());
        up.add(b.base());
        java.util.concurrent.atomic.AtomicBoolean running = new java.util.concurrent.atomic.AtomicBoolean(true);
        long start = System.nanoTime();
        Thread load = client.steady(up, sent, 8, 40, running);
        try {
            for (WildFlyNode node : List.of(a, b)) {
                rollingReload(client, up, node, stepOne);
            }
            sent.addAll(ops.subList(third, 2 * third));
            for (WildFlyNode node : List.of(a, b)) {
                rollingReload(client, up, node, stepTwo);
            }
            afterStepTwo.run();
            sent.addAll(ops.subList(2 * third, ops.size()));
            // The last third under load too, not only in the final sends below: each client's sends on both nodes.
            client.awaitAnswered(a.base(), client.answered(a.base()), 8);
            client.awaitAnswered(b.base(), client.answered(b.base()), 8);
        } finally {
            running.set(false);
            load.join();
        }
        for (Operations.Operation op : ops) {
            client.settle(a.base(), op);
            client.settle(b.base(), op);
        }
        return new UnderLoad(history, start);
    }

    /** Takes the node out of service, lets its requests finish, reloads it with the properties, puts it back. */
    private static void rollingReload(LoadClient client, java.util.Set<URI> up, WildFlyNode node,
                                       Map<String, String> properties) throws Exception {
        up.remove(node.base());
        // Out of service: the node's requests finish before it stops; back in service, it takes load again.
        client.awaitNoneInFlight(node.base());
        node.reloadWith(properties);
        int before = client.answered(node.base());
        up.add(node.base());
        client.awaitAnswered(node.base(), before, 8);
    }

    private static String randomBase64(int bytes) {
        byte[] key = new byte[bytes];
        new java.security.SecureRandom().nextBytes(key);
        return java.util.Base64.getEncoder().encodeToString(key);
    }

    /**
     * Sends every operation to node A and parks each there between its claim's commit and its business transaction
     * (a Byteman rule), until all are claimed: the state a crash of A then leaves behind.
     */
    private List<CompletableFuture<LoadClient.Answer>> parkAfterTheirClaimsOnA(LoadClient client,
            List<Operations.Operation> ops) throws Exception {
        a.inject("after-claim", """
                RULE park a payment between its claim's commit and its business transaction
                CLASS dev.idempotency.cdi.IdempotentInterceptor
                METHOD execute
                AT ENTRY
                IF $3.operation().policy().endpoint().equals("payments.create")
                DO waitFor("idempotency-fault-test", 120000)
                ENDRULE
                """);
        List<CompletableFuture<LoadClient.Answer>> inFlight = client.sendAll(a.base(), ops);
        awaitRecords(ops, "PROCESSING");
        for (Operations.Operation op : ops) {
            assertThat(payments(op)).as("parked before the business transaction").isZero();
        }
        return inFlight;
    }

    private static void assertUnanswered(List<CompletableFuture<LoadClient.Answer>> inFlight) throws Exception {
        for (CompletableFuture<LoadClient.Answer> f : inFlight) {
            assertThat(f.get(30, TimeUnit.SECONDS).status()).as("nothing was answered by the crashed node").isZero();
        }
    }

    /** Waits until every operation's record is in that state (the requests reached the point under test). */
    private static void awaitRecords(List<Operations.Operation> ops, String status) throws Exception {
        for (Operations.Operation op : ops) {
            Checker.await(op.key() + " reached " + status,
                    "SELECT COUNT(*) FROM idempotency_record WHERE scope_key = ? AND status = ?", op.scopeKey(), status);
        }
    }

    private static int payments(Operations.Operation op) throws Exception {
        return Checker.number("SELECT COUNT(*) FROM demo_payment WHERE merchant_order_no = ?", op.order());
    }

    private static String run() {
        return UUID.randomUUID().toString().substring(0, 8);
    }
}
