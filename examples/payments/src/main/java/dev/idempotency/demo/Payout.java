package dev.idempotency.demo;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.NamedQuery;
import jakarta.persistence.Table;

import java.math.BigDecimal;

/**
 * A payout the demo's acquirer holds. Its payouts API records the caller's reference but does not
 * deduplicate by it, like many bank APIs: a second request with the same reference pays out twice.
 */
@Entity
@Table(name = "demo_payout")
@NamedQuery(name = "Payout.byReference", query = "select p from Payout p where p.reference = :reference order by p.id")
public class Payout {
    /** The acquirer took the payout and is processing it. */
    public static final String RECEIVED = "RECEIVED";
    /** The money left. */
    public static final String SETTLED = "SETTLED";

    @Id
    @Column(length = 36)
    public String id;
    @Column(nullable = false, length = 255)
    public String reference;
    @Column(nullable = false, length = 128)
    public String beneficiary;
    @Column(nullable = false, precision = 19, scale = 2)
    public BigDecimal amount;
    @Column(nullable = false, length = 3)
    public String currency;
    @Column(nullable = false, length = 16)
    public String status;
}
