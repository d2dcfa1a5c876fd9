package dev.idempotency.spi;

import java.util.Optional;

/** An {@link OutcomeResolver}'s answer. */
public sealed interface Resolution {

    /** The downstream did not do it: run the method again. */
    record NotDone() implements Resolution {
    }

    /**
     * The downstream did it: complete the record with this outcome without running the method. The
     * body is stored as given; it is what every repeat replays.
     */
    record Done(StoredResponse response, Optional<String> resourceId) implements Resolution {
    }

    /** The downstream cannot tell now: answer 503 with {@code Retry-After} and ask again on the next retry. */
    record Unknown(String reason) implements Resolution {
    }
}
