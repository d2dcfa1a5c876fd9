package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.ProblemType;
import dev.idempotency.RecordStatus;
import dev.idempotency.Scope;
import dev.idempotency.json.JacksonCanonicalJson;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.StoredResponse;
import dev.idempotency.testing.Databases;
import dev.idempotency.testing.MutableClock;
import dev.idempotency.testing.PolicyBuilder;
import dev.idempotency.testing.StoreFixture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A rotation of the server's secret, which keys the scope digest (the primary key) and the fingerprint: nodes
 * of one cluster with different configurations over one store (H2, real JTA), as during a rolling rotation.
 */
class SecretRotationTest {
    private static final byte[] OLD = "old-secret-0123456789abcdef-0123456789".getBytes(StandardCharsets.UTF_8);
    private static final byte[] NEW = "new-secret-0123456789abcdef-0123456789".getBytes(StandardCharsets.UTF_8);
    private final MutableClock clock = new MutableClock();
    private final PolicyBuilder policy = PolicyBuilder.defaults();
    private StoreFixture db;

    /** One node: its current secret and the others it accepts (previous ones, or the one being rolled out). */
    private final class Node {
        final Fingerprinter fingerprinter;
        final ScopeDigest digest;
        final IdempotencyProtocol protocol;

        Node(byte[] current, byte[]... accepted) {
            fingerprinter = new Fingerprinter(current, List.of(accepted), new JacksonCanonicalJson());
            digest = new ScopeDigest(current, List.of(accepted));
            protocol = new IdempotencyProtocol(db.store, db.transactions, clock, new SecureRandom(), e -> { }, 1);
        }

        Operation op(String key) {
            RequestFacts facts = new RequestFacts("POST", "/api/payments", "application/json", "", "acme/alice",
                    "{\"amount\":100}".getBytes(StandardCharsets.UTF_8));
            return Operation.of(digest, new Scope("acme", "alice", policy.build().endpoint(), key),
                    fingerprinter.fingerprint(facts, Set.of(), Map.of()), policy.build(), Optional.empty());
        }

        Claim execute(String key) {
            return execute(protocol.admission().admit(op(key)));
        }

        Claim execute(Admission admission) {
            assertThat(admission).isInstanceOf(Admission.Execute.class);
            return ((Admission.Execute) admission).claim();
        }
    }

    @BeforeEach
    void setUp() {
        db = new StoreFixture(Databases.named("h2"), "idem_rotation_test");
    }

    @Test
    void aRecordMadeBeforeTheRotationIsReplayedAfterIt() {
        Node before = new Node(OLD);
        Claim first = before.execute("k1");
        assertThat(before.protocol.completion().finishAlone(first, RecordStatus.SUCCEEDED, Optional.of(created()))).isTrue();

        Node rotated = new Node(NEW, OLD);
        Admission retry = rotated.protocol.admission().admit(rotated.op("k1"));
        assertThat(retry).isInstanceOf(Admission.Replay.class);
        assertThat(((Admission.Replay) retry).record().scopeKey()).isEqualTo(first.operation().scopeKey());

        // What the previous secret is for: without it the same retry is a new operation, run twice.
        Node forgetful = new Node(NEW);
        assertThat(forgetful.protocol.admission().admit(forgetful.op("k1"))).isInstanceOf(Admission.Execute.class);
    }

    @Test
    void anAttemptLeftBeforeTheRotationIsTakenOverWhereItIsWithItsDownstreamKeys() {
        Node before = new Node(OLD);
        Claim first = before.execute("k1");
        assertThat(before.protocol.completion().release(first)).isTrue();

        Node rotated = new Node(NEW, OLD);
        Claim second = rotated.execute("k1");
        assertThat(second.attempt()).isEqualTo(2);
        assertThat(second.operation().scopeKey()).isEqualTo(first.operation().scopeKey());
        assertThat(second.operation().derive("acquirer.charge")).as("the downstream sees the first attempt's key")
                .isEqualTo(first.operation().derive("acquirer.charge"));
        assertThat(rotated.protocol.completion().finishAlone(second, RecordStatus.SUCCEEDED, Optional.of(created()))).isTrue();

        assertThat(find(first.operation().scopeKey()).map(IdempotencyRecord::status)).contains(RecordStatus.SUCCEEDED);
        assertThat(find(rotated.op("k1").scopeKey())).as("no second record under the new key").isEmpty();
    }

    @Test
    void nodesOnBothSidesOfARollingRotationNeverClaimOneOperationTwice() {
        // Step 1 of the rotation: the new secret is known (accepted) but not yet used for new records.
        Node stepOne = new Node(OLD, NEW);
        // Step 2: the new secret is used, the old one accepted.
        Node stepTwo = new Node(NEW, OLD);
        Claim running = stepOne.execute("k1");
        // A step-2 node whose read came before the step-1 claim committed goes on to claim under its own key:
        // two keys, no unique index between them. Its claim finds the other record under the caller's lock.
        IdempotencyException duplicate = catchThrown(() -> stepTwo.protocol.admission().admit(stepTwo.op("k1"), Optional.empty()));
        assertThat(duplicate.problem().type()).isEqualTo(ProblemType.REQUEST_IN_FLIGHT);
        assertThat(find(stepTwo.op("k1").scopeKey())).as("its own claim rolled back").isEmpty();

        // And the other way round.
        Claim runningNew = stepTwo.execute("k2");
        IdempotencyException other = catchThrown(() -> stepOne.protocol.admission().admit(stepOne.op("k2"), Optional.empty()));
        assertThat(other.problem().type()).isEqualTo(ProblemType.REQUEST_IN_FLIGHT);

        // Both finish where their records are; every node then replays them.
        assertThat(stepOne.protocol.completion().finishAlone(running, RecordStatus.SUCCEEDED, Optional.of(created()))).isTrue();
        assertThat(stepTwo.protocol.completion().finishAlone(runningNew, RecordStatus.SUCCEEDED, Optional.of(created()))).isTrue();
        for (Node node : List.of(stepOne, stepTwo, new Node(NEW, OLD))) {
            assertThat(node.protocol.admission().admit(node.op("k1"))).isInstanceOf(Admission.Replay.class);
            assertThat(node.protocol.admission().admit(node.op("k2"))).isInstanceOf(Admission.Replay.class);
        }
    }

    @Test
    void aFingerprintOfTheOtherSideMatchesAndAnotherRequestIsStillAMismatch() {
        Node stepOne = new Node(OLD, NEW);
        Node stepTwo = new Node(NEW, OLD);
        Claim first = stepTwo.execute("k1");
        assertThat(stepTwo.protocol.completion().finishAlone(first, RecordStatus.SUCCEEDED, Optional.of(created()))).isTrue();
        assertThat(stepOne.protocol.admission().admit(stepOne.op("k1"))).isInstanceOf(Admission.Replay.class);

        RequestFacts otherBody = new RequestFacts("POST", "/api/payments", "application/json", "", "acme/alice",
                "{\"amount\":999}".getBytes(StandardCharsets.UTF_8));
        Operation misuse = Operation.of(stepOne.digest, new Scope("acme", "alice", policy.build().endpoint(), "k1"),
                stepOne.fingerprinter.fingerprint(otherBody, Set.of(), Map.of()), policy.build(), Optional.empty());
        assertThatThrownBy(() -> stepOne.protocol.admission().admit(misuse)).isInstanceOfSatisfying(IdempotencyException.class,
                e -> assertThat(e.problem().type()).isEqualTo(ProblemType.FINGERPRINT_MISMATCH));
    }

    @Test
    void anExpiredRecordUnderTheOldKeyIsAsIfAbsent() {
        Node before = new Node(OLD);
        Claim first = before.execute("k1");
        assertThat(before.protocol.completion().finishAlone(first, RecordStatus.SUCCEEDED, Optional.of(created()))).isTrue();
        clock.advance(policy.build().retention().plus(Duration.ofMinutes(1)));
        Node rotated = new Node(NEW, OLD);
        Claim again = rotated.execute("k1");
        assertThat(again.attempt()).isEqualTo(1);
    }

    private Optional<IdempotencyRecord> find(String scopeKey) {
        return db.transactions.requiresNew(() -> db.store.find(scopeKey));
    }

    private static IdempotencyException catchThrown(java.util.function.Supplier<Admission> admit) {
        try {
            throw new AssertionError("expected a rejection, got " + admit.get());
        } catch (IdempotencyException e) {
            return e;
        }
    }

    private static StoredResponse created() {
        return new StoredResponse(201, Map.of("Content-Type", List.of("application/json")),
                "{\"id\":\"p-1\"}".getBytes(StandardCharsets.UTF_8), StoredResponse.PLAIN);
    }
}
