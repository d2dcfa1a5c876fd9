package dev.idempotency.cdi;

import dev.idempotency.deployment.Assembly;
import dev.idempotency.endpoints.IdempotentMethod;
import com.arjuna.ats.jta.cdi.TransactionExtension;
import dev.idempotency.endpoint.TestStore;
import org.jboss.weld.environment.se.Weld;
import org.jboss.weld.environment.se.WeldContainer;
import org.jboss.weld.junit5.WeldInitiator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Misuse of the annotation and invalid configuration fail the deployment, with a message naming the cause. */
class DeploymentValidationTest {
    private final Map<String, String> saved = new HashMap<>();

    @AfterEach
    void restoreProperties() {
        saved.forEach((key, value) -> {
            if (value == null) {
                System.clearProperty(key);
            } else {
                System.setProperty(key, value);
            }
        });
    }

    @Test
    void onAMethodThatIsNotAResourceMethod() {
        assertDeploymentFails(Misuses.NotAResourceMethod.class, "IDEM-D001", "NotAResourceMethod#helper");
        assertDeploymentFails(Misuses.NotAResourceMethod.class, "IDEM-D001", "nor a business method with an"
                + " @IdempotencyKey parameter");
    }

    @Test
    void aMessageListenerKeyedByAHeaderItHasNotOrRunAsynchronously() {
        assertDeploymentFails(Misuses.ListenerKeyedByHeader.class, "IDEM-D015", "'commands.header' consumes messages");
        assertDeploymentFails(Misuses.AsynchronousListener.class, "IDEM-D016", "AsynchronousListener#onMessage");
        assertDeploymentFails(Misuses.MessageKeyOnResource.class, "IDEM-D015", "is not a message listener");
    }

    @Test
    void aClaimInTheBusinessTransactionWhereNothingMayBeVisibleUntilItCommitsIsRefused() {
        assertDeploymentFails(Misuses.InTransactionAsynchronous.class, "IDEM-D019", "asynchronous = true");
        assertDeploymentFails(Misuses.InTransactionAccepted.class, "IDEM-D019", "in-flight = accepted");
        assertDeploymentFails(Misuses.InTransactionListener.class, "IDEM-D019", "a message listener");
        set("idempotency.endpoints.valid.create.claim", "in the same transaction");
        assertDeploymentFails(Misuses.Valid.class, "IDEM-C001", "must be own-transaction or in-transaction");
    }

    @Test
    void aClaimInTheBusinessTransactionOnAStoreThatCannotMakeItFailsTheDeployment() {
        set("idempotency.endpoints.valid.create.claim", "in-transaction");
        set("idempotency.secret", "deployment-test-secret-0123456789abcdef");
        assertThatThrownBy(() -> WeldInitiator.createWeld().addExtension(new IdempotencyExtension())
                .addExtension(new TransactionExtension())
                .addBeanClasses(Misuses.Valid.class, StoreWithoutClaimsInTransaction.class).initialize().close())
                .satisfies(e -> assertThat(messages(e)).contains("IDEM-D020").contains("[valid.create]")
                        .contains("StoreWithoutClaimsInTransaction$OlderStore"));
    }

    @Test
    void aClaimInTheBusinessTransactionOnAGaleraClusterFailsTheDeployment() {
        set("idempotency.endpoints.valid.create.claim", "in-transaction");
        set("idempotency.secret", "deployment-test-secret-0123456789abcdef");
        assertThatThrownBy(() -> WeldInitiator.createWeld().addExtension(new IdempotencyExtension())
                .addExtension(new TransactionExtension())
                .addBeanClasses(Misuses.Valid.class, StoreOnGalera.class).initialize().close())
                .satisfies(e -> assertThat(messages(e)).contains("IDEM-D022").contains("[valid.create]")
                        .contains("OWN_TRANSACTION"));
    }

    @Test
    void aGlobalClaimInTheBusinessTransactionAppliesWhereItCanAndLeavesTheOthersTheirOwn() {
        set("idempotency.claim", "in-transaction");
        set("idempotency.in-flight", "accepted");
        set("idempotency.endpoints.valid.create.in-flight", "conflict");
        try (WeldContainer container = weld(Misuses.Valid.class).addBeanClasses(Misuses.ValidListener.class).initialize()) {
            Assembly assembly = container.select(Assembly.class).get();
            assertThat(assembly.policy("valid.create").claimInTransaction()).isTrue();
            assertThat(assembly.policy("commands.valid").claimInTransaction()).isFalse();
        }
    }

    @Test
    void aMessageListenerIsFoundAsOneThatConsumesMessages() {
        try (WeldContainer container = weld(Misuses.ValidListener.class).initialize()) {
            IdempotencyExtension extension = container.select(IdempotencyExtension.class).get();
            assertThat(extension.methods()).extracting(IdempotentMethod::trigger)
                    .containsExactly(IdempotentMethod.Trigger.MESSAGE);
            assertThat(container.select(Assembly.class).get().policy("commands.valid").messages())
                    .hasValueSatisfying(m -> assertThat(m.maxDeliveries()).isEqualTo(10));
        }
    }

    @Test
    void aBusinessMethodWithTwoKeysAKeyThatIsNotTextAnotherKeySourceOrAsynchronous() {
        assertDeploymentFails(Misuses.TwoKeys.class, "IDEM-D017", "TwoKeys#post has 2 @IdempotencyKey parameters");
        assertDeploymentFails(Misuses.KeyOfAnObject.class, "IDEM-D017", "is a java.lang.Object");
        assertDeploymentFails(Misuses.ResourceWithAKeyParameter.class, "IDEM-D017", "a resource method, whose key"
                + " comes from its request");
        assertDeploymentFails(Misuses.CallKeyedByBody.class, "IDEM-D017", "'calls.body' is a business method");
        assertDeploymentFails(Misuses.AsynchronousCall.class, "IDEM-D016", "business method");
        set("idempotency.endpoints.calls.property.call.principal", "property:user");
        assertDeploymentFails(Misuses.CallScopedByProperty.class, "IDEM-C001", "a call has no properties");
    }

    @Test
    void aBusinessMethodWithAnIdempotencyKeyParameterIsFoundAsOneCalledByTheApplication() {
        try (WeldContainer container = weld(Misuses.ValidCall.class).initialize()) {
            IdempotencyExtension extension = container.select(IdempotencyExtension.class).get();
            assertThat(extension.methods()).extracting(IdempotentMethod::trigger, IdempotentMethod::keyParameter)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple(IdempotentMethod.Trigger.CALL, 0));
            dev.idempotency.core.EndpointPolicy policy = container.select(Assembly.class).get()
                    .policy("calls.valid");
            assertThat(policy.keySource()).isEqualTo(dev.idempotency.KeySource.PARAMETER);
            assertThat(policy.maxKeysPerEndpoint()).as("no caller limit unless set for it").isZero();
        }
    }

    @Test
    void onAMethodReturningAPrimitive() {
        assertDeploymentFails(Misuses.PrimitiveReturn.class, "IDEM-D002", "PrimitiveReturn#create");
    }

    @Test
    void onAnAsynchronousMethod() {
        assertDeploymentFails(Misuses.Asynchronous.class, "IDEM-D003", "Asynchronous#");
    }

    @Test
    void withOneEndpointNameTwice() {
        assertDeploymentFails(Misuses.DuplicateEndpoint.class, "IDEM-D006", "'same'");
    }

    @Test
    void namingAReplayMethodThatDoesNotExist() {
        assertDeploymentFails(Misuses.MissingReplayMethod.class, "IDEM-D009", "rebuild");
    }

    @Test
    void withAnUnparsableDuration() {
        assertDeploymentFails(Misuses.BadDuration.class, "IDEM-C001", "thirty seconds");
    }

    @Test
    void withoutASecret() {
        set("idempotency.secret", null);
        assertDeploymentFails(Misuses.Valid.class, "IDEM-C002", "idempotency.secret");
    }

    @Test
    void withAnInvalidSetting() {
        set("idempotency.in-flight", "whenever");
        assertDeploymentFails(Misuses.Valid.class, "IDEM-C001", "idempotency.in-flight");
    }

    @Test
    void withAnApiVersionSourceItCannotRead() {
        set("idempotency.endpoints.valid.create.api-version", "cookie:version");
        assertDeploymentFails(Misuses.Valid.class, "IDEM-C001", "idempotency.endpoints.valid.create.api-version");
    }

    @Test
    void withABodyFieldKeyWithoutItsName() {
        assertDeploymentFails(Misuses.BodyFieldWithoutName.class, "IDEM-D004", "keyName");
    }

    @Test
    void withAnEndpointNameOutsideItsCharset() {
        assertDeploymentFails(Misuses.BadEndpointName.class, "IDEM-D005", "'payments create!'");
    }

    @Test
    void onAStaticMethod() {
        assertDeploymentFails(Misuses.StaticMethod.class, "IDEM-D007", "StaticMethod#create");
    }

    @Test
    void namingAReplayMethodWithoutMinimalStorage() {
        assertDeploymentFails(Misuses.ReplayWithFullStorage.class, "IDEM-D008", "FULL");
    }

    @Test
    void storingEncryptedWithoutKeys() {
        set("idempotency.encryption.keys", null);
        set("idempotency.encryption.active-key", null);
        assertDeploymentFails(Misuses.EncryptedWithoutKeys.class, "IDEM-C003", "'sealed.create'");
    }

    @Test
    void declaringExternalSideEffectsWithoutAnOutcomeResolver() {
        assertDeploymentFails(Misuses.SideEffectsWithoutResolver.class, "IDEM-D012", "'payouts.create'");
        try (WeldContainer container = weld(Misuses.SideEffectsWithoutResolver.class)
                .addBeanClasses(Misuses.PayoutResolver.class).initialize()) {
            IdempotencyExtension extension = container.select(IdempotencyExtension.class).get();
            assertThat(extension.methods()).extracting(IdempotentMethod::endpoint).containsExactly("payouts.create");
        }
    }

    @Test
    void anAsynchronousEndpointWithoutAnExecutor() {
        // No java:comp/DefaultManagedExecutorService outside a server, and no @IdempotencyExecutor bean.
        assertDeploymentFails(Misuses.AsynchronousWithoutExecutor.class, "IDEM-D014",
                "java:comp/DefaultManagedExecutorService");
        try (WeldContainer container = weld(Misuses.AsynchronousWithoutExecutor.class)
                .addBeanClasses(Misuses.TaskExecutor.class).initialize()) {
            IdempotencyExtension extension = container.select(IdempotencyExtension.class).get();
            assertThat(extension.methods()).extracting(IdempotentMethod::endpoint).containsExactly("exports.create");
        }
    }

    @Test
    void withTwoScopeResolvers() {
        assertThatThrownBy(() -> weld(Misuses.Valid.class).addBeanClasses(Misuses.OneScope.class, Misuses.OtherScope.class)
                .initialize().close())
                .satisfies(e -> assertThat(messages(e)).contains("IDEM-D013").contains("OneScope").contains("OtherScope"));
    }

    @Test
    void withoutATransactionManager() {
        set("idempotency.secret", "deployment-test-secret-0123456789abcdef");
        assertThatThrownBy(() -> WeldInitiator.createWeld().addExtension(new IdempotencyExtension())
                .addBeanClasses(Misuses.Valid.class, TestStore.class).initialize().close())
                .satisfies(e -> assertThat(messages(e)).contains("IDEM-D010"));
    }

    @Test
    void withoutARecordStoreAndNoDataSourceAtItsName() {
        set("idempotency.secret", "deployment-test-secret-0123456789abcdef");
        set("idempotency.datasource", "java:/jdbc/NoSuchDS");
        assertThatThrownBy(() -> WeldInitiator.createWeld().addExtension(new IdempotencyExtension())
                .addExtension(new TransactionExtension()).addBeanClasses(Misuses.Valid.class).initialize().close())
                .satisfies(e -> assertThat(messages(e)).contains("IDEM-D011").contains("java:/jdbc/NoSuchDS"));
    }

    @Test
    void aValidDeploymentStartsAndFindsItsMethods() {
        try (WeldContainer container = weld(Misuses.Valid.class).initialize()) {
            IdempotencyExtension extension = container.select(IdempotencyExtension.class).get();
            assertThat(extension.methods()).extracting(IdempotentMethod::endpoint).containsExactly("valid.create");
        }
    }

    @Test
    void theDevelopmentSwitchStartsWithoutASecret() {
        set("idempotency.secret", null);
        set("idempotency.insecure-development-secret", "true");
        try (WeldContainer container = weld(Misuses.Valid.class).initialize()) {
            assertThat(container.select(Assembly.class).get().settings().usesDevelopmentSecret()).isTrue();
        }
    }

    private void assertDeploymentFails(Class<?> bean, String id, String detail) {
        assertThatThrownBy(() -> weld(bean).initialize().close())
                .satisfies(e -> assertThat(messages(e)).contains(id).contains(detail));
    }

    private Weld weld(Class<?> bean) {
        if (!saved.containsKey("idempotency.secret")) {
            set("idempotency.secret", "deployment-test-secret-0123456789abcdef");
        }
        // The store's tables as a deployment with idempotency.schema=migrate has them: these tests are about the rest.
        if (!saved.containsKey("idempotency.schema")) {
            set("idempotency.schema", "migrate");
        }
        return WeldInitiator.createWeld()
                .addExtension(new IdempotencyExtension())
                .addExtension(new TransactionExtension())
                .addBeanClasses(bean, TestStore.class);
    }

    private void set(String key, String value) {
        saved.putIfAbsent(key, System.getProperty(key));
        if (value == null) {
            System.clearProperty(key);
        } else {
            System.setProperty(key, value);
        }
    }

    private static String messages(Throwable e) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            all.append(t.getMessage()).append('\n');
            for (Throwable s : t.getSuppressed()) {
                all.append(s.getMessage()).append('\n');
            }
        }
        return all.toString();
    }
}
