package dev.idempotency.endpoint;

import dev.idempotency.IdempotencyEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** An application observer of the library's events. */
@ApplicationScoped
public class EventLog {
    private final List<IdempotencyEvent> events = new CopyOnWriteArrayList<>();

    void on(@Observes IdempotencyEvent event) {
        events.add(event);
    }

    public List<IdempotencyEvent> events() {
        return List.copyOf(events);
    }

    public void clear() {
        events.clear();
    }
}
