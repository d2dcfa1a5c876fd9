package dev.idempotency.bench;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/** The benchmark's endpoints under {@code /bench/api}; resources and providers (the library's too) are found by scanning. */
@ApplicationPath("api")
public class BenchApplication extends Application {
}
