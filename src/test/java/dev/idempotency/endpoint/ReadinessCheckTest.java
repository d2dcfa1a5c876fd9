package dev.idempotency.endpoint;

import dev.idempotency.testing.Databases;
import dev.idempotency.testing.TestDatabase;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;
import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The readiness check a server's MicroProfile Health finds among the deployment's beans: DOWN while the record
 * table cannot be read, UP again once it can (the real servers' /health/ready with a stopped database is in the
 * fault suite).
 */
@EnableWeld
class ReadinessCheckTest {
    @WeldSetup
    WeldInitiator weld = WeldInitiator.from(EndpointFixture.weld()).build();

    private final TestDatabase h2 = Databases.named("h2");

    @Test
    void theCheckIsDownWhileTheRecordTableCannotBeReadAndUpAgainAfter() {
        HealthCheck check = weld.select(HealthCheck.class, Readiness.Literal.INSTANCE).get();

        HealthCheckResponse up = check.call();
        assertThat(up.getName()).isEqualTo("idempotency");
        assertThat(up.getStatus()).isEqualTo(HealthCheckResponse.Status.UP);
        assertThat(up.getData()).hasValueSatisfying(data -> {
            assertThat(data).containsEntry("store", "reachable");
            assertThat(data).containsEntry("clock", "local");
        });

        h2.update("ALTER TABLE " + TestStore.TABLE + " RENAME TO " + TestStore.TABLE + "_away");
        try {
            HealthCheckResponse down = check.call();
            assertThat(down.getStatus()).isEqualTo(HealthCheckResponse.Status.DOWN);
            assertThat(down.getData()).hasValueSatisfying(data ->
                    assertThat((String) data.get("store")).startsWith("unavailable: ").contains(TestStore.TABLE));
        } finally {
            h2.update("ALTER TABLE " + TestStore.TABLE + "_away RENAME TO " + TestStore.TABLE);
        }

        assertThat(check.call().getStatus()).isEqualTo(HealthCheckResponse.Status.UP);
    }
}
