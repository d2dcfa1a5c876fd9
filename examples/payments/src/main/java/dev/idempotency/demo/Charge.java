package dev.idempotency.demo;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.NamedQuery;
import jakarta.persistence.Table;

import java.math.BigDecimal;

/** A charge the demo's acquirer holds, with the idempotency key it was called with. */
@Entity
@Table(name = "demo_charge")
@NamedQuery(name = "Charge.byOrder",
        query = "select c from Charge c where c.merchantOrderNo = :merchantOrderNo order by c.id")
public class Charge {
    @Id
    @Column(length = 36)
    public String id;
    @Column(name = "merchant_order_no", nullable = false, length = 128)
    public String merchantOrderNo;
    @Column(nullable = false, precision = 19, scale = 2)
    public BigDecimal amount;
    @Column(nullable = false, length = 3)
    public String currency;
    @Column(name = "idempotency_key", nullable = false, length = 255)
    public String idempotencyKey;
}
