package dev.idempotency.endpoint;

import jakarta.enterprise.context.control.RequestContextController;
import jakarta.enterprise.inject.spi.CDI;
import org.jboss.resteasy.mock.MockHttpRequest;
import org.jboss.resteasy.mock.MockHttpResponse;
import org.jboss.resteasy.spi.Dispatcher;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Sends requests through the JAX-RS runtime (RESTEasy's in-memory dispatcher: every filter, mapper and
 * writer runs as in a server), each in its own CDI request context, as a servlet container does.
 */
final class Http {
    static final String BASE = "http://127.0.0.1:8080/demo/api/";
    private final Dispatcher dispatcher;

    Http(Dispatcher dispatcher) {
        this.dispatcher = dispatcher;
    }

    Request post(String path, String json) {
        return new Request("POST", path).body("application/json", json.getBytes(StandardCharsets.UTF_8));
    }

    Request get(String path) {
        return new Request("GET", path);
    }

    /** A response as the client sees it. */
    record Reply(int status, Map<String, List<String>> headers, byte[] body) {
        String header(String name) {
            for (Map.Entry<String, List<String>> e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) {
                    return e.getValue().get(0);
                }
            }
            return null;
        }

        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    final class Request {
        private final String method;
        private final String path;
        private final Map<String, List<String>> headers = new LinkedHashMap<>();
        private byte[] body = new byte[0];

        Request(String method, String path) {
            this.method = method;
            this.path = path;
            header("X-User", "alice");
        }

        Request header(String name, String value) {
            headers.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
            return this;
        }

        Request without(String name) {
            headers.remove(name);
            return this;
        }

        Request key(String key) {
            return header("Idempotency-Key", key);
        }

        Request user(String user) {
            headers.remove("X-User");
            return header("X-User", user);
        }

        Request body(String contentType, byte[] bytes) {
            headers.remove("Content-Type");
            header("Content-Type", contentType);
            this.body = bytes;
            return this;
        }

        Reply send() {
            MockHttpRequest request = MockHttpRequest.create(method, URI.create(BASE + path), URI.create(BASE));
            headers.forEach((name, values) -> {
                if (name.equals("Content-Type")) {
                    request.contentType(values.get(0));
                } else {
                    values.forEach(v -> request.header(name, v));
                }
            });
            request.content(body);
            MockHttpResponse response = new MockHttpResponse();
            RequestContextController context = CDI.current().select(RequestContextController.class).get();
            context.activate();
            try {
                dispatcher.invoke(request, response);
            } finally {
                context.deactivate();
            }
            Map<String, List<String>> out = new LinkedHashMap<>();
            response.getOutputHeaders().forEach((name, values) -> {
                List<String> texts = new ArrayList<>();
                values.forEach(v -> texts.add(String.valueOf(v)));
                out.put(name, texts);
            });
            return new Reply(response.getStatus(), out, response.getOutput());
        }
    }
}
