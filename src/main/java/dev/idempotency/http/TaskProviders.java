package dev.idempotency.http;

import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.ext.ContextResolver;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.MessageBodyReader;
import jakarta.ws.rs.ext.MessageBodyWriter;
import jakarta.ws.rs.ext.Providers;

import java.io.OutputStream;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The providers an asynchronous endpoint's task writes its outcome with, on the executor's thread. The
 * runtime's own {@link Providers} cannot go there: RESTEasy injects it, and hands it to its JSON providers, as a
 * proxy over data bound to the request's thread (ADR 10). So what the task needs is taken on the request
 * thread: the application's exception mappers for the exceptions the method can end with, and its
 * {@code ContextResolver<Jsonb>}; entities are written here: {@code String} and {@code byte[]} as they are,
 * JSON with JSON-B.
 */
public final class TaskProviders implements Providers {
    private static volatile Jsonb defaultJsonb;

    private final Map<Class<? extends Throwable>, ExceptionMapper<?>> mappers;
    private final ContextResolver<Jsonb> jsonbResolver;

    private TaskProviders(Map<Class<? extends Throwable>, ExceptionMapper<?>> mappers,
                          ContextResolver<Jsonb> jsonbResolver) {
        this.mappers = mappers;
        this.jsonbResolver = jsonbResolver;
    }

    /**
     * Takes, on the request thread, what the task of {@code method} will need: the mappers of its declared
     * exceptions, of the endpoint's {@code finalOn} and {@code retryOn}, of the library's own problems, of
     * {@link WebApplicationException}, {@link RuntimeException} and {@link Exception}; the application's JSON-B
     * configuration.
     */
    public static TaskProviders capture(Providers runtime, Method method,
                                        List<Class<? extends Throwable>> configured) {
        List<Class<? extends Throwable>> types = new ArrayList<>(configured);
        for (Class<?> declared : method.getExceptionTypes()) {
            types.add(declared.asSubclass(Throwable.class));
        }
        types.add(dev.idempotency.IdempotencyException.class);
        types.add(WebApplicationException.class);
        types.add(RuntimeException.class);
        types.add(Exception.class);
        Map<Class<? extends Throwable>, ExceptionMapper<?>> mappers = new LinkedHashMap<>();
        ContextResolver<Jsonb> resolver = null;
        if (runtime != null) {
            for (Class<? extends Throwable> type : types) {
                ExceptionMapper<?> mapper = runtime.getExceptionMapper(type);
                if (mapper != null) {
                    mappers.putIfAbsent(type, mapper);
                }
            }
            resolver = runtime.getContextResolver(Jsonb.class, MediaType.APPLICATION_JSON_TYPE);
        }
        return new TaskProviders(mappers, resolver);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T extends Throwable> ExceptionMapper<T> getExceptionMapper(Class<T> type) {
        // The mapper taken for the nearest captured type the exception is an instance of.
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            ExceptionMapper<?> mapper = mappers.get(c);
            if (mapper != null) {
                return (ExceptionMapper<T>) mapper;
            }
        }
        return null;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> MessageBodyWriter<T> getMessageBodyWriter(Class<T> type, Type genericType, Annotation[] annotations,
                                                         MediaType mediaType) {
        if (type == byte[].class) {
            return (MessageBodyWriter<T>) new Writer((entity, target, media) -> target.write((byte[]) entity));
        }
        if (type == String.class) {
            return (MessageBodyWriter<T>) new Writer((entity, target, media) -> target.write(
                    ((String) entity).getBytes(charset(media))));
        }
        if (isJson(mediaType)) {
            Jsonb jsonb = jsonb(type);
            return (MessageBodyWriter<T>) new Writer((entity, target, media) -> target.write(
                    jsonb.toJson(entity, genericType == null ? type : genericType).getBytes(charset(media))));
        }
        return null;
    }

    @Override
    public <T> MessageBodyReader<T> getMessageBodyReader(Class<T> type, Type genericType, Annotation[] annotations,
                                                         MediaType mediaType) {
        return null;
    }

    @Override
    public <T> ContextResolver<T> getContextResolver(Class<T> contextType, MediaType mediaType) {
        return null;
    }

    /** The JSON-B the application configures for {@code type}, else the default one. */
    Jsonb jsonb(Class<?> type) {
        Jsonb configured = jsonbResolver == null ? null : jsonbResolver.getContext(type);
        if (configured != null) {
            return configured;
        }
        Jsonb shared = defaultJsonb;
        if (shared == null) {
            synchronized (TaskProviders.class) {
                if (defaultJsonb == null) {
                    defaultJsonb = JsonbBuilder.create();
                }
                shared = defaultJsonb;
            }
        }
        return shared;
    }

    private static boolean isJson(MediaType media) {
        return media != null && ("json".equalsIgnoreCase(media.getSubtype())
                || media.getSubtype().toLowerCase(java.util.Locale.ROOT).endsWith("+json"));
    }

    private static Charset charset(MediaType media) {
        String name = media == null ? null : media.getParameters().get(MediaType.CHARSET_PARAMETER);
        return name == null ? StandardCharsets.UTF_8 : Charset.forName(name);
    }

    private interface Write {
        void write(Object entity, OutputStream target, MediaType media) throws java.io.IOException;
    }

    private record Writer(Write write) implements MessageBodyWriter<Object> {
        @Override
        public boolean isWriteable(Class<?> type, Type genericType, Annotation[] annotations, MediaType mediaType) {
            return true;
        }

        @Override
        public void writeTo(Object entity, Class<?> type, Type genericType, Annotation[] annotations,
                            MediaType mediaType, MultivaluedMap<String, Object> headers, OutputStream target)
                throws java.io.IOException {
            write.write(entity, target, mediaType);
        }
    }
}
