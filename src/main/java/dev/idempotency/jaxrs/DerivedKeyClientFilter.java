package dev.idempotency.jaxrs;

import dev.idempotency.DerivedKey;
import dev.idempotency.IdempotencyContext;
import dev.idempotency.config.SettingsSource;
import dev.idempotency.config.SettingsSources;
import jakarta.enterprise.inject.spi.CDI;
import jakarta.ws.rs.client.ClientRequestContext;
import jakarta.ws.rs.client.ClientRequestFilter;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Puts the operation's derived key on an outgoing client call, so the downstream sees the same key on every retry
 * and takeover of the operation. Outside an idempotent operation it adds nothing; a key set explicitly on the
 * request is left alone.
 *
 * <ul>
 *   <li>JAX-RS client: {@code client.register(new DerivedKeyClientFilter("acquirer.charge"))}.</li>
 *   <li>MicroProfile Rest Client: {@code @RegisterProvider(DerivedKeyClientFilter.class)} on the interface; the
 *   purpose (and header) come from {@link DerivedKey} on the invoked method or the interface, else from the
 *   configuration {@code idempotency.client.<configKey>.purpose} (and {@code .header}), {@code configKey} being
 *   {@code @RegisterRestClient(configKey)} or the interface's name. A call with none fails (IDEM-D018) rather
 *   than go out without its key.</li>
 * </ul>
 */
public class DerivedKeyClientFilter implements ClientRequestFilter {
    /** The property under which MicroProfile Rest Client gives a filter the interface method invoked. */
    static final String INVOKED_METHOD = "org.eclipse.microprofile.rest.client.invokedMethod";
    private static final String DEFAULT_HEADER = "Idempotency-Key";

    private final Purpose fixed;
    private final Map<Method, Purpose> byMethod = new ConcurrentHashMap<>();
    private volatile IdempotencyContext context;

    /** For {@code @RegisterProvider}: the purpose comes from each invoked method (see the class comment). */
    public DerivedKeyClientFilter() {
        this.fixed = null;
    }

    /** Sends {@code Idempotency-Key: <derived key for purpose>}. */
    public DerivedKeyClientFilter(String purpose) {
        this(purpose, DEFAULT_HEADER);
    }

    public DerivedKeyClientFilter(String purpose, String header) {
        if (purpose == null || purpose.isBlank()) {
            throw new IllegalArgumentException("a derived key needs a purpose");
        }
        this.fixed = new Purpose(purpose, header);
    }

    @Override
    public void filter(ClientRequestContext request) {
        Purpose purpose = fixed != null ? fixed : purposeOf(request);
        if (request.getHeaders().containsKey(purpose.header())) {
            return;
        }
        IdempotencyContext context = context();
        if (context.isActive()) {
            request.getHeaders().putSingle(purpose.header(), context.derive(purpose.purpose()));
        }
    }

    // The request-scoped context's client proxy, looked up once per filter: it resolves to the current request's
    // operation at each call, so a call does no bean look-up.
    private IdempotencyContext context() {
        IdempotencyContext found = context;
        if (found == null) {
            found = CDI.current().select(IdempotencyContext.class).get();
            context = found;
        }
        return found;
    }

    private Purpose purposeOf(ClientRequestContext request) {
        if (!(request.getProperty(INVOKED_METHOD) instanceof Method invoked)) {
            throw new IllegalStateException("IDEM-D018 DerivedKeyClientFilter without a purpose on a call that is not"
                    + " a MicroProfile Rest Client method: register new DerivedKeyClientFilter(\"<purpose>\")");
        }
        return byMethod.computeIfAbsent(invoked, method -> resolve(method,
                SettingsSources.detect(Thread.currentThread().getContextClassLoader())));
    }

    /** The purpose of a Rest Client method: its annotation, its interface's, else the configuration. */
    static Purpose resolve(Method method, SettingsSource settings) {
        DerivedKey annotated = method.getAnnotation(DerivedKey.class);
        if (annotated == null) {
            annotated = method.getDeclaringClass().getAnnotation(DerivedKey.class);
        }
        if (annotated != null) {
            return new Purpose(annotated.value(), annotated.header());
        }
        String configKey = configKey(method.getDeclaringClass());
        String prefix = "idempotency.client." + configKey + ".";
        return settings.get(prefix + "purpose")
                .map(purpose -> new Purpose(purpose, settings.get(prefix + "header").orElse(DEFAULT_HEADER)))
                .orElseThrow(() -> new IllegalStateException("IDEM-D018 DerivedKeyClientFilter on "
                        + method.getDeclaringClass().getName() + "#" + method.getName() + " has no purpose: annotate"
                        + " the interface or the method with @DerivedKey(\"<purpose>\"), or set " + prefix + "purpose"));
    }

    // MicroProfile Rest Client's own key for an interface: @RegisterRestClient(configKey), else its name. Read by
    // name, so that the library needs the Rest Client API only where it is used.
    private static String configKey(Class<?> api) {
        for (Annotation annotation : api.getAnnotations()) {
            if (annotation.annotationType().getName().equals("org.eclipse.microprofile.rest.client.inject.RegisterRestClient")) {
                try {
                    Object key = annotation.annotationType().getMethod("configKey").invoke(annotation);
                    if (key instanceof String text && !text.isBlank()) {
                        return text;
                    }
                } catch (ReflectiveOperationException e) {
                    // An API without configKey: the interface's name, as below.
                }
            }
        }
        return api.getName();
    }

    /** What a call's key is derived for, and the header it goes in. */
    record Purpose(String purpose, String header) {
    }
}
