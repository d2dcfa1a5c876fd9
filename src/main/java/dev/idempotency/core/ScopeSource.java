package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.spi.ScopeRequest;

import java.util.List;
import java.util.Objects;

/**
 * Where the tenant or principal of an operation without a client request comes from: a constant; a property of
 * a message (set by a trusted producer); or, for a business method, the container's authenticated caller.
 * Written {@code constant:<value>}, {@code property:<name>} or {@code caller}.
 *
 * @param kind  which of the three
 * @param value the constant, or the property's name; "" for the caller
 */
public record ScopeSource(Kind kind, String value) {
    private static final int MAX_LENGTH = 128;

    /** The forms a source takes. */
    public enum Kind {
        /** The value itself. */
        CONSTANT,
        /** A message property named by the value. */
        PROPERTY,
        /** The name of the authenticated caller of a business method. */
        CALLER
    }

    public ScopeSource {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(value, "value");
        if (kind == Kind.PROPERTY && value.isEmpty()) {
            throw new IllegalArgumentException("a property source names its property");
        }
    }

    /** A constant ({@code fromProperty} false) or a message property. */
    public ScopeSource(boolean fromProperty, String value) {
        this(fromProperty ? Kind.PROPERTY : Kind.CONSTANT, value);
    }

    /** A constant. */
    public static ScopeSource constant(String value) {
        return new ScopeSource(Kind.CONSTANT, value);
    }

    /**
     * Parses {@code constant:<value>}, {@code property:<name>} or {@code caller}.
     *
     * @throws IllegalArgumentException for anything else
     */
    public static ScopeSource parse(String written) {
        if (written.startsWith("constant:")) {
            return constant(written.substring("constant:".length()));
        }
        if (written.startsWith("property:") && written.length() > "property:".length()) {
            return new ScopeSource(Kind.PROPERTY, written.substring("property:".length()));
        }
        if (written.equals("caller")) {
            return new ScopeSource(Kind.CALLER, "");
        }
        throw new IllegalArgumentException("must be constant:<value>, property:<name> or caller");
    }

    /** The values it has for {@code request}: the constant, the property's, or the caller's name. */
    public List<String> read(ScopeRequest request) {
        return switch (kind) {
            case CONSTANT -> List.of(value);
            case PROPERTY -> request.header(value);
            case CALLER -> request.principalName().map(List::of).orElse(List.of());
        };
    }

    /**
     * Its one value for {@code request}, "" when it has none.
     *
     * @throws IdempotencyException when there are several, or one longer than 128 characters
     */
    public String single(ScopeRequest request, String what) {
        List<String> values = read(request);
        if (values.size() > 1 || (values.size() == 1 && values.get(0).length() > MAX_LENGTH)) {
            throw new IdempotencyException(Problem.of(ProblemType.KEY_INVALID, "the " + what + " (" + this
                    + ") must have at most " + MAX_LENGTH + " characters"));
        }
        return values.isEmpty() ? "" : values.get(0);
    }

    @Override
    public String toString() {
        return switch (kind) {
            case CONSTANT -> "constant:" + value;
            case PROPERTY -> "property:" + value;
            case CALLER -> "caller";
        };
    }
}
