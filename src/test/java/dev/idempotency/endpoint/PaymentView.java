package dev.idempotency.endpoint;

import java.math.BigDecimal;

/** The JSON answer of {@code POST /payments}. */
public record PaymentView(String id, String merchantOrderNo, BigDecimal amount, String currency, String chargeKey,
                          int attempt) {
}
