package dev.idempotency.core;

import dev.idempotency.RecordStatus;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.StoredResponse;

import java.time.Instant;
import java.util.HexFormat;
import java.util.Optional;
import java.util.random.RandomGenerator;

/** The one builder of the records the protocol writes: a claim's, a finish's, a settler's; and their owner tokens. */
final class RecordFactory {
    private final RandomGenerator random;

    RecordFactory(RandomGenerator random) {
        this.random = random;
    }

    /** 128 random bits, hex: unguessable, so that only the claim's holder can change its record. */
    String newToken() {
        byte[] bytes = new byte[16];
        random.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /** A PROCESSING record of {@code op}, leased from {@code now} and kept a retention after its lease. */
    IdempotencyRecord processing(Operation op, String token, int attempt, Instant createdAt, Instant now) {
        EndpointPolicy policy = op.policy();
        return new IdempotencyRecord(op.scopeKey(), op.scope().tenant(), op.scope().principal(), policy.endpoint(),
                op.fingerprint().stored(), RecordStatus.PROCESSING, Optional.empty(), Optional.empty(), token,
                Optional.of(now.plus(policy.lease())), attempt, createdAt, now,
                now.plus(policy.lease()).plus(policy.retention()));
    }

    /** The record as a claim in the business transaction wrote it: what its finish is fenced and charged on. */
    IdempotencyRecord claimed(Claim claim, Instant now) {
        return processing(claim.operation(), claim.ownerToken(), claim.attempt(), now, now);
    }

    /** The claim's record as a finish leaves it (its creation time is not known here, nor needed by a replay). */
    static IdempotencyRecord finished(Claim claim, RecordStatus status, Optional<String> resourceId,
                                      Optional<StoredResponse> response, Instant at, Instant expiresAt) {
        Operation op = claim.operation();
        return new IdempotencyRecord(op.scopeKey(), op.scope().tenant(), op.scope().principal(), op.policy().endpoint(),
                op.fingerprint().stored(), status, resourceId, response, claim.ownerToken(), Optional.empty(),
                claim.attempt(), at, at, expiresAt);
    }

    /** A stuck record as a settler takes it over: PROCESSING under a new token, for a lease of the settler's. */
    IdempotencyRecord settling(IdempotencyRecord stuck, String token, Instant leaseUntil, Instant now,
                               Instant expiresAt) {
        return new IdempotencyRecord(stuck.scopeKey(), stuck.tenant(), stuck.principal(), stuck.endpoint(),
                stuck.requestHash(), RecordStatus.PROCESSING, Optional.empty(), Optional.empty(), token,
                Optional.of(leaseUntil), stuck.attempts(), stuck.createdAt(), now, expiresAt);
    }
}
