package dev.idempotency.deployment;

import dev.idempotency.IdempotencyDefinitionException;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.spi.OutcomeResolver;
import dev.idempotency.spi.RecordStore;
import dev.idempotency.spi.StoreCapability;

import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * What the deployment refuses, once its endpoints are resolved, rather than a request later: an endpoint the record
 * store cannot serve, an endpoint with external side effects that no resolver can ask about.
 */
final class DeploymentChecks {
    private DeploymentChecks() {
    }

    /** The application's resolver for an endpoint with external side effects; empty for any other endpoint. */
    static Optional<OutcomeResolver> resolverFor(EndpointPolicy policy, List<OutcomeResolver> resolvers) {
        if (!policy.externalSideEffects()) {
            return Optional.empty();
        }
        Optional<OutcomeResolver> found = resolvers.stream().filter(r -> r.handles(policy.endpoint())).findFirst();
        if (found.isEmpty()) {
            // Without one, an abandoned attempt would simply run again, calling downstream a second time.
            throw new IdempotencyDefinitionException("IDEM-D012 endpoint '" + policy.endpoint() + "' declares"
                    + " externalSideEffects = true but no OutcomeResolver bean handles it: provide one that asks"
                    + " the downstream system whether an earlier attempt acted, or drop externalSideEffects");
        }
        return found;
    }

    /** Endpoints that claim in the business transaction need a store that declares it can, and where it is safe. */
    static void storeServes(RecordStore store, Collection<EndpointPolicy> policies) {
        List<String> inTransaction = policies.stream().filter(EndpointPolicy::claimInTransaction)
                .map(EndpointPolicy::endpoint).sorted().toList();
        if (inTransaction.isEmpty()) {
            return;
        }
        if (!store.capabilities().contains(StoreCapability.CLAIMS_IN_BUSINESS_TRANSACTION)) {
            throw new IdempotencyDefinitionException("IDEM-D020 endpoints " + inTransaction + " claim in the business"
                    + " transaction (claim = IN_TRANSACTION), which the RecordStore " + beanClass(store).getName()
                    + " does not declare among its capabilities (StoreCapability.CLAIMS_IN_BUSINESS_TRANSACTION:"
                    + " insertInTransaction, takeOverInTransaction, finishInTransaction)");
        }
        if (!store.uncommittedClaimsBlock()) {
            throw new IdempotencyDefinitionException("IDEM-D022 endpoints " + inTransaction + " claim in the business"
                    + " transaction (claim = IN_TRANSACTION), which is unsafe on this record store: its database lets"
                    + " two nodes hold uncommitted claims of one key at once (a multi-primary cluster such as MariaDB"
                    + " Galera certifies them only at commit), so both methods would run. Use claim = OWN_TRANSACTION");
        }
    }

    // The bean's own class, for messages: not the container's client proxy's.
    private static Class<?> beanClass(Object bean) {
        Class<?> type = bean.getClass();
        while (type.getName().contains("$Proxy$_$$_") && type.getSuperclass() != null) {
            type = type.getSuperclass();
        }
        return type;
    }
}
