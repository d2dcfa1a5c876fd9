package dev.idempotency.demo;

import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import jakarta.json.bind.annotation.JsonbPropertyOrder;

import java.math.BigDecimal;

/** A payout as the acquirer and the payouts API show it. */
@JsonbPropertyOrder({"id", "reference", "beneficiary", "amount", "currency", "status"})
public class PayoutView {
    private static final Jsonb JSONB = JsonbBuilder.create();
    public String id;
    public String reference;
    public String beneficiary;
    public BigDecimal amount;
    public String currency;
    public String status;

    /**
     * The JSON the payouts API answers with, written here (not by the server's JSON provider) so that an
     * outcome the {@link PayoutOutcomeResolver} rebuilds is the same bytes as a first answer.
     */
    String json() {
        return JSONB.toJson(this);
    }

    static PayoutView of(Payout p) {
        PayoutView v = new PayoutView();
        v.id = p.id;
        v.reference = p.reference;
        v.beneficiary = p.beneficiary;
        v.amount = p.amount;
        v.currency = p.currency;
        v.status = p.status;
        return v;
    }
}
