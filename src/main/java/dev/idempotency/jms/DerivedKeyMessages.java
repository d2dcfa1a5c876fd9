package dev.idempotency.jms;

import dev.idempotency.IdempotencyContext;
import jakarta.jms.JMSException;
import jakarta.jms.JMSProducer;
import jakarta.jms.Message;
import java.util.Optional;

/**
 * Puts the operation's derived key on the messages an idempotent operation sends, as
 * {@link dev.idempotency.jaxrs.DerivedKeyClientFilter} does on its HTTP calls: the consumer sees the same key on
 * every retry and takeover of the operation, and an idempotent consumer of this library reads it by default
 * ({@link dev.idempotency.KeySource#MESSAGE_PROPERTY}, property {@value #PROPERTY}).
 * <pre>
 * &#64;Inject IdempotencyContext idempotency;
 * ...
 * DerivedKeyMessages.withDerivedKey(jms.createProducer(), idempotency, "shipping").send(shipments, order);
 * </pre>
 * Outside an idempotent operation nothing is added; a key set explicitly is left alone. The operation's context
 * is the caller's injected one, so that sending a message looks nothing up.
 */
public final class DerivedKeyMessages {
    /** The property that carries the key (a valid message property name: no hyphen). */
    public static final String PROPERTY = "IdempotencyKey";

    private DerivedKeyMessages() {
    }

    /** The producer, with property {@value #PROPERTY} set to {@code operation}'s derived key for {@code purpose}. */
    public static JMSProducer withDerivedKey(JMSProducer producer, IdempotencyContext operation, String purpose) {
        if (!producer.propertyExists(PROPERTY)) {
            derived(operation, purpose).ifPresent(key -> producer.setProperty(PROPERTY, key));
        }
        return producer;
    }

    /** Sets property {@value #PROPERTY} of a message to {@code operation}'s derived key for {@code purpose}. */
    public static Message withDerivedKey(Message message, IdempotencyContext operation, String purpose)
            throws JMSException {
        if (!message.propertyExists(PROPERTY)) {
            Optional<String> key = derived(operation, purpose);
            if (key.isPresent()) {
                message.setStringProperty(PROPERTY, key.get());
            }
        }
        return message;
    }

    private static Optional<String> derived(IdempotencyContext operation, String purpose) {
        if (purpose == null || purpose.isBlank()) {
            throw new IllegalArgumentException("a derived key needs a purpose");
        }
        return operation.isActive() ? Optional.of(operation.derive(purpose)) : Optional.empty();
    }
}
