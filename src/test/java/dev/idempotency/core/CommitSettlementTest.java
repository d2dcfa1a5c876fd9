package dev.idempotency.core;

import dev.idempotency.RecordStatus;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.StoredResponse;
import dev.idempotency.testing.Databases;
import dev.idempotency.testing.MutableClock;
import dev.idempotency.testing.StoreFixture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.sql.SQLException;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * "Did the business transaction commit?" when its end does not say so plainly, answered in one place and always from
 * the record by the fenced update, never from the transaction manager's word alone. The store is H2; the business
 * transaction's commit is scripted, as the ways a real one ends are hard to stage.
 */
class CommitSettlementTest {
    private static final StoredResponse CREATED = new StoredResponse(201, Map.of(),
            "{}".getBytes(StandardCharsets.UTF_8), StoredResponse.PLAIN);

    private StoreFixture db;
    private IdempotencyProtocol protocol;
    private CommitSettlement commits;

    @BeforeEach
    void setUp() {
        db = new StoreFixture(Databases.named("h2"), "idem_commit_settlement_test");
        protocol = new IdempotencyProtocol(db.store, db.transactions, new MutableClock(), new SecureRandom(), e -> { }, 1);
        commits = new CommitSettlement(protocol);
    }

    @Test
    void aPlainCommitIsCommitted() {
        Claim claim = claim("plain");
        assertThat(commits.commitOwned(new ScriptedTransaction(null), claim))
                .isInstanceOf(CommitSettlement.OwnedCommit.Committed.class);
    }

    @Test
    void aCommitRefusedForAConflictIsTheWinnersToAnswer() {
        Claim claim = claim("conflict");
        BusinessCommitFailure refused = failure(true, true, null);
        assertThat(commits.commitOwned(new ScriptedTransaction(refused), claim))
                .isInstanceOf(CommitSettlement.OwnedCommit.RefusedForConflict.class);
    }

    @Test
    void aRollbackAtCommitCausedByTheApplicationCarriesItsException() {
        Claim claim = claim("constraint");
        IllegalStateException constraint = new IllegalStateException("duplicate payment reference");
        BusinessCommitFailure rolledBack = failure(true, false, constraint);
        CommitSettlement.OwnedCommit commit = commits.commitOwned(new ScriptedTransaction(rolledBack), claim);
        assertThat(commit).isInstanceOfSatisfying(CommitSettlement.OwnedCommit.RolledBack.class,
                r -> assertThat(r.applicationCause()).containsSame(constraint));
    }

    @Test
    void anUnknownOutcomeWhereNothingCommittedIsSettledAsNotCommittedAndTheClaimGoesBack() {
        Claim claim = claim("lost-before");
        CommitSettlement.OwnedCommit commit = commits.commitOwned(new ScriptedTransaction(failure(false, false, null)),
                claim);
        assertThat(commit).isInstanceOf(CommitSettlement.OwnedCommit.NotCommitted.class);
        assertThat(record(claim).status()).as("given back: the retry runs at once").isEqualTo(RecordStatus.FAILED_RETRYABLE);
    }

    @Test
    void anUnknownOutcomeWhereTheFinishCommittedIsCommitted() {
        Claim claim = claim("lost-after");
        // The COMMIT went through and only its answer was lost: the record is the finish's, under our token.
        assertThat(db.transactions.requiresNew(() -> protocol.completion().finish(claim, RecordStatus.SUCCEEDED,
                Optional.of(CREATED), Optional.empty()))).isTrue();
        CommitSettlement.OwnedCommit commit = commits.commitOwned(new ScriptedTransaction(failure(false, false, null)),
                claim);
        assertThat(commit).isInstanceOf(CommitSettlement.OwnedCommit.Committed.class);
        assertThat(record(claim).status()).isEqualTo(RecordStatus.SUCCEEDED);
    }

    @Test
    void aJoinedTransactionThatEndedOtherwiseIsSettledBeforeTheAnswerGoesOut() {
        Claim unknown = claim("joined-unknown");
        assertThat(commits.settleJoined(unknown, TransactionEnd.UNKNOWN, 201, 201))
                .as("nothing committed, and the end did not say why: retry").isEqualTo(CommitSettlement.JoinedAnswer.RETRY_LATER);

        Claim marked = claim("joined-marked");
        assertThat(commits.settleJoined(marked, TransactionEnd.ROLLED_BACK, 201, 201))
                .as("rolled back under the method's own success").isEqualTo(CommitSettlement.JoinedAnswer.ROLLED_BACK);

        Claim mapped = claim("joined-mapped");
        assertThat(commits.settleJoined(mapped, TransactionEnd.ROLLED_BACK, 201, 409))
                .as("the application mapped its failure at commit").isEqualTo(CommitSettlement.JoinedAnswer.APPLICATION_ANSWER);

        Claim committed = claim("joined-committed");
        assertThat(db.transactions.requiresNew(() -> protocol.completion().finish(committed, RecordStatus.SUCCEEDED,
                Optional.of(CREATED), Optional.empty()))).isTrue();
        assertThat(commits.settleJoined(committed, TransactionEnd.UNKNOWN, 201, 500))
                .as("the record says it committed").isEqualTo(CommitSettlement.JoinedAnswer.FIRST_RESPONSE);
        assertThat(CommitSettlement.committedPlainly(TransactionEnd.COMMITTED, 201, 201)).isTrue();
        assertThat(CommitSettlement.committedPlainly(TransactionEnd.COMMITTED, 201, 500)).as("a commit that raised")
                .isFalse();
    }

    private Claim claim(String key) {
        Admission admission = protocol.admission().admit(StoreFixture.operation(key));
        return ((Admission.Execute) admission).claim();
    }

    private IdempotencyRecord record(Claim claim) {
        return db.transactions.requiresNew(() -> db.store.find(claim.operation().scopeKey())).orElseThrow();
    }

    // A failure as the JTA adapter reports one: the transaction manager's exception, caused by the application's.
    private static BusinessCommitFailure failure(boolean rolledBack, boolean conflict, RuntimeException application) {
        Exception cause = application == null ? new SQLException("connection reset", "08006")
                : new Exception("RollbackException", application);
        return new BusinessCommitFailure("scripted", cause, rolledBack) {
            @Override
            public boolean conflict() {
                return conflict;
            }
        };
    }

    /** An owned transaction whose commit ends as scripted; nothing else of it is used here. */
    private record ScriptedTransaction(BusinessCommitFailure commitFails) implements BusinessTransaction {
        @Override
        public boolean owned() {
            return true;
        }

        @Override
        public void abandon() {
        }

        @Override
        public void abandonQuietly() {
        }

        @Override
        public boolean active() {
            return true;
        }

        @Override
        public void commit() {
            if (commitFails != null) {
                throw commitFails;
            }
        }

        @Override
        public void afterCompletion(Consumer<Boolean> committed) {
        }
    }

}
