package dev.idempotency.demo;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.PersistenceException;
import jakarta.validation.Validator;

import java.util.UUID;

/**
 * Makes one payment, the same way whoever asks: a client's {@code POST /payments} (at once or as a task) or a
 * payment command from the queue ({@link PaymentCommandListener}). Validates the request, writes the payment,
 * charges the acquirer with the operation's derived key, records the charge; in the caller's transaction.
 */
@ApplicationScoped
public class Checkout {
    @Inject
    Payments payments;
    @Inject
    AcquirerClient acquirer;
    @Inject
    Validator validator;

    /**
     * @throws DemoProblem 400 for an invalid request, 409 when another operation already paid the merchant order,
     *                     5xx when the acquirer or the database failed
     */
    public Payment pay(PaymentRequest request, String tenant) {
        DemoProblem.requireValid(validator, request);
        Payment payment = new Payment();
        payment.id = UUID.randomUUID().toString();
        payment.tenant = tenant;
        payment.merchantOrderNo = request.merchantOrderNo;
        payment.amount = request.amount.setScale(2, java.math.RoundingMode.UNNECESSARY);
        payment.currency = request.currency;
        payment.status = "PENDING";
        try {
            payments.insert(payment);
        } catch (PersistenceException failed) {
            if (!isUniqueViolation(failed)) {
                // A lost connection or a crashed database is not a client's error: retryable, never recorded.
                throw failed;
            }
            String holder = payments.holderOf(payment.tenant, payment.merchantOrderNo).orElse("(in progress)");
            throw DemoProblem.alreadyPaid(payment.merchantOrderNo, holder);
        }
        payment.chargeId = acquirer.charge(payment);
        payment.status = "CAPTURED";
        payments.update(payment);
        return payment;
    }

    // SQLSTATE class 23 (integrity constraint violation): the merchant order's unique key, on every database.
    private static boolean isUniqueViolation(Throwable failed) {
        for (Throwable t = failed; t != null; t = t.getCause()) {
            if (t instanceof java.sql.SQLException sql && sql.getSQLState() != null && sql.getSQLState().startsWith("23")) {
                return true;
            }
        }
        return false;
    }
}
