package dev.idempotency.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/** The demo's HTTP API as a client sees it: real HTTP, Basic authentication, raw bytes. */
final class Api {
    static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final URI base;

    Api(URI base) {
        this.base = base;
    }

    /** A response: status, headers (first value, names lower case) and the body bytes. */
    record Reply(int status, Map<String, String> headers, byte[] body) {
        String header(String name) {
            return headers.get(name.toLowerCase(java.util.Locale.ROOT));
        }

        JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (IOException e) {
                throw new UncheckedIOException(new String(body, StandardCharsets.UTF_8), e);
            }
        }

        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        /** The elements of a 200 JSON array answer. */
        java.util.List<JsonNode> list() {
            if (status != 200) {
                throw new AssertionError("expected 200 with a JSON array, got " + status + ": " + text());
            }
            java.util.List<JsonNode> out = new java.util.ArrayList<>();
            json().forEach(out::add);
            return out;
        }
    }

    Call post(String path, String json) {
        return new Call("POST", path, json);
    }

    Call get(String path) {
        return new Call("GET", path, null);
    }

    Call delete(String path) {
        return new Call("DELETE", path, null);
    }

    /**
     * Lets the requests held by {@code X-Demo-Hold: name} go on (DemoFaults.Holds): a test keeps requests inside
     * their transactions for exactly as long as it needs them there, instead of guessing a delay.
     */
    void release(String hold) {
        Reply released = delete("demo-faults/holds/" + hold).send();
        if (released.status() != 204) {
            throw new AssertionError("hold " + hold + " not released: " + released.status() + " " + released.text());
        }
    }

    final class Call {
        private final HttpRequest.Builder request;
        private final String method;
        private final String body;

        Call(String method, String path, String body) {
            this.method = method;
            this.body = body;
            this.request = HttpRequest.newBuilder(base.resolve("api/" + path)).timeout(Duration.ofSeconds(60));
            as("alice", "alice");
            if (body != null) {
                request.header("Content-Type", "application/json");
            }
        }

        Call as(String user, String password) {
            request.setHeader("Authorization", "Basic " + Base64.getEncoder().encodeToString(
                    (user + ":" + password).getBytes(StandardCharsets.UTF_8)));
            return this;
        }

        Call as(String user) {
            return as(user, user);
        }

        Call anonymous() {
            // HttpRequest.Builder cannot drop a header: build without it.
            request.setHeader("Authorization", "None");
            return this;
        }

        Call key(String key) {
            request.header("Idempotency-Key", key);
            return this;
        }

        Call header(String name, String value) {
            request.header(name, value);
            return this;
        }

        Reply send() {
            HttpRequest built = request.method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8)).build();
            try {
                HttpResponse<byte[]> response = HTTP.send(built, HttpResponse.BodyHandlers.ofByteArray());
                Map<String, String> headers = new LinkedHashMap<>();
                response.headers().map().forEach((name, values) -> headers.put(name.toLowerCase(java.util.Locale.ROOT),
                        values.get(0)));
                return new Reply(response.statusCode(), headers, response.body());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }
}
