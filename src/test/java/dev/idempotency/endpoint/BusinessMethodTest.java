package dev.idempotency.endpoint;

import dev.idempotency.IdempotencyException;
import dev.idempotency.ProblemType;
import dev.idempotency.Scope;
import dev.idempotency.core.ScopeDigest;
import dev.idempotency.testing.Databases;
import dev.idempotency.testing.Narayana;
import dev.idempotency.testing.TestDatabase;
import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.inject.Produces;
import jakarta.persistence.EntityManagerFactory;
import jakarta.transaction.TransactionManager;
import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code @Idempotent} on a CDI business method keyed by its {@code @IdempotencyKey} parameter, called from Java:
 * the first call's result (or final failure) comes back to every call with the key, and its record commits with
 * the work of the transaction the method ran in.
 */
@EnableWeld
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BusinessMethodTest {
    private static final ScopeDigest SCOPE_DIGEST = new ScopeDigest(
            EndpointFixture.SECRET.getBytes(StandardCharsets.UTF_8), List.of());
    /** The name the container's Principal bean gives the caller; null for none. */
    static volatile String callerName;

    @WeldSetup
    WeldInitiator weld = WeldInitiator.from(callingWeld()).build();

    private EntityManagerFactory emf;
    private final TestDatabase h2 = Databases.named("h2");

    private static org.jboss.weld.environment.se.Weld callingWeld() {
        System.setProperty("idempotency.endpoints.ledger.mine.call.principal", "caller");
        System.setProperty("idempotency.endpoints.ledger.mine.call.tenant", "constant:acme");
        System.setProperty("idempotency.endpoints.ledger.reserve.in-flight", "accepted");
        return EndpointFixture.weld().addBeanClasses(Ledger.class, Callers.class);
    }

    /** The container's authenticated caller, as a server's built-in Principal bean gives it. */
    @Dependent
    public static class Callers {
        @Produces
        Principal caller() {
            return () -> callerName;
        }
    }

    @BeforeAll
    void start() {
        emf = EndpointFixture.hibernate();
        weld.select(Payments.class).get().use(emf);
    }

    @AfterAll
    void stop() {
        emf.close();
    }

    @BeforeEach
    void clean() {
        EndpointFixture.emptyTables(h2);
        Ledger.duringExecution = transferId -> { };
        Ledger.executions.set(0);
        callerName = null;
    }

    @AfterEach
    void noTransactionLeft() throws Exception {
        assertThat(Narayana.transactionManager().getTransaction()).as("none left on the thread").isNull();
    }

    @Test
    void aSecondCallWithTheKeyReturnsTheFirstResultWithoutRunningAgain() {
        String key = newKey();
        Ledger.Receipt first = ledger().post(key, "order-" + key, new BigDecimal("10.50"));
        Ledger.Receipt again = ledger().post(key, "order-" + key, new BigDecimal("10.50"));

        assertThat(again).as("read back as the method's return type").isEqualTo(first);
        assertThat(Ledger.executions).hasValue(1);
        assertThat(payments(key)).isEqualTo(1);
        assertThat(record("$calls", "", "ledger.post", key)).containsEntry("status", "SUCCEEDED")
                .containsEntry("attempts", 1);
    }

    @Test
    void theKeyWithOtherArgumentsIsAMisuseAndRunsNothing() {
        String key = newKey();
        ledger().post(key, "order-" + key, new BigDecimal("10.00"));

        assertThatThrownBy(() -> ledger().post(key, "order-" + key, new BigDecimal("99.00")))
                .isInstanceOfSatisfying(IdempotencyException.class, e -> assertThat(e.problem().type())
                        .isEqualTo(ProblemType.FINGERPRINT_MISMATCH));
        assertThat(Ledger.executions).hasValue(1);
        assertThat(payments(key)).isEqualTo(1);
    }

    @Test
    void aFinalFailureIsThrownOnceAndEveryLaterCallWithTheKeyIsToldWithoutRunning() {
        String key = newKey();
        Ledger.duringExecution = transferId -> {
            throw new Ledger.TransferRefused("account closed");
        };
        assertThatThrownBy(() -> ledger().post(key, "order-" + key, BigDecimal.ONE))
                .isInstanceOf(Ledger.TransferRefused.class);
        Ledger.duringExecution = transferId -> { };

        assertThatThrownBy(() -> ledger().post(key, "order-" + key, BigDecimal.ONE))
                .isInstanceOfSatisfying(IdempotencyException.class, e -> {
                    assertThat(e.problem().type()).isEqualTo(ProblemType.OPERATION_FAILED);
                    assertThat(e.problem().detail()).contains(Ledger.TransferRefused.class.getName())
                            .doesNotContain("account closed");
                });
        assertThat(Ledger.executions).hasValue(1);
        assertThat(payments(key)).isZero();
        assertThat(record("$calls", "", "ledger.post", key)).containsEntry("status", "FAILED_FINAL");
    }

    @Test
    void aRetryableFailureGivesTheKeyBackAndTheNextCallRuns() {
        String key = newKey();
        Ledger.duringExecution = transferId -> {
            throw new IllegalStateException("the ledger's database timed out");
        };
        assertThatThrownBy(() -> ledger().post(key, "order-" + key, BigDecimal.TEN))
                .isInstanceOf(IllegalStateException.class);
        assertThat(record("$calls", "", "ledger.post", key)).containsEntry("status", "FAILED_RETRYABLE");
        Ledger.duringExecution = transferId -> { };

        ledger().post(key, "order-" + key, BigDecimal.TEN);

        assertThat(Ledger.executions).hasValue(2);
        assertThat(payments(key)).isEqualTo(1);
        assertThat(record("$calls", "", "ledger.post", key)).containsEntry("status", "SUCCEEDED")
                .containsEntry("attempts", 2);
    }

    @Test
    void inTheCallersTransactionTheRecordCommitsWithItsWorkAndARollbackGivesTheKeyBack() throws Exception {
        TransactionManager tm = Narayana.transactionManager();
        String key = newKey();
        tm.begin();
        try {
            ledger().post(key, "order-" + key, BigDecimal.ONE);
            jakarta.transaction.Transaction callers = tm.suspend();
            try {
                assertThat(record("$calls", "", "ledger.post", key)).as("seen from outside, only the claim is"
                        + " committed yet").containsEntry("status", "PROCESSING");
            } finally {
                tm.resume(callers);
            }
        } finally {
            tm.rollback();
        }
        assertThat(payments(key)).isZero();
        assertThat(record("$calls", "", "ledger.post", key)).as("given back at the rollback")
                .containsEntry("status", "FAILED_RETRYABLE");

        tm.begin();
        Ledger.Receipt receipt = ledger().post(key, "order-" + key, BigDecimal.ONE);
        tm.commit();

        assertThat(Ledger.executions).hasValue(2);
        assertThat(payments(key)).isEqualTo(1);
        assertThat(record("$calls", "", "ledger.post", key)).containsEntry("status", "SUCCEEDED");
        assertThat(ledger().post(key, "order-" + key, BigDecimal.ONE)).isEqualTo(receipt);
    }

    @Test
    void aFailureInTheCallersTransactionDoomsItSoThatNothingOfTheFailedCallCommits() throws Exception {
        TransactionManager tm = Narayana.transactionManager();
        String key = newKey();
        Ledger.duringExecution = transferId -> {
            throw new IllegalStateException("after the payment's row, before the rest");
        };
        tm.begin();
        try {
            assertThatThrownBy(() -> ledger().post(key, "order-" + key, BigDecimal.ONE))
                    .isInstanceOf(IllegalStateException.class);
            assertThat(tm.getStatus()).isEqualTo(jakarta.transaction.Status.STATUS_MARKED_ROLLBACK);
        } finally {
            tm.rollback();
        }
    }

    @Test
    void aCallWhileTheKeysFirstCallRunsIsToldItIsInFlight() throws Exception {
        String key = newKey();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Ledger.duringExecution = transferId -> {
            running.countDown();
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        CompletableFuture<Ledger.Receipt> first = CompletableFuture.supplyAsync(
                () -> ledger().post(key, "order-" + key, BigDecimal.ONE));
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
        try {
            assertThatThrownBy(() -> ledger().post(key, "order-" + key, BigDecimal.ONE))
                    .isInstanceOfSatisfying(IdempotencyException.class, e -> {
                        assertThat(e.problem().type()).isEqualTo(ProblemType.REQUEST_IN_FLIGHT);
                        assertThat(e.problem().retryAfterSeconds()).isPresent();
                    });
        } finally {
            release.countDown();
        }
        Ledger.Receipt receipt = first.get(10, TimeUnit.SECONDS);
        assertThat(ledger().post(key, "order-" + key, BigDecimal.ONE)).isEqualTo(receipt);
        assertThat(Ledger.executions).hasValue(1);
    }

    @Test
    void aCallWhileTheFirstRunsIsToldItIsInFlightEvenWhereTheEndpointWouldAcceptIt() throws Exception {
        String key = newKey();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Ledger.duringExecution = reservation -> {
            running.countDown();
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> ledger().reserve(key));
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
        try {
            assertThatThrownBy(() -> ledger().reserve(key))
                    .isInstanceOfSatisfying(IdempotencyException.class, e -> {
                        assertThat(e.problem().type()).isEqualTo(ProblemType.REQUEST_IN_FLIGHT);
                        assertThat(e.problem().retryAfterSeconds()).isPresent();
                    });
        } finally {
            release.countDown();
        }
        assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("reserved " + key);
        assertThat(ledger().reserve(key)).isEqualTo("reserved " + key);
        assertThat(Ledger.executions).hasValue(1);
    }

    @Test
    void aResultThatCannotBeKeptIsRefusedAndTheKeyGivenBack() {
        String key = newKey();
        assertThatThrownBy(() -> ledger().unwritable(key))
                .isInstanceOfSatisfying(IdempotencyException.class, e -> assertThat(e.problem().type())
                        .isEqualTo(ProblemType.NOT_CONFIGURED));
        assertThat(record("$calls", "", "ledger.unwritable", key)).containsEntry("status", "FAILED_RETRYABLE");
    }

    @Test
    void aPrimitiveResultAndANumericKeyAndAMissingKey() {
        long batch = System.nanoTime();
        assertThat(ledger().count(batch, List.of("a", "b", "c"))).isEqualTo(3);
        assertThat(ledger().count(batch, List.of("a", "b", "c"))).isEqualTo(3);
        assertThat(Ledger.executions).hasValue(1);
        assertThat(record("$calls", "", "ledger.count", Long.toString(batch))).containsEntry("status", "SUCCEEDED");

        assertThatThrownBy(() -> ledger().post(null, "order-x", BigDecimal.ONE))
                .isInstanceOfSatisfying(IdempotencyException.class, e -> assertThat(e.problem().type())
                        .isEqualTo(ProblemType.KEY_MISSING));
        assertThatThrownBy(() -> ledger().post("not a key\n", "order-x", BigDecimal.ONE))
                .isInstanceOfSatisfying(IdempotencyException.class, e -> assertThat(e.problem().type())
                        .isEqualTo(ProblemType.KEY_INVALID));
        assertThat(Ledger.executions).hasValue(1);
    }

    @Test
    void scopedToTheAuthenticatedCallerOneCallersKeyIsNotAnothersAndACallWithoutOneIsRefused() {
        UUID request = UUID.randomUUID();
        callerName = "alice";
        String alices = ledger().mine(request);
        callerName = "bob";
        String bobs = ledger().mine(request);
        callerName = "alice";
        assertThat(ledger().mine(request)).isEqualTo(alices);

        assertThat(bobs).isNotEqualTo(alices);
        assertThat(Ledger.executions).hasValue(2);
        assertThat(record("alice", "acme", "ledger.mine", request.toString())).containsEntry("status", "SUCCEEDED");
        assertThat(record("bob", "acme", "ledger.mine", request.toString())).containsEntry("status", "SUCCEEDED");

        callerName = null;
        assertThatThrownBy(() -> ledger().mine(request))
                .isInstanceOfSatisfying(IdempotencyException.class, e -> assertThat(e.problem().type())
                        .isEqualTo(ProblemType.PRINCIPAL_REQUIRED));
    }

    private Ledger ledger() {
        return weld.select(Ledger.class).get();
    }

    private long payments(String key) {
        return h2.count("SELECT COUNT(*) FROM test_payment WHERE merchant_order_no = ?", "order-" + key);
    }

    private Map<String, Object> record(String principal, String tenant, String endpoint, String key) {
        String scopeKey = SCOPE_DIGEST.of(new Scope(tenant, principal, endpoint, key));
        List<Map<String, Object>> rows = h2.query("SELECT status, attempts FROM " + TestStore.TABLE
                + " WHERE scope_key = ?", scopeKey);
        assertThat(rows).hasSize(1);
        return rows.get(0);
    }

    private static String newKey() {
        return UUID.randomUUID().toString();
    }
}
