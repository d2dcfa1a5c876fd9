package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.OutcomeResolver;
import dev.idempotency.spi.RecordStore;
import dev.idempotency.spi.StoreUnavailableException;
import dev.idempotency.spi.TaskInput;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Keeps the promise of a 202 (docs/adr/0020): an accepted asynchronous operation whose node died — PROCESSING, its
 * lease run out by the database's clock, nobody retrying — is run again on this node from the input its claim kept,
 * without waiting for its client to send it again. Found on the expiry index as the {@link Settler} finds stuck
 * operations (a PROCESSING record expires a retention after its lease ends), at a shorter period, and only for
 * the endpoints whose tasks can run again ({@link #whyNotResumed}). Each is admitted as its client's retry would be
 * (the takeover is the fenced update: one node wins; an endpoint with external side effects asks its resolver
 * first), and the claim won goes to the trigger's {@link Runner} with what was kept. What has no input, cannot be
 * made again from it, or has run {@code maxAttempts} times is left alone: the settler gives it back after
 * {@code settle.after}, as before.
 */
public final class TaskResumption {
    // Left-alone operations reported once each (per claim), not at every pass; forgotten past this many.
    private static final int REPORTED_LIMIT = 10_000;

    private final AdmissionPhase admission;
    private final RecordStore store;
    private final TransactionBoundary transactions;
    private final Clock clock;
    private final OutcomeStorage outcomes;
    private final RequestPreparation preparation;
    private final Map<String, Settler.Endpoint> endpoints = new HashMap<>();
    private final Duration lookBack;
    private final int maxAttempts;
    private final int batchSize;
    private final Set<String> reported = new HashSet<>();

    /** Where the trigger runs a resumed operation's method under its claim, off the pass's thread. */
    @FunctionalInterface
    public interface Runner {
        void run(Claim claim, KeptRequest kept);
    }

    /**
     * What one pass did with one operation whose lease had run out.
     *
     * @param resumed  whether it was taken over and handed to the runner; otherwise {@code why} it was left alone
     * @param attempt  the attempt the runner runs, or the record's attempts when left alone
     */
    public record Resumption(String endpoint, String scopeKey, boolean resumed, int attempt, String why) {
    }

    /**
     * @param endpoints   the deployment's endpoints; those {@link #whyNotResumed} refuses are ignored
     * @param lookBack    how long after its lease ran out an operation is still run again ({@code settle.after}:
     *                    after that the settler gives it back)
     * @param maxAttempts after how many attempts an operation is no longer run again (one that kills its node each
     *                    time must not take every node down)
     */
    public TaskResumption(AdmissionPhase admission, RecordStore store, TransactionBoundary transactions, Clock clock,
                          OutcomeStorage outcomes, RequestPreparation preparation, Collection<Settler.Endpoint> endpoints,
                          Duration lookBack, int maxAttempts, int batchSize) {
        this.admission = Objects.requireNonNull(admission, "admission");
        this.store = Objects.requireNonNull(store, "store");
        this.transactions = Objects.requireNonNull(transactions, "transactions");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.outcomes = Objects.requireNonNull(outcomes, "outcomes");
        this.preparation = Objects.requireNonNull(preparation, "preparation");
        boolean keeps = store.capabilities().contains(dev.idempotency.spi.StoreCapability.TASK_INPUT);
        for (Settler.Endpoint endpoint : endpoints) {
            if (keeps && whyNotResumed(endpoint.policy(), endpoint.resolver()).isEmpty()) {
                this.endpoints.put(endpoint.policy().endpoint(), endpoint);
            }
        }
        this.lookBack = Objects.requireNonNull(lookBack, "lookBack");
        if (maxAttempts < 1 || batchSize < 1) {
            throw new IllegalArgumentException("maxAttempts and batchSize must be positive");
        }
        this.maxAttempts = maxAttempts;
        this.batchSize = batchSize;
    }

    /**
     * Why an endpoint's accepted operations are not run again when their node dies, if they are not: not
     * asynchronous (its client is waiting for the answer), no input kept ({@link OutcomeStorage#whyNoInputKept}),
     * or external side effects that no resolver can ask about (an earlier attempt may have acted downstream).
     */
    public static Optional<String> whyNotResumed(EndpointPolicy policy, Optional<OutcomeResolver> resolver) {
        if (!policy.asynchronous()) {
            return Optional.of("it is not asynchronous");
        }
        Optional<String> noInput = OutcomeStorage.whyNoInputKept(policy);
        if (noInput.isPresent()) {
            return Optional.of("it keeps no input with its claims: " + noInput.get());
        }
        if (policy.externalSideEffects() && resolver.isEmpty()) {
            return Optional.of("it declares external side effects and has no OutcomeResolver to ask whether an earlier"
                    + " attempt acted downstream");
        }
        return Optional.empty();
    }

    /** Whether the accepted operations of {@code endpoint} are run again by another node when theirs dies. */
    public boolean resumes(String endpoint) {
        return endpoints.containsKey(endpoint);
    }

    /**
     * Keeps what another node needs to run {@code claim}'s operation again with its claim, under the endpoint's
     * storage rules, in a transaction of its own (the claim has committed; its task has not started yet).
     *
     * @return false when nothing was kept: the endpoint keeps nothing, the claim is no longer the caller's, or the
     *         store did not answer (the operation is then given back by the settler when its node dies, as before)
     */
    public boolean keep(Claim claim, KeptRequest kept) {
        Operation op = claim.operation();
        if (!resumes(op.policy().endpoint())) {
            return false;
        }
        Optional<TaskInput> input = outcomes.inputForStorage(kept, op.policy(), op.scopeKey());
        if (input.isEmpty()) {
            return false;
        }
        try {
            return transactions.requiresNew(() -> store.keepTaskInput(op.scopeKey(), claim.ownerToken(), input.get()));
        } catch (StoreUnavailableException e) {
            return false;
        }
    }

    /** Whether any endpoint's accepted operations are run again here: if none, no pass needs to run. */
    public boolean any() {
        return !endpoints.isEmpty();
    }

    /**
     * One pass: every resumable operation whose lease ran out within {@code lookBack} is taken over and handed to
     * {@code runner}, or reported once as left alone. One thread at a time.
     */
    public synchronized List<Resumption> resumeDue(Runner runner) {
        List<Resumption> done = new ArrayList<>();
        Instant now = clock.instant();
        for (Duration retention : endpoints.values().stream().map(e -> e.policy().retention()).distinct().toList()) {
            Instant from = now.minus(lookBack).plus(retention);
            String after = "";
            Instant to = now.plus(retention);
            while (true) {
                Instant pageFrom = from;
                String pageAfter = after;
                List<IdempotencyRecord> page = transactions.withoutTransaction(() ->
                        store.findProcessing(pageFrom, pageAfter, to, batchSize));
                for (IdempotencyRecord found : page) {
                    Settler.Endpoint endpoint = endpoints.get(found.endpoint());
                    if (endpoint != null && endpoint.policy().retention().equals(retention)) {
                        resume(found, endpoint, now, runner).ifPresent(done::add);
                    }
                    from = found.expiresAt();
                    after = found.scopeKey();
                }
                if (page.size() < batchSize) {
                    break;
                }
            }
        }
        return done;
    }

    private Optional<Resumption> resume(IdempotencyRecord orphan, Settler.Endpoint endpoint, Instant now,
                                        Runner runner) {
        if (orphan.leaseUntil().filter(now::isBefore).isPresent()) {
            return Optional.empty();
        }
        if (orphan.attempts() >= maxAttempts) {
            return leftAlone(orphan, "it ran " + orphan.attempts() + " times already");
        }
        Optional<TaskInput> input = transactions.withoutTransaction(() ->
                store.findTaskInput(orphan.scopeKey(), orphan.ownerToken()));
        if (input.isEmpty()) {
            return leftAlone(orphan, "its claim kept no input (accepted by a node of an earlier release, or its"
                    + " node died before it was kept)");
        }
        Optional<KeptRequest> kept;
        try {
            kept = Optional.of(outcomes.openedInput(input.get(), orphan.scopeKey()));
        } catch (IllegalArgumentException | IllegalStateException unreadable) {
            return leftAlone(orphan, "its kept input does not open here: " + unreadable.getMessage());
        }
        Optional<Operation> op = preparation.resumed(orphan, kept.get(), endpoint.policy(), endpoint.resolver());
        if (op.isEmpty()) {
            return leftAlone(orphan, "its kept input is not its record's request (changed, or kept under a secret or"
                    + " fingerprint rules no longer accepted)");
        }
        Admission admitted;
        try {
            admitted = admission.admit(op.get(), Optional.of(orphan));
        } catch (IdempotencyException | StoreUnavailableException refused) {
            // A limit, the store, or a resolver that cannot tell yet: the next pass tries again.
            return Optional.of(new Resumption(orphan.endpoint(), orphan.scopeKey(), false, orphan.attempts(),
                    String.valueOf(refused.getMessage())));
        }
        if (!(admitted instanceof Admission.Execute execute)) {
            // Another node took it over first, or its resolver found it done downstream (recorded): nothing to run.
            return Optional.empty();
        }
        runner.run(execute.claim(), kept.get());
        return Optional.of(new Resumption(orphan.endpoint(), orphan.scopeKey(), true, execute.claim().attempt(), ""));
    }

    private Optional<Resumption> leftAlone(IdempotencyRecord orphan, String why) {
        if (reported.size() > REPORTED_LIMIT) {
            reported.clear();
        }
        if (!reported.add(orphan.scopeKey() + orphan.ownerToken())) {
            return Optional.empty();
        }
        return Optional.of(new Resumption(orphan.endpoint(), orphan.scopeKey(), false, orphan.attempts(), why));
    }
}
