package dev.idempotency.endpoint;

import com.arjuna.ats.jta.cdi.TransactionExtension;
import com.arjuna.ats.jta.cdi.transactional.TransactionalInterceptorRequired;
import dev.idempotency.cdi.IdempotencyExtension;
import dev.idempotency.jaxrs.IdempotencyFeature;
import dev.idempotency.testing.Databases;
import dev.idempotency.testing.MutableClock;
import dev.idempotency.testing.Narayana;
import jakarta.persistence.EntityManagerFactory;
import org.hibernate.jpa.HibernatePersistenceConfiguration;
import org.jboss.resteasy.mock.MockDispatcherFactory;
import org.jboss.resteasy.plugins.providers.jackson.ResteasyJackson2Provider;
import org.jboss.resteasy.plugins.server.resourcefactory.SingletonResource;
import org.jboss.resteasy.spi.Dispatcher;
import org.jboss.resteasy.spi.metadata.ResourceBuilder;
import org.jboss.weld.environment.se.Weld;
import org.jboss.weld.junit5.WeldInitiator;

import java.util.Base64;
import java.util.Map;

/**
 * The test application as a server would run it: Weld with the library's extension and Narayana's
 * {@code @Transactional}, RESTEasy with the library's feature and the application's providers, and
 * Hibernate on the same JTA DataSource (H2) as the record table.
 */
final class EndpointFixture {
    static final String SECRET = "test-secret-0123456789abcdef-0123456789";

    private EndpointFixture() {
    }

    /** The library's configuration, as system properties (read when the container starts). */
    static void configure() {
        System.setProperty("idempotency.secret", SECRET);
        System.setProperty("idempotency.create-schema", "true");
        // The tests move time with the application's Clock bean (MutableClock); the database's would undo it.
        System.setProperty("idempotency.clock", "jvm");
        System.setProperty("idempotency.tenant", "header:X-Tenant");
        System.setProperty("idempotency.purge.interval", "PT0S");
        System.setProperty("idempotency.fingerprint.ignore-fields", "traceId");
        System.setProperty("idempotency.encryption.keys", "k1:" + Base64.getEncoder().encodeToString(new byte[32]));
        System.setProperty("idempotency.encryption.active-key", "k1");
        System.setProperty("idempotency.endpoints.payments.create.max-in-flight-per-principal", "3");
        System.setProperty("idempotency.endpoints.payments.waiting.in-flight-wait", "PT3S");
        System.setProperty("idempotency.endpoints.payments.in-transaction.in-flight-wait", "PT1S");
        System.setProperty("idempotency.endpoints.payments.versioned.api-version", "header:Api-Version");
        System.setProperty("idempotency.endpoints.payments.large.max-response-bytes", "4096");
        System.setProperty("idempotency.endpoints.payments.large.oversize-response", "fail");
        System.setProperty("idempotency.endpoints.payments.large-kept.max-response-bytes", "4096");
        System.setProperty("idempotency.replayed-headers", "X-Payment-Region");
        System.setProperty("idempotency.endpoints.payments.redacted.redact-fields", "chargeKey");
        System.setProperty("idempotency.endpoints.payments.async.status-path", "async-operations");
    }

    static Weld weld() {
        configure();
        Narayana.transactionManager();
        return WeldInitiator.createWeld()
                .addExtension(new IdempotencyExtension())
                .addExtension(new TransactionExtension())
                .addBeanClasses(PaymentResource.class, Payments.class, EventLog.class, MutableClock.class,
                        TestStore.class, TransactionalInterceptorRequired.class, TaskExecutor.class);
    }

    static EntityManagerFactory hibernate() {
        return new HibernatePersistenceConfiguration("payments")
                .managedClass(Payment.class)
                .properties(Map.of(
                        "jakarta.persistence.transactionType", "JTA",
                        "jakarta.persistence.jtaDataSource", Databases.named("h2").dataSource(),
                        "hibernate.transaction.coordinator_class", "jta",
                        "hibernate.transaction.jta.platform",
                        "org.hibernate.engine.transaction.jta.platform.internal.JBossStandAloneJtaPlatform",
                        "hibernate.hbm2ddl.auto", "create"))
                .createEntityManagerFactory();
    }

    /** Before each test: no payments, no records, no charges against any caller's limits. */
    static void emptyTables(dev.idempotency.testing.TestDatabase h2) {
        h2.update("DELETE FROM test_payment");
        h2.update("DELETE FROM " + TestStore.TABLE);
        h2.update("DELETE FROM " + TestStore.TABLE + "_quota");
        h2.update("DELETE FROM " + TestStore.TABLE + "_released");
    }

    static Http http(Object paymentResource) {
        Dispatcher dispatcher = MockDispatcherFactory.createDispatcher();
        dispatcher.getProviderFactory().register(new ResteasyJackson2Provider());
        dispatcher.getProviderFactory().register(IdempotencyFeature.class);
        dispatcher.getProviderFactory().register(HeaderAuthentication.class);
        dispatcher.getProviderFactory().register(EntityReads.class);
        dispatcher.getProviderFactory().register(ApplicationMappers.Rejected.class);
        dispatcher.getProviderFactory().register(ApplicationMappers.Unavailable.class);
        dispatcher.getProviderFactory().register(ApplicationMappers.Duplicate.class);
        dispatcher.getProviderFactory().register(ApplicationMappers.Declined.class);
        dispatcher.getProviderFactory().register(ApplicationMappers.Expired.class);
        dispatcher.getProviderFactory().register(ApplicationMappers.Flagged.class);
        dispatcher.getRegistry().addResourceFactory(new SingletonResource(paymentResource,
                ResourceBuilder.rootResourceFromAnnotations(PaymentResource.class)));
        dispatcher.getRegistry().addPerRequestResource(PaymentOperations.class);
        dispatcher.getRegistry().addPerRequestResource(AsyncPaymentOperations.class);
        dispatcher.getRegistry().addPerRequestResource(RecordsAdmin.class);
        return new Http(dispatcher);
    }
}
