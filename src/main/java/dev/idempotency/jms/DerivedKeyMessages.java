package dev.idempotency.jms;

import dev.idempotency.IdempotencyContext;
import jakarta.enterprise.inject.spi.CDI;
import jakarta.jms.JMSException;
import jakarta.jms.JMSProducer;
import jakarta.jms.Message;

/**
 * Puts the operation's derived key on the messages an idempotent operation sends, as
 * {@link dev.idempotency.jaxrs.DerivedKeyClientFilter} does on its HTTP calls: the consumer sees the same key on
 * every retry and takeover of the operation, and an idempotent consumer of this library reads it by default
 * ({@link dev.idempotency.KeySource#MESSAGE_PROPERTY}, property {@value #PROPERTY}).
 * <pre>
 * DerivedKeyMessages.withDerivedKey(jms.createProducer(), "shipping").send(shipments, order);
 * </pre>
 * Outside an idempotent operation nothing is added; a key set explicitly is left alone.
 */
public final class DerivedKeyMessages {
    /** The property that carries the key (a valid message property name: no hyphen). */
    public static final String PROPERTY = "IdempotencyKey";

    private DerivedKeyMessages() {
    }

    /** The producer, with property {@value #PROPERTY} set to the derived key for {@code purpose}. */
    public static JMSProducer withDerivedKey(JMSProducer producer, String purpose) {
        if (!producer.propertyExists(PROPERTY)) {
            derived(purpose).ifPresent(key -> producer.setProperty(PROPERTY, key));
        }
        return producer;
    }

    /** Sets property {@value #PROPERTY} of a message to the derived key for {@code purpose}. */
    public static Message withDerivedKey(Message message, String purpose) throws JMSException {
        if (!message.propertyExists(PROPERTY)) {
            java.util.Optional<String> key = derived(purpose);
            if (key.isPresent()) {
                message.setStringProperty(PROPERTY, key.get());
            }
        }
        return message;
    }

    private static java.util.Optional<String> derived(String purpose) {
        if (purpose == null || purpose.isBlank()) {
            throw new IllegalArgumentException("a derived key needs a purpose");
        }
        IdempotencyContext context = CDI.current().select(IdempotencyContext.class).get();
        return context.isActive() ? java.util.Optional.of(context.derive(purpose)) : java.util.Optional.empty();
    }
}
