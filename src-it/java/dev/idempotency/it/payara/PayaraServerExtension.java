package dev.idempotency.it.payara;

import org.jboss.arquillian.container.spi.client.container.DeployableContainer;
import org.jboss.arquillian.core.spi.LoadableExtension;

/**
 * Registers {@link PayaraServerContainer} for the it-payara-server profile only: the other profiles bring their
 * own container adapter, and Arquillian accepts one.
 */
public class PayaraServerExtension implements LoadableExtension {
    @Override
    public void register(ExtensionBuilder builder) {
        if ("payara-server".equals(System.getProperty("it.server"))) {
            builder.service(DeployableContainer.class, PayaraServerContainer.class);
        }
    }
}
