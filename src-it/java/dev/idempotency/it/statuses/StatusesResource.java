package dev.idempotency.it.statuses;

import dev.idempotency.IdempotencyContext;
import dev.idempotency.Idempotent;
import dev.idempotency.InFlightPolicy;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/**
 * One idempotent endpoint per row of the README's status table that needs an endpoint of its own (its
 * settings are in this application's microprofile-config.properties). Every execution is counted by key;
 * the held ones wait for the test's release.
 */
@Path("statuses")
@RequestScoped
@Consumes(MediaType.APPLICATION_JSON)
@Produces(MediaType.APPLICATION_JSON)
public class StatusesResource {
    @Inject
    Holds holds;
    @Inject
    IdempotencyContext idempotency;
    @Resource
    TransactionSynchronizationRegistry transaction;

    @POST
    @Path("accepted")
    @Idempotent(endpoint = "statuses.accepted", inFlight = InFlightPolicy.ACCEPTED)
    public Response accepted(String body) {
        return held();
    }

    @POST
    @Path("too-early")
    @Idempotent(endpoint = "statuses.too-early", inFlight = InFlightPolicy.TOO_EARLY)
    public Response tooEarly(String body) {
        return held();
    }

    @POST
    @Path("in-transaction")
    @Idempotent(endpoint = "statuses.in-transaction", claim = dev.idempotency.ClaimMode.IN_TRANSACTION)
    public Response inTransaction(String body) {
        return held();
    }

    /**
     * Runs, and makes its transaction roll back at commit (a synchronization that fails before completion, as a
     * deferred constraint would): the library's finish, made in that transaction, must roll back with it.
     */
    @POST
    @Path("rolled-back-at-commit")
    @Idempotent(endpoint = "statuses.rolled-back-at-commit")
    public Response rolledBackAtCommit(String body) {
        failAtCommit();
        return created();
    }

    /** The same with the claim in the business transaction. */
    @POST
    @Path("rolled-back-at-commit-in-transaction")
    @Idempotent(endpoint = "statuses.rolled-back-at-commit-in-transaction",
            claim = dev.idempotency.ClaimMode.IN_TRANSACTION)
    public Response rolledBackAtCommitInTransaction(String body) {
        failAtCommit();
        return created();
    }

    private void failAtCommit() {
        transaction.registerInterposedSynchronization(new jakarta.transaction.Synchronization() {
            @Override
            public void beforeCompletion() {
                throw new IllegalStateException("the test's synchronization fails the commit");
            }

            @Override
            public void afterCompletion(int status) {
            }
        });
    }

    @POST
    @Path("superseded")
    @Idempotent(endpoint = "statuses.superseded")
    public Response superseded(String body) {
        return held();
    }

    @POST
    @Path("keys")
    @Idempotent(endpoint = "statuses.keys")
    public Response keys(String body) {
        return created();
    }

    @POST
    @Path("metered")
    @Idempotent(endpoint = "statuses.metered")
    public Response metered(String body) {
        return created();
    }

    @POST
    @Path("rules")
    @Idempotent(endpoint = "statuses.rules")
    public Response rules(String body) {
        return created();
    }

    /** Answers success from a transaction it marked rollback-only. */
    @POST
    @Path("rollback-only")
    @Transactional
    @Idempotent(endpoint = "statuses.rollback-only")
    public Response rollbackOnly(String body) {
        Response created = created();
        transaction.setRollbackOnly();
        return created;
    }

    /** Answers 2 KiB on an endpoint that keeps at most 1 KiB and fails beyond. */
    @POST
    @Path("large")
    @Idempotent(endpoint = "statuses.large")
    public Response large(String body) {
        holds.ran(key());
        return Response.status(201).entity("{\"padding\":\"" + "x".repeat(2048) + "\"}").build();
    }

    /**
     * Runs as an asynchronous task on the server's managed executor, held until the test releases it; its
     * entity is written with JSON-B off the request thread.
     */
    @POST
    @Path("task")
    @Idempotent(endpoint = "statuses.task", asynchronous = true)
    public TaskOutcome task(String body) {
        String key = key();
        holds.ran(key);
        holds.hold(key);
        return new TaskOutcome(key, holds.executions(key), Thread.currentThread().getName());
    }

    /** What the task answers. */
    public record TaskOutcome(String key, int execution, String thread) {
    }

    private Response held() {
        Response created = created();
        holds.hold(key());
        return created;
    }

    private Response created() {
        holds.ran(key());
        return Response.status(201).entity("{\"key\":\"" + key() + "\",\"execution\":" + holds.executions(key()) + "}")
                .build();
    }

    /**
     * Calls a downstream service through two MicroProfile Rest Clients that register DerivedKeyClientFilter, and
     * answers what each downstream call carried beside the keys the operation derives.
     */
    @POST
    @Path("downstream")
    @Idempotent(endpoint = "statuses.downstream")
    public Response downstream(String body, @jakarta.ws.rs.HeaderParam("Authorization") String authorization,
                               @jakarta.ws.rs.core.Context jakarta.ws.rs.core.UriInfo uri) {
        holds.ran(key());
        EchoApi echo = org.eclipse.microprofile.rest.client.RestClientBuilder.newBuilder().baseUri(uri.getBaseUri())
                .build(EchoApi.class);
        LedgerApi ledger = org.eclipse.microprofile.rest.client.RestClientBuilder.newBuilder().baseUri(uri.getBaseUri())
                .build(LedgerApi.class);
        String json = "{\"echo\":\"" + echo.echo(authorization, "{}") + "\",\"expectedEcho\":\""
                + idempotency.derive("echo.charge") + "\",\"ledger\":\"" + ledger.post(authorization, "{}")
                + "\",\"expectedLedger\":\"ledger:" + idempotency.derive("ledger.post") + "\"}";
        return Response.ok(json, MediaType.APPLICATION_JSON_TYPE).build();
    }

    /**
     * Calls the scripted downstream through the client half (IdempotentCalls, configured; the Rest Client's derived
     * key): its answer, or, when its outcome stayed unknown, what the typed exception said.
     */
    @POST
    @Path("retried")
    @Idempotent(endpoint = "statuses.retried")
    public Response retried(@jakarta.ws.rs.QueryParam("script") String script,
                            @jakarta.ws.rs.HeaderParam("Authorization") String authorization,
                            @jakarta.ws.rs.core.Context jakarta.ws.rs.core.UriInfo uri) {
        RetryingApi downstream = org.eclipse.microprofile.rest.client.RestClientBuilder.newBuilder()
                .baseUri(uri.getBaseUri()).build(RetryingApi.class);
        String expected = idempotency.derive("scripted.call");
        try {
            String answer = dev.idempotency.jaxrs.IdempotentCalls.configured()
                    .run(key -> downstream.call(authorization, script, "{\"amount\":5}"));
            return Response.ok("{\"answer\":" + answer + ",\"expectedKey\":\"" + expected + "\"}",
                    MediaType.APPLICATION_JSON_TYPE).build();
        } catch (RuntimeException e) {
            dev.idempotency.jaxrs.OperationOutcomeUnknownException unknown =
                    dev.idempotency.jaxrs.OperationOutcomeUnknownException.in(e).orElseThrow(() -> e);
            return Response.ok("{\"unknown\":true,\"attempts\":" + unknown.attempts() + ",\"lastStatus\":"
                    + unknown.lastStatus() + ",\"lastState\":\"" + unknown.lastState().map(Object::toString).orElse("")
                    + "\"}", MediaType.APPLICATION_JSON_TYPE).build();
        }
    }

    private String key() {
        return idempotency.key().orElseThrow();
    }
}
