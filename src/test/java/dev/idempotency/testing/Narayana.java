package dev.idempotency.testing;

import com.arjuna.ats.internal.jta.transaction.arjunacore.TransactionSynchronizationRegistryImple;
import jakarta.transaction.TransactionManager;
import jakarta.transaction.TransactionSynchronizationRegistry;

/** The real JTA transaction manager of WildFly (Narayana), standalone. */
public final class Narayana {
    private static final TransactionSynchronizationRegistry REGISTRY = new TransactionSynchronizationRegistryImple();

    private Narayana() {
    }

    public static TransactionManager transactionManager() {
        return com.arjuna.ats.jta.TransactionManager.transactionManager();
    }

    public static TransactionSynchronizationRegistry registry() {
        return REGISTRY;
    }
}
