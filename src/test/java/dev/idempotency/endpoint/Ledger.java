package dev.idempotency.endpoint;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import java.math.BigDecimal;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The test application's idempotent business methods, called from Java rather than through HTTP or a queue: a
 * transfer posted under the caller's transfer id writes one {@link Payment} and returns a receipt.
 */
@ApplicationScoped
public class Ledger {
    /** Runs in every execution, before the payment is written: a test holds or fails it here. */
    static volatile Consumer<String> duringExecution = transferId -> { };
    static final AtomicInteger executions = new AtomicInteger();

    @Inject
    Payments payments;

    /** What a posted transfer returns: stored as JSON, read back on a repeat. */
    public record Receipt(String paymentId, String merchantOrderNo, BigDecimal amount, List<String> notes) {
    }

    /** A transfer the business refuses for good. */
    public static class TransferRefused extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public TransferRefused(String reason) {
            super(reason);
        }
    }

    @Idempotent(endpoint = "ledger.post", finalOn = TransferRefused.class)
    public Receipt post(@IdempotencyKey String transferId, String merchantOrderNo, BigDecimal amount) {
        executions.incrementAndGet();
        duringExecution.accept(transferId);
        Payment payment = new Payment();
        payment.id = UUID.randomUUID().toString();
        payment.tenant = "ledger";
        payment.merchantOrderNo = merchantOrderNo;
        payment.amount = amount;
        payment.currency = "EUR";
        payments.persist(payment);
        return new Receipt(payment.id, merchantOrderNo, amount, List.of("posted"));
    }

    /** A primitive result, a numeric key: the number of items, counted once per batch. */
    @Idempotent(endpoint = "ledger.count")
    public int count(@IdempotencyKey long batch, List<String> items) {
        executions.incrementAndGet();
        return items.size();
    }

    /** Configured in-flight=accepted, which a call has no status resource for. */
    @Idempotent(endpoint = "ledger.reserve")
    public String reserve(@IdempotencyKey String reservation) {
        executions.incrementAndGet();
        duringExecution.accept(reservation);
        return "reserved " + reservation;
    }

    /** A result JSON-B cannot write. */
    public static class Unwritable {
        public String getValue() {
            throw new IllegalStateException("not to be written");
        }
    }

    @Idempotent(endpoint = "ledger.unwritable")
    public Unwritable unwritable(@IdempotencyKey String key) {
        executions.incrementAndGet();
        return new Unwritable();
    }

    /** Scoped to the container's authenticated caller (call.principal = caller). */
    @Idempotent(endpoint = "ledger.mine")
    public String mine(@IdempotencyKey UUID request) {
        executions.incrementAndGet();
        return "done " + executions.get();
    }
}
