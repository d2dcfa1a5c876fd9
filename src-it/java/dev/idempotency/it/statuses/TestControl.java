package dev.idempotency.it.statuses;

import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.config.ConfigProvider;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the test does on the server's side: waits for a held execution and releases it, counts executions,
 * and changes a record as another node would (a takeover; rules this node does not know), through the
 * record table's own DataSource.
 */
@Path("control")
@Produces(MediaType.TEXT_PLAIN)
public class TestControl {
    @Inject
    Holds holds;

    @GET
    @Path("entered/{key}")
    public Response entered(@PathParam("key") String key) throws InterruptedException {
        return holds.awaitEntered(key, 30) ? Response.noContent().build() : Response.status(504).build();
    }

    @POST
    @Path("release/{key}")
    public Response release(@PathParam("key") String key) {
        holds.release(key);
        return Response.noContent().build();
    }

    /** The state the next asynchronous task ended in (IdempotencyEvent.TaskEnded), 504 if none within 30 s. */
    @GET
    @Path("task-ended")
    public Response taskEnded() throws InterruptedException {
        String state = holds.awaitTaskEnded(30);
        return state == null ? Response.status(504).build() : Response.ok(state).build();
    }

    @GET
    @Path("executions/{key}")
    public String executions(@PathParam("key") String key) {
        return String.valueOf(holds.executions(key));
    }

    /** Another node takes the endpoint's running operations over: a new owner token, a new lease. */
    @POST
    @Path("take-over/{endpoint}")
    public String takeOver(@PathParam("endpoint") String endpoint) throws SQLException, NamingException {
        try (Connection c = dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement("UPDATE " + table() + " SET owner_token = ?, attempts = attempts + 1,"
                     + " lease_until = ? WHERE endpoint = ? AND status = 'PROCESSING'")) {
            ps.setString(1, "f".repeat(32));
            // UTC without zone, as the library writes its timestamps.
            ps.setObject(2, LocalDateTime.ofInstant(Instant.now().plusSeconds(60), ZoneOffset.UTC));
            ps.setString(3, endpoint);
            return String.valueOf(ps.executeUpdate());
        }
    }

    /** The endpoint's records as if fingerprinted by a node under rules this one does not accept. */
    @POST
    @Path("foreign-rules/{endpoint}")
    public String foreignRules(@PathParam("endpoint") String endpoint) throws SQLException, NamingException {
        Map<String, String> changed = new LinkedHashMap<>();
        try (Connection c = dataSource().getConnection()) {
            try (PreparedStatement ps = c.prepareStatement("SELECT scope_key, request_hash FROM " + table()
                    + " WHERE endpoint = ?")) {
                ps.setString(1, endpoint);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        String[] parts = rs.getString(2).split(":");
                        changed.put(rs.getString(1), parts[0] + ":" + parts[1] + ":0badf00d");
                    }
                }
            }
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + table() + " SET request_hash = ? WHERE scope_key = ?")) {
                for (Map.Entry<String, String> e : changed.entrySet()) {
                    ps.setString(1, e.getValue());
                    ps.setString(2, e.getKey());
                    ps.executeUpdate();
                }
            }
        }
        return String.valueOf(changed.size());
    }

    private static DataSource dataSource() throws NamingException {
        return (DataSource) new InitialContext().lookup(
                ConfigProvider.getConfig().getValue("idempotency.datasource", String.class));
    }

    private static String table() {
        return ConfigProvider.getConfig().getOptionalValue("idempotency.table", String.class).orElse("idempotency_record");
    }
}
