package dev.idempotency.it.parts;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/** An application that brings its own parts to the library: every resource and provider found by scanning. */
@ApplicationPath("api")
public class PartsApplication extends Application {
}
