package dev.idempotency.it.statuses;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/** The status-codes test application: every resource and provider found by scanning, the library's included. */
@ApplicationPath("api")
public class StatusesApplication extends Application {
}
