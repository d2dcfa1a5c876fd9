package dev.idempotency.jdbc;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The protocol's time, taken from the database of the record table: leases, expiry and takeovers are
 * decided by one clock shared by every node, so a node whose own clock runs ahead never takes over a live
 * lease early. The database is asked for its UTC time every {@code refresh} and the offset to the local
 * clock is applied in between (half the query's round trip is the error); if the database cannot answer,
 * the last offset stays.
 *
 * <p>Reading the time never waits: the measurement takes a pooled connection, and a request thread that
 * holds one while it waits for another (on a lock or on the pool) can stall a saturated pool. So the
 * deployment measures once at deployment and then on the server's managed scheduler
 * ({@link #refreshInBackground()}); without a scheduler, one caller at a time measures and every other
 * caller goes on with the last offset.
 */
public final class DatabaseClock extends Clock {
    private static final Logger LOG = Logger.getLogger(DatabaseClock.class.getName());
    private final Clock local;
    private final DataSource dataSource;
    private final String query;
    private final long refreshNanos;
    private final AtomicBoolean measuring = new AtomicBoolean();
    private final AtomicLong failedMeasurements = new AtomicLong();
    private volatile long offsetMillis;
    private volatile long measuredAt;
    private volatile boolean measured;
    private volatile long answeredAt;
    private volatile boolean answered;
    private volatile boolean refreshedInBackground;

    DatabaseClock(Clock local, DataSource dataSource, Dialect dialect, Duration refresh) {
        this.local = local;
        this.dataSource = dataSource;
        this.query = dialect.utcNowQuery();
        this.refreshNanos = refresh.toNanos();
    }

    @Override
    public Instant instant() {
        if (!refreshedInBackground && (!measured || System.nanoTime() - measuredAt > refreshNanos)) {
            refresh();
        }
        return local.instant().plusMillis(offsetMillis);
    }

    /** How far the database's clock is ahead of the local one, as last measured. */
    public Duration offset() {
        if (!measured) {
            refresh();
        }
        return Duration.ofMillis(offsetMillis);
    }

    /**
     * Measures the offset now, unless another thread is measuring it (then the last offset stays): no
     * caller ever waits for another's measurement.
     */
    public void refresh() {
        if (!measuring.compareAndSet(false, true)) {
            return;
        }
        try {
            measure();
        } finally {
            measuring.set(false);
        }
    }

    /** From now on only {@link #refresh()} calls measure (the deployment's scheduled task); reads never do. */
    public void refreshInBackground() {
        refreshedInBackground = true;
    }

    /**
     * How long ago the database last told its time (the offset in use is from then); empty while it never has
     * since deployment, when the protocol runs on the local clock's time.
     */
    public Optional<Duration> sinceLastAnswer() {
        return answered ? Optional.of(Duration.ofNanos(System.nanoTime() - answeredAt)) : Optional.empty();
    }

    /** How many measurements failed (the database did not answer, or no connection came in time). */
    public long failedMeasurements() {
        return failedMeasurements.get();
    }

    private void measure() {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(query)) {
            long before = local.millis();
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long after = local.millis();
                Instant database = rs.getObject(1, LocalDateTime.class).toInstant(ZoneOffset.UTC);
                offsetMillis = database.toEpochMilli() - (before + after) / 2;
                answeredAt = System.nanoTime();
                answered = true;
            }
        } catch (SQLException | RuntimeException e) {
            failedMeasurements.incrementAndGet();
            // Keep the last offset (zero before the first answer); the next call tries again.
            LOG.log(Level.WARNING, "IDEM-W005 could not read the database's time; using the last offset "
                    + offsetMillis + " ms", e);
        }
        measuredAt = System.nanoTime();
        measured = true;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("the protocol's clock is UTC");
    }
}
