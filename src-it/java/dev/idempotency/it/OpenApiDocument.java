package dev.idempotency.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Iterator;
import java.util.Map;

/**
 * The server's MicroProfile OpenAPI document as a client generator reads it, as JSON: WildFly's
 * (server-config/wildfly/observability.cli) and Payara's both at {@code /openapi} of the HTTP listener.
 */
public record OpenApiDocument(JsonNode root) {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    public static OpenApiDocument read() {
        URI endpoint = URI.create("http://127.0.0.1:8080/openapi");
        HttpRequest request = HttpRequest.newBuilder(endpoint).header("Accept", "application/json")
                .timeout(Duration.ofSeconds(60)).build();
        try {
            HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                throw new AssertionError(endpoint + " answered " + response.statusCode() + ": " + response.body());
            }
            return new OpenApiDocument(new ObjectMapper().readTree(response.body()));
        } catch (IOException e) {
            throw new AssertionError("cannot read " + endpoint, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * The operation of {@code method} at the path ending with {@code suffix} (servers differ in whether the context
     * root is in the path or in {@code servers}).
     */
    public JsonNode operation(String method, String suffix) {
        for (Iterator<Map.Entry<String, JsonNode>> paths = root.path("paths").fields(); paths.hasNext(); ) {
            Map.Entry<String, JsonNode> path = paths.next();
            if (path.getKey().endsWith(suffix)) {
                return path.getValue().path(method.toLowerCase(java.util.Locale.ROOT));
            }
        }
        throw new AssertionError("no path ends with " + suffix + " in " + root.path("paths").toString());
    }

    /** The header parameter named {@code name} of an operation, or a missing node. */
    public static JsonNode header(JsonNode operation, String name) {
        for (JsonNode parameter : operation.path("parameters")) {
            if ("header".equals(parameter.path("in").asText()) && name.equals(parameter.path("name").asText())) {
                return parameter;
            }
        }
        return operation.path("no header " + name);
    }
}
