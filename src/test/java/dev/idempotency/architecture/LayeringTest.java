package dev.idempotency.architecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/** The protocol stays plain Java; each adapter stays with its one technology; no package cycle. */
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
        noClasses().that().resideInAPackage("dev.idempotency.internal..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.idempotency.cdi..", "dev.idempotency.jaxrs..")
                .check(LIBRARY);
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
}
