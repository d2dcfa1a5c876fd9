package dev.idempotency.openapi;

import dev.idempotency.InFlightPolicy;
import dev.idempotency.KeySource;
import dev.idempotency.IdempotencyState;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.core.KeyRules;
import dev.idempotency.http.ProblemResponses;
import dev.idempotency.http.ResponseSnapshots;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.models.Components;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.PathItem;
import org.eclipse.microprofile.openapi.models.headers.Header;
import org.eclipse.microprofile.openapi.models.media.Schema;
import org.eclipse.microprofile.openapi.models.parameters.Parameter;
import org.eclipse.microprofile.openapi.models.responses.APIResponse;
import org.eclipse.microprofile.openapi.models.responses.APIResponses;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Adds what the library does to the operations of one OpenAPI document (see {@link IdempotencyOasFilter}). */
final class OperationDocumenter {
    static final String PROBLEM_SCHEMA = "IdempotencyProblem";
    private static final String PROBLEM_REF = "#/components/schemas/" + PROBLEM_SCHEMA;
    // What KeyRules accepts without a configured pattern: printable ASCII.
    private static final String PRINTABLE_ASCII = "^[!-~]+$";

    private final DocumentedOperations published;

    OperationDocumenter(DocumentedOperations published) {
        this.published = published;
    }

    /** @return how many of the document's operations were idempotent, and so documented */
    int document(OpenAPI openAPI) {
        if (openAPI.getPaths() == null || openAPI.getPaths().getPathItems() == null) {
            return 0;
        }
        List<Match> matches = matches(openAPI.getPaths().getPathItems());
        if (matches.isEmpty()) {
            return 0;
        }
        problemSchema(openAPI);
        for (Match match : matches) {
            describe(match.operation(), match.documented().policy());
        }
        return matches.size();
    }

    private record Match(Operation operation, DocumentedOperations.Operation documented, String prefix) {
    }

    /*
     * The document's paths include the application's path (@ApplicationPath), which the library does not know: an
     * Application class is no bean and no CDI event shows it. So a document path matches an idempotent method when it
     * ends with the method's path, segment-wise, with the same HTTP method. Where that finds more than one path for
     * a method (another resource whose path ends the same way), the prefix most of the matches share, the
     * application's path, decides.
     */
    private List<Match> matches(Map<String, PathItem> items) {
        List<Match> all = new ArrayList<>();
        for (Map.Entry<String, PathItem> item : items.entrySet()) {
            if (item.getValue() == null || item.getValue().getOperations() == null) {
                continue;
            }
            String path = normalized(item.getKey());
            for (Map.Entry<PathItem.HttpMethod, Operation> operation : item.getValue().getOperations().entrySet()) {
                for (DocumentedOperations.Operation documented : published.operations()) {
                    String own = normalized(documented.path());
                    if (documented.httpMethod().equalsIgnoreCase(operation.getKey().name()) && path.endsWith(own)
                            && (own.length() > 1 || path.equals(own))) {
                        all.add(new Match(operation.getValue(), documented, path.substring(0, path.length() - own.length())));
                    }
                }
            }
        }
        Map<String, Integer> prefixes = new HashMap<>();
        all.forEach(match -> prefixes.merge(match.prefix(), 1, Integer::sum));
        Map<DocumentedOperations.Operation, Integer> best = new HashMap<>();
        all.forEach(match -> best.merge(match.documented(), prefixes.get(match.prefix()), Math::max));
        return all.stream().filter(match -> prefixes.get(match.prefix()).equals(best.get(match.documented()))).toList();
    }

    // "/a/{id: [0-9]{2}}/" and "a//{x}" alike become "/a/{}": names and regular expressions of templates differ
    // between JAX-RS and the document.
    static String normalized(String path) {
        StringBuilder out = new StringBuilder(path.length() + 1).append('/');
        int depth = 0;
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            if (c == '{') {
                if (depth++ == 0) {
                    out.append("{}");
                }
            } else if (c == '}' && depth > 0) {
                depth--;
            } else if (depth == 0 && !(c == '/' && out.charAt(out.length() - 1) == '/')) {
                out.append(c);
            }
        }
        if (out.length() > 1 && out.charAt(out.length() - 1) == '/') {
            out.setLength(out.length() - 1);
        }
        return out.toString();
    }

    private void describe(Operation operation, EndpointPolicy policy) {
        operation.addExtension("x-idempotency", extension(policy));
        if (policy.keySource() == KeySource.HEADER) {
            keyParameter(operation, policy);
        }
        APIResponses responses = operation.getResponses();
        if (responses == null) {
            responses = OASFactory.createAPIResponses();
            operation.setResponses(responses);
        }
        // Every outcome the application documents may be a replay of the first.
        Map<String, APIResponse> own = responses.getAPIResponses() == null ? Map.of() : responses.getAPIResponses();
        for (APIResponse response : own.values()) {
            if (response != null && (response.getHeaders() == null
                    || !response.getHeaders().containsKey(ResponseSnapshots.REPLAYED_HEADER))) {
                response.addHeader(ResponseSnapshots.REPLAYED_HEADER, header("`true` on a replay: the first outcome"
                        + " of this key, sent again", Schema.SchemaType.BOOLEAN));
            }
            stateHeader(response);
        }
        if (responses.getDefaultValue() != null && (responses.getDefaultValue().getHeaders() == null
                || !responses.getDefaultValue().getHeaders().containsKey(ResponseSnapshots.REPLAYED_HEADER))) {
            responses.getDefaultValue().addHeader(ResponseSnapshots.REPLAYED_HEADER, header("`true` on a replay",
                    Schema.SchemaType.BOOLEAN));
        }
        stateHeader(responses.getDefaultValue());
        String key = policy.keySource() == KeySource.HEADER ? "the `" + policy.keyName() + "` header"
                : "the body field `" + policy.keyName() + "`";
        if (policy.asynchronous() || policy.inFlight() == InFlightPolicy.ACCEPTED) {
            APIResponse accepted = OASFactory.createAPIResponse().description(policy.asynchronous()
                    ? "Accepted: the operation runs as a task; its status, then its outcome, is at `Location`"
                    : "A request with this key is still running; its status, then its outcome, is at `Location`");
            accepted.addHeader("Location", header("The operation's status resource", Schema.SchemaType.STRING));
            accepted.addHeader("Retry-After", retryAfter());
            stateHeader(accepted);
            add(responses, "202", accepted);
        }
        add(responses, "400", problem("The request is not one the library can hold to its key: " + key
                + (policy.keyRequired() ? " is missing or" : "") + " is not a valid key, or the body is not well-formed"
                + " JSON (problem types `key-missing`, `key-invalid`, `body-malformed`)", false));
        add(responses, "409", problem(conflicts(policy), true));
        add(responses, "413", problem("The request body is larger than " + published.maxRequestBytes()
                + " bytes (problem type `body-too-large`)", false));
        if (policy.mismatchStatus() == 422) {
            add(responses, "422", problem("The key was used before with a different request: same key, other body or"
                    + " path (problem type `fingerprint-mismatch`); use a new key for a new operation", false));
        }
        if (policy.inFlight() == InFlightPolicy.TOO_EARLY) {
            add(responses, "425", problem("A request with this key is still running; retry after `Retry-After`"
                    + " seconds (problem type `request-in-flight`)", true));
        }
        if (policy.maxInFlightPerPrincipal() > 0 || policy.maxKeysPerEndpoint() > 0) {
            add(responses, "429", problem("The caller holds too many keys"
                    + (policy.maxInFlightPerPrincipal() > 0 ? ": more than " + policy.maxInFlightPerPrincipal()
                    + " operations in progress (`too-many-in-flight`)" : "")
                    + (policy.maxKeysPerEndpoint() > 0 ? (policy.maxInFlightPerPrincipal() > 0 ? ", or" : ":")
                    + " more than " + policy.maxKeysPerEndpoint() + " keys retained for this operation"
                    + " (`too-many-keys`)" : ""), true));
        }
        add(responses, "503", problem("The idempotency record store is unavailable, or a task could not be accepted:"
                + " nothing was done; retry with the same key after `Retry-After` seconds (problem types"
                + " `store-unavailable`, `task-not-accepted`)", true));
    }

    private static Map<String, Object> extension(EndpointPolicy policy) {
        Map<String, Object> extension = new LinkedHashMap<>();
        extension.put("endpoint", policy.endpoint());
        extension.put("key-source", policy.keySource() == KeySource.HEADER ? "header" : "body-field");
        extension.put("key-name", policy.keyName());
        extension.put("key-required", policy.keyRequired());
        extension.put("in-flight", policy.inFlight().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'));
        extension.put("retention", policy.retention().toString());
        extension.put("asynchronous", policy.asynchronous());
        // What every answer says about the operation (docs/adr/0019): the header, and its vocabulary.
        extension.put("state-header", IdempotencyState.HEADER);
        extension.put("states", states());
        extension.put("next-steps", nextSteps());
        return extension;
    }

    private static String conflicts(EndpointPolicy policy) {
        List<String> causes = new ArrayList<>();
        if (policy.inFlight() == InFlightPolicy.CONFLICT || policy.inFlight() == InFlightPolicy.WAIT) {
            causes.add("it is still running (`request-in-flight`)");
        }
        causes.add("this attempt was taken over by a newer one (`superseded`)");
        causes.add("the request was fingerprinted under rules this node does not accept yet"
                + " (`fingerprint-rules-unknown`)");
        if (policy.mismatchStatus() == 409) {
            causes.add("the key was used before with a different request (`fingerprint-mismatch`: no retry helps,"
                    + " a new operation needs a new key)");
        }
        return "A conflict with an earlier request of this key, which a retry with the same key may get past after"
                + " `Retry-After` seconds: " + String.join("; ", causes);
    }

    private void keyParameter(Operation operation, EndpointPolicy policy) {
        if (operation.getParameters() != null && operation.getParameters().stream().anyMatch(p -> p != null
                && p.getIn() == Parameter.In.HEADER && policy.keyName().equalsIgnoreCase(p.getName()))) {
            return;
        }
        KeyRules rules = published.keyRules();
        Schema schema = SchemaTypes.typed(OASFactory.createSchema(), Schema.SchemaType.STRING)
                .minLength(rules.minLength()).maxLength(rules.maxLength())
                .pattern(rules.pattern().map(java.util.regex.Pattern::pattern).orElse(PRINTABLE_ASCII));
        operation.addParameter(OASFactory.createParameter()
                .name(policy.keyName())
                .in(Parameter.In.HEADER)
                .required(policy.keyRequired())
                .description("Identifies the operation: a retry of the same request carries the same key and gets"
                        + " the first outcome back (with `" + ResponseSnapshots.REPLAYED_HEADER + ": true`); a new"
                        + " operation gets a new key (a UUID serves well). " + rules.minLength() + " to "
                        + rules.maxLength() + " printable ASCII characters" + (rules.pattern().isPresent()
                        ? " matching the pattern" : "") + "; a Structured Field string (`\"...\"`) means the same key."
                        + (policy.keyRequired() ? " Without it the request is rejected (400)."
                        : " Without it the request runs unprotected."))
                .schema(schema));
    }

    private static void add(APIResponses responses, String status, APIResponse response) {
        if (!responses.hasAPIResponse(status)) {
            responses.addAPIResponse(status, response);
        }
    }

    private static APIResponse problem(String description, boolean retryAfter) {
        APIResponse response = OASFactory.createAPIResponse().description(description)
                .content(OASFactory.createContent().addMediaType(ProblemResponses.PROBLEM_JSON,
                        OASFactory.createMediaType().schema(OASFactory.createSchema().ref(PROBLEM_REF))));
        if (retryAfter) {
            response.addHeader("Retry-After", retryAfter());
        }
        stateHeader(response);
        return response;
    }

    // Every answer of an idempotent operation carries it: the application's own, replays and the library's problems.
    private static void stateHeader(APIResponse response) {
        if (response != null && (response.getHeaders() == null
                || !response.getHeaders().containsKey(IdempotencyState.HEADER))) {
            response.addHeader(IdempotencyState.HEADER, header("What this answer says about the operation and what"
                    + " the client may do next, an RFC 9651 item: `applied`, `not-applied`, `in-progress` or `unknown`;"
                    + " `next=same-key|new-key|stop`; `expires=@<epoch seconds>` when the key's record expires, after"
                    + " which the key is new again", Schema.SchemaType.STRING));
        }
    }

    private static Header retryAfter() {
        return header("Seconds to wait before retrying with the same key", Schema.SchemaType.INTEGER);
    }

    private static Header header(String description, Schema.SchemaType type) {
        return OASFactory.createHeader().description(description)
                .schema(SchemaTypes.typed(OASFactory.createSchema(), type));
    }

    private static void problemSchema(OpenAPI openAPI) {
        Components components = openAPI.getComponents();
        if (components == null) {
            components = OASFactory.createComponents();
            openAPI.setComponents(components);
        }
        if (components.getSchemas() != null && components.getSchemas().containsKey(PROBLEM_SCHEMA)) {
            return;
        }
        Schema problem = SchemaTypes.typed(OASFactory.createSchema(), Schema.SchemaType.OBJECT)
                .description("An RFC 9457 problem answered by the idempotency library")
                .addProperty("type", SchemaTypes.typed(OASFactory.createSchema(), Schema.SchemaType.STRING)
                        .format("uri").description("Identifies the problem; its last segment never changes"))
                .addProperty("title", SchemaTypes.typed(OASFactory.createSchema(), Schema.SchemaType.STRING))
                .addProperty("status", SchemaTypes.typed(OASFactory.createSchema(), Schema.SchemaType.INTEGER))
                .addProperty("detail", SchemaTypes.typed(OASFactory.createSchema(), Schema.SchemaType.STRING))
                .addProperty("retryAfter", SchemaTypes.typed(OASFactory.createSchema(), Schema.SchemaType.INTEGER)
                        .description("The same as the Retry-After header, in seconds"))
                .addProperty(IdempotencyState.STATE_MEMBER, tokens(states(),
                        "Whether the operation was applied: the state of the Idempotency-State header"))
                .addProperty(IdempotencyState.NEXT_MEMBER, tokens(nextSteps(),
                        "What the client may do next: the `next` of the Idempotency-State header"))
                .addProperty(IdempotencyState.EXPIRES_MEMBER, SchemaTypes.typed(OASFactory.createSchema(),
                        Schema.SchemaType.STRING).format("date-time")
                        .description("When the key's record expires, after which the key is new again"));
        components.addSchema(PROBLEM_SCHEMA, problem);
    }

    private static Schema tokens(List<String> tokens, String description) {
        Schema schema = SchemaTypes.typed(OASFactory.createSchema(), Schema.SchemaType.STRING).description(description);
        tokens.forEach(schema::addEnumeration);
        return schema;
    }

    private static List<String> states() {
        return java.util.Arrays.stream(IdempotencyState.Applied.values()).map(IdempotencyState.Applied::token).toList();
    }

    private static List<String> nextSteps() {
        return java.util.Arrays.stream(IdempotencyState.Next.values()).map(IdempotencyState.Next::token).toList();
    }
}
