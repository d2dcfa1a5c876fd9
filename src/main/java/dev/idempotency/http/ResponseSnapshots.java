package dev.idempotency.http;

import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.spi.StoredResponse;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.core.GenericEntity;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedHashMap;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.MessageBodyWriter;
import jakarta.ws.rs.ext.RuntimeDelegate;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Turns a response into the bytes that are both sent and stored, with the application's own
 * {@link MessageBodyWriter}s: the first response and every replay are the same bytes, so they cannot
 * drift. Only Location, Content-Type and the configured headers are kept; never cookies or credentials.
 */
public final class ResponseSnapshots {
    private static final Annotation[] NO_ANNOTATIONS = new Annotation[0];
    /** Header marking a replayed response. */
    public static final String REPLAYED_HEADER = "Idempotent-Replayed";

    private ResponseSnapshots() {
    }

    /** The snapshot of what a resource method returned (before the JAX-RS runtime writes it). */
    public static StoredResponse ofResult(Object result, Method method, CapturedRequest request, EndpointPolicy policy) {
        if (result instanceof Response response) {
            Object entity = response.getEntity();
            return snapshot(response.getStatus(), response.getHeaders(), entity, null, method.getAnnotations(),
                    response.getMediaType() != null ? response.getMediaType() : produced(method, entity),
                    request, policy);
        }
        if (result == null) {
            return snapshot(204, new MultivaluedHashMap<>(), null, null, method.getAnnotations(), null, request, policy);
        }
        return snapshot(200, new MultivaluedHashMap<>(), result, method.getGenericReturnType(), method.getAnnotations(),
                produced(method, result), request, policy);
    }

    /** The snapshot of a response as the response filter sees it (after exception mappers ran). */
    public static StoredResponse ofContext(ContainerResponseContext context, CapturedRequest request, EndpointPolicy policy) {
        return snapshot(context.getStatus(), context.getHeaders(), context.getEntity(), context.getEntityType(),
                context.getEntityAnnotations(), context.getMediaType(), request, policy);
    }

    /** Writes a stored (opened) response into the outgoing one. */
    public static void apply(StoredResponse stored, ContainerResponseContext context, boolean replayed) {
        context.setStatus(stored.status());
        MultivaluedMap<String, Object> headers = context.getHeaders();
        headers.remove(HttpHeaders.CONTENT_TYPE);
        headers.remove(HttpHeaders.LOCATION);
        stored.headers().forEach((name, values) -> {
            headers.remove(name);
            values.forEach(value -> headers.add(name, value));
        });
        String contentType = stored.header(HttpHeaders.CONTENT_TYPE);
        MediaType mediaType = contentType == null ? null : MediaType.valueOf(contentType);
        byte[] body = stored.body();
        if (body.length == 0 && stored.status() == 204) {
            context.setEntity(null);
        } else {
            context.setEntity(body, NO_ANNOTATIONS, mediaType);
        }
        if (replayed) {
            headers.putSingle(REPLAYED_HEADER, "true");
        }
    }

    /** The resource id: the last path segment of the Location, if any. */
    public static Optional<String> resourceId(StoredResponse response) {
        String location = response.header(HttpHeaders.LOCATION);
        if (location == null) {
            return Optional.empty();
        }
        String path = URI.create(location).getPath();
        if (path == null || path.isEmpty()) {
            return Optional.empty();
        }
        String trimmed = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        String last = trimmed.substring(trimmed.lastIndexOf('/') + 1);
        return last.isEmpty() ? Optional.empty() : Optional.of(last);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static StoredResponse snapshot(int status, MultivaluedMap<String, Object> sourceHeaders, Object entity,
                                           Type genericType, Annotation[] annotations, MediaType mediaType,
                                           CapturedRequest request, EndpointPolicy policy) {
        Type type = genericType;
        if (entity instanceof GenericEntity<?> generic) {
            type = generic.getType();
            entity = generic.getEntity();
        }
        MultivaluedMap<String, Object> headers = new MultivaluedHashMap<>();
        sourceHeaders.forEach((name, values) -> headers.put(name, new ArrayList<>(values)));
        byte[] body = new byte[0];
        if (entity != null) {
            Class<?> entityClass = entity.getClass();
            Type entityType = type == null || type == Object.class || type == Response.class ? entityClass : type;
            MediaType writeAs = mediaType != null ? mediaType : MediaType.APPLICATION_OCTET_STREAM_TYPE;
            MessageBodyWriter writer = request.providers().getMessageBodyWriter(entityClass, entityType,
                    annotations == null ? NO_ANNOTATIONS : annotations, writeAs);
            if (writer == null) {
                throw new IllegalStateException("IDEM-R001 no MessageBodyWriter for " + entityClass.getName() + " as " + writeAs);
            }
            // Bounded only where an oversize response fails; otherwise the client gets it whole the first time
            // and the store keeps it without its body (OutcomeStorage.forStorage).
            BoundedBuffer buffer = new BoundedBuffer(policy.failOversize() ? policy.maxResponseBytes() : Integer.MAX_VALUE - 8);
            try {
                writer.writeTo(entity, entityClass, entityType, annotations == null ? NO_ANNOTATIONS : annotations,
                        writeAs, headers, buffer);
            } catch (IOException e) {
                throw new IllegalStateException("IDEM-R002 the response could not be written", e);
            }
            body = buffer.toByteArray();
            if (!headers.containsKey(HttpHeaders.CONTENT_TYPE)) {
                headers.putSingle(HttpHeaders.CONTENT_TYPE, writeAs);
            }
        }
        Map<String, List<String>> kept = new LinkedHashMap<>();
        keep(kept, headers, HttpHeaders.CONTENT_TYPE, request.baseUri());
        keep(kept, headers, HttpHeaders.LOCATION, request.baseUri());
        for (String name : policy.replayedHeaders()) {
            keep(kept, headers, name, request.baseUri());
        }
        return new StoredResponse(status, kept, body, StoredResponse.PLAIN);
    }

    private static void keep(Map<String, List<String>> kept, MultivaluedMap<String, Object> headers, String name, URI base) {
        for (Map.Entry<String, List<Object>> e : headers.entrySet()) {
            if (e.getKey().equalsIgnoreCase(name) && e.getValue() != null && !e.getValue().isEmpty()) {
                List<String> values = new ArrayList<>();
                for (Object value : e.getValue()) {
                    values.add(headerText(name, value, base));
                }
                kept.put(name, values);
                return;
            }
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static String headerText(String name, Object value, URI base) {
        if (value instanceof URI uri) {
            // JAX-RS resolves a relative Location against the base URI; do the same so replays agree.
            return (name.equalsIgnoreCase(HttpHeaders.LOCATION) && !uri.isAbsolute() && base != null
                    ? base.resolve(uri) : uri).toString();
        }
        if (value instanceof String text) {
            return text;
        }
        RuntimeDelegate.HeaderDelegate delegate = RuntimeDelegate.getInstance().createHeaderDelegate(value.getClass());
        return delegate != null ? delegate.toString(value) : value.toString();
    }

    private static MediaType produced(Method method, Object entity) {
        Produces produces = method.getAnnotation(Produces.class);
        if (produces == null) {
            produces = method.getDeclaringClass().getAnnotation(Produces.class);
        }
        if (produces != null && produces.value().length > 0) {
            return MediaType.valueOf(produces.value()[0].split(",")[0].trim());
        }
        if (entity instanceof String) {
            return MediaType.TEXT_PLAIN_TYPE;
        }
        if (entity instanceof byte[]) {
            return MediaType.APPLICATION_OCTET_STREAM_TYPE;
        }
        return MediaType.APPLICATION_JSON_TYPE;
    }

    /** A byte buffer that refuses to grow beyond the endpoint's replay limit. */
    private static final class BoundedBuffer extends OutputStream {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private final int limit;

        BoundedBuffer(int limit) {
            this.limit = limit;
        }

        @Override
        public void write(int b) {
            check(1);
            bytes.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            check(len);
            bytes.write(b, off, len);
        }

        private void check(int more) {
            if (bytes.size() + (long) more > limit) {
                throw new IdempotencyException(Problem.of(ProblemType.RESPONSE_TOO_LARGE,
                        "the response exceeds the " + limit + " bytes that may be kept for replay"));
            }
        }

        byte[] toByteArray() {
            return bytes.toByteArray();
        }
    }
}
