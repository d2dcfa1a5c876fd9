package dev.idempotency.demo;

import jakarta.json.bind.annotation.JsonbPropertyOrder;

import java.math.BigDecimal;

/** A charge as the acquirer shows it. */
@JsonbPropertyOrder({"chargeId", "merchantOrderNo", "amount", "currency", "idempotencyKey"})
public class ChargeView {
    public String chargeId;
    public String merchantOrderNo;
    public BigDecimal amount;
    public String currency;
    public String idempotencyKey;

    static ChargeView of(Charge c) {
        ChargeView v = new ChargeView();
        v.chargeId = c.id;
        v.merchantOrderNo = c.merchantOrderNo;
        v.amount = c.amount;
        v.currency = c.currency;
        v.idempotencyKey = c.idempotencyKey;
        return v;
    }
}
