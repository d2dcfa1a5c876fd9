package dev.idempotency;

/**
 * Where an {@link Idempotent} method finds its idempotency key. {@link #HEADER} and {@link #BODY_FIELD} serve
 * JAX-RS resource methods; {@link #MESSAGE_PROPERTY}, {@link #BODY_FIELD} and {@link #MESSAGE_ID} serve message
 * listeners ({@code onMessage(jakarta.jms.Message)}); {@link #PARAMETER} serves CDI business methods.
 */
public enum KeySource {
    /** A request header, {@code Idempotency-Key} unless {@link Idempotent#keyName()} names another. */
    HEADER,
    /**
     * A field of the JSON body named by {@link Idempotent#keyName()}, e.g. {@code merchantOrderNo}: of the
     * request, or of a message's text.
     */
    BODY_FIELD,
    /**
     * A property of the message named by {@link Idempotent#keyName()}, default {@code IdempotencyKey} (the
     * property {@link dev.idempotency.jms.DerivedKeyMessages} sets on the messages an operation sends); the
     * header fields {@code JMSCorrelationID} and {@code JMSType} may be named too. The producer sets it to the
     * business intent's key (a payment reference), the same on every resend.
     */
    MESSAGE_PROPERTY,
    /**
     * The message's {@code JMSMessageID}. Only by explicit choice: the broker keeps it across its own
     * redeliveries, but a producer that sends the same command again (after a timeout, from a replayed batch)
     * sends a new message with a new id, which this key cannot recognise as a duplicate.
     */
    MESSAGE_ID,
    /**
     * The parameter marked {@link IdempotencyKey} of an idempotent CDI business method; such a method takes its key
     * only from there (its {@code keySource} left at the default, or set to this).
     */
    PARAMETER
}
