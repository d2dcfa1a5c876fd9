package dev.idempotency.core;

import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.StoredResponse;
import dev.idempotency.spi.TaskInput;

import java.util.Objects;
import java.util.Optional;

/**
 * What of a first outcome is kept in the store, and how a kept one is read back: redacted, without its body when
 * it is larger than the endpoint keeps, sealed under {@code storage = encrypted} — and opened again for a replay.
 * Every trigger stores and replays through here, so no replay reads a body that was not meant to be kept.
 */
public final class OutcomeStorage {
    private final ResponseSealer sealer;
    private final JsonRedaction redactor;

    public OutcomeStorage(ResponseSealer sealer, JsonRedaction redactor) {
        this.sealer = Objects.requireNonNull(sealer, "sealer");
        this.redactor = Objects.requireNonNull(redactor, "redactor");
    }

    /**
     * The stored form of a first response: its redacted fields redacted; without its body when that is still
     * larger than the endpoint keeps (oversize-response=omit-body); under the endpoint's storage mode.
     */
    public StoredResponse forStorage(StoredResponse first, EndpointPolicy policy, String scopeKey) {
        StoredResponse kept = redacted(first, policy.redaction());
        if (kept.body().length > policy.maxResponseBytes() || StoredResponse.OMITTED.equals(kept.bodyEncoding())) {
            return kept.withBody(new byte[0], StoredResponse.OMITTED);
        }
        return switch (policy.storage()) {
            case FULL -> kept;
            case ENCRYPTED -> sealer.seal(kept, scopeKey);
            case MINIMAL -> kept.withBody(new byte[0], StoredResponse.OMITTED);
            case CONFIGURED -> throw new IllegalStateException("resolved policies have no CONFIGURED storage");
        };
    }

    // Only JSON has fields to redact: any other body of an endpoint with redacted fields, or JSON that does
    // not parse, is not kept at all (replays get the status and headers), since it may hold them in some form.
    private StoredResponse redacted(StoredResponse first, Redaction redaction) {
        byte[] body = first.body();
        if (!redaction.any() || body.length == 0) {
            return first;
        }
        String type = first.header("Content-Type");
        Optional<byte[]> kept = type != null && new RequestFacts("", "", type, "", "", body).isJson()
                ? redactor.redact(body, redaction) : Optional.empty();
        return kept.map(b -> first.withBody(b, StoredResponse.PLAIN))
                .orElseGet(() -> first.withBody(new byte[0], StoredResponse.OMITTED));
    }

    /** A stored response made readable again (decrypted); minimal bodies are rebuilt by the trigger's codec. */
    public StoredResponse opened(StoredResponse stored, String scopeKey) {
        return sealer.open(stored, scopeKey);
    }

    /**
     * The outcome a finished record replays, opened: every replay of every trigger starts here.
     *
     * @throws IllegalStateException (IDEM-X002) for a finished record without a response, which no finish writes
     */
    public StoredResponse replayed(IdempotencyRecord finished) {
        return opened(finished.response().orElseThrow(() -> new IllegalStateException(
                "IDEM-X002 a finished record without a response: " + finished.scopeKey())), finished.scopeKey());
    }

    /**
     * What an accepted operation keeps with its claim to be run again by another node (docs/adr/0020), under the
     * endpoint's rules: sealed under {@code storage = encrypted} as a stored body is; nothing where
     * {@link #whyNoInputKept} says why.
     */
    public Optional<TaskInput> inputForStorage(KeptRequest kept, EndpointPolicy policy, String scopeKey) {
        if (whyNoInputKept(policy).isPresent()) {
            return Optional.empty();
        }
        StoredResponse plain = new StoredResponse(200, java.util.Map.of(), kept.encode(), StoredResponse.PLAIN);
        StoredResponse stored = policy.storage() == dev.idempotency.ResponseStorage.ENCRYPTED
                ? sealer.seal(plain, scopeKey) : plain;
        return Optional.of(new TaskInput(stored.body(), stored.bodyEncoding()));
    }

    /**
     * Why an endpoint keeps no input with its claims, if it keeps none: minimal storage (what the request held is
     * not to be stored), redacted fields (the input would hold them whole).
     */
    public static Optional<String> whyNoInputKept(EndpointPolicy policy) {
        if (policy.storage() == dev.idempotency.ResponseStorage.MINIMAL) {
            return Optional.of("its storage is minimal");
        }
        if (policy.redaction().any()) {
            return Optional.of("it redacts fields (idempotency.endpoint." + policy.endpoint() + ".redact-fields), which"
                    + " its request may hold");
        }
        return Optional.empty();
    }

    /**
     * An input {@link #inputForStorage} kept, opened.
     *
     * @throws IllegalArgumentException when it is not a kept request this node reads
     * @throws IllegalStateException    when it does not open (a key no longer configured, or changed bytes)
     */
    public KeptRequest openedInput(TaskInput input, String scopeKey) {
        return KeptRequest.decode(sealer.open(new StoredResponse(200, java.util.Map.of(), input.data(), input.encoding()),
                scopeKey).body());
    }
}
