package dev.idempotency.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * The server's MicroProfile Health readiness as a load balancer reads it: WildFly's at the management interface
 * (server-config/wildfly/observability.cli), Payara's at the HTTP listener; 200 when UP, 503 when DOWN.
 */
public record Health(int status, JsonNode body) {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    static URI endpoint() {
        return URI.create(System.getProperty("it.server", "").equals("wildfly") ? "http://127.0.0.1:9990/health/ready"
                : "http://127.0.0.1:8080/health/ready");
    }

    public static Health ready(URI endpoint) {
        HttpRequest request = HttpRequest.newBuilder(endpoint).header("Accept", "application/json")
                .timeout(Duration.ofSeconds(30)).build();
        try {
            HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
            return new Health(response.statusCode(), new ObjectMapper().readTree(response.body()));
        } catch (IOException e) {
            throw new AssertionError("cannot read " + endpoint, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** The check named {@code name}, or a missing node. */
    public JsonNode check(String name) {
        for (JsonNode check : body.path("checks")) {
            if (name.equals(check.path("name").asText())) {
                return check;
            }
        }
        return body.path("no check named " + name);
    }
}
