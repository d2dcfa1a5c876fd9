package dev.idempotency.core;

import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Turns a JSON body into the bytes that are fingerprinted: object keys sorted, insignificant whitespace
 * removed, numbers written by value ({@code 100}, {@code 100.0} and {@code 1E2} alike), ignored fields
 * removed and configured defaults applied, so that requests with the same meaning fingerprint alike.
 * Duplicate object keys are an error (their meaning is ambiguous).
 */
public interface CanonicalJson {

    /**
     * @param json     the body as received
     * @param ignored  dotted paths of fields that do not change the meaning ({@code traceId}, {@code meta.trace})
     * @param defaults dotted path to the JSON text of a value that an absent field means
     * @throws MalformedBodyException when the body is not one valid JSON value within the limits
     */
    byte[] canonicalize(byte[] json, Set<String> ignored, Map<String, String> defaults);

    /**
     * The scalar at a dotted path, as text ({@code merchantOrderNo}); empty when absent or null.
     *
     * @throws MalformedBodyException when the body is not valid JSON or the field is an object or array
     */
    Optional<String> scalarField(byte[] json, String path);

    /** The body is not acceptable JSON. */
    final class MalformedBodyException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public MalformedBodyException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * A JSON string with the fewest escapes, as the canonical form writes it (see the class comment): valid
     * JSON for any Java string, unpaired surrogates included. Also what the JDBC store writes its stored
     * headers with. Plain Java: a string's canonical form needs no JSON library.
     */
    static void writeString(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        unicodeEscape(c, out);
                    } else if (Character.isHighSurrogate(c) && i + 1 < s.length()
                            && Character.isLowSurrogate(s.charAt(i + 1))) {
                        out.append(c).append(s.charAt(++i));
                    } else if (Character.isSurrogate(c)) {
                        // Unpaired: UTF-8 cannot carry it, and a replacement character would merge distinct strings.
                        unicodeEscape(c, out);
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    private static void unicodeEscape(char c, StringBuilder out) {
        out.append("\\u");
        String hex = Integer.toHexString(c);
        out.append("0".repeat(4 - hex.length())).append(hex);
    }

}
