package dev.idempotency.jms;

import dev.idempotency.endpoints.IdempotentEndpoint;
import dev.idempotency.http.IdempotentExchange;

import dev.idempotency.core.OutcomeClassification;
import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyEvent.MessageHandled.Handling;
import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.RecordStatus;
import dev.idempotency.core.Admission;
import dev.idempotency.core.BusinessTransactions;
import dev.idempotency.core.AdmissionPhase;
import dev.idempotency.core.Execution;
import dev.idempotency.core.ProtocolEvents;
import dev.idempotency.core.Claim;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.core.CommitSettlement;
import dev.idempotency.core.BusinessTransaction;
import dev.idempotency.core.OutcomeCodec;
import dev.idempotency.core.OutcomeStorage;
import dev.idempotency.core.MessageFacts;
import dev.idempotency.core.Operation;
import dev.idempotency.spi.StoredResponse;
import jakarta.interceptor.InvocationContext;

import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Runs an {@code @Idempotent} message listener under the protocol, inside the transaction in which its container
 * delivers the message (ADR 11). The claim commits on its own, as for a request; the listener's work and the
 * record's finish then commit with the message's acknowledgement, in the container's (XA) transaction. A message
 * is acknowledged only once its outcome is recorded:
 * <ul>
 * <li>executed: finished in the message's transaction; if that transaction rolls back after all, the claim is
 *     given back from its completion, so that the redelivery runs at once;</li>
 * <li>already processed (a resend, a redelivery after a crash between the commit and the acknowledgement, a
 *     second copy): acknowledged without running;</li>
 * <li>a final failure ({@code finalOn}, Bean Validation): FAILED_FINAL is recorded on its own, the delivery rolls
 *     back (nothing of its work may commit), and the redelivery is acknowledged as already processed;</li>
 * <li>anything else (a retryable failure, a duplicate still running after the bounded wait, the store
 *     unavailable, a message that cannot be keyed): rolled back for the broker to redeliver, after its
 *     redelivery delay, to its dead-letter queue after its delivery attempts.</li>
 * </ul>
 * A rollback is asked for by marking the container's transaction rollback-only, so that the container neither
 * logs an error nor discards the listener. Without a container transaction (bean-managed, or not supported), the
 * library runs the listener in a transaction of its own and throws to have the message redelivered.
 */
public final class MessageDelivery {
    private static final Logger LOG = Logger.getLogger(MessageDelivery.class.getName());
    private static final StoredResponse PROCESSED = new StoredResponse(204, Map.of(), new byte[0], StoredResponse.PLAIN);

    private final BusinessTransactions transactions;
    private final AdmissionPhase admission;
    private final Execution execution;
    // The stored outcome of a failure without a response: a problem naming the exception's type, not its message.
    private final BiFunction<ProblemType, String, StoredResponse> failureOutcomes;
    private final ProtocolEvents events;

    public MessageDelivery(BusinessTransactions transactions, AdmissionPhase admission, Execution execution,
                           BiFunction<ProblemType, String, StoredResponse> failureOutcomes, ProtocolEvents events) {
        this.transactions = transactions;
        this.admission = admission;
        this.execution = execution;
        this.failureOutcomes = failureOutcomes;
        this.events = events;
    }

    /** Delivers the message that is {@code invocation}'s one parameter to {@code method}. */
    public Object deliver(InvocationContext invocation, IdempotentEndpoint method, IdempotentExchange exchange)
            throws Exception {
        EndpointPolicy policy = method.policy();
        Delivery delivery = new Delivery(policy, transactions.joinOrBegin());
        try {
            return admitAndRun(invocation, method, exchange, delivery);
        } catch (RuntimeException | Error unexpected) {
            if (delivery.tx.owned()) {
                // A transaction of the library's own never outlives the delivery.
                delivery.tx.abandonQuietly();
            }
            throw unexpected;
        } finally {
            exchange.delivered();
        }
    }

    private Object admitAndRun(InvocationContext invocation, IdempotentEndpoint method, IdempotentExchange exchange,
                               Delivery delivery) throws Exception {
        EndpointPolicy policy = delivery.policy;
        Operation op;
        try {
            delivery.message = JmsMessages.facts(invocation.getParameters()[0], policy);
            op = method.prepare(delivery.message).orElse(null);
        } catch (IdempotencyException refused) {
            LOG.warning("IDEM-W014 " + delivery + " cannot be taken: " + refused.problem().detail() + "; rolled back"
                    + " (the broker moves it to its dead-letter queue after its delivery attempts)");
            return delivery.redeliver(Handling.REFUSED, "", refused);
        }
        if (op == null) {
            // The key is optional on this endpoint and the message has none: it runs unprotected.
            return delivery.runUnprotected(invocation);
        }
        exchange.admitting(op);
        Admission admission;
        try {
            admission = this.admission.admit(op);
        } catch (IdempotencyException refused) {
            exchange.settled(Optional.empty());
            boolean misuse = refused.problem().type() == ProblemType.FINGERPRINT_MISMATCH;
            LOG.log(misuse ? Level.WARNING : Level.INFO, (misuse ? "IDEM-W014 " : "IDEM-I004 ") + delivery
                    + " of " + op.scope() + ": " + refused.problem().detail() + "; rolled back for redelivery");
            return delivery.redeliver(misuse ? Handling.REFUSED : Handling.REDELIVERED, op.scopeKey(), refused);
        }
        if (admission instanceof Admission.Replay replay) {
            exchange.settled(Optional.empty());
            LOG.fine(() -> "IDEM-I005 " + delivery + " was already processed (" + replay.record().status()
                    + "): acknowledged without running");
            delivery.handled(Handling.DUPLICATE, op.scopeKey());
            return delivery.acknowledged(null);
        }
        if (!(admission instanceof Admission.Execute execute)) {
            throw new IllegalStateException("IDEM-X007 a message waits for an in-flight duplicate; admitted " + admission);
        }
        return execute(invocation, exchange, delivery, execute.claim());
    }

    private Object execute(InvocationContext invocation, IdempotentExchange exchange, Delivery delivery, Claim claim)
            throws Exception {
        exchange.running(claim);
        return execution.run(claim, delivery.tx, new AcknowledgementCodec(invocation, exchange, delivery,
                claim));
    }

    /**
     * A message's outcomes: acknowledged (its transaction commits) once its outcome is recorded; rolled back for the
     * broker to redeliver otherwise. Nothing of a message's outcome is kept but that it was processed.
     */
    private final class AcknowledgementCodec implements OutcomeCodec<Object> {
        private final InvocationContext invocation;
        private final IdempotentExchange exchange;
        private final Delivery delivery;
        private final Claim claim;

        AcknowledgementCodec(InvocationContext invocation, IdempotentExchange exchange, Delivery delivery,
                             Claim claim) {
            this.invocation = invocation;
            this.exchange = exchange;
            this.delivery = delivery;
            this.claim = claim;
        }

        @Override
        public Object invoke() throws Exception {
            return invocation.proceed();
        }

        @Override
        public StoredResponse capture(Object result) {
            return PROCESSED;
        }

        @Override
        public StoredResponse kept(StoredResponse first, Claim claim, OutcomeStorage outcomes) {
            return first;
        }

        @Override
        public Object failed(Throwable thrown, Claim claim) throws Exception {
            exchange.settled(Optional.empty());
            return MessageDelivery.this.failed(delivery, claim, thrown);
        }

        // Its lease could not be held (a takeover may own the operation now), or a takeover fenced its finish out, or
        // the database refused its commit for another's: nothing of this delivery commits; the redelivery meets the
        // winner's outcome.
        @Override
        public Object superseded(Superseded why, Claim claim, Supplier<Admission.Replay> winner) throws Exception {
            exchange.settled(Optional.empty());
            if (why == Superseded.LEASE_LOST) {
                LOG.info("IDEM-I004 " + delivery + " lost its lease; rolled back for redelivery");
                return delivery.redeliver(Handling.REDELIVERED, claim.operation().scopeKey(),
                        new IdempotencyException(Problem.of(ProblemType.ROLLED_BACK, "the delivery was rolled back")));
            }
            LOG.info("IDEM-I004 " + delivery + " was fenced out by a takeover; rolled back for redelivery");
            return delivery.redeliver(Handling.REDELIVERED, claim.operation().scopeKey(),
                    new IdempotencyException(Problem.of(ProblemType.SUPERSEDED, "the delivery was taken over")));
        }

        @Override
        public Object retryable(Object result, StoredResponse first) {
            throw new IllegalStateException("IDEM-X009 a processed message is never retryable: " + first.status());
        }

        // The listener marked the transaction rollback-only, its way to ask for a redelivery.
        @Override
        public Object rolledBack(Object result, StoredResponse first, Optional<Exception> committedWith)
                throws Exception {
            exchange.settled(Optional.empty());
            LOG.info("IDEM-I004 " + delivery + " was marked rollback-only; rolled back for redelivery");
            return delivery.redeliver(Handling.REDELIVERED, claim.operation().scopeKey(),
                    new IdempotencyException(Problem.of(ProblemType.ROLLED_BACK, "the delivery was rolled back")));
        }

        @Override
        public Object finishFailed(RuntimeException storeFailed, Claim claim) throws Exception {
            exchange.settled(Optional.empty());
            LOG.log(Level.INFO, "IDEM-I004 " + delivery + " could not be finished; rolled back for redelivery",
                    storeFailed);
            return delivery.redeliver(Handling.REDELIVERED, claim.operation().scopeKey(), storeFailed);
        }

        // The container's commit acknowledges the message.
        @Override
        public Object finishedInCallersTransaction(BusinessTransaction tx, Claim claim, Object result,
                                                   StoredResponse first, Optional<Exception> committedWith) {
            return executed(result);
        }

        @Override
        public Object committed(Object result, StoredResponse first, Optional<Exception> committedWith) {
            return executed(result);
        }

        // No container transaction: the container redelivers on the exception (the claim went back with the rollback).
        @Override
        public Object commitRolledBack(CommitSettlement.OwnedCommit.RolledBack rolledBack, Claim claim) {
            exchange.settled(Optional.empty());
            throw rolledBack.failure();
        }

        @Override
        public Object notCommitted(CommitSettlement.OwnedCommit.NotCommitted notCommitted, Claim claim) {
            exchange.settled(Optional.empty());
            throw notCommitted.failure();
        }

        private Object executed(Object result) {
            exchange.settled(Optional.empty());
            delivery.handled(Handling.EXECUTED, claim.operation().scopeKey());
            return result;
        }
    }

    // The listener threw: nothing of its work commits. A final failure is recorded so that the redelivery is
    // acknowledged; a retryable one gives the claim back (recorded as dead-lettered on the last delivery).
    private Object failed(Delivery delivery, Claim claim, Throwable thrown) throws Exception {
        Operation op = claim.operation();
        boolean isFinal = OutcomeClassification.FailureKind.of(op.policy(), thrown) == OutcomeClassification.FailureKind.FINAL;
        boolean last = delivery.message.deliveryCount() >= op.policy().messages().orElseThrow().maxDeliveries();
        Handling handling = isFinal ? Handling.FAILED_FINAL : last ? Handling.DEAD_LETTERED : Handling.REDELIVERED;
        execution.recordFailure(claim, isFinal ? RecordStatus.FAILED_FINAL : RecordStatus.FAILED_RETRYABLE,
                switch (handling) {
                    case FAILED_FINAL -> Optional.of(outcome(ProblemType.MESSAGE_FAILED, thrown, ""));
                    case DEAD_LETTERED -> Optional.of(outcome(ProblemType.DEAD_LETTERED, thrown, "delivered "
                            + delivery.message.deliveryCount() + " times; the broker moves it to its dead-letter"
                            + " queue, from which it can be sent again: "));
                    default -> Optional.empty();
                });
        String what = switch (handling) {
            case FAILED_FINAL -> "failed finally: FAILED_FINAL is recorded, the delivery rolled back, and its"
                    + " redelivery will be acknowledged without running";
            case DEAD_LETTERED -> "failed on its last delivery (" + delivery.message.deliveryCount() + "): recorded as"
                    + " dead-lettered, rolled back";
            default -> "failed (attempt " + claim.attempt() + "): its claim is given back and the delivery rolled"
                    + " back for redelivery";
        };
        boolean retried = handling == Handling.REDELIVERED;
        LOG.log(retried ? Level.INFO : Level.WARNING, (retried ? "IDEM-I006 " : "IDEM-W015 ") + delivery + " of "
                + op.scope() + " " + what, thrown);
        delivery.handled(handling, op.scopeKey());
        if (delivery.tx.owned()) {
            // No container transaction to mark: the container redelivers on the exception.
            throw thrown instanceof Exception e ? e : new IllegalStateException(thrown);
        }
        return null;
    }

    // The stored outcome of a failed message: the exception's type, not its message, which may hold anything.
    private StoredResponse outcome(ProblemType type, Throwable thrown, String detail) {
        return failureOutcomes.apply(type, detail + thrown.getClass().getName());
    }

    /** One delivery of a message: its transaction (the container's, or the library's own) and what it said. */
    private final class Delivery {
        private final EndpointPolicy policy;
        private final BusinessTransaction tx;
        private MessageFacts message;

        Delivery(EndpointPolicy policy, BusinessTransaction tx) {
            this.policy = policy;
            this.tx = tx;
        }

        void handled(Handling handling, String scopeKey) {
            events.publish(new IdempotencyEvent.MessageHandled(policy.endpoint(), scopeKey,
                    message == null ? "" : message.messageId().orElse(""), message == null ? 0 : message.deliveryCount(),
                    handling));
        }

        /** Rolls the delivery back, for the broker to deliver it again. */
        Object redeliver(Handling handling, String scopeKey, Exception cause) throws Exception {
            tx.abandonQuietly();
            handled(handling, scopeKey);
            if (tx.owned()) {
                throw cause;
            }
            return null;
        }

        /** The outcome is recorded: the container's commit acknowledges the message (the library's own commits here). */
        Object acknowledged(Object result) {
            if (tx.owned()) {
                tx.commit();
            }
            return result;
        }

        Object runUnprotected(InvocationContext invocation) throws Exception {
            Object result;
            try {
                result = invocation.proceed();
            } catch (Exception | Error thrown) {
                if (tx.owned()) {
                    tx.abandonQuietly();
                }
                throw thrown;
            }
            return acknowledged(result);
        }

        @Override
        public String toString() {
            return message == null ? "a message to " + policy.endpoint() : String.valueOf(message);
        }
    }
}
