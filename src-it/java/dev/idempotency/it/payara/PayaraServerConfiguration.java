package dev.idempotency.it.payara;

import org.jboss.arquillian.container.spi.ConfigurationException;
import org.jboss.arquillian.container.spi.client.container.ContainerConfiguration;

import java.nio.file.Files;
import java.nio.file.Path;

/** Where the Payara Server that src-it/provision.sh prepared lives, and its ports (src-it/resources/arquillian.xml). */
public class PayaraServerConfiguration implements ContainerConfiguration {
    private String payaraHome;
    private String domain = "domain1";
    private int adminPort = 4848;
    private int httpPort = 8080;
    private int timeoutInSeconds = 300;

    @Override
    public void validate() throws ConfigurationException {
        if (payaraHome == null || !Files.isExecutable(asadmin())) {
            throw new ConfigurationException("no Payara Server at payaraHome=" + payaraHome
                    + " (src-it/provision.sh payara-server <dir> <db> prepares one)");
        }
    }

    Path asadmin() {
        return Path.of(payaraHome, "bin", "asadmin");
    }

    Path serverLog() {
        return Path.of(payaraHome, "glassfish", "domains", domain, "logs", "server.log");
    }

    public String getPayaraHome() {
        return payaraHome;
    }

    public void setPayaraHome(String payaraHome) {
        this.payaraHome = payaraHome;
    }

    public String getDomain() {
        return domain;
    }

    public void setDomain(String domain) {
        this.domain = domain;
    }

    public int getAdminPort() {
        return adminPort;
    }

    public void setAdminPort(int adminPort) {
        this.adminPort = adminPort;
    }

    public int getHttpPort() {
        return httpPort;
    }

    public void setHttpPort(int httpPort) {
        this.httpPort = httpPort;
    }

    public int getTimeoutInSeconds() {
        return timeoutInSeconds;
    }

    public void setTimeoutInSeconds(int timeoutInSeconds) {
        this.timeoutInSeconds = timeoutInSeconds;
    }
}
