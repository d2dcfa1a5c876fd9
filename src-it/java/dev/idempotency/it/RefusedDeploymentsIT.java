package dev.idempotency.it;

import dev.idempotency.it.parts.PartsApplication;
import dev.idempotency.it.parts.OpenResource;
import dev.idempotency.it.statuses.Holds;
import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.EmptyAsset;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.File;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Settings the real server cannot serve fail the application's deployment, with the library's message: what a
 * user sees in the deployment's failure, not on a request under load.
 */
@ExtendWith(ArquillianExtension.class)
class RefusedDeploymentsIT {
    @ArquillianResource
    Deployer deployer;

    /** {@code idempotency.redis.url} set, but no Jedis in the WAR (the library's is an optional dependency). */
    @Deployment(name = "redis-without-jedis", managed = false, testable = false)
    static WebArchive redisWithoutJedis() {
        return application("redis-without-jedis", "idempotency.redis.url=redis://127.0.0.1:6379");
    }

    /**
     * A setting of the application's own configuration with a value the library does not know (a setting the
     * server also sets, such as the datasource, is the server's: its system property outranks the WAR's file).
     */
    @Deployment(name = "invalid-setting", managed = false, testable = false)
    static WebArchive invalidSetting() {
        return application("invalid-setting", "idempotency.in-flight=whenever");
    }

    @Test
    void aRedisUrlWithoutJedisInTheApplicationFailsItsDeploymentWithIdemC004() {
        assertThatThrownBy(() -> deployer.deploy("redis-without-jedis"))
                .satisfies(refused -> assertThat(messages(refused)).contains("IDEM-C004")
                        .contains("idempotency.redis.url").contains("redis.clients:jedis"));
    }

    @Test
    void anInvalidSettingInTheApplicationsConfigurationFailsItsDeploymentWithIdemC001() {
        assertThatThrownBy(() -> deployer.deploy("invalid-setting"))
                .satisfies(refused -> assertThat(messages(refused)).contains("IDEM-C001")
                        .contains("idempotency.in-flight").contains("whenever"));
    }

    private static WebArchive application(String name, String setting) {
        return ShrinkWrap.create(WebArchive.class, name + ".war")
                .addClasses(PartsApplication.class, OpenResource.class, Holds.class)
                .addAsLibrary(new File(System.getProperty("it.library")))
                .addAsResource(new StringAsset(setting + "\n"), "META-INF/microprofile-config.properties")
                .addAsWebInfResource(EmptyAsset.INSTANCE, "beans.xml");
    }

    private static String messages(Throwable refused) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = refused; t != null; t = t.getCause()) {
            all.append(t).append('\n');
        }
        return all.toString();
    }
}
