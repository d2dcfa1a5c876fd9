package dev.idempotency.openapi;

import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.OpenAPI;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Documents every {@code @Idempotent} JAX-RS operation in the server's MicroProfile OpenAPI document, with no
 * annotation from the application: the key's header parameter (required or not, its length and pattern), the
 * problem responses the library may answer with (400, 409, 413, 422, 425, 429, 503 as the endpoint's rules allow,
 * with {@code Retry-After} where it is sent), 202 where a duplicate or the operation itself is accepted, and
 * {@code Idempotent-Replayed} on the application's own responses. What the application documents itself is kept:
 * a status it already describes, or a parameter it already names, is left as it is.
 *
 * <p>The library's jar names this class as {@code mp.openapi.filter} (in its {@code META-INF/microprofile-config.properties},
 * at a lower ordinal than the application's own). MicroProfile OpenAPI takes one filter: an application with a
 * filter of its own keeps it and calls this one from it ({@code new IdempotencyOasFilter().filterOpenAPI(model)}).
 *
 * <p>It never fails the document: on any error the document is served without these additions (IDEM-W020).
 */
public class IdempotencyOasFilter implements OASFilter {
    private static final Logger LOG = Logger.getLogger(IdempotencyOasFilter.class.getName());

    @Override
    public void filterOpenAPI(OpenAPI openAPI) {
        try {
            DocumentedOperations published = DocumentedOperations.published().orElse(null);
            if (published == null) {
                LOG.warning("IDEM-W020 the OpenAPI document is built before the idempotency library started; its"
                        + " idempotent operations are not documented");
                return;
            }
            int documented = new OperationDocumenter(published).document(openAPI);
            LOG.fine(() -> "the OpenAPI document describes " + documented + " idempotent operations");
        } catch (RuntimeException | LinkageError e) {
            LOG.log(Level.WARNING, "IDEM-W020 the OpenAPI document is served without its idempotency additions: " + e, e);
        }
    }
}
