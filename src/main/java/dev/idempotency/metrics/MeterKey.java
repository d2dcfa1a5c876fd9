package dev.idempotency.metrics;

import java.util.Arrays;

/** A meter's name and tags, as the key of a backend's cache. */
record MeterKey(String name, String[] tags) {
    @Override
    public boolean equals(Object other) {
        return other instanceof MeterKey key && name.equals(key.name) && Arrays.equals(tags, key.tags);
    }

    @Override
    public int hashCode() {
        return 31 * name.hashCode() + Arrays.hashCode(tags);
    }

    @Override
    public String toString() {
        return name + Arrays.toString(tags);
    }
}
