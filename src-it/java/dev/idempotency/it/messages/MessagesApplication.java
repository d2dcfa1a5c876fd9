package dev.idempotency.it.messages;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/** The messages test application: its control resource found by scanning. */
@ApplicationPath("api")
public class MessagesApplication extends Application {
}
