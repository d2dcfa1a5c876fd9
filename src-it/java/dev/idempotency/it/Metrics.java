package dev.idempotency.it;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

/**
 * The server's metrics as a Prometheus scraper reads them: WildFly's micrometer subsystem at the management
 * interface's /prometheus (server-config/wildfly/observability.cli), Payara's MicroProfile Metrics at /metrics.
 */
record Metrics(List<String> lines) {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    static URI endpoint() {
        return URI.create(System.getProperty("it.server", "").equals("wildfly") ? "http://127.0.0.1:9990/prometheus"
                : "http://127.0.0.1:8080/metrics");
    }

    static Metrics scrape() {
        HttpRequest request = HttpRequest.newBuilder(endpoint()).header("Accept", "text/plain")
                .timeout(Duration.ofSeconds(30)).build();
        try {
            HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                throw new AssertionError(endpoint() + " answered " + response.statusCode() + ": " + response.body());
            }
            return new Metrics(response.body().lines().toList());
        } catch (IOException e) {
            throw new AssertionError("cannot scrape " + endpoint(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * The sum of the samples named {@code name} whose labels include endpoint="{@code endpoint}" (any endpoint when
     * empty) and every further label given as name, value; null when there is none.
     */
    Double value(String name, String endpoint, String... labels) {
        Double sum = null;
        for (String line : lines) {
            if (line.startsWith("#") || !(line.startsWith(name + "{") || line.startsWith(name + " "))) {
                continue;
            }
            if (!endpoint.isEmpty() && !line.contains("endpoint=\"" + endpoint + "\"")) {
                continue;
            }
            boolean all = true;
            for (int i = 0; i < labels.length; i += 2) {
                all &= line.contains(labels[i] + "=\"" + labels[i + 1] + "\"");
            }
            if (all) {
                String[] parts = line.trim().split(" ");
                // name{labels} value [timestamp]
                String value = line.contains("}") ? line.substring(line.lastIndexOf('}') + 1).trim().split(" ")[0]
                        : parts[1];
                sum = (sum == null ? 0 : sum) + Double.parseDouble(value);
            }
        }
        return sum;
    }

    /** How much a counter grew since {@code before}. */
    double delta(Metrics before, String name, String endpoint, String... labels) {
        Double now = value(name, endpoint, labels);
        if (now == null) {
            throw new AssertionError("no sample " + name + " for endpoint " + endpoint + " among:\n"
                    + String.join("\n", lines.stream().filter(l -> l.startsWith("idempotency")).toList()));
        }
        Double then = before.value(name, endpoint, labels);
        return now - (then == null ? 0 : then);
    }
}
