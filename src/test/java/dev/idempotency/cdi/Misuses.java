package dev.idempotency.cdi;

import dev.idempotency.Idempotent;
import dev.idempotency.ResponseStorage;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.container.AsyncResponse;
import jakarta.ws.rs.container.Suspended;

import java.util.concurrent.CompletionStage;

/** Beans that use {@link Idempotent} wrongly: each must fail the deployment with its own message. */
final class Misuses {
    private Misuses() {
    }

    @ApplicationScoped
    public static class NotAResourceMethod {
        @Idempotent
        public String helper() {
            return "";
        }
    }

    @ApplicationScoped
    @Path("p")
    public static class PrimitiveReturn {
        @POST
        @Idempotent
        public int create() {
            return 1;
        }
    }

    @ApplicationScoped
    @Path("a")
    public static class Asynchronous {
        @POST
        @Idempotent
        public CompletionStage<String> create() {
            return null;
        }

        @POST
        @Path("s")
        @Idempotent(endpoint = "suspended")
        public void suspended(@Suspended AsyncResponse response) {
        }
    }

    @ApplicationScoped
    @Path("d")
    public static class DuplicateEndpoint {
        @POST
        @Idempotent(endpoint = "same")
        public String one() {
            return "";
        }

        @POST
        @Path("2")
        @Idempotent(endpoint = "same")
        public String two() {
            return "";
        }
    }

    @ApplicationScoped
    @Path("m")
    public static class MissingReplayMethod {
        @POST
        @Idempotent(storage = ResponseStorage.MINIMAL, replayWith = "rebuild")
        public String create() {
            return "";
        }
    }

    @ApplicationScoped
    @Path("b")
    public static class BadDuration {
        @POST
        @Idempotent(lease = "thirty seconds")
        public String create() {
            return "";
        }
    }

    @ApplicationScoped
    @Path("ok")
    public static class Valid {
        @POST
        @Idempotent(endpoint = "valid.create")
        public String create() {
            return "";
        }

        @GET
        public String read() {
            return "";
        }
    }
}
