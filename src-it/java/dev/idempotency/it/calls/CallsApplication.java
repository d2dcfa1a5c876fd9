package dev.idempotency.it.calls;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/** The business-methods test application: its resource found by scanning. */
@ApplicationPath("api")
public class CallsApplication extends Application {
}
