package dev.idempotency.jaxrs;

import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.RecordStatus;
import dev.idempotency.admin.Administration;
import dev.idempotency.deployment.Assembly;
import dev.idempotency.spi.IdempotencyRecord;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.EntityTag;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.ext.Providers;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * The records as an operator looks after them: find the stuck operations of an endpoint, look at one, release one
 * that is stuck, purge the expired ones now. Opt-in: not a root resource itself (so that scanning the library
 * registers nothing); the application subclasses it with its {@code @Path}, and only callers in the role
 * {@code idempotency.admin.role} ({@code idempotency-admin}) may use it (401 without a caller, 403 without the
 * role), whatever else protects the path.
 *
 * <pre>{@code
 * @Path("admin/idempotency")
 * public class IdempotencyAdmin extends IdempotencyAdminResource {
 * }
 * }</pre>
 *
 * <ul>
 *   <li>{@code GET endpoints/{endpoint}/records?state=PROCESSING&older-than=PT5M&limit=50}: the endpoint's records,
 *   PROCESSING past its lease ({@code "stuck": true}) first, then oldest first; {@code state} any of
 *   {@code PROCESSING}, {@code SUCCEEDED}, {@code FAILED_RETRYABLE}, {@code FAILED_FINAL} (comma-separated, default
 *   all), {@code older-than} an ISO-8601 duration (default {@code PT0S}), {@code limit} at most 500 (default 50).
 *   It reads the endpoint's records without an index of its own.</li>
 *   <li>{@code GET records/{scopeKey}}: one record, with its {@code version} also as {@code ETag}.</li>
 *   <li>{@code POST records/{scopeKey}/release} with {@code If-Match: "<version>"}: the operation in progress
 *   becomes FAILED_RETRYABLE, so that the client's next retry runs it again; fenced: an executor still running
 *   can no longer commit. 412 when the record changed since it was read, 428 without {@code If-Match}, 409 when
 *   it is no longer in progress.</li>
 *   <li>{@code POST purge}: deletes the expired records now, as the scheduled purge does.</li>
 * </ul>
 * Every action, reads included, is an {@code IdempotencyEvent.Administered} event and a log line (IDEM-I011)
 * naming the administrator. Records show their scope (tenant, principal, endpoint) and state, never the key's
 * fingerprint, the owner token or the stored response body.
 */
@Produces(MediaType.APPLICATION_JSON)
public abstract class IdempotencyAdminResource {
    @Context
    SecurityContext security;
    @Context
    Providers providers;

    /** The role a caller must have; by default {@code idempotency.admin.role}. */
    protected String role() {
        return assembly().settings().adminRole();
    }

    @GET
    @Path("endpoints/{endpoint}/records")
    public Response records(@PathParam("endpoint") String endpoint, @QueryParam("state") String states,
                            @QueryParam("older-than") @DefaultValue("PT0S") String olderThan,
                            @QueryParam("limit") @DefaultValue("50") String limit) {
        String administrator = administrator();
        byte[] json = administration().list(administrator, endpoint, states(states), duration(olderThan),
                limit(limit));
        return Response.ok(json, MediaType.APPLICATION_JSON_TYPE).build();
    }

    @GET
    @Path("records/{scopeKey}")
    public Response record(@PathParam("scopeKey") String scopeKey) {
        String administrator = administrator();
        IdempotencyRecord record = administration().find(administrator, scopeKey).orElseThrow(() -> notFound());
        return Response.ok(administration().json(record), MediaType.APPLICATION_JSON_TYPE)
                .tag(new EntityTag(Administration.version(record))).build();
    }

    @POST
    @Path("records/{scopeKey}/release")
    public Response release(@PathParam("scopeKey") String scopeKey, @HeaderParam(HttpHeaders.IF_MATCH) String ifMatch) {
        String administrator = administrator();
        if (ifMatch == null || ifMatch.isBlank()) {
            throw new IdempotencyException(Problem.of(ProblemType.RECORD_VERSION_REQUIRED, "send If-Match with the"
                    + " record's version (its ETag), so that a record that changed since you read it is left alone"));
        }
        String version = ifMatch.trim();
        if (version.startsWith("W/")) {
            version = version.substring(2);
        }
        version = version.replace("\"", "");
        return switch (administration().release(administrator, scopeKey, version)) {
            case RELEASED -> {
                IdempotencyRecord released = administration().current(scopeKey).orElseThrow(() -> notFound());
                yield Response.ok(administration().json(released), MediaType.APPLICATION_JSON_TYPE)
                        .tag(new EntityTag(Administration.version(released))).build();
            }
            case NOT_FOUND -> throw notFound();
            case CHANGED -> throw new IdempotencyException(Problem.of(ProblemType.RECORD_CHANGED, "the record changed"
                    + " since that version was read; read it again"));
            case NOT_PROCESSING -> throw new IdempotencyException(Problem.of(ProblemType.RECORD_NOT_PROCESSING,
                    "the operation is no longer in progress: there is nothing to release"));
        };
    }

    @POST
    @Path("purge")
    public Response purge() {
        String administrator = administrator();
        return Response.ok("{\"purged\":" + administration().purge(administrator) + "}", MediaType.APPLICATION_JSON_TYPE)
                .build();
    }

    // The caller's name, once it is known to be in the role.
    private String administrator() {
        if (security == null || security.getUserPrincipal() == null) {
            throw new IdempotencyException(Problem.of(ProblemType.PRINCIPAL_REQUIRED,
                    "the admin resource needs an authenticated caller in the role " + role()));
        }
        if (!security.isUserInRole(role())) {
            throw new IdempotencyException(Problem.of(ProblemType.ADMIN_FORBIDDEN, "the caller is not in the role "
                    + role()));
        }
        return security.getUserPrincipal().getName();
    }

    private static Set<RecordStatus> states(String raw) {
        if (raw == null || raw.isBlank()) {
            return EnumSet.allOf(RecordStatus.class);
        }
        Set<RecordStatus> states = EnumSet.noneOf(RecordStatus.class);
        for (String state : raw.split(",")) {
            try {
                states.add(RecordStatus.valueOf(state.trim().toUpperCase(Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw invalid("state '" + state.trim() + "' is none of " + EnumSet.allOf(RecordStatus.class));
            }
        }
        return states;
    }

    private static Duration duration(String raw) {
        try {
            Duration duration = Duration.parse(raw);
            if (duration.isNegative()) {
                throw invalid("older-than must not be negative");
            }
            return duration;
        } catch (DateTimeParseException e) {
            throw invalid("older-than '" + raw + "' is not an ISO-8601 duration such as PT5M");
        }
    }

    private static int limit(String raw) {
        try {
            int limit = Integer.parseInt(raw.trim());
            if (limit >= 1 && limit <= Administration.MAX_LIST) {
                return limit;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw invalid("limit must be a whole number from 1 to " + Administration.MAX_LIST);
    }

    private static IdempotencyException invalid(String detail) {
        return new IdempotencyException(Problem.of(ProblemType.ADMIN_REQUEST_INVALID, detail));
    }

    private static IdempotencyException notFound() {
        return new IdempotencyException(Problem.of(ProblemType.OPERATION_NOT_FOUND, "no record with this scope key"));
    }

    private Administration administration() {
        return assembly().administration();
    }

    private Assembly assembly() {
        return AssemblyResolver.of(providers);
    }
}
