package dev.idempotency.architecture;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The protocol stays plain Java; each adapter stays with its one technology and knows no other adapter; no package
 * is a catch-all; no cycle between packages, nor between the classes of one package.
 */
class LayeringTest {
    private static final JavaClasses LIBRARY = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("dev.idempotency");

    @Test
    void theCoreUsesOnlyJavaAndTheLibrarysApi() {
        classes().that().resideInAPackage("dev.idempotency.core..")
                .should().onlyDependOnClassesThat().resideInAnyPackage("java..", "javax.crypto..",
                        "dev.idempotency", "dev.idempotency.spi..", "dev.idempotency.core..")
                .check(LIBRARY);
    }

    @Test
    void noPackageDependsOnItselfThroughAnother() {
        slices().matching("dev.idempotency.(*)..").should().beFreeOfCycles().check(LIBRARY);
    }

    @Test
    void theRequestPathKnowsNeitherTheInterceptorNorTheFilters() {
        noClasses().that().resideInAnyPackage("dev.idempotency.http..", "dev.idempotency.call..",
                        "dev.idempotency.jms..", "dev.idempotency.endpoints..", "dev.idempotency.deployment..",
                        "dev.idempotency.admin..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.idempotency.cdi..", "dev.idempotency.jaxrs..")
                .check(LIBRARY);
    }

    /**
     * Each adapter knows its one technology, the API, the SPI and the core; never another adapter. One exception, by
     * design: a message's delivery is carried by the request-scoped exchange (jms uses http), which is what the
     * application's {@code IdempotencyContext} reads.
     */
    @Test
    void adaptersDoNotImportEachOther() {
        Map<String, List<String>> alsoAllowed = Map.of(
                "call", List.of("endpoints"),
                "jms", List.of("endpoints", "http"));
        for (String adapter : List.of("jdbc", "jta", "redis", "json", "metrics", "http", "call", "jms", "endpoints")) {
            List<String> allowed = new java.util.ArrayList<>(List.of("java..", "javax..", "jakarta..",
                    "com.fasterxml.jackson..", "redis.clients..", "io.micrometer..", "org.eclipse.microprofile..",
                    "dev.idempotency", "dev.idempotency.spi..", "dev.idempotency.core..",
                    "dev.idempotency." + adapter + ".."));
            alsoAllowed.getOrDefault(adapter, List.of()).forEach(other -> allowed.add("dev.idempotency." + other + ".."));
            classes().that().resideInAPackage("dev.idempotency." + adapter + "..")
                    .should().onlyDependOnClassesThat().resideInAnyPackage(allowed.toArray(String[]::new))
                    .as("the " + adapter + " adapter depends on no other adapter")
                    .check(LIBRARY);
        }
    }

    @Test
    void noPackageIsACatchAll() {
        noClasses().should().resideInAnyPackage("..internal..", "..util..", "..utils..", "..helper..", "..helpers..",
                "..common..", "..misc..").check(LIBRARY);
    }

    /**
     * No two classes of one package depend on each other, directly or through others of the package: each can be
     * read, tested and replaced on its own. A class and its nested classes count as one.
     */
    @Test
    void noCycleBetweenTheClassesOfOnePackage() {
        Map<String, Set<String>> edges = new TreeMap<>();
        for (JavaClass type : LIBRARY) {
            String from = topLevel(type);
            edges.computeIfAbsent(from, k -> new TreeSet<>());
            for (Dependency dependency : type.getDirectDependenciesFromSelf()) {
                JavaClass target = dependency.getTargetClass();
                String to = topLevel(target);
                if (!to.equals(from) && target.getPackageName().equals(type.getPackageName())
                        && to.startsWith("dev.idempotency")) {
                    edges.get(from).add(to);
                }
            }
        }
        assertThat(StronglyConnected.components(edges)).as("classes of one package that depend on each other")
                .allMatch(component -> component.size() == 1);
    }

    private static String topLevel(JavaClass type) {
        JavaClass outer = type;
        while (outer.getEnclosingClass().isPresent()) {
            outer = outer.getEnclosingClass().get();
        }
        return outer.getName();
    }

    /** Tarjan's strongly connected components of a small graph. */
    private static final class StronglyConnected {
        private final Map<String, Set<String>> edges;
        private final Map<String, Integer> index = new java.util.HashMap<>();
        private final Map<String, Integer> low = new java.util.HashMap<>();
        private final java.util.Deque<String> stack = new java.util.ArrayDeque<>();
        private final Set<String> onStack = new java.util.HashSet<>();
        private final List<Set<String>> components = new java.util.ArrayList<>();

        private StronglyConnected(Map<String, Set<String>> edges) {
            this.edges = edges;
        }

        static List<Set<String>> components(Map<String, Set<String>> edges) {
            StronglyConnected graph = new StronglyConnected(edges);
            edges.keySet().forEach(node -> {
                if (!graph.index.containsKey(node)) {
                    graph.visit(node);
                }
            });
            return graph.components;
        }

        private void visit(String node) {
            index.put(node, index.size());
            low.put(node, index.get(node));
            stack.push(node);
            onStack.add(node);
            for (String next : edges.getOrDefault(node, Set.of())) {
                if (!index.containsKey(next)) {
                    visit(next);
                    low.put(node, Math.min(low.get(node), low.get(next)));
                } else if (onStack.contains(next)) {
                    low.put(node, Math.min(low.get(node), index.get(next)));
                }
            }
            if (low.get(node).equals(index.get(node))) {
                Set<String> component = new TreeSet<>();
                String member;
                do {
                    member = stack.pop();
                    onStack.remove(member);
                    component.add(member);
                } while (!member.equals(node));
                components.add(component);
            }
        }
    }

    @Test
    void theApiAndSpiKnowNoAdapter() {
        noClasses().that().resideInAnyPackage("dev.idempotency", "dev.idempotency.spi..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.idempotency.cdi..", "dev.idempotency.jaxrs..",
                        "dev.idempotency.jdbc..", "dev.idempotency.jta..", "dev.idempotency.config..",
                        "dev.idempotency.json..", "java.sql..", "jakarta.ws.rs..", "jakarta.transaction..")
                .check(LIBRARY);
    }

    @Test
    void theJdbcStoreKnowsNeitherCdiNorJaxRsNorJta() {
        noClasses().that().resideInAPackage("dev.idempotency.jdbc..")
                .should().dependOnClassesThat().resideInAnyPackage("jakarta.enterprise..", "jakarta.ws.rs..",
                        "jakarta.transaction..", "dev.idempotency.cdi..", "dev.idempotency.jaxrs..")
                .check(LIBRARY);
    }

    /**
     * No service-locator look-up per call: beans are injected; only the providers JAX-RS creates look a bean up,
     * once per provider instance ({@code Collaborators}, the derived-key client filter).
     */
    @Test
    void onlyProvidersCreatedByJaxRsLookUpBeans() {
        noClasses().that().doNotHaveFullyQualifiedName("dev.idempotency.jaxrs.Collaborators")
                .and().doNotHaveFullyQualifiedName("dev.idempotency.jaxrs.DerivedKeyClientFilter")
                .should().callMethod(jakarta.enterprise.inject.spi.CDI.class, "current")
                .check(LIBRARY);
    }
}
