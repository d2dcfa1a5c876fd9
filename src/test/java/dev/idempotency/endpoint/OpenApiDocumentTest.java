package dev.idempotency.endpoint;

import dev.idempotency.openapi.IdempotencyOasFilter;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.PathItem;
import org.eclipse.microprofile.openapi.models.media.Schema;
import org.eclipse.microprofile.openapi.models.parameters.Parameter;
import org.eclipse.microprofile.openapi.models.responses.APIResponse;
import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The OpenAPI filter on the document a server builds for the test application (the model as SmallRye's scanner
 * leaves it, under the application path {@code /api}): every idempotent operation gains its key parameter and the
 * library's answers, the rest is untouched. The servers' own {@code /openapi} is read in StatusCodesIT.
 */
@EnableWeld
class OpenApiDocumentTest {
    @WeldSetup
    WeldInitiator weld = WeldInitiator.from(EndpointFixture.weld()).build();

    @Test
    void everyIdempotentOperationIsDocumentedWithItsKeyAndTheLibrarysAnswers() {
        OpenAPI document = OASFactory.createOpenAPI().paths(OASFactory.createPaths()
                .addPathItem("/api/payments", OASFactory.createPathItem().POST(operation("201")))
                .addPathItem("/api/payments/{id}", OASFactory.createPathItem().GET(operation("200")))
                .addPathItem("/api/payments/by-order", OASFactory.createPathItem().POST(operation("201")))
                .addPathItem("/api/payments/accepted", OASFactory.createPathItem().POST(operation("201")))
                .addPathItem("/api/payments/waiting", OASFactory.createPathItem().POST(operation("201")
                        .addParameter(OASFactory.createParameter().name("Idempotency-Key").in(Parameter.In.HEADER)
                                .description("the application's own words"))))
                // Another resource whose path ends like an idempotent one: not the application's path, left alone.
                .addPathItem("/api/archive/payments", OASFactory.createPathItem().POST(operation("201"))));
        document.getPaths().getPathItem("/api/payments/waiting").getPOST().getResponses()
                .addAPIResponse("409", OASFactory.createAPIResponse().description("the application's own conflict"));

        new IdempotencyOasFilter().filterOpenAPI(document);

        Operation create = post(document, "/api/payments");
        assertThat(create.getParameters()).singleElement().satisfies(key -> {
            assertThat(key.getName()).isEqualTo("Idempotency-Key");
            assertThat(key.getIn()).isEqualTo(Parameter.In.HEADER);
            assertThat(key.getRequired()).isTrue();
            assertThat(key.getSchema().getType()).isEqualTo(Schema.SchemaType.STRING);
            assertThat(key.getSchema().getMinLength()).isEqualTo(1);
            assertThat(key.getSchema().getMaxLength()).isEqualTo(255);
            assertThat(key.getSchema().getPattern()).isEqualTo("^[!-~]+$");
        });
        Map<String, APIResponse> responses = create.getResponses().getAPIResponses();
        assertThat(responses).containsOnlyKeys("201", "400", "409", "413", "422", "429", "503");
        for (String status : new String[]{"400", "409", "413", "422", "429", "503"}) {
            assertThat(responses.get(status).getContent().getMediaType("application/problem+json").getSchema().getRef())
                    .as(status).isEqualTo("#/components/schemas/IdempotencyProblem");
        }
        assertThat(responses.get("409").getHeaders()).containsKey("Retry-After");
        assertThat(responses.get("429").getDescription()).contains("more than 3 operations in progress");
        assertThat(responses.get("503").getHeaders()).containsKey("Retry-After");
        // No Retry-After on a mismatch: no retry of that request with that key gets past it.
        assertThat(responses.get("422").getHeaders()).doesNotContainKey("Retry-After");
        responses.forEach((status, response) -> assertThat(response.getHeaders()).as(status)
                .containsKey("Idempotency-State"));
        assertThat(responses.get("201").getHeaders()).containsKey("Idempotent-Replayed");
        assertThat(create.getExtensions()).containsKey("x-idempotency");
        @SuppressWarnings("unchecked")
        Map<String, Object> facts = (Map<String, Object>) create.getExtensions().get("x-idempotency");
        assertThat(facts).containsEntry("endpoint", "payments.create").containsEntry("key-required", true)
                .containsEntry("in-flight", "conflict").containsEntry("retention", "PT24H")
                .containsEntry("state-header", "Idempotency-State")
                .containsEntry("states", java.util.List.of("applied", "not-applied", "in-progress", "unknown"))
                .containsEntry("next-steps", java.util.List.of("same-key", "new-key", "stop"));
        assertThat(document.getComponents().getSchemas()).containsKey("IdempotencyProblem");
        assertThat(document.getComponents().getSchemas().get("IdempotencyProblem").getProperties())
                .containsKeys("type", "title", "status", "detail", "retryAfter", "idempotencyState",
                        "idempotencyNext", "idempotencyExpires");

        Operation byOrder = post(document, "/api/payments/by-order");
        assertThat(byOrder.getParameters()).as("its key is a body field").isNullOrEmpty();
        assertThat(byOrder.getExtensions().get("x-idempotency").toString()).contains("key-source=body-field",
                "key-name=merchantOrderNo");

        Operation accepted = post(document, "/api/payments/accepted");
        assertThat(accepted.getResponses().getAPIResponses()).containsKey("202").doesNotContainKey("425");
        assertThat(accepted.getResponses().getAPIResponse("202").getHeaders()).containsKeys("Location", "Retry-After",
                "Idempotency-State");

        Operation waiting = post(document, "/api/payments/waiting");
        assertThat(waiting.getParameters()).singleElement().satisfies(own ->
                assertThat(own.getDescription()).isEqualTo("the application's own words"));
        assertThat(waiting.getResponses().getAPIResponse("409").getDescription()).isEqualTo("the application's own conflict");

        assertThat(document.getPaths().getPathItem("/api/payments/{id}").getGET().getParameters()).isNullOrEmpty();
        assertThat(document.getPaths().getPathItem("/api/payments/{id}").getGET().getResponses().getAPIResponses())
                .containsOnlyKeys("200");
        assertThat(post(document, "/api/archive/payments").getResponses().getAPIResponses()).containsOnlyKeys("201");
        assertThat(post(document, "/api/archive/payments").getExtensions()).isNullOrEmpty();
    }

    @Test
    void aSparseDocumentIsCompletedAndAnEmptyOneLeftAlone() {
        OpenAPI sparse = OASFactory.createOpenAPI().paths(OASFactory.createPaths()
                .addPathItem("/api/payments", OASFactory.createPathItem().POST(OASFactory.createOperation()))
                .addPathItem("/api/empty", OASFactory.createPathItem()));
        new IdempotencyOasFilter().filterOpenAPI(sparse);
        assertThat(post(sparse, "/api/payments").getResponses().getAPIResponses()).containsKeys("400", "409", "503");
        assertThat(sparse.getComponents().getSchemas()).containsKey("IdempotencyProblem");

        OpenAPI empty = OASFactory.createOpenAPI();
        new IdempotencyOasFilter().filterOpenAPI(empty);
        assertThat(empty.getPaths()).isNull();
        assertThat(empty.getComponents()).as("no idempotent operation, no schema").isNull();
    }

    private static Operation operation(String status) {
        return OASFactory.createOperation().responses(OASFactory.createAPIResponses()
                .addAPIResponse(status, OASFactory.createAPIResponse().description("the application's")));
    }

    private static Operation post(OpenAPI document, String path) {
        PathItem item = document.getPaths().getPathItem(path);
        return item.getPOST();
    }
}
