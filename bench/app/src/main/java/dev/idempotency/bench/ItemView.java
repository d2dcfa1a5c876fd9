package dev.idempotency.bench;

import java.math.BigDecimal;

/** The JSON answer of every write endpoint. */
public class ItemView {
    public String id;
    public String name;
    public BigDecimal amount;
    public String currency;
    public String owner;

    static ItemView of(Item item) {
        ItemView view = new ItemView();
        view.id = item.id;
        view.name = item.name;
        view.amount = item.amount;
        view.currency = item.currency;
        view.owner = item.owner;
        return view;
    }
}
