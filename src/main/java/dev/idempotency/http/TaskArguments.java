package dev.idempotency.http;

import jakarta.json.bind.Jsonb;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * An asynchronous endpoint's arguments as its accepted operation keeps them, so that another node can call the
 * method again (docs/adr/0020): each written with JSON-B (the application's, where it configures one) and read back
 * as the parameter's declared type. An asynchronous method takes its entity and {@code @*Param} values (ADR 10);
 * a parameter JSON-B cannot carry faithfully — a stream, a reader, a JAX-RS or Servlet object — keeps nothing.
 */
public final class TaskArguments {
    private TaskArguments() {
    }

    /** Why {@code method}'s arguments cannot be kept, if they cannot. */
    public static Optional<String> whyNotKept(Method method) {
        for (Class<?> type : method.getParameterTypes()) {
            String name = type.getName();
            if (java.io.InputStream.class.isAssignableFrom(type) || java.io.Reader.class.isAssignableFrom(type)
                    || AutoCloseable.class.isAssignableFrom(type) || name.startsWith("jakarta.ws.rs.")
                    || name.startsWith("jakarta.servlet.")) {
                return Optional.of("its parameter of type " + name + " cannot be kept");
            }
        }
        return Optional.empty();
    }

    /** The arguments, each as JSON (or absent when null), in order. */
    public static byte[] encode(Method method, Object[] arguments, TaskProviders providers) {
        Type[] types = method.getGenericParameterTypes();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(arguments.length);
            for (int i = 0; i < arguments.length; i++) {
                if (arguments[i] == null) {
                    out.writeInt(-1);
                    continue;
                }
                byte[] json = jsonb(method, i, providers).toJson(arguments[i], types[i]).getBytes(StandardCharsets.UTF_8);
                out.writeInt(json.length);
                out.write(json);
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /**
     * The arguments {@link #encode} kept, as {@code method}'s parameter types.
     *
     * @throws IllegalArgumentException when they are not {@code method}'s (another count, or JSON that does not bind)
     */
    public static Object[] decode(Method method, byte[] kept, TaskProviders providers) {
        Type[] types = method.getGenericParameterTypes();
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(kept))) {
            int count = in.readInt();
            if (count != types.length) {
                throw new IllegalArgumentException(count + " arguments kept for a method of " + types.length);
            }
            Object[] arguments = new Object[count];
            for (int i = 0; i < count; i++) {
                int length = in.readInt();
                if (length < 0) {
                    continue;
                }
                if (length > kept.length) {
                    throw new IllegalArgumentException("an argument's length out of bounds");
                }
                byte[] json = new byte[length];
                in.readFully(json);
                arguments[i] = jsonb(method, i, providers).fromJson(new String(json, StandardCharsets.UTF_8), types[i]);
            }
            return arguments;
        } catch (IOException | RuntimeException e) {
            if (e instanceof IllegalArgumentException known) {
                throw known;
            }
            throw new IllegalArgumentException("the kept arguments do not bind to " + method + ": " + e, e);
        }
    }

    private static Jsonb jsonb(Method method, int parameter, TaskProviders providers) {
        return providers.jsonb(method.getParameterTypes()[parameter]);
    }
}
