package dev.idempotency.jta;

import dev.idempotency.core.CommitOutcomeUnknownException;
import dev.idempotency.spi.StoreUnavailableException;
import dev.idempotency.testing.CommitFailingResource;
import dev.idempotency.testing.Narayana;
import jakarta.transaction.TransactionManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** How commit failures of Narayana transactions reach the protocol, and how a joined transaction's end is told. */
class JtaTransactionsTest {
    private final TransactionManager tm = Narayana.transactionManager();
    private final JtaTransactions transactions = new JtaTransactions(tm);

    @AfterEach
    void noTransactionLeftOnTheThread() throws Exception {
        if (tm.getTransaction() != null) {
            tm.rollback();
        }
    }

    // GlassFish and Payara enlist a connection only in a transaction the current invocation was told of
    // (payara/Payara#505): every transaction the library begins tells it, as their own @Transactional does.
    @Test
    void onAGlassFishLikeServerEveryTransactionTheLibraryBeginsIsAnnouncedAndClosedAsItsOwnInterceptorsDo() {
        GlassFishLikeTransactionManager glassFish = new GlassFishLikeTransactionManager(tm);
        JtaTransactions onGlassFish = new JtaTransactions(glassFish);
        JtaTransactions.BusinessTransaction owned = onGlassFish.joinOrBegin();
        onGlassFish.requiresNew(() -> null);
        owned.commit();
        JtaTransactions.BusinessTransaction abandoned = onGlassFish.joinOrBegin();
        abandoned.abandon();
        assertThat(glassFish.calls).containsExactly(
                "begin", "preInvokeTx(true)",
                "begin", "preInvokeTx(true)", "postInvokeTx(false, true)", "commit",
                "postInvokeTx(false, true)", "commit",
                "begin", "preInvokeTx(true)", "postInvokeTx(false, true)", "rollback");
        // Narayana has neither method: nothing is called, nothing fails.
        transactions.joinOrBegin().commit();
    }

    @Test
    void aProtocolTransactionThatRollsBackAtCommitIsContention() {
        assertThatThrownBy(() -> transactions.requiresNew(() -> {
            setRollbackOnly();
            return null;
        })).isInstanceOfSatisfying(StoreUnavailableException.class, e -> {
            assertThat(e.isContention()).isTrue();
            assertThat(e).isNotInstanceOf(CommitOutcomeUnknownException.class);
        });
    }

    @Test
    void aProtocolTransactionWhoseCommitOutcomeIsUnknownSaysSo() {
        // Its only resource fails the one-phase commit as a dropped connection would: a heuristic hazard.
        assertThatThrownBy(() -> transactions.requiresNew(() -> {
            enlist(new CommitFailingResource());
            return null;
        })).isInstanceOf(CommitOutcomeUnknownException.class).hasMessageContaining("IDEM-S010");
    }

    @Test
    void aJoinedTransactionTellsCommittedOrRolledBack() throws Exception {
        assertThat(endOfJoined(Ending.COMMIT)).isTrue();
        assertThat(endOfJoined(Ending.ROLLBACK)).isFalse();
        // Narayana reports a one-phase heuristic hazard to synchronizations as committed although nobody knows:
        // why the response filter re-checks a "committed" transaction whose answer turned into an error.
        assertThat(endOfJoined(Ending.HAZARD)).isTrue();
    }

    @Test
    void anActionAfterCommitRunsOnlyWhenTheTransactionCommits() throws Exception {
        java.util.List<String> ran = new java.util.concurrent.CopyOnWriteArrayList<>();
        tm.begin();
        transactions.afterCommit(() -> ran.add("committed"));
        assertThat(ran).as("not before the commit").isEmpty();
        tm.commit();
        tm.begin();
        transactions.afterCommit(() -> ran.add("rolled back"));
        tm.rollback();
        tm.begin();
        setRollbackOnly();
        transactions.afterCommit(() -> ran.add("rollback-only"));
        tm.rollback();
        transactions.afterCommit(() -> ran.add("no transaction"));
        assertThat(ran).containsExactly("committed", "no transaction");
    }

    private enum Ending { COMMIT, ROLLBACK, HAZARD }

    private Boolean endOfJoined(Ending ending) throws Exception {
        AtomicReference<Boolean> told = new AtomicReference<>(Boolean.FALSE);
        AtomicReference<Boolean> called = new AtomicReference<>(Boolean.FALSE);
        tm.begin();
        JtaTransactions.BusinessTransaction joined = transactions.joinOrBegin();
        assertThat(joined.owned()).isFalse();
        joined.afterCompletion(outcome -> {
            told.set(outcome);
            called.set(Boolean.TRUE);
        });
        switch (ending) {
            case COMMIT -> tm.commit();
            case ROLLBACK -> tm.rollback();
            case HAZARD -> {
                CommitFailingResource hazardous = new CommitFailingResource();
                enlist(hazardous);
                // What the application's @Transactional sees; proven to have happened, not merely tolerated.
                assertThatThrownBy(tm::commit).isInstanceOf(jakarta.transaction.HeuristicMixedException.class);
                assertThat(hazardous.hazards()).as("the resource answered its commit with the hazard").isEqualTo(1);
            }
        }
        assertThat(called.get()).isTrue();
        return told.get();
    }

    private void setRollbackOnly() {
        try {
            tm.setRollbackOnly();
        } catch (jakarta.transaction.SystemException e) {
            throw new IllegalStateException(e);
        }
    }

    private void enlist(javax.transaction.xa.XAResource resource) {
        try {
            tm.getTransaction().enlistResource(resource);
        } catch (jakarta.transaction.RollbackException | jakarta.transaction.SystemException e) {
            throw new IllegalStateException(e);
        }
    }
}
