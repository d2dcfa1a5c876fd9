package dev.idempotency.core;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * A message as the protocol sees it, taken from the broker's message by the messaging adapter: what a request
 * is to {@link RequestPreparation}, with its properties in the place of headers. Its "path" is the endpoint, so
 * that a queue renamed between deliveries is still the same operation; the properties the endpoint names as
 * part of the fingerprint take the place of the query.
 *
 * @param endpoint              the endpoint that consumes it
 * @param properties            its properties, and the header fields {@code JMSMessageID}, {@code JMSCorrelationID}
 *                              and {@code JMSType} under those names, as text
 * @param contentType           {@code application/json} for a text that is a JSON object or array,
 *                              {@code text/plain} for other text, {@code application/octet-stream} for bytes
 * @param body                  the payload
 * @param fingerprintProperties the properties that are part of its fingerprint ({@link MessagePolicy})
 * @param deliveryCount         {@code JMSXDeliveryCount}: 1 for its first delivery
 */
public record MessageFacts(String endpoint, Map<String, String> properties, String contentType, byte[] body,
                           List<String> fingerprintProperties, int deliveryCount)
        implements RequestPreparation.Incoming {
    /** The method of every message: a message is a command, whatever it asks. */
    public static final String METHOD = "MESSAGE";
    public static final String MESSAGE_ID = "JMSMessageID";

    public MessageFacts {
        Objects.requireNonNull(endpoint, "endpoint");
        properties = Map.copyOf(properties);
        Objects.requireNonNull(contentType, "contentType");
        Objects.requireNonNull(body, "body");
        fingerprintProperties = List.copyOf(fingerprintProperties);
    }

    /** The media type of a text payload: JSON when it starts as a JSON object or array does. */
    public static String textType(String text) {
        String trimmed = text.stripLeading();
        return trimmed.startsWith("{") || trimmed.startsWith("[") ? "application/json" : "text/plain";
    }

    @Override
    public String method() {
        return METHOD;
    }

    @Override
    public String path() {
        return "/" + endpoint;
    }

    /** The fingerprinted properties as a query, {@code name=value&...} (absent ones left out). */
    @Override
    public String query() {
        TreeMap<String, String> named = new TreeMap<>();
        for (String name : fingerprintProperties) {
            String value = properties.get(name);
            if (value != null) {
                named.put(name, value);
            }
        }
        return named.entrySet().stream()
                .map(e -> encode(e.getKey()) + "=" + encode(e.getValue()))
                .collect(Collectors.joining("&"));
    }

    /** A property's value (property names are case-sensitive), empty when absent. */
    @Override
    public List<String> header(String name) {
        String value = properties.get(name);
        return value == null ? List.of() : List.of(value);
    }

    /** The message's id, when the broker gave it one. */
    public Optional<String> messageId() {
        return Optional.ofNullable(properties.get(MESSAGE_ID));
    }

    /** A message has no authenticated caller: its scope comes from {@link MessagePolicy}. */
    @Override
    public Optional<String> principalName() {
        return Optional.empty();
    }

    @Override
    public boolean isUserInRole(String role) {
        return false;
    }

    private static String encode(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        // The properties may hold the key: logs name the message by its id and delivery.
        return "message " + messageId().orElse("(no id)") + " to " + endpoint + " (delivery " + deliveryCount + ")";
    }
}
