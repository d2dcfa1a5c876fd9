package dev.idempotency.bench;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import java.math.BigDecimal;

/** The business row every write endpoint inserts (table bench_item, bench/schema.sql). */
@Entity
@Table(name = "bench_item")
public class Item {
    @Id
    @Column(length = 36)
    public String id;
    @Column(nullable = false, length = 255)
    public String owner;
    @Column(nullable = false, length = 128)
    public String name;
    @Column(nullable = false, precision = 19, scale = 2)
    public BigDecimal amount;
    @Column(nullable = false, length = 3)
    public String currency;
}
