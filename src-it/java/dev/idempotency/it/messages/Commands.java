package dev.idempotency.it.messages;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.Scope;
import dev.idempotency.core.ScopeDigest;
import jakarta.annotation.Resource;
import jakarta.inject.Inject;
import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.JMSProducer;
import jakarta.jms.Message;
import jakarta.jms.Queue;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.config.ConfigProvider;

import javax.sql.DataSource;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;

/**
 * The test's side on the server: sends commands as a producer does (each send its own message, outside any
 * transaction), and reads what became of them: effects, the record, the deliveries' handling, the dead letters.
 */
@Path("commands")
public class Commands {
    static final String ENDPOINT = "it.commands";

    @Inject
    JMSContext jms;
    @Resource(lookup = "java:/jms/queue/it-commands")
    Queue commands;
    @Resource(lookup = "java:/jms/queue/DLQ")
    Queue deadLetters;
    @Resource(lookup = "java:/jdbc/PaymentsDS")
    DataSource database;
    @Inject
    HandledLog handled;

    /** Sends {@code copies} messages with this body and, when given, the key property. */
    @POST
    @Path("send")
    @Consumes(MediaType.APPLICATION_JSON)
    public Response send(@QueryParam("key") String key, @QueryParam("copies") @DefaultValue("1") int copies,
                         String body) throws SQLException {
        createEffectsTable();
        for (int i = 0; i < copies; i++) {
            JMSProducer producer = jms.createProducer();
            if (key != null) {
                producer.setProperty("IdempotencyKey", key);
            }
            producer.send(commands, body);
        }
        return Response.noContent().build();
    }

    /** How many effects a command's reference has. */
    @GET
    @Path("effects/{reference}")
    @Produces(MediaType.TEXT_PLAIN)
    public long effects(@PathParam("reference") String reference) throws SQLException {
        try (Connection c = database.getConnection();
             PreparedStatement count = c.prepareStatement("SELECT COUNT(*) FROM it_command_effect WHERE reference = ?")) {
            count.setString(1, reference);
            try (ResultSet rs = count.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** The key's record: status, attempts and stored status, as {@code STATUS attempts responseStatus}. */
    @GET
    @Path("record/{key}")
    @Produces(MediaType.TEXT_PLAIN)
    public Response record(@PathParam("key") String key) throws SQLException {
        try (Connection c = database.getConnection();
             PreparedStatement read = c.prepareStatement(
                     "SELECT status, attempts, response_status FROM idempotency_record WHERE scope_key = ?")) {
            read.setString(1, scopeKey(key));
            try (ResultSet rs = read.executeQuery()) {
                return rs.next() ? Response.ok(rs.getString(1) + " " + rs.getInt(2) + " " + rs.getInt(3)).build()
                        : Response.status(404).build();
            }
        }
    }

    /**
     * Waits at most 60 s until {@code atLeast} deliveries of the key were handled so; answers how many were
     * (504 when fewer), and how every delivery of the key was handled, in order.
     */
    @GET
    @Path("handled/{key}/{handling}")
    @Produces(MediaType.TEXT_PLAIN)
    public Response handled(@PathParam("key") String key, @PathParam("handling") String handling,
                            @QueryParam("atLeast") @DefaultValue("1") int atLeast) throws InterruptedException {
        String scopeKey = scopeKey(key);
        long count = handled.await(scopeKey, IdempotencyEvent.MessageHandled.Handling.valueOf(handling), atLeast, 60);
        return Response.status(count >= atLeast ? 200 : 504).entity(count + " " + handled.of(scopeKey)).build();
    }

    /**
     * Takes the key's message off the dead-letter queue, waiting for it at most 30 s: 200
     * when it came (its key), 404 when not.
     */
    @POST
    @Path("dead-letters/{key}/take")
    @Produces(MediaType.TEXT_PLAIN)
    public Response takeDeadLetter(@PathParam("key") String key) throws JMSException {
        try (JMSConsumer consumer = jms.createConsumer(deadLetters, selector(key))) {
            Message dead = consumer.receive(30_000);
            return dead == null ? Response.status(404).build()
                    : Response.ok(dead.getStringProperty("IdempotencyKey")).build();
        }
    }

    private static String selector(String key) {
        return "IdempotencyKey = '" + key.replace("'", "''") + "'";
    }

    private static String scopeKey(String key) {
        byte[] secret = ConfigProvider.getConfig().getValue("idempotency.secret", String.class)
                .getBytes(StandardCharsets.UTF_8);
        return new ScopeDigest(secret, List.of()).of(new Scope("", "$messages", ENDPOINT, key));
    }

    private void createEffectsTable() throws SQLException {
        try (Connection c = database.getConnection()) {
            c.createStatement().execute("CREATE TABLE IF NOT EXISTS it_command_effect (reference VARCHAR(100) NOT NULL,"
                    + " delivery INT NOT NULL)");
        }
    }
}
