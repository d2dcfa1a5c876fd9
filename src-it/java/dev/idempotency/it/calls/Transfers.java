package dev.idempotency.it.calls;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.config.ConfigProvider;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.UUID;

/**
 * An idempotent business method as an application has one, called from its own code: a transfer, keyed by the
 * caller's transfer id, writes one row on the record table's JTA DataSource and returns a receipt.
 */
@ApplicationScoped
public class Transfers {
    /** What a transfer returns: a record, stored as JSON by the server's JSON-B and read back on a repeat. */
    public record Receipt(String transferId, String account, long cents, String reference) {
    }

    /** The business refuses the transfer for good. */
    public static class TransferRefused extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public TransferRefused(String reason) {
            super(reason);
        }
    }

    @Idempotent(endpoint = "it.transfers", finalOn = TransferRefused.class)
    public Receipt post(@IdempotencyKey String transferId, String account, long cents) {
        if (account.equals("closed")) {
            throw new TransferRefused("the account is closed");
        }
        String reference = UUID.randomUUID().toString();
        try (Connection c = database().getConnection();
             PreparedStatement insert = c.prepareStatement(
                     "INSERT INTO it_transfer_effect (transfer_id, reference) VALUES (?, ?)")) {
            insert.setString(1, transferId);
            insert.setString(2, reference);
            insert.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return new Receipt(transferId, account, cents, reference);
    }

    /** The DataSource the library's records are on (idempotency.datasource: WildFly's or Payara's JNDI name). */
    static DataSource database() {
        String name = ConfigProvider.getConfig().getValue("idempotency.datasource", String.class);
        try {
            return (DataSource) new InitialContext().lookup(name);
        } catch (NamingException e) {
            throw new IllegalStateException(e);
        }
    }
}
