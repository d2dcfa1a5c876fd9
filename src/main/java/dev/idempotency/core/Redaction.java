package dev.idempotency.core;

import java.util.List;
import java.util.Objects;

/**
 * The fields of an endpoint's JSON responses that are never stored (design guide §6: minimize, mask or
 * encrypt): the first response goes to the client as the method made it; the stored copy, and so every
 * replay, has these fields masked or removed.
 *
 * @param paths dotted member paths; a segment ending in {@code []} goes into every element of that array
 *              ({@code card.number}, {@code items[].cvv}, {@code tokens[]})
 * @param mode  how a named field is redacted
 */
public record Redaction(List<String> paths, Mode mode) {
    /** Nothing redacted. */
    public static final Redaction NONE = new Redaction(List.of(), Mode.MASK);
    /** The string that takes a masked field's place. */
    public static final String MASK = "***";

    public enum Mode {
        /** The value becomes the string {@value Redaction#MASK} (array elements too); the member stays. */
        MASK,
        /** The member (or the array's elements) is removed. */
        REMOVE
    }

    public Redaction {
        paths = List.copyOf(paths);
        Objects.requireNonNull(mode, "mode");
    }

    /** Whether anything is redacted. */
    public boolean any() {
        return !paths.isEmpty();
    }
}
