package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.KeySource;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.Scope;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.OutcomeResolver;
import dev.idempotency.spi.ScopeRequest;
import dev.idempotency.spi.ScopeResolver;

import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The first step of the request path, in plain Java: from what an adapter captured of a request to the
 * {@link Operation} the protocol decides on — the key (header or body field, by the key rules), the scope
 * (the application's {@link ScopeResolver}) and the fingerprint. Every bad input is an
 * {@link IdempotencyException} with its problem, before anything runs.
 */
public final class RequestPreparation {

    /**
     * What the protocol needs to know of an incoming request; the JAX-RS adapter captures it. A message is one
     * too ({@link MessageFacts}), its properties in the place of headers.
     */
    public interface Incoming {
        String method();

        /** The raw request path. */
        String path();

        /** The raw query string, without {@code ?}; "" when there is none. */
        String query();

        /** Content-Type as sent, or "". */
        String contentType();

        /** The values of a header (name case-insensitive), empty when absent. */
        List<String> header(String name);

        /** The buffered body. */
        byte[] body();

        /** The authenticated principal's name, if any. */
        Optional<String> principalName();

        /** Whether the caller has a role, as the container's security knows it. */
        boolean isUserInRole(String role);
    }

    private final KeyRules keyRules;
    private final CanonicalJson canonicalJson;
    private final Fingerprinter fingerprinter;
    private final ScopeDigest scopeDigest;
    private final ScopeResolver scopeResolver;
    private final Clock clock;

    public RequestPreparation(KeyRules keyRules, CanonicalJson canonicalJson, Fingerprinter fingerprinter,
                              ScopeDigest scopeDigest, ScopeResolver scopeResolver, Clock clock) {
        this.keyRules = keyRules;
        this.canonicalJson = canonicalJson;
        this.fingerprinter = fingerprinter;
        this.scopeDigest = scopeDigest;
        this.scopeResolver = scopeResolver;
        this.clock = clock;
    }

    /**
     * The operation a request asks for.
     *
     * @return empty when the request carries no key and the endpoint does not require one
     * @throws IdempotencyException for a missing or malformed key, a malformed body or a missing principal
     */
    public Optional<Operation> prepare(Incoming request, EndpointPolicy policy, Optional<OutcomeResolver> resolver) {
        String key = key(policy, request);
        if (key == null) {
            if (policy.keyRequired()) {
                throw new IdempotencyException(Problem.of(ProblemType.KEY_MISSING, switch (policy.keySource()) {
                    case HEADER -> "the " + policy.keyName() + " header is required on this endpoint";
                    case BODY_FIELD -> "the body field '" + policy.keyName() + "' is required on this endpoint";
                    case MESSAGE_PROPERTY -> "the message property " + policy.keyName() + " is required on this endpoint";
                    case MESSAGE_ID -> "the message has no JMSMessageID";
                    case PARAMETER -> "the @IdempotencyKey argument is null";
                }));
            }
            return Optional.empty();
        }
        Scope scope = scope(request, policy.endpoint(), key);
        return Optional.of(Operation.of(scopeDigest, scope, fingerprint(request, policy, scope), policy, resolver));
    }

    /**
     * What an accepted asynchronous request keeps for another node to run it again (docs/adr/0020): its key and what
     * its fingerprint read, with the trigger's encoding of the method's arguments.
     */
    public KeptRequest keep(Incoming request, Operation op, String baseUri, byte[] arguments) {
        return new KeptRequest(op.scope().key(), request.method(), request.path(), request.query(),
                request.contentType(), op.policy().rules().apiVersion().read(request::header, request.path()), baseUri,
                request.body(), arguments);
    }

    /**
     * The operation of an accepted request that another node kept (docs/adr/0020), made again from what it kept:
     * empty unless it is the record's own — the record's scope key one of the kept key's under the accepted secrets,
     * the record's fingerprint the kept request's under the endpoint's rules — so that an input changed in the
     * table, or kept under rules or secrets no longer accepted, does not run.
     */
    public Optional<Operation> resumed(IdempotencyRecord record, KeptRequest kept, EndpointPolicy policy,
                                       Optional<OutcomeResolver> resolver) {
        Scope scope = new Scope(record.tenant(), record.principal(), record.endpoint(), kept.key());
        if (!scopeDigest.keys(scope).contains(record.scopeKey())) {
            return Optional.empty();
        }
        FingerprintRules rules = policy.rules();
        RequestFacts facts = new RequestFacts(kept.method(), kept.path(), kept.contentType(), kept.apiVersion(),
                scope.tenant() + "/" + scope.principal(), kept.body(),
                rules.query() ? QueryString.canonical(kept.query()) : "");
        Fingerprinter.RequestFingerprint fingerprint;
        try {
            fingerprint = fingerprinter.fingerprint(facts, rules, Map.of());
        } catch (CanonicalJson.MalformedBodyException e) {
            return Optional.empty();
        }
        if (!fingerprint.matches(record.requestHash())) {
            return Optional.empty();
        }
        return Optional.of(Operation.of(scopeDigest, scope, fingerprint, policy, resolver).on(record.scopeKey()));
    }

    /** The scope of a key as the caller of this request owns it (another caller's key is another scope). */
    public Scope scope(Incoming request, String endpoint, String key) {
        return scopeResolver.resolve(new ScopeRequest() {
            @Override
            public Optional<String> principalName() {
                return request.principalName();
            }

            @Override
            public boolean isUserInRole(String role) {
                return request.isUserInRole(role);
            }

            @Override
            public List<String> header(String name) {
                return request.header(name);
            }

            @Override
            public String endpoint() {
                return endpoint;
            }

            @Override
            public String key() {
                return key;
            }
        });
    }

    private String key(EndpointPolicy policy, Incoming request) {
        if (policy.keySource() == KeySource.HEADER || policy.keySource() == KeySource.MESSAGE_PROPERTY
                || policy.keySource() == KeySource.PARAMETER) {
            return keyRules.fromHeader(request.header(policy.keyName()));
        }
        if (policy.keySource() == KeySource.MESSAGE_ID) {
            return keyRules.fromHeader(request.header(MessageFacts.MESSAGE_ID));
        }
        try {
            return canonicalJson.scalarField(request.body(), policy.keyName()).map(keyRules::validate).orElse(null);
        } catch (CanonicalJson.MalformedBodyException e) {
            throw malformed(e);
        }
    }

    // Under the endpoint's rules, and able to compare under the other rules it still accepts (read lazily: only
    // a stored fingerprint that names them needs the request as those rules read it).
    private Fingerprinter.RequestFingerprint fingerprint(Incoming request, EndpointPolicy policy, Scope scope) {
        FingerprintRules rules = policy.rules();
        Map<FingerprintRules, Supplier<RequestFacts>> accepted = policy.acceptedRules(clock.instant())
                .map(other -> Map.<FingerprintRules, Supplier<RequestFacts>>of(other, () -> facts(request, other, scope)))
                .orElse(Map.of());
        try {
            return fingerprinter.fingerprint(facts(request, rules, scope), rules, accepted);
        } catch (CanonicalJson.MalformedBodyException e) {
            throw malformed(e);
        }
    }

    private static RequestFacts facts(Incoming request, FingerprintRules rules, Scope scope) {
        return new RequestFacts(request.method(), request.path(), request.contentType(),
                rules.apiVersion().read(request::header, request.path()), scope.tenant() + "/" + scope.principal(),
                request.body(), rules.query() ? QueryString.canonical(request.query()) : "");
    }

    private static IdempotencyException malformed(CanonicalJson.MalformedBodyException e) {
        return new IdempotencyException(Problem.of(ProblemType.BODY_MALFORMED,
                "the request body is not valid JSON: " + e.getMessage()), e);
    }
}
