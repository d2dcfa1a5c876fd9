package dev.idempotency.core;

import dev.idempotency.InFlightPolicy;
import dev.idempotency.spi.OutcomeCache;
import dev.idempotency.spi.RecordStore;

import java.time.Clock;
import java.util.random.RandomGenerator;

/**
 * The protocol, assembled from its three phases over one record store: {@link AdmissionPhase} (claim by INSERT,
 * decide on the existing record after a unique violation — never check-then-insert — take over by compare-and-set
 * on the owner token), {@link CompletionPhase} (finish by an update fenced on the owner token, or give the claim
 * back) and {@link RecoveryPhase} (settle what did not end plainly). It knows no CDI, JAX-RS, JDBC or JTA; those are
 * behind {@link RecordStore} and {@link TransactionBoundary}.
 */
public final class IdempotencyProtocol {
    private final AdmissionPhase admission;
    private final CompletionPhase completion;
    private final RecoveryPhase recovery;

    /**
     * @param random     source of owner tokens; must be a cryptographically strong generator in production
     * @param maxWaiters how many in-flight duplicates may wait at once under {@link InFlightPolicy#WAIT}
     */
    public IdempotencyProtocol(RecordStore store, TransactionBoundary transactions, Clock clock,
                               RandomGenerator random, ProtocolEvents events, int maxWaiters) {
        this(store, OutcomeCache.NONE, transactions, clock, random, events, maxWaiters);
    }

    /**
     * @param cache finished outcomes kept beside the store for replays (Redis): read where a replay would read the
     *              store, written after the commit of an outcome; never asked to decide a claim
     */
    public IdempotencyProtocol(RecordStore store, OutcomeCache cache, TransactionBoundary transactions, Clock clock,
                               RandomGenerator random, ProtocolEvents events, int maxWaiters) {
        RecordFactory records = new RecordFactory(random);
        RecordReads reads = new RecordReads(store, cache, transactions, clock, events);
        ProtocolAnswers answers = new ProtocolAnswers(clock, events);
        ProtocolParts parts = new ProtocolParts(store, cache, transactions, clock, events, records, reads, answers);
        this.completion = new CompletionPhase(parts);
        this.recovery = new RecoveryPhase(parts, completion);
        this.admission = new AdmissionPhase(parts, new InFlightAnswers(maxWaiters, reads, answers), recovery);
    }

    /** Before anything runs: a claim, a replay, an in-flight answer, or a refusal. */
    public AdmissionPhase admission() {
        return admission;
    }

    /** After a claimed execution: its outcome recorded, fenced, or its claim given back. */
    public CompletionPhase completion() {
        return completion;
    }

    /** What did not end plainly: unknown or refused commits, fenced executors, stuck operations; and the purge. */
    public RecoveryPhase recovery() {
        return recovery;
    }
}
