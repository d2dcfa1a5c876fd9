package dev.idempotency.demo;

import java.math.BigDecimal;

/** The body of a payout request (to the payouts API, and from it to the acquirer with a reference). */
public class PayoutRequest {
    public String beneficiary;
    public BigDecimal amount;
    public String currency;
    /** Set by the payouts service for the acquirer: the operation's derived key. */
    public String reference;
}
