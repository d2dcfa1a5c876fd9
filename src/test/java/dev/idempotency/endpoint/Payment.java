package dev.idempotency.endpoint;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.UniqueConstraint;

import java.math.BigDecimal;

/** The business row of the test application: what must be written once per operation. */
@Entity
@Table(name = "test_payment", uniqueConstraints = @UniqueConstraint(name = "uk_test_payment_order",
        columnNames = {"tenant", "merchant_order_no"}))
public class Payment {
    @Id
    public String id;
    @Column(nullable = false)
    public String tenant;
    @Column(name = "merchant_order_no", nullable = false)
    public String merchantOrderNo;
    @Column(nullable = false, precision = 19, scale = 2)
    public BigDecimal amount;
    @Column(nullable = false)
    public String currency;
    @Column(name = "charge_key")
    public String chargeKey;
}
