package dev.idempotency.demo;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/** The payments API under {@code /demo/api}; resources and providers (the library's too) are found by scanning. */
@ApplicationPath("api")
public class DemoApplication extends Application {
}
