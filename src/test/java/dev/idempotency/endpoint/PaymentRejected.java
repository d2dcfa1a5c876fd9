package dev.idempotency.endpoint;

/** A business rule refused the payment: a final failure, mapped to 400 by the application. */
public class PaymentRejected extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public PaymentRejected(String message) {
        super(message);
    }
}
