package dev.idempotency.core;

import dev.idempotency.spi.IdempotencyRecord;

import java.time.Duration;

/** What the protocol decided for a request before anything runs. Rejections are thrown instead. */
public sealed interface Admission {

    /** Run the method: this request holds the claim. */
    record Execute(Claim claim) implements Admission {
    }

    /** Answer with the stored outcome; nothing runs. */
    record Replay(IdempotencyRecord record) implements Admission {
    }

    /** The first is still running: answer 202 with the status resource's location. */
    record Accepted(IdempotencyRecord record, Duration retryAfter) implements Admission {
    }
}
