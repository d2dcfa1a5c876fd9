package dev.idempotency.bench;

import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import jakarta.ws.rs.ext.ContextResolver;
import jakarta.ws.rs.ext.Provider;

/**
 * One JSON-B engine for every request and every row: RESTEasy on WildFly builds one per request
 * otherwise (7x slower GETs), which would drown what the benchmark compares. The hand-written reference
 * serializes with the same engine.
 */
@Provider
public class SharedJsonb implements ContextResolver<Jsonb> {
    private static final Jsonb JSONB = JsonbBuilder.create();

    /** The engine, for code that writes JSON bytes itself (the reference stores them for replay). */
    static Jsonb engine() {
        return JSONB;
    }

    @Override
    public Jsonb getContext(Class<?> type) {
        return JSONB;
    }
}
