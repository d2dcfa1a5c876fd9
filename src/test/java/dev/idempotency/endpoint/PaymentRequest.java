package dev.idempotency.endpoint;

import java.math.BigDecimal;

/** The JSON body of {@code POST /payments}. */
public class PaymentRequest {
    public String merchantOrderNo;
    public BigDecimal amount;
    public String currency;
    public String traceId;
    public String cardNumber;
}
