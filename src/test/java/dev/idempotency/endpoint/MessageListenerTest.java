package dev.idempotency.endpoint;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyEvent.MessageHandled.Handling;
import dev.idempotency.IdempotencyMaintenance;
import dev.idempotency.Scope;
import dev.idempotency.core.ScopeDigest;
import dev.idempotency.jms.DerivedKeyMessages;
import dev.idempotency.testing.Databases;
import dev.idempotency.testing.Narayana;
import dev.idempotency.testing.TestDatabase;
import jakarta.enterprise.context.control.RequestContextController;
import jakarta.jms.JMSContext;
import jakarta.jms.Message;
import jakarta.persistence.EntityManagerFactory;
import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An {@code @Idempotent} message listener consuming a real broker's messages (Artemis in the test's JVM), delivered
 * as a container delivers them to a message-driven bean: in a JTA transaction, acknowledged when it commits,
 * redelivered when it rolls back. The real servers' XA transaction is checked by the real-server tests.
 */
@EnableWeld
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MessageListenerTest {
    private static final String COMMANDS = "payment-commands";
    private static final String ENDPOINT = "payments.commands";
    private static final int MAX_DELIVERIES = 4;
    private static final ScopeDigest SCOPE_DIGEST = new ScopeDigest(
            EndpointFixture.SECRET.getBytes(StandardCharsets.UTF_8), List.of());

    @WeldSetup
    WeldInitiator weld = WeldInitiator.from(messagingWeld()).build();

    private EntityManagerFactory emf;
    private Broker broker;
    private EventLog events;
    private final TestDatabase h2 = Databases.named("h2");

    private static org.jboss.weld.environment.se.Weld messagingWeld() {
        System.setProperty("idempotency.endpoints." + ENDPOINT + ".message.max-deliveries", String.valueOf(MAX_DELIVERIES));
        return EndpointFixture.weld().addBeanClasses(PaymentCommands.class);
    }

    @BeforeAll
    void start() throws Exception {
        emf = EndpointFixture.hibernate();
        weld.select(Payments.class).get().use(emf);
        broker = new Broker(MAX_DELIVERIES);
    }

    @AfterAll
    void stop() throws Exception {
        broker.close();
        emf.close();
    }

    @BeforeEach
    void clean() {
        EndpointFixture.emptyTables(h2);
        events = weld.select(EventLog.class).get();
        events.clear();
        PaymentCommands.duringExecution = message -> { };
        PaymentCommands.executions.set(0);
    }

    @AfterEach
    void reset() throws Exception {
        PaymentCommands.duringExecution = message -> { };
        PaymentCommands.shipments = null;
        while (broker.take(Broker.DLQ) != null) {
            // Left for the next test empty.
        }
    }

    @Test
    void aCommandSentTwiceIsExecutedOnceAndItsCopyAcknowledgedWithoutRunning() throws Exception {
        String key = newKey();
        broker.send(COMMANDS, command(key, "10.00"), Map.of("IdempotencyKey", key));
        broker.send(COMMANDS, command(key, "10.00"), Map.of("IdempotencyKey", key));

        int[] deliveries = broker.drain(COMMANDS, listener(), container());

        assertThat(deliveries).as("acknowledged, rolled back").containsExactly(2, 0);
        assertThat(PaymentCommands.executions).hasValue(1);
        assertThat(payments(key)).isEqualTo(1);
        assertThat(record(key)).containsEntry("status", "SUCCEEDED").containsEntry("attempts", 1);
        assertThat(handled()).containsExactly(Handling.EXECUTED, Handling.DUPLICATE);
        IdempotencyMaintenance maintenance = weld.select(IdempotencyMaintenance.class).get();
        assertThat(maintenance.messagesHandled(ENDPOINT, Handling.DUPLICATE)).isPositive();
        assertThat(broker.depth(COMMANDS)).isZero();
    }

    @Test
    void aFinalFailureIsRecordedAndTheRedeliveryOfItsRolledBackDeliveryIsAcknowledgedWithoutRunning() throws Exception {
        String key = newKey();
        PaymentCommands.duringExecution = message -> {
            throw new PaymentCommands.CommandRejected("unknown merchant");
        };
        broker.send(COMMANDS, command(key, "11.00"), Map.of("IdempotencyKey", key));

        int[] deliveries = broker.drain(COMMANDS, listener(), container());

        assertThat(deliveries).as("the failed delivery rolled back, its redelivery acknowledged").containsExactly(1, 1);
        assertThat(PaymentCommands.executions).hasValue(1);
        assertThat(payments(key)).isZero();
        assertThat(record(key)).containsEntry("status", "FAILED_FINAL").containsEntry("response_status", 422);
        assertThat(new String((byte[]) record(key).get("response_body"), StandardCharsets.UTF_8))
                .contains("message-failed").contains(PaymentCommands.CommandRejected.class.getName())
                .doesNotContain("unknown merchant");
        assertThat(handled()).containsExactly(Handling.FAILED_FINAL, Handling.DUPLICATE);
        assertThat(broker.depth(Broker.DLQ)).isZero();
    }

    @Test
    void aRetryableFailureIsRedeliveredAndExecutedOnceInTheEnd() throws Exception {
        String key = newKey();
        AtomicInteger failures = new AtomicInteger(2);
        List<Integer> deliveryCounts = new ArrayList<>();
        PaymentCommands.duringExecution = message -> {
            deliveryCounts.add(deliveryCount(message));
            if (failures.getAndDecrement() > 0) {
                throw new IllegalStateException("the acquirer timed out");
            }
        };
        broker.send(COMMANDS, command(key, "12.00"), Map.of("IdempotencyKey", key));

        int[] deliveries = broker.drain(COMMANDS, listener(), container());

        assertThat(deliveries).containsExactly(1, 2);
        assertThat(deliveryCounts).as("JMSXDeliveryCount of each execution").containsExactly(1, 2, 3);
        assertThat(payments(key)).isEqualTo(1);
        assertThat(record(key)).containsEntry("status", "SUCCEEDED").containsEntry("attempts", 3);
        assertThat(handled()).containsExactly(Handling.REDELIVERED, Handling.REDELIVERED, Handling.EXECUTED);
    }

    @Test
    void theLastDeliveryOfAFailingCommandIsRecordedAsDeadLetteredAndTheMessageKeptInTheDeadLetterQueue()
            throws Exception {
        String key = newKey();
        PaymentCommands.duringExecution = message -> {
            throw new IllegalStateException("the acquirer is down");
        };
        broker.send(COMMANDS, command(key, "13.00"), Map.of("IdempotencyKey", key));

        int[] deliveries = broker.drain(COMMANDS, listener(), container());

        assertThat(deliveries).containsExactly(0, MAX_DELIVERIES);
        assertThat(payments(key)).isZero();
        assertThat(record(key)).containsEntry("status", "FAILED_RETRYABLE").containsEntry("response_status", 503)
                .containsEntry("attempts", MAX_DELIVERIES);
        assertThat(new String((byte[]) record(key).get("response_body"), StandardCharsets.UTF_8))
                .contains("dead-lettered").contains("delivered " + MAX_DELIVERIES + " times");
        assertThat(handled()).endsWith(Handling.DEAD_LETTERED);
        Message dead = broker.take(Broker.DLQ);
        assertThat(dead).as("kept by the broker").isNotNull();
        assertThat(dead.getStringProperty("IdempotencyKey")).isEqualTo(key);

        // Sent again from the dead-letter queue once the acquirer is back: it runs, once.
        PaymentCommands.duringExecution = message -> { };
        broker.send(COMMANDS, command(key, "13.00"), Map.of("IdempotencyKey", key));
        assertThat(broker.drain(COMMANDS, listener(), container())).containsExactly(1, 0);
        assertThat(payments(key)).isEqualTo(1);
        assertThat(record(key)).containsEntry("status", "SUCCEEDED");
    }

    @Test
    void aCommandWithoutItsKeyOrReusingAKeyForAnotherCommandIsNeverAcknowledgedUnprocessed() throws Exception {
        String key = newKey();
        broker.send(COMMANDS, command(key, "14.00"), Map.of("IdempotencyKey", key));
        broker.drain(COMMANDS, listener(), container());
        broker.send(COMMANDS, command(key, "99.00"), Map.of("IdempotencyKey", key));
        broker.send(COMMANDS, command(newKey(), "15.00"), Map.of());

        int[] deliveries = broker.drain(COMMANDS, listener(), container());

        assertThat(deliveries).as("every delivery of both rolled back").containsExactly(0, 2 * MAX_DELIVERIES);
        assertThat(PaymentCommands.executions).hasValue(1);
        assertThat(payments(key)).isEqualTo(1);
        assertThat(broker.depth(Broker.DLQ)).as("both kept by the broker").isEqualTo(2);
        assertThat(handled()).containsOnly(Handling.EXECUTED, Handling.REFUSED);
    }

    @Test
    void aRollbackOfTheMessagesTransactionAfterTheFinishGivesTheClaimBackSoTheRedeliveryRunsAtOnce() throws Exception {
        String key = newKey();
        AtomicInteger rollBacks = new AtomicInteger(1);
        Broker.Container brokerBranchFails = new Broker.Container(this::requestContext, () -> {
            if (rollBacks.getAndDecrement() > 0) {
                try {
                    Narayana.transactionManager().setRollbackOnly();
                } catch (jakarta.transaction.SystemException e) {
                    throw new IllegalStateException(e);
                }
            }
        });
        broker.send(COMMANDS, command(key, "16.00"), Map.of("IdempotencyKey", key));

        int[] deliveries = broker.drain(COMMANDS, listener(), brokerBranchFails);

        assertThat(deliveries).containsExactly(1, 1);
        assertThat(PaymentCommands.executions).as("run again at once, not after the lease").hasValue(2);
        assertThat(payments(key)).isEqualTo(1);
        assertThat(record(key)).containsEntry("status", "SUCCEEDED").containsEntry("attempts", 2);
    }

    @Test
    void copiesOfOneCommandOnConcurrentConsumersAreExecutedOnce() throws Exception {
        String key = newKey();
        int copies = 16;
        for (int i = 0; i < copies; i++) {
            broker.send(COMMANDS, command(key, "17.00"), Map.of("IdempotencyKey", key));
        }
        ExecutorService consumers = Executors.newFixedThreadPool(6);
        try {
            List<Callable<int[]>> drains = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                drains.add(() -> broker.drain(COMMANDS, listener(), container()));
            }
            int acknowledged = 0;
            for (Future<int[]> drained : consumers.invokeAll(drains)) {
                acknowledged += drained.get()[0];
            }
            assertThat(acknowledged).isEqualTo(copies);
        } finally {
            consumers.shutdownNow();
        }
        assertThat(PaymentCommands.executions).hasValue(1);
        assertThat(payments(key)).isEqualTo(1);
        assertThat(handled().stream().filter(h -> h == Handling.DUPLICATE)).hasSize(copies - 1);
        assertThat(broker.depth(COMMANDS)).isZero();
    }

    @Test
    void aCommandSentOnCarriesTheOperationsDerivedKeyOnEveryAttempt() throws Exception {
        String key = newKey();
        AtomicInteger failures = new AtomicInteger(1);
        PaymentCommands.duringExecution = message -> {
            if (failures.getAndDecrement() > 0) {
                throw new IllegalStateException("once");
            }
        };
        try (JMSContext out = broker.context()) {
            PaymentCommands.shipments = out;
            broker.send(COMMANDS, command(key, "18.00"), Map.of("IdempotencyKey", key));
            broker.drain(COMMANDS, listener(), container());
        }
        Message shipment = broker.take(PaymentCommands.SHIPMENTS);
        String scopeKey = SCOPE_DIGEST.of(new Scope("", "$messages", ENDPOINT, key));
        assertThat(shipment.getStringProperty(DerivedKeyMessages.PROPERTY)).isEqualTo(ScopeDigest.derive(scopeKey, "shipping"));
    }

    // A listener the container calls without a transaction (bean-managed, or not supported): the library runs it
    // in one of its own, and has a failure redelivered by throwing it.
    @Test
    void withoutAContainerTransactionTheLibraryCommitsItselfAndThrowsAFailureForTheContainerToRedeliver()
            throws Exception {
        String key = newKey();
        broker.send(COMMANDS, command(key, "19.00"), Map.of("IdempotencyKey", key));
        Message message = broker.take(COMMANDS);
        PaymentCommands.duringExecution = m -> {
            throw new IllegalStateException("the acquirer timed out");
        };
        RequestContextController context = requestContext();
        context.activate();
        try {
            assertThatThrownBy(() -> listener().onMessage(message)).hasMessageContaining("the acquirer timed out");
            assertThat(Narayana.transactionManager().getTransaction()).as("none left on the thread").isNull();
            assertThat(record(key)).containsEntry("status", "FAILED_RETRYABLE");
            PaymentCommands.duringExecution = m -> { };
            listener().onMessage(message);
            listener().onMessage(message);
        } finally {
            context.deactivate();
        }
        assertThat(Narayana.transactionManager().getTransaction()).isNull();
        assertThat(payments(key)).isEqualTo(1);
        assertThat(record(key)).containsEntry("status", "SUCCEEDED").containsEntry("attempts", 2);
        assertThat(handled()).containsExactly(Handling.REDELIVERED, Handling.EXECUTED, Handling.DUPLICATE);
    }

    private PaymentCommands listener() {
        return weld.select(PaymentCommands.class).get();
    }

    private Broker.Container container() {
        return new Broker.Container(this::requestContext, () -> { });
    }

    private RequestContextController requestContext() {
        return weld.select(RequestContextController.class).get();
    }

    private List<Handling> handled() {
        return events.events().stream().filter(IdempotencyEvent.MessageHandled.class::isInstance)
                .map(e -> ((IdempotencyEvent.MessageHandled) e).handling()).toList();
    }

    private long payments(String key) {
        return h2.count("SELECT COUNT(*) FROM test_payment WHERE merchant_order_no = ?", "order-" + key);
    }

    private Map<String, Object> record(String key) {
        String scopeKey = SCOPE_DIGEST.of(new Scope("", "$messages", ENDPOINT, key));
        List<Map<String, Object>> rows = h2.query("SELECT status, attempts, response_status, response_body FROM "
                + TestStore.TABLE + " WHERE scope_key = ?", scopeKey);
        assertThat(rows).hasSize(1);
        return rows.get(0);
    }

    private static int deliveryCount(Message message) {
        try {
            return message.getIntProperty("JMSXDeliveryCount");
        } catch (jakarta.jms.JMSException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String command(String key, String amount) {
        return "{\"merchantOrderNo\":\"order-" + key + "\",\"amount\":" + amount + ",\"currency\":\"EUR\"}";
    }

    private static String newKey() {
        return UUID.randomUUID().toString();
    }
}
