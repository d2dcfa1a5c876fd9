package dev.idempotency.bench;

import java.math.BigDecimal;

/** The JSON body of every write endpoint: {@code {"name":"...","amount":12.50,"currency":"EUR"}}. */
public class ItemRequest {
    public String name;
    public BigDecimal amount;
    public String currency;
}
