package dev.idempotency.core;

import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.IdempotencyException;

import java.util.List;
import java.util.regex.Pattern;

/**
 * What a valid idempotency key is: {@code minLength..maxLength} characters of printable ASCII
 * (0x21-0x7E), optionally further restricted by a pattern. The IETF draft sends the key as a
 * Structured-Field string ({@code "abc"}); that form means the same key as {@code abc}.
 */
public final class KeyRules {
    private final int minLength;
    private final int maxLength;
    private final Pattern pattern;

    /**
     * @param pattern an extra regular expression the whole key must match, or null
     */
    public KeyRules(int minLength, int maxLength, Pattern pattern) {
        if (minLength < 1 || maxLength < minLength || maxLength > 1024) {
            throw new IllegalArgumentException("key length bounds must satisfy 1 <= min <= max <= 1024");
        }
        this.minLength = minLength;
        this.maxLength = maxLength;
        this.pattern = pattern;
    }

    public static KeyRules defaults() {
        return new KeyRules(1, 255, null);
    }

    public int minLength() {
        return minLength;
    }

    public int maxLength() {
        return maxLength;
    }

    /** The extra pattern a key must match, if one is configured. */
    public java.util.Optional<Pattern> pattern() {
        return java.util.Optional.ofNullable(pattern);
    }

    /**
     * The key carried by a header, given all the values the request had for it.
     *
     * @return the key, or null when the header is absent
     * @throws IdempotencyException {@code key-invalid} when the header is repeated or the value is not a key
     */
    public String fromHeader(List<String> values) {
        if (values == null || values.isEmpty()) {
            return null;
        }
        if (values.size() > 1) {
            throw invalid("the key header must appear once");
        }
        return parse(values.get(0));
    }

    /**
     * Parses one header value: a bare key or a Structured-Field string.
     *
     * @throws IdempotencyException {@code key-invalid}
     */
    public String parse(String raw) {
        String value = raw;
        if (value.length() >= 1 && value.charAt(0) == '"') {
            value = unquoteStructuredFieldString(value);
        }
        return validate(value);
    }

    /**
     * Checks a key taken from elsewhere (a body field) against the same rules, without unquoting.
     *
     * @throws IdempotencyException {@code key-invalid}
     */
    public String validate(String key) {
        if (key.length() < minLength || key.length() > maxLength) {
            throw invalid("the key must be " + minLength + " to " + maxLength + " characters long");
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c < 0x21 || c > 0x7E) {
                throw invalid("the key may contain only printable ASCII characters (0x21-0x7E); position " + i
                        + " does not");
            }
        }
        if (pattern != null && !pattern.matcher(key).matches()) {
            throw invalid("the key does not match the configured pattern");
        }
        return key;
    }

    // RFC 8941 sf-string: DQUOTE *( unescaped / "\" ( DQUOTE / "\" ) ) DQUOTE, chars 0x20-0x7E.
    private String unquoteStructuredFieldString(String value) {
        if (value.length() < 2 || value.charAt(value.length() - 1) != '"') {
            throw invalid("a quoted key must end with a double quote");
        }
        StringBuilder out = new StringBuilder(value.length());
        for (int i = 1; i < value.length() - 1; i++) {
            char c = value.charAt(i);
            if (c == '\\') {
                if (i + 1 >= value.length() - 1) {
                    throw invalid("a quoted key ends inside an escape");
                }
                char next = value.charAt(++i);
                if (next != '"' && next != '\\') {
                    throw invalid("a quoted key may escape only '\"' and '\\'");
                }
                out.append(next);
            } else if (c == '"') {
                throw invalid("a quoted key has an unescaped double quote inside");
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static IdempotencyException invalid(String detail) {
        return new IdempotencyException(Problem.of(ProblemType.KEY_INVALID, detail));
    }
}
