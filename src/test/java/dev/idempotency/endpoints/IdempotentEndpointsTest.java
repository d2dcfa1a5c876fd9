package dev.idempotency.endpoints;

import dev.idempotency.Idempotent;
import dev.idempotency.core.RequestPreparation;
import dev.idempotency.testing.PolicyBuilder;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/** The deployment's endpoints, resolved once: found by the annotated method, by an override of it, and by name. */
class IdempotentEndpointsTest {

    static class Payments {
        @Idempotent(endpoint = "payments.create")
        public String create(String body) {
            return body;
        }

        public String list() {
            return "";
        }
    }

    // What a container's subclass (a proxy, a decorator) is invoked as.
    static class ProxiedPayments extends Payments {
        @Override
        public String create(String body) {
            return super.create(body);
        }
    }

    private final Method create = method(Payments.class, "create", String.class);
    private final IdempotentEndpoint endpoint = new IdempotentEndpoint(new IdempotentMethod(create,
            create.getAnnotation(Idempotent.class), "payments.create", null, IdempotentMethod.Trigger.REQUEST, -1),
            PolicyBuilder.defaults().build(), Optional.empty(), preparation());
    private final IdempotentEndpoints endpoints = new IdempotentEndpoints(List.of(endpoint));

    @Test
    void anAnnotatedMethodAndItsOverridesFindTheirEndpointAndNoOtherMethodDoes() {
        assertThat(endpoints.of(create)).isSameAs(endpoint);
        assertThat(endpoints.of(method(ProxiedPayments.class, "create", String.class))).isSameAs(endpoint);
        assertThat(endpoints.of(method(ProxiedPayments.class, "create", String.class))).as("as first matched")
                .isSameAs(endpoint);
        assertThat(endpoints.of(method(Payments.class, "list"))).isNull();
    }

    @Test
    void anEndpointIsFoundByNameWithItsResolvedPolicy() {
        assertThat(endpoints.named("payments.create")).containsSame(endpoint);
        assertThat(endpoints.policy("payments.create")).isSameAs(endpoint.policy());
        assertThat(endpoints.named("payments.refund")).isEmpty();
        assertThat(endpoints.policy("payments.refund")).isNull();
        assertThat(endpoints.all()).containsExactly(endpoint);
    }

    private static RequestPreparation preparation() {
        // Not asked to prepare anything here: the registry only holds it.
        return new RequestPreparation(null, null, null, null, null, java.time.Clock.systemUTC());
    }

    private static Method method(Class<?> type, String name, Class<?>... parameters) {
        try {
            return type.getMethod(name, parameters);
        } catch (NoSuchMethodException e) {
            throw new AssertionError(e);
        }
    }
}
