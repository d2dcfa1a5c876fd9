package dev.idempotency.core;

import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * Where a message's tenant or principal comes from: a constant, or a property of the message (set by a
 * trusted producer). Written {@code constant:<value>} or {@code property:<name>}.
 *
 * @param fromProperty whether {@code value} names a property (else it is the value itself)
 * @param value        the constant, or the property's name
 */
public record ScopeSource(boolean fromProperty, String value) {
    public ScopeSource {
        Objects.requireNonNull(value, "value");
        if (fromProperty && value.isEmpty()) {
            throw new IllegalArgumentException("a property source names its property");
        }
    }

    /** A constant. */
    public static ScopeSource constant(String value) {
        return new ScopeSource(false, value);
    }

    /**
     * Parses {@code constant:<value>} or {@code property:<name>}.
     *
     * @throws IllegalArgumentException for anything else
     */
    public static ScopeSource parse(String written) {
        if (written.startsWith("constant:")) {
            return constant(written.substring("constant:".length()));
        }
        if (written.startsWith("property:") && written.length() > "property:".length()) {
            return new ScopeSource(true, written.substring("property:".length()));
        }
        throw new IllegalArgumentException("must be constant:<value> or property:<name>");
    }

    /** The values it has for a message whose properties are {@code properties}: the constant, or the property's. */
    public List<String> read(Function<String, List<String>> properties) {
        return fromProperty ? properties.apply(value) : List.of(value);
    }

    @Override
    public String toString() {
        return (fromProperty ? "property:" : "constant:") + value;
    }
}
