package dev.idempotency.json;

import com.fasterxml.jackson.core.ErrorReportConfiguration;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.idempotency.core.CanonicalJson;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * {@link CanonicalJson} with Jackson: strict parsing within limits, then a canonical serialization of its own. One
 * class, over 350 lines, because it is one definition: what JSON is accepted, and the one form it is fingerprinted in.
 *
 * <p><b>Accepted input.</b> Exactly one RFC 8259 JSON value in strict UTF-8 (a leading byte order mark is
 * ignored, as RFC 8259 allows); nothing but whitespace after it. Duplicate object keys, comments, single
 * quotes, {@code NaN}, leading zeros and trailing commas are errors. Limits: nesting depth (default
 * {@value #DEFAULT_MAX_NESTING_DEPTH}), characters of one number (default {@value #DEFAULT_MAX_NUMBER_LENGTH})
 * and of one string or member name (default {@value #DEFAULT_MAX_STRING_LENGTH}, 1 MiB). Every refusal is a
 * {@link MalformedBodyException} whose message names the reason and position, never the body.
 *
 * <p><b>Canonical form</b> (UTF-8, the bytes that are fingerprinted; changing it needs a new
 * {@code Fingerprinter.VERSION}):
 * <ul>
 *   <li>no whitespace; arrays in order; {@code true}, {@code false}, {@code null} literally;</li>
 *   <li>object members sorted by the Unicode code points of their names. Not Java's {@code String} order,
 *       which is UTF-16 order and puts U+E000..U+FFFF after supplementary characters; code-point order is
 *       also the byte order of the UTF-8 output, so any implementation can reproduce it;</li>
 *   <li>strings with the fewest escapes: {@code \"}, {@code \\}, {@code \b \f \n \r \t}, other control
 *       characters and unpaired surrogates as {@code \}{@code u} with four lower-case hex digits; every
 *       other character literally in UTF-8;</li>
 *   <li>numbers by exact decimal value (never through {@code double}): {@code 100}, {@code 100.0},
 *       {@code 1E2} and {@code 1e+2} alike, {@code -0} as {@code 0}, while {@code 0.1} and
 *       {@code 0.10000000000000001} differ. See {@link #canonicalNumber(BigDecimal)}.</li>
 * </ul>
 *
 * <p><b>Field paths</b> for ignored fields and defaults are dotted member names ({@code meta.traceId}),
 * each segment naming a member of an object; a path does not go through arrays, and a member whose name
 * contains a dot cannot be named. Defaults are applied first (shorter paths first, so a default object gets
 * its own nested defaults), ignored fields are removed last, so an ignored field never matters.
 *
 * <p>Thread-safe: one instance, with one {@link ObjectMapper}, serves every request.
 */
public final class JacksonCanonicalJson implements CanonicalJson {
    /** Default deepest nesting of arrays and objects. */
    public static final int DEFAULT_MAX_NESTING_DEPTH = 64;
    /** Default longest number, in characters (sign, digits, point and exponent). */
    public static final int DEFAULT_MAX_NUMBER_LENGTH = 1000;
    /** Default longest string or member name, in characters: 1 MiB. */
    public static final int DEFAULT_MAX_STRING_LENGTH = 1 << 20;

    // Numbers are written plainly when that takes at most this many zeros (as ECMAScript does up to 1e21).
    private static final int PLAIN_ZEROS = 21;
    // How much of a token a parse error may quote: enough to recognise it, not enough to leak a body.
    private static final int ERROR_TOKEN_CHARS = 20;
    private static final int MAX_MESSAGE_CHARS = 120;
    private static final char BYTE_ORDER_MARK = '\uFEFF';
    private static final Comparator<String> CODE_POINT_ORDER = JacksonCanonicalJson::compareCodePoints;

    private static final class DefaultLimits {
        static final JacksonCanonicalJson INSTANCE = new JacksonCanonicalJson();
    }

    private final ObjectMapper mapper;
    // Parsed default values by their text; never handed out without a deep copy.
    private final ConcurrentMap<String, JsonNode> parsedDefaults = new ConcurrentHashMap<>();

    /** With the default limits. */
    public JacksonCanonicalJson() {
        this(DEFAULT_MAX_NESTING_DEPTH, DEFAULT_MAX_NUMBER_LENGTH, DEFAULT_MAX_STRING_LENGTH);
    }

    /**
     * @param maxNestingDepth deepest nesting of arrays and objects (default {@value #DEFAULT_MAX_NESTING_DEPTH})
     * @param maxNumberLength longest number in characters (default {@value #DEFAULT_MAX_NUMBER_LENGTH})
     * @param maxStringLength longest string or member name in characters (default 1 MiB)
     */
    public JacksonCanonicalJson(int maxNestingDepth, int maxNumberLength, int maxStringLength) {
        if (maxNestingDepth < 1 || maxNumberLength < 1 || maxStringLength < 1) {
            throw new IllegalArgumentException("JSON limits must be positive");
        }
        JsonFactory factory = JsonFactory.builder()
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION)
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(maxNestingDepth)
                        .maxNumberLength(maxNumberLength)
                        .maxStringLength(maxStringLength)
                        .maxNameLength(maxStringLength)
                        .build())
                .errorReportConfiguration(ErrorReportConfiguration.builder()
                        .maxErrorTokenLength(ERROR_TOKEN_CHARS)
                        .maxRawContentLength(0)
                        .build())
                .build();
        this.mapper = JsonMapper.builder(factory)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
                .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                .enable(JsonNodeFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                .enable(JsonNodeFeature.READ_NULL_PROPERTIES)
                // Stripping happens in canonicalNumber, where an exponent overflow becomes a refusal.
                .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
                .build();
    }

    /**
     * Checks configured defaults once, at start-up: every path well-formed and every value one JSON value
     * within the default limits.
     *
     * @throws IllegalArgumentException naming the first bad path
     */
    public static void validateDefaults(Map<String, String> defaults) {
        defaults.forEach((path, text) -> {
            segments(path);
            DefaultLimits.INSTANCE.defaultValue(path, text);
        });
    }

    /**
     * Checks configured ignored-field paths once, at start-up.
     *
     * @throws IllegalArgumentException naming the first bad path
     */
    public static void validateIgnored(Set<String> ignored) {
        ignored.forEach(JacksonCanonicalJson::segments);
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalArgumentException when a path is not a dotted name or a default is not valid JSON
     *                                  (configuration errors, not the client's)
     */
    @Override
    public byte[] canonicalize(byte[] json, Set<String> ignored, Map<String, String> defaults) {
        JsonNode root = parse(json);
        applyDefaults(root, defaults);
        for (String path : ignored) {
            String[] names = segments(path);
            JsonNode parent = parentOf(root, names);
            if (parent instanceof ObjectNode object) {
                object.remove(names[names.length - 1]);
            }
        }
        StringBuilder out = new StringBuilder(json.length);
        write(root, out);
        // Unpaired surrogates were escaped, so this encoding is exact.
        return out.toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * {@inheritDoc} Strings give their value, numbers their canonical text ({@link #canonicalNumber}:
     * {@code 1200.0} gives {@code 1200}), booleans {@code true} or {@code false}. A path through a member
     * that is not an object finds nothing.
     *
     * @throws IllegalArgumentException when the path is not a dotted name
     */
    @Override
    public Optional<String> scalarField(byte[] json, String path) {
        String[] names = segments(path);
        JsonNode root = parse(json);
        JsonNode parent = parentOf(root, names);
        JsonNode field = parent == null ? null : parent.get(names[names.length - 1]);
        if (field == null || field.isNull()) {
            return Optional.empty();
        }
        if (field.isContainerNode()) {
            throw new MalformedBodyException("the body field '" + path + "' is an object or array, not a value",
                    null);
        }
        return Optional.of(scalarText(field));
    }

    /**
     * The canonical text of a number, a function of its value alone. Zero is {@code 0}. Otherwise, with
     * trailing zeros stripped to {@code unscaled × 10^exponent}: plain notation when it needs at most 21
     * zeros besides the significant digits ({@code 1200}, {@code -1.5}, {@code 0.001}), else
     * {@code <unscaled>e<exponent>} ({@code 1e22}, {@code -15e-31}), so that {@code 1e1000000} stays short.
     * Plain integers make a numeric body key ({@code "orderNo": 1200.0}) read as {@code 1200}.
     *
     * @throws MalformedBodyException when the exponent does not fit an {@code int} once zeros are stripped
     */
    public static String canonicalNumber(BigDecimal value) {
        if (value.signum() == 0) {
            return "0";
        }
        BigDecimal stripped;
        try {
            stripped = value.stripTrailingZeros();
        } catch (ArithmeticException e) {
            throw new MalformedBodyException("a number's exponent is out of range", e);
        }
        long scale = stripped.scale();
        if (scale == Integer.MIN_VALUE) {
            // Its exponent, -scale, is beyond int: such a number could not be read back.
            throw new MalformedBodyException("a number's exponent is out of range", null);
        }
        long zeros = scale < 0 ? -scale : Math.max(0, scale - stripped.precision());
        return zeros <= PLAIN_ZEROS ? stripped.toPlainString() : stripped.unscaledValue() + "e" + (-scale);
    }

    private JsonNode parse(byte[] json) {
        String text = decodeUtf8(json);
        if (!text.isEmpty() && text.charAt(0) == BYTE_ORDER_MARK) {
            text = text.substring(1);
        }
        JsonNode root;
        try {
            root = mapper.readTree(text);
        } catch (JsonProcessingException e) {
            throw new MalformedBodyException(describe(e), e);
        } catch (NumberFormatException | ArithmeticException e) {
            // Exponents beyond int range fail inside BigDecimal, under Jackson.
            throw new MalformedBodyException("a number is out of range", e);
        }
        if (root == null || root.isMissingNode()) {
            throw new MalformedBodyException("the body holds no JSON value", null);
        }
        return root;
    }

    private static String decodeUtf8(byte[] json) {
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(json))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new MalformedBodyException("the body is not valid UTF-8", e);
        }
    }

    private static String describe(JsonProcessingException e) {
        String reason = String.valueOf(e.getOriginalMessage());
        int newline = reason.indexOf('\n');
        if (newline >= 0) {
            reason = reason.substring(0, newline);
        }
        if (reason.length() > MAX_MESSAGE_CHARS) {
            reason = reason.substring(0, MAX_MESSAGE_CHARS) + "...";
        }
        JsonLocation at = e.getLocation();
        String where = at == null || at.getLineNr() < 0 ? ""
                : " (line " + at.getLineNr() + ", column " + at.getColumnNr() + ")";
        return "the body is not acceptable JSON: " + reason + where;
    }

    private void applyDefaults(JsonNode root, Map<String, String> defaults) {
        if (defaults.isEmpty()) {
            return;
        }
        List<Map.Entry<String, String>> ordered = new ArrayList<>(defaults.entrySet());
        ordered.sort(Comparator.comparingInt((Map.Entry<String, String> d) -> segments(d.getKey()).length)
                .thenComparing(Map.Entry::getKey, CODE_POINT_ORDER));
        for (Map.Entry<String, String> d : ordered) {
            String[] names = segments(d.getKey());
            JsonNode parent = parentOf(root, names);
            String name = names[names.length - 1];
            // An explicit null is the client's statement, so it stays; only an absent member takes the default.
            if (parent instanceof ObjectNode object && !object.has(name)) {
                object.set(name, defaultValue(d.getKey(), d.getValue()).deepCopy());
            }
        }
    }

    private JsonNode defaultValue(String path, String text) {
        JsonNode cached = parsedDefaults.get(text);
        if (cached != null) {
            return cached;
        }
        JsonNode parsed;
        try {
            parsed = parse(text.getBytes(StandardCharsets.UTF_8));
            // Fails here, once, rather than on every request, when a default number cannot be canonical.
            write(parsed, new StringBuilder());
        } catch (MalformedBodyException e) {
            throw new IllegalArgumentException("the default for body field '" + path + "' is not one JSON value: "
                    + e.getMessage(), e);
        }
        JsonNode raced = parsedDefaults.putIfAbsent(text, parsed);
        return raced == null ? parsed : raced;
    }

    // The object that holds the path's last member, or null when the path leads elsewhere.
    private static JsonNode parentOf(JsonNode root, String[] names) {
        JsonNode node = root;
        for (int i = 0; i < names.length - 1 && node != null; i++) {
            node = node.isObject() ? node.get(names[i]) : null;
        }
        return node != null && node.isObject() ? node : null;
    }

    private static String[] segments(String path) {
        String[] names = path.split("\\.", -1);
        for (String name : names) {
            if (name.isEmpty()) {
                throw new IllegalArgumentException("'" + path + "' is not a dotted field path such as meta.traceId");
            }
        }
        return names;
    }

    private static void write(JsonNode node, StringBuilder out) {
        switch (node.getNodeType()) {
            case OBJECT -> {
                List<String> names = new ArrayList<>();
                node.fieldNames().forEachRemaining(names::add);
                names.sort(CODE_POINT_ORDER);
                out.append('{');
                for (int i = 0; i < names.size(); i++) {
                    if (i > 0) {
                        out.append(',');
                    }
                    CanonicalJson.writeString(names.get(i), out);
                    out.append(':');
                    write(node.get(names.get(i)), out);
                }
                out.append('}');
            }
            case ARRAY -> {
                out.append('[');
                Iterator<JsonNode> elements = node.elements();
                for (int i = 0; elements.hasNext(); i++) {
                    if (i > 0) {
                        out.append(',');
                    }
                    write(elements.next(), out);
                }
                out.append(']');
            }
            case STRING -> CanonicalJson.writeString(node.textValue(), out);
            case NUMBER, BOOLEAN -> out.append(scalarText(node));
            case NULL -> out.append("null");
            default -> throw new IllegalStateException("parsing yields no " + node.getNodeType() + " node");
        }
    }

    private static String scalarText(JsonNode node) {
        if (node.isNumber()) {
            return canonicalNumber(node.decimalValue());
        }
        if (node.isBoolean()) {
            return node.booleanValue() ? "true" : "false";
        }
        return node.textValue();
    }

    private static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }
}
