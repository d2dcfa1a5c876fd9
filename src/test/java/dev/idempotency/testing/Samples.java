package dev.idempotency.testing;

import java.util.Random;
import java.util.function.Consumer;

/**
 * Property checks over seeded random samples, in plain JUnit 5. Each run draws a fresh seed (or the one in
 * the system property {@code idempotency.test.seed}); a failing sample names the seed and the sample's
 * number, so that {@code -Didempotency.test.seed=<seed>} replays exactly that run.
 */
public final class Samples {
    /** Samples per property: as many as jqwik tried by default, which these checks replaced. */
    public static final int DEFAULT_COUNT = 1000;

    private Samples() {
    }

    /** Runs {@code property} on {@link #DEFAULT_COUNT} samples drawn from one seeded generator. */
    public static void check(Consumer<Random> property) {
        check(DEFAULT_COUNT, property);
    }

    /** Runs {@code property} on {@code count} samples drawn from one seeded generator. */
    public static void check(int count, Consumer<Random> property) {
        long seed = Long.getLong("idempotency.test.seed", new Random().nextLong());
        Random random = new Random(seed);
        for (int sample = 0; sample < count; sample++) {
            try {
                property.accept(random);
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError("property failed on sample " + sample + " of seed " + seed
                        + " (rerun with -Didempotency.test.seed=" + seed + "): " + e.getMessage(), e);
            }
        }
    }

    /** A string of {@code min..max} characters, each from {@code from..to}. */
    public static String string(Random random, int min, int max, char from, char to) {
        int length = min + random.nextInt(max - min + 1);
        StringBuilder out = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            out.append((char) (from + random.nextInt(to - from + 1)));
        }
        return out.toString();
    }

    /** An int in {@code min..max}, both included. */
    public static int between(Random random, int min, int max) {
        return min + random.nextInt(max - min + 1);
    }
}
