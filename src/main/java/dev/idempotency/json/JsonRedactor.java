package dev.idempotency.json;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.idempotency.core.JsonRedaction;
import dev.idempotency.core.Redaction;

import java.io.IOException;
import java.util.List;
import java.util.Optional;

/**
 * Masks or removes the configured fields of a JSON response body before it is stored. Paths are dotted
 * member names; a segment ending in {@code []} goes into every element of that array. A path that leads
 * nowhere in a given body changes nothing. The rest of the body is written back as parsed (member order
 * kept, numbers as written).
 */
public final class JsonRedactor implements JsonRedaction {
    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .enable(JsonNodeFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    /**
     * Checks configured paths once, at deployment.
     *
     * @throws IllegalArgumentException naming the first path that is not a dotted path
     */
    public static void validate(List<String> paths) {
        paths.forEach(JsonRedactor::segments);
    }

    /**
     * The body with the redaction applied; empty when it is not JSON that parses (then nothing of it may be
     * stored: the caller keeps no body).
     */
    @Override
    public Optional<byte[]> redact(byte[] json, Redaction redaction) {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (IOException e) {
            return Optional.empty();
        }
        if (root == null || root.isMissingNode()) {
            return Optional.empty();
        }
        for (String path : redaction.paths()) {
            apply(root, segments(path), 0, redaction.mode());
        }
        try {
            return Optional.of(JSON.writeValueAsBytes(root));
        } catch (JsonProcessingException e) {
            return Optional.empty();
        }
    }

    private static void apply(JsonNode node, String[] segments, int at, Redaction.Mode mode) {
        if (!(node instanceof ObjectNode object)) {
            return;
        }
        String segment = segments[at];
        boolean eachElement = segment.endsWith("[]");
        String name = eachElement ? segment.substring(0, segment.length() - 2) : segment;
        JsonNode member = object.get(name);
        if (member == null) {
            return;
        }
        boolean last = at == segments.length - 1;
        if (!eachElement) {
            if (!last) {
                apply(member, segments, at + 1, mode);
            } else if (mode == Redaction.Mode.REMOVE) {
                object.remove(name);
            } else {
                object.set(name, TextNode.valueOf(Redaction.MASK));
            }
            return;
        }
        if (!(member instanceof ArrayNode array)) {
            return;
        }
        if (!last) {
            array.forEach(element -> apply(element, segments, at + 1, mode));
        } else if (mode == Redaction.Mode.REMOVE) {
            array.removeAll();
        } else {
            for (int i = 0; i < array.size(); i++) {
                array.set(i, TextNode.valueOf(Redaction.MASK));
            }
        }
    }

    private static String[] segments(String path) {
        String[] segments = path.split("\\.", -1);
        for (String segment : segments) {
            String name = segment.endsWith("[]") ? segment.substring(0, segment.length() - 2) : segment;
            if (name.isEmpty() || name.contains("[") || name.contains("]")) {
                throw new IllegalArgumentException("'" + path + "' is not a field path such as card.number or items[].cvv");
            }
        }
        return segments;
    }
}
