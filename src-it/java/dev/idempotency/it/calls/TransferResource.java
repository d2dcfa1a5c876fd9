package dev.idempotency.it.calls;

import jakarta.annotation.Resource;
import jakarta.inject.Inject;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * The application's code that calls the idempotent business method, and what the test reads back. Not itself
 * idempotent: every duplicate here is the business method's to recognise.
 */
@Path("transfers")
@Produces(MediaType.APPLICATION_JSON)
public class TransferResource {
    @Inject
    Transfers transfers;
    @Resource
    TransactionSynchronizationRegistry transactions;

    /** Calls the business method; a refusal of the business is 422 with its message. */
    @POST
    @Path("{transferId}")
    public Response post(@PathParam("transferId") String transferId, @QueryParam("account") String account,
                         @QueryParam("cents") long cents) {
        try {
            return Response.ok(transfers.post(transferId, account, cents)).build();
        } catch (Transfers.TransferRefused refused) {
            return Response.status(422).type(MediaType.TEXT_PLAIN).entity(refused.getMessage()).build();
        }
    }

    /**
     * Calls it in this method's own transaction, which is then rolled back when asked: the business method's work
     * and its record's finish go with it.
     */
    @POST
    @Path("{transferId}/in-transaction")
    @Transactional
    public Response postInTransaction(@PathParam("transferId") String transferId, @QueryParam("account") String account,
                                      @QueryParam("cents") long cents,
                                      @QueryParam("rollBack") @DefaultValue("false") boolean rollBack) {
        Transfers.Receipt receipt = transfers.post(transferId, account, cents);
        if (rollBack) {
            transactions.setRollbackOnly();
        }
        return Response.ok(receipt).build();
    }

    /** How many rows the transfer wrote. */
    @GET
    @Path("{transferId}/effects")
    @Produces(MediaType.TEXT_PLAIN)
    public long effects(@PathParam("transferId") String transferId) throws SQLException {
        try (Connection c = Transfers.database().getConnection();
             PreparedStatement count = c.prepareStatement(
                     "SELECT COUNT(*) FROM it_transfer_effect WHERE transfer_id = ?")) {
            count.setString(1, transferId);
            try (ResultSet rs = count.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** Creates the effects table once. */
    @POST
    @Path("table")
    public Response createEffectsTable() throws SQLException {
        try (Connection c = Transfers.database().getConnection();
             PreparedStatement create = c.prepareStatement("CREATE TABLE IF NOT EXISTS it_transfer_effect"
                     + " (transfer_id VARCHAR(200) NOT NULL, reference VARCHAR(64) NOT NULL)")) {
            create.executeUpdate();
        }
        return Response.noContent().build();
    }
}
