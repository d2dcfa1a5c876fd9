package dev.idempotency.demo;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.time.Clock;
import java.time.Duration;

/**
 * The application's clock, which the library uses for its own time unless it reads the database's
 * ({@code idempotency.clock=database}, the default). Demo-only fault: {@code demo.clock-skew} (an ISO-8601
 * duration, server property) makes this node's clock run ahead, as a node with a wrong clock would; like every
 * fault of the demo it acts only where {@code demo.faults=true} ({@link DemoFaults}).
 */
@ApplicationScoped
public class DemoClock {
    @Inject
    @ConfigProperty(name = "demo.clock-skew", defaultValue = "PT0S")
    String skew;

    @Produces
    @Dependent
    Clock clock() {
        return DemoFaults.enabled() ? Clock.offset(Clock.systemUTC(), Duration.parse(skew)) : Clock.systemUTC();
    }
}
