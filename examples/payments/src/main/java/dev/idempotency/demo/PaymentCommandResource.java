package dev.idempotency.demo;

import dev.idempotency.jaxrs.IdempotencyStatusResource;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSContext;
import jakarta.jms.Queue;
import jakarta.json.Json;
import jakarta.json.JsonException;
import jakarta.json.JsonObject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import java.io.StringReader;

/**
 * {@code POST /payment-commands}: hands a payment command to the queue that {@link PaymentCommandListener}
 * consumes, as an acquirer's webhook or a batch import would (each call sends one message, so a command sent
 * twice is two messages), and answers 202 with the {@code Location} of its status. The message carries the
 * caller's tenant and name as its properties: the listener's scope is the caller's, as for {@code POST /payments}.
 *
 * <p>{@code GET /payment-commands/{commandId}}: what became of the caller's command (404 while it waits in the queue,
 * then its record's state); with {@code Prefer: wait=N} the answer comes once it has an outcome.
 */
@Path("payment-commands")
@RequestScoped
public class PaymentCommandResource extends IdempotencyStatusResource {
    static final String QUEUE = "java:/jms/queue/payment-commands";
    static final String CONNECTION_FACTORY = "java:comp/DefaultJMSConnectionFactory";

    @Inject
    Tenants tenants;
    @Context
    SecurityContext caller;

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public Response send(String command) {
        String commandId;
        try (var reader = Json.createReader(new StringReader(command))) {
            JsonObject json = reader.readObject();
            commandId = json.getString("commandId", "");
        } catch (JsonException | ClassCastException malformed) {
            throw DemoProblem.invalid("a payment command is a JSON object");
        }
        if (commandId.isBlank() || commandId.length() > 255 || !commandId.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
            throw DemoProblem.invalid("commandId must be 1 to 255 visible ASCII characters");
        }
        String user = caller.getUserPrincipal().getName();
        String tenant = tenants.of(user);
        // Looked up when used: a server without a broker (Payara Micro) deploys the demo, and answers 503 here.
        ConnectionFactory factory;
        Queue commands;
        try {
            InitialContext naming = new InitialContext();
            factory = (ConnectionFactory) naming.lookup(CONNECTION_FACTORY);
            commands = (Queue) naming.lookup(QUEUE);
        } catch (NamingException noBroker) {
            throw DemoProblem.noBroker();
        }
        DemoFaults.carryTo(user, commandId);
        try (JMSContext jms = factory.createContext()) {
            jms.createProducer().setProperty("tenant", tenant).setProperty("requestedBy", user).send(commands, command);
        }
        return Response.accepted(Json.createObjectBuilder().add("commandId", commandId).add("state", "QUEUED").build())
                .location(java.net.URI.create("payment-commands/" + commandId)).build();
    }

    @Override
    protected String endpoint() {
        return "payments.commands";
    }
}
