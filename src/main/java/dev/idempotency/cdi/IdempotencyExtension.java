package dev.idempotency.cdi;

import dev.idempotency.health.IdempotencyReadinessCheck;
import dev.idempotency.deployment.Assembly;
import dev.idempotency.endpoints.IdempotentMethod;
import dev.idempotency.http.IdempotentExchange;
import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyDefinitionException;
import dev.idempotency.ResponseStorage;
import dev.idempotency.config.ServerApis;
import dev.idempotency.config.SettingsSource;
import dev.idempotency.config.SettingsSources;
import dev.idempotency.spi.OutcomeResolver;
import dev.idempotency.spi.ScopeResolver;
import jakarta.annotation.Priority;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.spi.AfterBeanDiscovery;
import jakarta.enterprise.inject.spi.AfterDeploymentValidation;
import jakarta.enterprise.inject.spi.AnnotatedMethod;
import jakarta.enterprise.inject.spi.AnnotatedType;
import jakarta.enterprise.inject.spi.Bean;
import jakarta.enterprise.inject.spi.ProcessBean;
import jakarta.enterprise.inject.spi.BeanManager;
import jakarta.enterprise.inject.spi.BeforeBeanDiscovery;
import jakarta.enterprise.inject.spi.Extension;
import jakarta.enterprise.inject.spi.ProcessAnnotatedType;
import jakarta.enterprise.inject.spi.WithAnnotations;
import jakarta.enterprise.util.AnnotationLiteral;
import jakarta.ws.rs.HttpMethod;
import jakarta.ws.rs.container.Suspended;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * The portable extension that installs the library: registers its beans and interceptor (so the
 * library's jar needs no {@code beans.xml}), finds every {@link Idempotent} method and rejects misuse at
 * deployment with a message naming the method (ids {@code IDEM-D###}), and starts the assembly, so that
 * an invalid configuration fails the deployment rather than the first request.
 */
public class IdempotencyExtension implements Extension {
    private static final java.util.logging.Logger LOG =
            java.util.logging.Logger.getLogger(IdempotencyExtension.class.getName());
    private final List<IdempotentMethod> methods = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();
    private final Map<String, Method> endpoints = new HashMap<>();
    private final List<Bean<?>> outcomeResolverBeans = new ArrayList<>();
    private final List<Bean<?>> scopeResolverBeans = new ArrayList<>();
    private final List<Bean<?>> executorBeans = new ArrayList<>();
    // The bean of each class that declares an asynchronous endpoint: a resumed task calls its method through it.
    private final Map<Class<?>, Bean<?>> taskBeans = new HashMap<>();

    void registerBeans(@Observes BeforeBeanDiscovery event, BeanManager beans) {
        event.addAnnotatedType(beans.createAnnotatedType(IdempotentInterceptor.class), IdempotentInterceptor.class.getName());
        event.addAnnotatedType(beans.createAnnotatedType(IdempotentExchange.class), IdempotentExchange.class.getName());
        event.addAnnotatedType(beans.createAnnotatedType(Assembly.class), Assembly.class.getName());
        event.addAnnotatedType(beans.createAnnotatedType(AsynchronousTasks.class), AsynchronousTasks.class.getName());
    }

    void configurePriority(@Observes ProcessAnnotatedType<IdempotentInterceptor> event) {
        int priority;
        try {
            priority = new IdempotencySettingsProbe().interceptorPriority();
        } catch (IdempotencyDefinitionException e) {
            problems.add(e.getMessage());
            return;
        }
        event.configureAnnotatedType()
                .remove(a -> a.annotationType() == Priority.class)
                .add(new PriorityLiteral(priority));
    }

    <T> void findIdempotentMethods(@Observes @WithAnnotations(Idempotent.class) ProcessAnnotatedType<T> event) {
        AnnotatedType<T> type = event.getAnnotatedType();
        Idempotent onClass = type.getAnnotation(Idempotent.class);
        for (AnnotatedMethod<? super T> annotated : type.getMethods()) {
            Method method = annotated.getJavaMember();
            Idempotent onMethod = annotated.getAnnotation(Idempotent.class);
            boolean resourceMethod = isResourceMethod(method);
            boolean listener = !resourceMethod && isMessageListener(method);
            List<Integer> keyParameters = keyParameters(method);
            boolean call = !resourceMethod && !listener && !keyParameters.isEmpty();
            if (onMethod == null && (onClass == null || !(resourceMethod || listener || call))) {
                continue;
            }
            Idempotent effective = onMethod != null ? onMethod : onClass;
            String where = method.getDeclaringClass().getName() + "#" + method.getName();
            if (!resourceMethod && !listener && !call) {
                problems.add("IDEM-D001 @Idempotent on " + where + ", which is neither a JAX-RS resource method"
                        + " (it has no @GET/@POST/@PUT/@PATCH/@DELETE or other @HttpMethod annotation), nor a message"
                        + " listener (one jakarta.jms.Message parameter), nor a business method with an @IdempotencyKey"
                        + " parameter");
                continue;
            }
            if ((resourceMethod || listener) && !keyParameters.isEmpty()) {
                problems.add("IDEM-D017 @IdempotencyKey on a parameter of " + where + ", a " + (listener
                        ? "message listener" : "resource method") + ", whose key comes from its " + (listener
                        ? "message" : "request") + " (keySource, keyName)");
                continue;
            }
            if (!check(method, where, call)) {
                continue;
            }
            if ((listener || call) && effective.asynchronous()) {
                problems.add("IDEM-D016 @Idempotent(asynchronous = true) on " + (listener ? "message listener "
                        : "business method ") + where + ": " + (listener ? "a message runs where it is delivered, in"
                        + " the transaction that acknowledges it" : "a call runs where it is made, and returns its result"));
                continue;
            }
            if (call && !keyParameterUsable(method, keyParameters, where)) {
                continue;
            }
            String endpoint = effective.endpoint().isEmpty()
                    ? method.getDeclaringClass().getSimpleName() + "." + method.getName()
                    : effective.endpoint();
            if (!endpoint.matches("[A-Za-z0-9_.-]{1,128}")) {
                problems.add("IDEM-D005 endpoint name '" + endpoint + "' of " + where
                        + " must be 1 to 128 characters of letters, digits, '.', '_' or '-'");
                continue;
            }
            Method previous = endpoints.putIfAbsent(endpoint, method);
            if (previous != null && !previous.equals(method)) {
                problems.add("IDEM-D006 endpoint name '" + endpoint + "' is used by both " + where + " and "
                        + previous.getDeclaringClass().getName() + "#" + previous.getName());
                continue;
            }
            Method replayWith = replayWith(method, effective, where);
            methods.add(new IdempotentMethod(method, effective, endpoint, replayWith,
                    listener ? IdempotentMethod.Trigger.MESSAGE : call ? IdempotentMethod.Trigger.CALL
                            : IdempotentMethod.Trigger.REQUEST, call ? keyParameters.get(0) : -1));
        }
    }

    void reportProblems(@Observes AfterBeanDiscovery event) {
        problems.forEach(problem -> event.addDefinitionError(new IdempotencyDefinitionException(problem)));
    }

    // Only where the server gives the deployment MicroProfile Health: elsewhere the check's class could not load.
    // Its bean goes into the archive of the application's first idempotent class, which the server's health
    // support sees (see IdempotencyReadinessCheck.register).
    void addReadinessCheck(@Observes AfterBeanDiscovery event, BeanManager beans) {
        if (!ServerApis.visible("org.eclipse.microprofile.health.HealthCheck",
                IdempotencyExtension.class.getClassLoader())) {
            return;
        }
        Class<?> home = methods.isEmpty() ? IdempotencyExtension.class
                : methods.get(0).method().getDeclaringClass();
        IdempotencyReadinessCheck.register(event, home,
                () -> beans.createInstance().select(Assembly.class).get().readiness());
        LOG.info("IDEM-I010 the readiness check 'idempotency' is added to the server's MicroProfile Health");
    }

    // The application's resolvers, wherever their bean archive is: every bean of the deployment passes here,
    // while an Instance injected into the library's assembly sees only the archives its own may see (on Payara,
    // not the WAR's WEB-INF/classes).
    void collectResolvers(@Observes ProcessBean<?> event) {
        Bean<?> bean = event.getBean();
        if (bean.getTypes().contains(OutcomeResolver.class)) {
            outcomeResolverBeans.add(bean);
        }
        if (bean.getTypes().contains(ScopeResolver.class)) {
            scopeResolverBeans.add(bean);
        }
        if (bean.getTypes().contains(java.util.concurrent.ExecutorService.class) && bean.getQualifiers().stream()
                .anyMatch(q -> q.annotationType() == dev.idempotency.IdempotencyExecutor.class)) {
            executorBeans.add(bean);
        }
        for (IdempotentMethod method : methods) {
            Class<?> declaring = method.method().getDeclaringClass();
            // Its type, not only its class: a synthetic bean (the library's own readiness check) names the class too.
            if (method.annotation().asynchronous() && bean.getTypes().contains(declaring)
                    && (bean.getBeanClass() == declaring || !taskBeans.containsKey(declaring))) {
                taskBeans.put(declaring, bean);
            }
        }
    }

    void start(@Observes AfterDeploymentValidation event, BeanManager beans) {
        if (!problems.isEmpty()) {
            return;
        }
        if (scopeResolverBeans.size() > 1) {
            event.addDeploymentProblem(new IdempotencyDefinitionException("IDEM-D013 more than one ScopeResolver bean: "
                    + scopeResolverBeans.stream().map(b -> b.getBeanClass().getName()).toList() + "; keep one"));
            return;
        }
        try {
            Assembly assembly = beans.createInstance().select(Assembly.class).get();
            AsynchronousTasks tasks = beans.createInstance().select(AsynchronousTasks.class).get();
            tasks.callThrough(beans, taskBeans);
            assembly.start(methods, Thread.currentThread().getContextClassLoader(),
                    scopeResolverBeans.stream().findFirst().map(b -> reference(beans, b, ScopeResolver.class)),
                    outcomeResolverBeans.stream().map(b -> reference(beans, b, OutcomeResolver.class)).toList(),
                    executorBeans.stream().findFirst().map(b -> reference(beans, b,
                            java.util.concurrent.ExecutorService.class)),
                    tasks);
        } catch (RuntimeException e) {
            event.addDeploymentProblem(e);
        }
    }

    private static <T> T reference(BeanManager beans, Bean<?> bean, Class<T> type) {
        return type.cast(beans.getReference(bean, type, beans.createCreationalContext(bean)));
    }

    /** The methods found; for tests and diagnostics. */
    public List<IdempotentMethod> methods() {
        return List.copyOf(methods);
    }

    // The positions of a method's @IdempotencyKey parameters.
    private static List<Integer> keyParameters(Method method) {
        List<Integer> found = new ArrayList<>();
        Parameter[] parameters = method.getParameters();
        for (int i = 0; i < parameters.length; i++) {
            if (parameters[i].isAnnotationPresent(IdempotencyKey.class)) {
                found.add(i);
            }
        }
        return found;
    }

    private boolean keyParameterUsable(Method method, List<Integer> keyParameters, String where) {
        if (keyParameters.size() > 1) {
            problems.add("IDEM-D017 @Idempotent " + where + " has " + keyParameters.size() + " @IdempotencyKey"
                    + " parameters; an operation has one key");
            return false;
        }
        Class<?> type = method.getParameterTypes()[keyParameters.get(0)];
        boolean usable = CharSequence.class.isAssignableFrom(type) || type == java.util.UUID.class
                || type == long.class || type == Long.class || type == int.class || type == Integer.class;
        if (!usable) {
            problems.add("IDEM-D017 the @IdempotencyKey parameter of " + where + " is a " + type.getName()
                    + "; a key is text: a CharSequence, a UUID, or a long or int");
        }
        return usable;
    }

    private boolean check(Method method, String where, boolean call) {
        Class<?> returnType = method.getReturnType();
        // A call's result is stored as JSON and read back as its type, a primitive as well as any other.
        if (!call && returnType.isPrimitive() && returnType != void.class) {
            problems.add("IDEM-D002 @Idempotent " + where + " returns a primitive " + returnType
                    + "; return a reference type or Response, so that a replay can stand in for the result");
            return false;
        }
        boolean suspended = false;
        for (Parameter parameter : method.getParameters()) {
            suspended |= parameter.isAnnotationPresent(Suspended.class);
        }
        if (suspended || CompletionStage.class.isAssignableFrom(returnType)) {
            problems.add("IDEM-D003 @Idempotent " + where + " is asynchronous (@Suspended or CompletionStage);"
                    + " only synchronous resource methods can finish their record in the business transaction;"
                    + " for a long operation use @Idempotent(asynchronous = true)");
            return false;
        }
        if (Modifier.isPrivate(method.getModifiers()) || Modifier.isStatic(method.getModifiers())
                || Modifier.isFinal(method.getModifiers())) {
            problems.add("IDEM-D007 @Idempotent " + where + " is private, static or final and cannot be intercepted");
            return false;
        }
        return true;
    }

    private Method replayWith(Method method, Idempotent annotation, String where) {
        if (annotation.replayWith().isEmpty()) {
            return null;
        }
        if (annotation.storage() != ResponseStorage.MINIMAL && annotation.storage() != ResponseStorage.CONFIGURED) {
            problems.add("IDEM-D008 @Idempotent " + where + " names replayWith but stores " + annotation.storage());
            return null;
        }
        try {
            Method rebuild = method.getDeclaringClass().getDeclaredMethod(annotation.replayWith(), String.class);
            rebuild.setAccessible(true);
            return rebuild;
        } catch (NoSuchMethodException e) {
            problems.add("IDEM-D009 @Idempotent " + where + " names replayWith = \"" + annotation.replayWith()
                    + "\", but " + method.getDeclaringClass().getName() + " has no method "
                    + annotation.replayWith() + "(String resourceId)");
            return null;
        }
    }

    private static boolean isResourceMethod(Method method) {
        for (Annotation annotation : method.getAnnotations()) {
            if (annotation.annotationType().isAnnotationPresent(HttpMethod.class)) {
                return true;
            }
        }
        return false;
    }

    // A message listener takes one message: jakarta.jms.Message or a subtype, told by name so that the extension
    // loads no messaging class on a server without messaging.
    private static boolean isMessageListener(Method method) {
        return method.getParameterCount() == 1 && isMessageType(method.getParameterTypes()[0]);
    }

    private static boolean isMessageType(Class<?> type) {
        if (type.getName().equals("jakarta.jms.Message")) {
            return true;
        }
        for (Class<?> parent : type.getInterfaces()) {
            if (isMessageType(parent)) {
                return true;
            }
        }
        return false;
    }

    /** Reads only the interceptor priority, before the rest of the configuration is validated. */
    private static final class IdempotencySettingsProbe {
        int interceptorPriority() {
            SettingsSource source = SettingsSources.detect(Thread.currentThread().getContextClassLoader());
            String raw = source.get(dev.idempotency.config.Setting.INTERCEPTOR_PRIORITY.key())
                    .orElse(dev.idempotency.config.Setting.INTERCEPTOR_PRIORITY.defaultValue());
            try {
                return Integer.parseInt(raw);
            } catch (NumberFormatException e) {
                throw new IdempotencyDefinitionException("IDEM-C001 invalid configuration "
                        + dev.idempotency.config.Setting.INTERCEPTOR_PRIORITY.key() + "='" + raw + "': must be an integer");
            }
        }
    }

    @SuppressWarnings("all")
    private static final class PriorityLiteral extends AnnotationLiteral<Priority> implements Priority {
        private static final long serialVersionUID = 1L;
        private final int value;

        PriorityLiteral(int value) {
            this.value = value;
        }

        @Override
        public int value() {
            return value;
        }
    }
}
