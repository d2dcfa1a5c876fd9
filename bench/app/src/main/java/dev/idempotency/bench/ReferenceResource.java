package dev.idempotency.bench;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Status;
import jakarta.transaction.UserTransaction;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.core.UriInfo;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;
import java.util.UUID;

/**
 * The protocol's minimum written by hand, what {@code @Idempotent} is measured against.
 *
 * <p>{@code POST /reference}: a claim INSERT committed in its own JTA transaction; then, in the business
 * transaction, the JPA insert and the fenced UPDATE of the record with the response bytes; one commit.
 * 7 statements (BEGIN, INSERT, COMMIT; BEGIN, INSERT, UPDATE, COMMIT), 2 commits. A duplicate key on the
 * claim rolls back, reads the record and replays it.
 *
 * <p>{@code POST /reference/replay}: the same endpoint for a client that retries: one SELECT by primary
 * key first, the stored status, Location and body written back; a key it does not find is executed as
 * above.
 *
 * <p>Deliberately minimal: the scope is caller + key (SHA-256), the request hash is SHA-256 of the body
 * bytes (no canonical JSON), no lease, no quotas, no expiry.
 */
@Path("reference")
@ApplicationScoped
public class ReferenceResource {
    static final String KEY_HEADER = "Idempotency-Key";
    static final String REPLAYED_HEADER = "Idempotent-Replayed";

    @Inject
    Items items;
    @Inject
    ReferenceRecords records;
    @Inject
    UserTransaction transaction;

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public Response create(@HeaderParam(KEY_HEADER) String key, byte[] body, @Context UriInfo uri,
                           @Context SecurityContext security) throws Exception {
        Request request = Request.of(key, body, security);
        if (request == null) {
            return Response.status(security.getUserPrincipal() == null ? 401 : 400).build();
        }
        return execute(request, body, uri);
    }

    @POST
    @Path("replay")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public Response replay(@HeaderParam(KEY_HEADER) String key, byte[] body, @Context UriInfo uri,
                           @Context SecurityContext security) throws Exception {
        Request request = Request.of(key, body, security);
        if (request == null) {
            return Response.status(security.getUserPrincipal() == null ? 401 : 400).build();
        }
        Optional<ReferenceRecords.Stored> stored = records.find(request.scopeKey);
        if (stored.isPresent()) {
            return answer(stored.get(), request);
        }
        return execute(request, body, uri);
    }

    private Response execute(Request request, byte[] body, UriInfo uri) throws Exception {
        String owner = UUID.randomUUID().toString().replace("-", "");
        transaction.begin();
        boolean claimed;
        try {
            claimed = records.claim(request.scopeKey, owner, request.hash);
        } catch (Exception e) {
            transaction.rollback();
            throw e;
        }
        if (!claimed) {
            transaction.rollback();
            return records.find(request.scopeKey).map(stored -> answer(stored, request))
                    .orElseGet(() -> Response.status(409).header("Retry-After", "1").build());
        }
        transaction.commit();
        try {
            transaction.begin();
            ItemRequest item = SharedJsonb.engine().fromJson(new ByteArrayInputStream(body), ItemRequest.class);
            Item created = items.create(item, request.caller);
            URI location = Items.location(uri, created);
            byte[] json = SharedJsonb.engine().toJson(ItemView.of(created)).getBytes(StandardCharsets.UTF_8);
            if (!records.finish(request.scopeKey, owner, 201, location.toString(), json)) {
                // Fenced out: another executor holds the record now; nothing of ours may commit.
                transaction.rollback();
                return Response.status(409).header("Retry-After", "1").build();
            }
            transaction.commit();
            return Response.created(location).entity(json).type(MediaType.APPLICATION_JSON_TYPE).build();
        } catch (Exception e) {
            if (transaction.getStatus() != Status.STATUS_NO_TRANSACTION) {
                transaction.rollback();
            }
            records.release(request.scopeKey, owner);
            throw e;
        }
    }

    private static Response answer(ReferenceRecords.Stored stored, Request request) {
        if (!stored.requestHash().equals(request.hash)) {
            return Response.status(422).build();
        }
        if (!"SUCCEEDED".equals(stored.status())) {
            return Response.status(409).header("Retry-After", "1").build();
        }
        return Response.status(stored.responseStatus()).header(HttpHeaders.LOCATION, stored.location())
                .header(REPLAYED_HEADER, "true").entity(stored.body()).type(MediaType.APPLICATION_JSON_TYPE).build();
    }

    /** What the reference keeps of a request: its scope (caller + key) and the hash of its body. */
    private record Request(String caller, String scopeKey, String hash) {
        static Request of(String key, byte[] body, SecurityContext security) {
            if (security.getUserPrincipal() == null || key == null || key.isEmpty() || key.length() > 255) {
                return null;
            }
            String caller = security.getUserPrincipal().getName();
            MessageDigest sha = sha256();
            sha.update(caller.getBytes(StandardCharsets.UTF_8));
            sha.update((byte) 0);
            sha.update(key.getBytes(StandardCharsets.UTF_8));
            String scopeKey = HexFormat.of().formatHex(sha.digest());
            return new Request(caller, scopeKey, HexFormat.of().formatHex(sha256().digest(body)));
        }

        private static MessageDigest sha256() {
            try {
                return MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("every Java platform has SHA-256", e);
            }
        }
    }
}
