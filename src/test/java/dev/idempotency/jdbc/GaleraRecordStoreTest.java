package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyDefinitionException;
import dev.idempotency.IdempotencyException;
import dev.idempotency.ProblemType;
import dev.idempotency.RecordStatus;
import dev.idempotency.core.Admission;
import dev.idempotency.core.Claim;
import dev.idempotency.core.IdempotencyProtocol;
import dev.idempotency.core.Operation;
import dev.idempotency.jta.JtaTransactions;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.StoredResponse;
import dev.idempotency.testing.Databases;
import dev.idempotency.testing.MutableClock;
import dev.idempotency.testing.OwnGalera;
import dev.idempotency.testing.PolicyBuilder;
import dev.idempotency.testing.StoreFixture;
import dev.idempotency.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The store on a MariaDB Galera Cluster of the run's own (three nodes): the whole store contract on one node, and
 * what only several primaries do — two nodes claiming one key at once, a finish whose commit loses certification to
 * another node's takeover, a node without quorum.
 */
class GaleraRecordStoreTest extends RecordStoreContract {
    private static final StoredResponse CREATED = new StoredResponse(201, Map.of(),
            "{\"id\":\"p-1\"}".getBytes(StandardCharsets.UTF_8), StoredResponse.PLAIN);

    @Override
    String database() {
        return "galera";
    }

    // The table of the contract's fixture, seen from node 2 (created on node 1 and replicated).
    private StoreFixture onNode2() {
        return StoreFixture.existing(Databases.named("galera-node2"), db.table);
    }

    @Test
    void aGaleraNodeThatReadsWithoutWaitingForTheClusterIsRefusedAtStart() {
        TestDatabase plain = TestDatabase.mariadb(OwnGalera.shared().node(1).url(""));
        try {
            assertThatThrownBy(() -> JdbcRecordStore.forDataSource(plain.dataSource(), db.table))
                    .isInstanceOf(IdempotencyDefinitionException.class)
                    .hasMessageContaining("IDEM-D021").hasMessageContaining("sessionVariables=wsrep_sync_wait=1");
        } finally {
            plain.close();
        }
        assertThat(db.store.galera()).isTrue();
        assertThat(db.store.uncommittedClaimsBlock()).as("claims in the business transaction are refused").isFalse();
        assertThat(((JdbcRecordStore) StoreFixture.existing(Databases.named("mariadb"), "idem_plain_check").store)
                .uncommittedClaimsBlock()).as("a single MariaDB server").isTrue();
    }

    @Test
    void claimsOfOneKeyOnTwoNodesAtOnceLetExactlyOneExecuteAndTheOtherNodeReplaysItAtOnce() throws Exception {
        IdempotencyProtocol first = db.protocol();
        StoreFixture node2 = onNode2();
        IdempotencyProtocol second = node2.protocol();
        int keys = 60;
        ExecutorService pool = Executors.newFixedThreadPool(2);
        int executed = 0;
        List<String> otherAnswers = new ArrayList<>();
        try {
            for (int k = 0; k < keys; k++) {
                Operation op = StoreFixture.operation("race-" + k);
                CyclicBarrier together = new CyclicBarrier(2);
                Future<Object> a = pool.submit(() -> admitAndFinish(first, db, op, together));
                Future<Object> b = pool.submit(() -> admitAndFinish(second, node2, op, together));
                for (Object answer : List.of(a.get(60, TimeUnit.SECONDS), b.get(60, TimeUnit.SECONDS))) {
                    if ("executed".equals(answer)) {
                        executed++;
                    } else {
                        otherAnswers.add(String.valueOf(answer));
                    }
                }
                // A retry on the other node right after the first answer: a causal read finds the outcome.
                for (IdempotencyProtocol node : List.of(first, second)) {
                    Admission retry = node.admission().admit(op);
                    assertThat(retry).as("key %d", k).isInstanceOf(Admission.Replay.class);
                    assertThat(((Admission.Replay) retry).record().status()).isEqualTo(RecordStatus.SUCCEEDED);
                }
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(executed).as("executions of %d keys claimed on two nodes at once", keys).isEqualTo(keys);
        assertThat(otherAnswers).as("the other claim of each key: a replay, the in-flight 409, or a 503 to retry")
                .allMatch(a -> a.equals("replay") || a.equals("409") || a.equals("503"));
    }

    // The request's whole path on one node: admission, and for a claim the finish in a business transaction.
    private static Object admitAndFinish(IdempotencyProtocol protocol, StoreFixture node, Operation op,
                                         CyclicBarrier together) throws Exception {
        together.await(30, TimeUnit.SECONDS);
        try {
            Admission admission = protocol.admission().admit(op);
            if (admission instanceof Admission.Replay) {
                return "replay";
            }
            Claim claim = ((Admission.Execute) admission).claim();
            boolean finished = node.transactions.requiresNew(() -> protocol.completion().finish(claim, RecordStatus.SUCCEEDED,
                    Optional.of(CREATED), Optional.of("p-1")));
            return finished ? "executed" : "fenced";
        } catch (IdempotencyException e) {
            return String.valueOf(e.problem().status());
        }
    }

    @Test
    void aFinishWhoseCommitLosesToAnotherNodesTakeoverCommitsNothingAndAnswersTheTakeovers() throws Exception {
        MutableClock clock = new MutableClock();
        IdempotencyProtocol first = new IdempotencyProtocol(db.store, db.transactions, clock, new SecureRandom(),
                e -> { }, 4);
        StoreFixture node2 = onNode2();
        IdempotencyProtocol second = new IdempotencyProtocol(node2.store, node2.transactions, clock,
                new SecureRandom(), e -> { }, 4);
        Operation op = StoreFixture.operation("fenced-at-commit",
                PolicyBuilder.defaults().with(p -> p.lease = Duration.ofSeconds(5)).build());
        Claim claim = ((Admission.Execute) first.admission().admit(op)).claim();

        // Node 1's business transaction: the fenced finish reports its row; before it commits, node 2 takes the
        // operation over (its lease ran out) and commits first.
        CountDownLatch finishedOnNode1 = new CountDownLatch(1);
        CountDownLatch takenOverOnNode2 = new CountDownLatch(1);
        ExecutorService business = Executors.newSingleThreadExecutor();
        Future<JtaTransactions.TransactionFailure> commit = business.submit(
                () -> finishThenCommit(first, claim, finishedOnNode1, takenOverOnNode2));
        try {
            assertThat(finishedOnNode1.await(30, TimeUnit.SECONDS)).isTrue();
            clock.advance(Duration.ofSeconds(6));
            Admission takeover = second.admission().admit(op);
            assertThat(takeover).isInstanceOf(Admission.Execute.class);
            Claim winner = ((Admission.Execute) takeover).claim();
            takenOverOnNode2.countDown();
            JtaTransactions.TransactionFailure refused = commit.get(60, TimeUnit.SECONDS);
            assertThat(refused).as("node 1's commit is refused").isNotNull();
            assertThat(refused.rolledBack()).isTrue();
            assertThat(refused.conflict()).as("a conflict, not the application's failure: " + chain(refused)).isTrue();

            assertThatThrownBy(() -> first.recovery().afterRefusedCommit(claim))
                    .as("the winner is still running: 409, not a 500 and not this attempt's response")
                    .isInstanceOfSatisfying(IdempotencyException.class,
                            e -> assertThat(e.problem().type()).isEqualTo(ProblemType.SUPERSEDED));
            IdempotencyRecord now = node2.store.find(op.scopeKey()).orElseThrow();
            assertThat(now.ownerToken()).as("node 2's takeover holds the record").isEqualTo(winner.ownerToken());
            assertThat(now.status()).isEqualTo(RecordStatus.PROCESSING);

            StoredResponse winners = new StoredResponse(201, Map.of(), "{\"id\":\"p-2\"}".getBytes(StandardCharsets.UTF_8),
                    StoredResponse.PLAIN);
            assertThat(node2.transactions.requiresNew(() -> second.completion().finish(winner, RecordStatus.SUCCEEDED,
                    Optional.of(winners), Optional.of("p-2")))).isTrue();
            Admission answer = first.recovery().afterRefusedCommit(claim);
            assertThat(((Admission.Replay) answer).record().response().orElseThrow().body())
                    .as("node 1 answers with the takeover's outcome").isEqualTo(winners.body());
        } finally {
            business.shutdownNow();
        }
    }

    @Test
    void aCommitRefusedWhileTheClaimIsStillOursIsA503AndTheClaimGoesBack() throws Exception {
        IdempotencyProtocol first = db.protocol();
        StoreFixture node2 = onNode2();
        Operation op = StoreFixture.operation("refused-still-ours");
        Claim claim = ((Admission.Execute) first.admission().admit(op)).claim();
        CountDownLatch finishedOnNode1 = new CountDownLatch(1);
        CountDownLatch changedOnNode2 = new CountDownLatch(1);
        ExecutorService business = Executors.newSingleThreadExecutor();
        Future<JtaTransactions.TransactionFailure> commit = business.submit(
                () -> finishThenCommit(first, claim, finishedOnNode1, changedOnNode2));
        try {
            assertThat(finishedOnNode1.await(30, TimeUnit.SECONDS)).isTrue();
            // The claim's own lease renewed through another node (a pool on a multi-host URL): the same row, written
            // by a transaction that certifies first.
            // Node 2 has applied the claim first: its sessions wait for the cluster on reads (wsrep_sync_wait=1), not
            // on updates, and a renewal before node 2 applied the claim's row would find no row to renew.
            assertThat(node2.store.find(op.scopeKey())).isPresent();
            java.time.Instant now = java.time.Instant.now();
            assertThat(node2.transactions.requiresNew(() -> node2.store.renewLease(op.scopeKey(), claim.ownerToken(),
                    now, now.plusSeconds(60), now.plus(Duration.ofDays(2))))).isTrue();
            changedOnNode2.countDown();
            JtaTransactions.TransactionFailure refused = commit.get(60, TimeUnit.SECONDS);
            assertThat(refused).isNotNull();
            assertThat(refused.conflict()).as(chain(refused)).isTrue();
            assertThatThrownBy(() -> first.recovery().afterRefusedCommit(claim))
                    .isInstanceOfSatisfying(IdempotencyException.class, e -> {
                        assertThat(e.problem().status()).isEqualTo(503);
                        assertThat(e.problem().retryAfter()).isPresent();
                    });
            assertThat(node2.store.find(op.scopeKey()).orElseThrow().status())
                    .as("given back: the retry runs at once").isEqualTo(RecordStatus.FAILED_RETRYABLE);
            assertThat(first.admission().admit(op)).isInstanceOf(Admission.Execute.class);
        } finally {
            business.shutdownNow();
        }
    }

    // Node 1's business transaction: the fenced finish (which must report its row: node 1 has seen nothing of node 2's
    // change yet), then the commit once node 2 has committed its change. What the commit threw; null when it committed.
    private JtaTransactions.TransactionFailure finishThenCommit(IdempotencyProtocol node1, Claim claim,
                                                                CountDownLatch finished, CountDownLatch changedOnNode2)
            throws InterruptedException {
        JtaTransactions.BusinessTransaction tx = db.transactions.joinOrBegin();
        assertThat(node1.completion().finish(claim, RecordStatus.SUCCEEDED, Optional.of(CREATED), Optional.of("p-1"))).isTrue();
        finished.countDown();
        changedOnNode2.await(30, TimeUnit.SECONDS);
        try {
            tx.commit();
            return null;
        } catch (JtaTransactions.TransactionFailure refused) {
            return refused;
        }
    }

    private static String chain(Throwable t) {
        StringBuilder out = new StringBuilder();
        for (Throwable c = t; c != null && out.length() < 4000; c = c.getCause() == c ? null : c.getCause()) {
            out.append(" <- ").append(c);
        }
        return out.toString();
    }

    @Test
    void aNodeWithoutQuorumAnswersUnavailableAndCatchesUpWhenItRejoins() throws Exception {
        OwnGalera.Node third = OwnGalera.shared().node(3);
        TestDatabase node3 = TestDatabase.mariadb(third.url(Databases.GALERA_SESSION));
        try {
            StoreFixture onNode3 = StoreFixture.existing(node3, db.table);
            IdempotencyProtocol isolated = onNode3.protocol();
            IdempotencyProtocol majority = db.protocol();
            third.isolate();
            try {
                assertThat(third.status("wsrep_cluster_status")).isEqualTo("non-Primary");
                assertThatThrownBy(() -> isolated.admission().admit(StoreFixture.operation("cut-off")))
                        .as("1047 WSREP has not yet prepared node: 503 with Retry-After")
                        .isInstanceOfSatisfying(IdempotencyException.class, e -> {
                            assertThat(e.problem().status()).isEqualTo(503);
                            assertThat(e.problem().retryAfter()).isPresent();
                        });
                Claim onMajority = ((Admission.Execute) majority.admission().admit(StoreFixture.operation("cut-off"))).claim();
                assertThat(db.transactions.requiresNew(() -> majority.completion().finish(onMajority, RecordStatus.SUCCEEDED,
                        Optional.of(CREATED), Optional.of("p-1")))).isTrue();
            } finally {
                third.rejoin();
            }
            assertThat(third.status("wsrep_local_state_comment")).isEqualTo("Synced");
            Admission afterRejoin = isolated.admission().admit(StoreFixture.operation("cut-off"));
            assertThat(afterRejoin).as("what the majority committed meanwhile").isInstanceOf(Admission.Replay.class);
        } finally {
            node3.close();
        }
    }
}
