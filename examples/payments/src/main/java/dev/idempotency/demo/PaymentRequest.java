package dev.idempotency.demo;

import java.math.BigDecimal;

/** The body of {@code POST /payments} and of the acquirer's {@code POST /acquirer/charges}. */
public class PaymentRequest {
    public String merchantOrderNo;
    public BigDecimal amount;
    public String currency;
    /** Tracing only: left out of the fingerprint ({@code idempotency.fingerprint.ignore-fields}). */
    public String traceId;
}
