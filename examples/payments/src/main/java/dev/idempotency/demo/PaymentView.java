package dev.idempotency.demo;

import jakarta.json.bind.annotation.JsonbPropertyOrder;

import java.math.BigDecimal;

/** A payment as the API shows it. */
@JsonbPropertyOrder({"id", "merchantOrderNo", "amount", "currency", "status", "chargeId"})
public class PaymentView {
    public String id;
    public String merchantOrderNo;
    public BigDecimal amount;
    public String currency;
    public String status;
    public String chargeId;

    static PaymentView of(Payment p) {
        PaymentView v = new PaymentView();
        v.id = p.id;
        v.merchantOrderNo = p.merchantOrderNo;
        v.amount = p.amount;
        v.currency = p.currency;
        v.status = p.status;
        v.chargeId = p.chargeId;
        return v;
    }
}
