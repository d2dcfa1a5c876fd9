package dev.idempotency.demo;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.NamedQuery;
import jakarta.persistence.Table;
import jakarta.persistence.UniqueConstraint;

import java.math.BigDecimal;

/** A payment: one per merchant order and tenant, which the database's unique constraint guarantees. */
@Entity
@Table(name = "demo_payment", uniqueConstraints = @UniqueConstraint(name = "uk_demo_payment_order",
        columnNames = {"tenant", "merchant_order_no"}))
@NamedQuery(name = "Payment.byOrder",
        query = "select p from Payment p where p.tenant = :tenant and p.merchantOrderNo = :merchantOrderNo order by p.id")
public class Payment {
    @Id
    @Column(length = 36)
    public String id;
    @Column(nullable = false, length = 128)
    public String tenant;
    @Column(name = "merchant_order_no", nullable = false, length = 128)
    public String merchantOrderNo;
    @Column(nullable = false, precision = 19, scale = 2)
    public BigDecimal amount;
    @Column(nullable = false, length = 3)
    public String currency;
    @Column(nullable = false, length = 16)
    public String status;
    @Column(name = "charge_id", length = 36)
    public String chargeId;
}
