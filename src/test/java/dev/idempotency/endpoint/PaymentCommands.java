package dev.idempotency.endpoint;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyContext;
import dev.idempotency.KeySource;
import dev.idempotency.jms.DerivedKeyMessages;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;
import jakarta.jms.TextMessage;

import java.math.BigDecimal;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The test application's message listener, as a message-driven bean is one: payment commands, keyed by the
 * producer's {@code IdempotencyKey} property, each writing one {@link Payment}; a shipment command is sent on.
 */
@ApplicationScoped
public class PaymentCommands implements MessageListener {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final String SHIPMENTS = "shipments";
    /** Runs in every execution, before the payment is written: a test holds or fails it here. */
    static volatile Consumer<Message> duringExecution = message -> { };
    static final AtomicInteger executions = new AtomicInteger();
    /** Where shipments are sent, when a test wants them. */
    static volatile JMSContext shipments;

    @Inject
    IdempotencyContext idempotency;
    @Inject
    Payments payments;

    /** A command the business refuses for good: the same command fails the same way. */
    public static class CommandRejected extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public CommandRejected(String reason) {
            super(reason);
        }
    }

    @Override
    @Idempotent(endpoint = "payments.commands", keySource = KeySource.MESSAGE_PROPERTY, finalOn = CommandRejected.class)
    public void onMessage(Message message) {
        executions.incrementAndGet();
        duringExecution.accept(message);
        try {
            JsonNode command = JSON.readTree(((TextMessage) message).getText());
            Payment payment = new Payment();
            payment.id = UUID.randomUUID().toString();
            payment.tenant = "messages";
            payment.merchantOrderNo = command.get("merchantOrderNo").asText();
            payment.amount = new BigDecimal(command.get("amount").asText());
            payment.currency = command.get("currency").asText();
            payments.persist(payment);
            JMSContext out = shipments;
            if (out != null) {
                DerivedKeyMessages.withDerivedKey(out.createProducer(), idempotency, "shipping")
                        .send(out.createQueue(SHIPMENTS), payment.merchantOrderNo);
            }
        } catch (JMSException | com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
