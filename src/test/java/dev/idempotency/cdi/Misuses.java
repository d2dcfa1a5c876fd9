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
    public static class TwoKeys {
        @Idempotent
        public String post(@dev.idempotency.IdempotencyKey String a, @dev.idempotency.IdempotencyKey String b) {
            return a + b;
        }
    }

    @ApplicationScoped
    @Path("keyed")
    public static class ResourceWithAKeyParameter {
        @POST
        @Idempotent
        public String create(@dev.idempotency.IdempotencyKey @jakarta.ws.rs.QueryParam("k") String key) {
            return key;
        }
    }

    @ApplicationScoped
    public static class KeyOfAnObject {
        @Idempotent
        public String post(@dev.idempotency.IdempotencyKey Object key) {
            return "";
        }
    }

    @ApplicationScoped
    public static class CallKeyedByBody {
        @Idempotent(endpoint = "calls.body", keySource = dev.idempotency.KeySource.BODY_FIELD, keyName = "id")
        public String post(@dev.idempotency.IdempotencyKey String key) {
            return key;
        }
    }

    @ApplicationScoped
    public static class CallScopedByProperty {
        @Idempotent(endpoint = "calls.property")
        public String post(@dev.idempotency.IdempotencyKey String key) {
            return key;
        }
    }

    @ApplicationScoped
    public static class AsynchronousCall {
        @Idempotent(asynchronous = true)
        public String post(@dev.idempotency.IdempotencyKey String key) {
            return key;
        }
    }

    @ApplicationScoped
    public static class ValidCall {
        @Idempotent(endpoint = "calls.valid")
        public int post(@dev.idempotency.IdempotencyKey java.util.UUID key, String what) {
            return what.length();
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

    @ApplicationScoped
    @Path("body-field")
    public static class BodyFieldWithoutName {
        @POST
        @Idempotent(keySource = dev.idempotency.KeySource.BODY_FIELD)
        public String create(String body) {
            return "";
        }
    }

    @ApplicationScoped
    @Path("bad-name")
    public static class BadEndpointName {
        @POST
        @Idempotent(endpoint = "payments create!")
        public String create() {
            return "";
        }
    }

    @ApplicationScoped
    @Path("static")
    public static class StaticMethod {
        @POST
        @Idempotent(endpoint = "static.create")
        public static String create() {
            return "";
        }
    }

    @ApplicationScoped
    @Path("replay-full")
    public static class ReplayWithFullStorage {
        @POST
        @Idempotent(endpoint = "replay.full", storage = ResponseStorage.FULL, replayWith = "rebuild")
        public String create() {
            return "";
        }

        String rebuild(String id) {
            return id;
        }
    }

    @ApplicationScoped
    @Path("sealed")
    public static class EncryptedWithoutKeys {
        @POST
        @Idempotent(endpoint = "sealed.create", storage = ResponseStorage.ENCRYPTED)
        public String create() {
            return "";
        }
    }

    @ApplicationScoped
    @Path("side-effects")
    public static class SideEffectsWithoutResolver {
        @POST
        @Idempotent(endpoint = "payouts.create", externalSideEffects = true)
        public String create() {
            return "";
        }
    }

    public static class AsynchronousWithoutExecutor {
        @POST
        @Idempotent(endpoint = "exports.create", asynchronous = true)
        public String create() {
            return "";
        }
    }

    /** The executor of asynchronous tasks an application provides: with it, AsynchronousWithoutExecutor deploys. */
    public static class TaskExecutor {
        @jakarta.enterprise.inject.Produces
        @dev.idempotency.IdempotencyExecutor
        static final java.util.concurrent.ExecutorService TASKS = java.util.concurrent.Executors.newSingleThreadExecutor(
                task -> {
                    Thread thread = new Thread(task, "deployment-test-tasks");
                    thread.setDaemon(true);
                    return thread;
                });
    }

    /** Knows payouts.create: with it, SideEffectsWithoutResolver deploys. */
    @ApplicationScoped
    public static class PayoutResolver implements dev.idempotency.spi.OutcomeResolver {
        @Override
        public boolean handles(String endpoint) {
            return endpoint.equals("payouts.create");
        }

        @Override
        public dev.idempotency.spi.Resolution resolve(dev.idempotency.spi.ResolutionRequest request) {
            throw new UnsupportedOperationException("never asked in a deployment test");
        }
    }

    @ApplicationScoped
    public static class OneScope implements dev.idempotency.spi.ScopeResolver {
        @Override
        public dev.idempotency.Scope resolve(dev.idempotency.spi.ScopeRequest request) {
            return new dev.idempotency.Scope("one", "p", request.endpoint(), request.key());
        }
    }

    @ApplicationScoped
    public static class OtherScope implements dev.idempotency.spi.ScopeResolver {
        @Override
        public dev.idempotency.Scope resolve(dev.idempotency.spi.ScopeRequest request) {
            return new dev.idempotency.Scope("other", "p", request.endpoint(), request.key());
        }
    }

    @ApplicationScoped
    public static class ListenerKeyedByHeader implements jakarta.jms.MessageListener {
        @Override
        @Idempotent(endpoint = "commands.header")
        public void onMessage(jakarta.jms.Message message) {
        }
    }

    @ApplicationScoped
    public static class AsynchronousListener implements jakarta.jms.MessageListener {
        @Override
        @Idempotent(endpoint = "commands.async", keySource = dev.idempotency.KeySource.MESSAGE_PROPERTY, asynchronous = true)
        public void onMessage(jakarta.jms.Message message) {
        }
    }

    @ApplicationScoped
    @Path("mk")
    public static class MessageKeyOnResource {
        @POST
        @Idempotent(endpoint = "resource.message-key", keySource = dev.idempotency.KeySource.MESSAGE_ID)
        public String create() {
            return "";
        }
    }

    @ApplicationScoped
    public static class ValidListener implements jakarta.jms.MessageListener {
        @Override
        @Idempotent(endpoint = "commands.valid", keySource = dev.idempotency.KeySource.BODY_FIELD, keyName = "reference")
        public void onMessage(jakarta.jms.Message message) {
        }
    }

    @ApplicationScoped
    @Path("it")
    public static class InTransactionAsynchronous {
        @POST
        @Idempotent(endpoint = "in-tx.async", claim = dev.idempotency.ClaimMode.IN_TRANSACTION, asynchronous = true)
        public String create() {
            return "";
        }
    }

    @ApplicationScoped
    @Path("ia")
    public static class InTransactionAccepted {
        @POST
        @Idempotent(endpoint = "in-tx.accepted", claim = dev.idempotency.ClaimMode.IN_TRANSACTION,
                inFlight = dev.idempotency.InFlightPolicy.ACCEPTED)
        public String create() {
            return "";
        }
    }

    @ApplicationScoped
    public static class InTransactionListener implements jakarta.jms.MessageListener {
        @Override
        @Idempotent(endpoint = "in-tx.listener", keySource = dev.idempotency.KeySource.BODY_FIELD, keyName = "reference",
                claim = dev.idempotency.ClaimMode.IN_TRANSACTION)
        public void onMessage(jakarta.jms.Message message) {
        }
    }
}
