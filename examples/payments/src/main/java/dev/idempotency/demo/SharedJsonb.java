package dev.idempotency.demo;

import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import jakarta.ws.rs.ext.ContextResolver;
import jakarta.ws.rs.ext.Provider;

/** One JSON-B engine for every request (RESTEasy on WildFly builds one per request otherwise). */
@Provider
public class SharedJsonb implements ContextResolver<Jsonb> {
    private static final Jsonb JSONB = JsonbBuilder.create();

    @Override
    public Jsonb getContext(Class<?> type) {
        return JSONB;
    }
}
