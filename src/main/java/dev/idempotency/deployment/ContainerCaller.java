package dev.idempotency.deployment;

import jakarta.enterprise.inject.Instance;

import java.security.Principal;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The container's authenticated caller on the current thread (the {@link Principal} bean), for the business methods'
 * scope: empty where there is no such bean (outside a server), where it names nobody, or where the thread has no
 * security context.
 */
final class ContainerCaller implements Supplier<Optional<String>> {
    private final Instance<Principal> principals;

    ContainerCaller(Instance<Principal> principals) {
        this.principals = principals;
    }

    @Override
    public Optional<String> get() {
        if (!principals.isResolvable()) {
            return Optional.empty();
        }
        try {
            Principal caller = principals.get();
            return Optional.ofNullable(caller == null ? null : caller.getName()).filter(name -> !name.isEmpty());
        } catch (RuntimeException noSecurityContext) {
            return Optional.empty();
        }
    }
}
