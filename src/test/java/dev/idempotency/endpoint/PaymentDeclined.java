package dev.idempotency.endpoint;

/**
 * The acquirer declined the card: the declined attempt is kept (it is written before this is thrown), so the
 * application declares this exception as not rolling back ({@code @Transactional(dontRollbackOn)}).
 */
public class PaymentDeclined extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final String paymentId;

    public PaymentDeclined(String paymentId) {
        super("declined: " + paymentId);
        this.paymentId = paymentId;
    }

    /** A checked decline: {@code @Transactional} commits on checked exceptions unless told otherwise. */
    public static class CardExpired extends Exception {
        private static final long serialVersionUID = 1L;
        final String paymentId;

        public CardExpired(String paymentId) {
            super("card expired: " + paymentId);
            this.paymentId = paymentId;
        }
    }

    /** An EJB application exception that keeps the transaction: the library's own transaction commits too. */
    @jakarta.ejb.ApplicationException(rollback = false)
    public static class Flagged extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final String paymentId;

        public Flagged(String paymentId) {
            super("flagged for review: " + paymentId);
            this.paymentId = paymentId;
        }
    }
}
