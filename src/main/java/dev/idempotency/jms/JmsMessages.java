package dev.idempotency.jms;

import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.core.MessageFacts;
import dev.idempotency.core.MessagePolicy;
import jakarta.jms.BytesMessage;
import jakarta.jms.JMSException;
import jakarta.jms.MapMessage;
import jakarta.jms.Message;
import jakarta.jms.ObjectMessage;
import jakarta.jms.StreamMessage;
import jakarta.jms.TextMessage;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads a Jakarta Messaging message into the {@link MessageFacts} the protocol decides on. Only this class
 * touches {@code jakarta.jms}: the library loads it when a message listener is called, so that it deploys on a
 * server without messaging.
 */
public final class JmsMessages {
    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();

    private JmsMessages() {
    }

    /**
     * The message as the protocol sees it.
     *
     * @param message a {@code jakarta.jms.Message} (typed {@code Object} so that callers need not load the API)
     * @throws IdempotencyException {@code body-malformed} for a payload the library cannot fingerprint (an object
     *                              or stream message) or a message the broker cannot read
     */
    public static MessageFacts facts(Object message, EndpointPolicy policy) {
        Message jms = (Message) message;
        MessagePolicy messages = policy.messages().orElseThrow(() -> new IllegalStateException(
                "IDEM-X006 endpoint '" + policy.endpoint() + "' does not consume messages"));
        try {
            Map<String, String> properties = new HashMap<>();
            for (Object name : Collections.list(jms.getPropertyNames())) {
                Object value = jms.getObjectProperty((String) name);
                if (value != null) {
                    properties.put((String) name, String.valueOf(value));
                }
            }
            putIfPresent(properties, MessageFacts.MESSAGE_ID, jms.getJMSMessageID());
            putIfPresent(properties, "JMSCorrelationID", jms.getJMSCorrelationID());
            putIfPresent(properties, "JMSType", jms.getJMSType());
            int delivery = jms.propertyExists("JMSXDeliveryCount") ? jms.getIntProperty("JMSXDeliveryCount") : 1;
            String contentType;
            byte[] body;
            if (jms instanceof TextMessage text) {
                String payload = text.getText() == null ? "" : text.getText();
                contentType = MessageFacts.textType(payload);
                body = payload.getBytes(StandardCharsets.UTF_8);
            } else if (jms instanceof BytesMessage bytes) {
                contentType = "application/octet-stream";
                body = bytes.getBodyLength() == 0 ? new byte[0] : bytes.getBody(byte[].class);
            } else if (jms instanceof MapMessage map) {
                // Its entries as a JSON object: a map message's fields are as much its payload as a JSON text's.
                TreeMap<String, Object> entries = new TreeMap<>();
                for (Object name : Collections.list(map.getMapNames())) {
                    Object value = map.getObject((String) name);
                    entries.put((String) name, value instanceof byte[] raw ? java.util.Base64.getEncoder()
                            .encodeToString(raw) : value);
                }
                contentType = "application/json";
                body = JSON.writeValueAsBytes(entries);
            } else if (jms instanceof ObjectMessage || jms instanceof StreamMessage) {
                // Java serialization is no payload to compare (nor to deserialize to find a key).
                throw new IdempotencyException(Problem.of(ProblemType.BODY_MALFORMED, (jms instanceof ObjectMessage
                        ? "an object" : "a stream") + " message cannot be fingerprinted; send a text (JSON), bytes or map message"));
            } else {
                // A bare message: its properties are all it says.
                contentType = "";
                body = new byte[0];
            }
            return new MessageFacts(policy.endpoint(), properties, contentType, body, messages.fingerprintProperties(),
                    delivery);
        } catch (JMSException | com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IdempotencyException(Problem.of(ProblemType.BODY_MALFORMED, "the message cannot be read: " + e), e);
        }
    }

    private static void putIfPresent(Map<String, String> properties, String name, String value) {
        if (value != null) {
            properties.put(name, value);
        }
    }
}
