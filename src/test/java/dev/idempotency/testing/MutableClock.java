package dev.idempotency.testing;

import jakarta.inject.Singleton;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** The protocol's clock, moved by the test: the real time plus an offset the test advances. */
@Singleton
public class MutableClock extends Clock {
    private final AtomicLong offsetMillis = new AtomicLong();

    public void advance(Duration duration) {
        offsetMillis.addAndGet(duration.toMillis());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("the test clock is UTC");
    }

    @Override
    public Instant instant() {
        return Instant.now().plusMillis(offsetMillis.get());
    }
}
