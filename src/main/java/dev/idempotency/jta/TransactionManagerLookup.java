package dev.idempotency.jta;

import jakarta.transaction.TransactionManager;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import java.util.List;

/**
 * Finds the server's {@link TransactionManager}. Jakarta EE does not name one place for it, so the
 * known JNDI names are tried in turn (WildFly, Payara/GlassFish, others).
 */
public final class TransactionManagerLookup {
    static final List<String> JNDI_NAMES = List.of(
            "java:jboss/TransactionManager",
            "java:/TransactionManager",
            "java:appserver/TransactionManager",
            "java:comp/TransactionManager");

    private TransactionManagerLookup() {
    }

    /** The first TransactionManager bound under a known name, or null. */
    public static TransactionManager fromJndi() {
        InitialContext context;
        try {
            context = new InitialContext();
        } catch (NamingException e) {
            return null;
        }
        for (String name : JNDI_NAMES) {
            try {
                Object found = context.lookup(name);
                if (found instanceof TransactionManager tm) {
                    return tm;
                }
            } catch (NamingException e) {
                // not bound under this name on this server; try the next
            }
        }
        return null;
    }
}
