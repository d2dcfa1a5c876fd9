package dev.idempotency.admin;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.RecordStatus;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.core.IdempotencyProtocol;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordStore;
import dev.idempotency.spi.StoreUnavailableException;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * What an administrator may do with the records (the admin resource is its JAX-RS face): list an endpoint's records
 * with the stuck ones first, show one, release one in progress (fenced on the version shown), purge the expired
 * now. Every action is an {@link IdempotencyEvent.Administered} event (and so a log line, IDEM-I011).
 */
public final class Administration {
    /** The most records one list answers. */
    public static final int MAX_LIST = 500;
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final RecordStore store;
    private final IdempotencyProtocol protocol;
    private final Clock clock;
    private final Function<String, EndpointPolicy> policies;
    private final java.util.function.IntSupplier purge;
    private final Consumer<IdempotencyEvent> events;

    public Administration(RecordStore store, IdempotencyProtocol protocol, Clock clock,
                   Function<String, EndpointPolicy> policies, java.util.function.IntSupplier purge,
                   Consumer<IdempotencyEvent> events) {
        this.store = store;
        this.protocol = protocol;
        this.clock = clock;
        this.policies = policies;
        this.purge = purge;
        this.events = events;
    }

    /** What a release came to. */
    public enum Release {
        RELEASED, NOT_FOUND, NOT_PROCESSING, CHANGED
    }

    /** The endpoint's records, stuck first, then oldest first, as JSON. */
    public byte[] list(String administrator, String endpoint, Set<RecordStatus> statuses, Duration olderThan,
                       int limit) {
        Instant now = clock.instant();
        List<IdempotencyRecord> records;
        if (!store.capabilities().contains(dev.idempotency.spi.StoreCapability.LISTING_RECORDS)) {
            throw new IdempotencyException(Problem.of(ProblemType.ADMIN_UNSUPPORTED, "the record store does not list"
                    + " records (StoreCapability.LISTING_RECORDS)"));
        }
        try {
            records = store.list(endpoint, statuses, now.minus(olderThan), now, limit);
        } catch (StoreUnavailableException e) {
            throw dev.idempotency.core.ProtocolAnswers.unavailable(e);
        }
        events.accept(new IdempotencyEvent.Administered(endpoint, "", "list", administrator,
                "listed " + records.size()));
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("endpoint", endpoint);
        json.put("records", records.stream().map(record -> view(record, now)).toList());
        return write(json);
    }

    /** One record, if there is one; shown is logged either way. */
    public Optional<IdempotencyRecord> find(String administrator, String scopeKey) {
        Optional<IdempotencyRecord> found = read(scopeKey);
        events.accept(new IdempotencyEvent.Administered(found.map(IdempotencyRecord::endpoint).orElse(""), scopeKey,
                "show", administrator, found.isPresent() ? "shown" : "not-found"));
        return found;
    }

    /** The record as it is now, read for an action already logged (the answer to a release). */
    public Optional<IdempotencyRecord> current(String scopeKey) {
        return read(scopeKey);
    }

    /** A record as JSON, with the version a release must name. */
    public byte[] json(IdempotencyRecord record) {
        return write(view(record, clock.instant()));
    }

    /**
     * Releases the record in progress if it is still the version the administrator saw ({@link #version}):
     * FAILED_RETRYABLE, so that the next retry runs it again.
     */
    public Release release(String administrator, String scopeKey, String version) {
        Optional<IdempotencyRecord> found = read(scopeKey);
        Release result;
        if (found.isEmpty()) {
            result = Release.NOT_FOUND;
        } else if (!version(found.get()).equals(version)) {
            result = Release.CHANGED;
        } else if (found.get().status() != RecordStatus.PROCESSING) {
            result = Release.NOT_PROCESSING;
        } else {
            IdempotencyRecord record = found.get();
            EndpointPolicy policy = policies.apply(record.endpoint());
            // An endpoint this deployment no longer serves keeps its record as long as it was to be kept.
            Duration retention = policy != null ? policy.retention()
                    : Duration.between(clock.instant(), record.expiresAt()).abs();
            result = protocol.recovery().releaseByAdministrator(record, retention) ? Release.RELEASED : Release.CHANGED;
        }
        events.accept(new IdempotencyEvent.Administered(found.map(IdempotencyRecord::endpoint).orElse(""), scopeKey,
                "release", administrator, result.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-')));
        return result;
    }

    /** Deletes the expired records now, as the scheduled purge does, and returns how many. */
    public int purge(String administrator) {
        int purged = purge.getAsInt();
        events.accept(new IdempotencyEvent.Administered("", "", "purge", administrator, "purged " + purged));
        return purged;
    }

    /**
     * A record's version, for {@code ETag}/{@code If-Match}: a digest of its owner token, state and last change,
     * which reveals no token, and changes with every change a release must not miss.
     */
    public static String version(IdempotencyRecord record) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest((record.ownerToken() + "|" + record.status()
                    + "|" + record.updatedAt()).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java has SHA-256", e);
        }
    }

    private Optional<IdempotencyRecord> read(String scopeKey) {
        try {
            return store.find(scopeKey);
        } catch (StoreUnavailableException e) {
            throw dev.idempotency.core.ProtocolAnswers.unavailable(e);
        }
    }

    // What an administrator sees: the record's state and times, who it belongs to, never its fingerprint, owner
    // token or stored body (which may hold what the redaction kept out of other views).
    private static Map<String, Object> view(IdempotencyRecord record, Instant now) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("scopeKey", record.scopeKey());
        json.put("endpoint", record.endpoint());
        json.put("tenant", record.tenant());
        json.put("principal", record.principal());
        json.put("state", record.status().name());
        json.put("stuck", record.status() == RecordStatus.PROCESSING
                && record.leaseUntil().map(now::isAfter).orElse(true));
        json.put("attempts", record.attempts());
        json.put("createdAt", record.createdAt().toString());
        json.put("updatedAt", record.updatedAt().toString());
        record.leaseUntil().ifPresent(lease -> json.put("leaseUntil", lease.toString()));
        json.put("expiresAt", record.expiresAt().toString());
        record.resourceId().ifPresent(id -> json.put("resourceId", id));
        record.response().ifPresent(response -> json.put("responseStatus", response.status()));
        json.put("version", version(record));
        return json;
    }

    private static byte[] write(Object json) {
        try {
            return MAPPER.writeValueAsBytes(json);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("maps of strings, numbers and booleans always serialize", e);
        }
    }
}
