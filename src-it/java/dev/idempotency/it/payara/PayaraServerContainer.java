package dev.idempotency.it.payara;

import org.jboss.arquillian.container.spi.client.container.DeployableContainer;
import org.jboss.arquillian.container.spi.client.container.DeploymentException;
import org.jboss.arquillian.container.spi.client.container.LifecycleException;
import org.jboss.arquillian.container.spi.client.protocol.ProtocolDescription;
import org.jboss.arquillian.container.spi.client.protocol.metadata.HTTPContext;
import org.jboss.arquillian.container.spi.client.protocol.metadata.ProtocolMetaData;
import org.jboss.arquillian.container.spi.client.protocol.metadata.Servlet;
import org.jboss.shrinkwrap.api.Archive;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Payara Server (the full distribution, one domain) driven the way its operators drive it: {@code asadmin
 * start-domain}, {@code asadmin deploy}, {@code asadmin undeploy}, {@code asadmin stop-domain}. Payara's own managed
 * adapter is not served for Jakarta EE here (FACTS.md), and the tests deploy as clients ({@code testable = false}),
 * so nothing runs inside the server but the application.
 */
public class PayaraServerContainer implements DeployableContainer<PayaraServerConfiguration> {
    private PayaraServerConfiguration configuration;

    @Override
    public Class<PayaraServerConfiguration> getConfigurationClass() {
        return PayaraServerConfiguration.class;
    }

    @Override
    public void setup(PayaraServerConfiguration configuration) {
        this.configuration = configuration;
    }

    @Override
    public void start() throws LifecycleException {
        if (listening(configuration.getAdminPort()) || listening(configuration.getHttpPort())) {
            throw new LifecycleException("a server already listens on port " + configuration.getAdminPort() + " or "
                    + configuration.getHttpPort() + ": these tests start their own Payara Server");
        }
        try {
            asadmin("start-domain", configuration.getDomain());
        } catch (IOException e) {
            throw new LifecycleException("Payara Server did not start", e);
        }
    }

    @Override
    public void stop() throws LifecycleException {
        try {
            asadmin("stop-domain", configuration.getDomain());
        } catch (IOException e) {
            throw new LifecycleException("Payara Server did not stop", e);
        }
    }

    @Override
    public ProtocolDescription getDefaultProtocol() {
        // Only used for in-container tests, which these are not.
        return new ProtocolDescription("Servlet 5.0");
    }

    @Override
    public ProtocolMetaData deploy(Archive<?> archive) throws DeploymentException {
        String name = applicationName(archive);
        try {
            Path file = Files.createDirectories(Path.of(configuration.getPayaraHome()).resolveSibling("deployments"))
                    .resolve(archive.getName());
            archive.as(ZipExporter.class).exportTo(file.toFile(), true);
            asadmin("deploy", "--force=true", "--name", name, "--contextroot", "/" + name, file.toString());
        } catch (IOException e) {
            throw new DeploymentException("Payara Server did not deploy " + archive.getName(), e);
        }
        return new ProtocolMetaData().addContext(new HTTPContext("127.0.0.1", configuration.getHttpPort())
                .add(new Servlet("application", "/" + name)));
    }

    @Override
    public void undeploy(Archive<?> archive) throws DeploymentException {
        try {
            asadmin("undeploy", applicationName(archive));
        } catch (IOException e) {
            throw new DeploymentException("Payara Server did not undeploy " + archive.getName(), e);
        }
    }

    private static String applicationName(Archive<?> archive) {
        String file = archive.getName();
        return file.contains(".") ? file.substring(0, file.lastIndexOf('.')) : file;
    }

    private void asadmin(String... command) throws IOException {
        List<String> line = new ArrayList<>(List.of(configuration.asadmin().toString(), "--port",
                String.valueOf(configuration.getAdminPort())));
        line.addAll(List.of(command));
        // To a file, so that a long answer never fills a pipe nobody reads while waiting.
        Path answer = Files.createTempFile("asadmin", ".out");
        try {
            Process process = new ProcessBuilder(line).redirectErrorStream(true).redirectOutput(answer.toFile()).start();
            if (!process.waitFor(configuration.getTimeoutInSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException("asadmin " + String.join(" ", command) + ": no answer in "
                        + configuration.getTimeoutInSeconds() + " s" + serverLogTail());
            }
            if (process.exitValue() != 0) {
                throw new IOException("asadmin " + String.join(" ", command) + " failed:\n"
                        + Files.readString(answer) + serverLogTail());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } finally {
            Files.deleteIfExists(answer);
        }
    }

    private String serverLogTail() throws IOException {
        Path log = configuration.serverLog();
        if (!Files.exists(log)) {
            return "";
        }
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        return "\n--- " + log + " (end)\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 80), lines.size()));
    }

    private static boolean listening(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
