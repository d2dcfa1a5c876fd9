package dev.idempotency.deployment;

import dev.idempotency.config.IdempotencySettings;
import dev.idempotency.core.CallScopeResolver;
import dev.idempotency.core.CanonicalJson;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.core.Fingerprinter;
import dev.idempotency.core.KeyRules;
import dev.idempotency.core.MessageScopeResolver;
import dev.idempotency.core.RequestPreparation;
import dev.idempotency.core.ScopeDigest;
import dev.idempotency.endpoints.IdempotentEndpoint;
import dev.idempotency.endpoints.IdempotentEndpoints;
import dev.idempotency.endpoints.IdempotentMethod;
import dev.idempotency.spi.OutcomeResolver;

import java.time.Clock;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * How the deployment's annotated methods become its registry of endpoints: each one's policy (annotation and
 * settings) and resolver first, which the deployment's checks need before it has a store; then, once its clock is
 * known, each trigger's preparation of the input.
 */
final class EndpointResolution {
    private final Collection<IdempotentMethod> found;
    private final Map<String, EndpointPolicy> policies = new LinkedHashMap<>();
    private final Map<String, CallScopeResolver.Sources> callSources = new HashMap<>();
    private final Map<String, Optional<OutcomeResolver>> resolvers = new HashMap<>();

    /** @throws dev.idempotency.IdempotencyDefinitionException for an invalid setting or annotation value */
    EndpointResolution(Collection<IdempotentMethod> found, IdempotencySettings settings,
                       List<OutcomeResolver> outcomeResolvers) {
        this.found = found;
        for (IdempotentMethod method : found) {
            EndpointPolicy policy = method.trigger() == IdempotentMethod.Trigger.CALL
                    ? settings.policyForCall(method.endpoint(), method.annotation())
                    : settings.policyFor(method.endpoint(), method.annotation(),
                    method.trigger() == IdempotentMethod.Trigger.MESSAGE);
            if (method.trigger() == IdempotentMethod.Trigger.CALL) {
                callSources.put(method.endpoint(), settings.callSources(method.endpoint()));
            }
            policies.put(method.endpoint(), policy);
            resolvers.put(method.endpoint(), DeploymentChecks.resolverFor(policy, outcomeResolvers));
        }
    }

    /** Every endpoint's resolved policy. */
    Collection<EndpointPolicy> policies() {
        return policies.values();
    }

    /**
     * The registry: each endpoint with its policy, resolver and its trigger's preparation — {@code requests} for a
     * resource method; a message's scope from its policy (it has no caller the application's resolver could ask
     * about); a business method's from the {@code call.*} settings (it has no request).
     */
    IdempotentEndpoints registry(RequestPreparation requests, KeyRules keyRules, CanonicalJson canonicalJson,
                                 Fingerprinter fingerprinter, ScopeDigest scopeDigest, Clock clock) {
        RequestPreparation messages = new RequestPreparation(keyRules, canonicalJson, fingerprinter, scopeDigest,
                new MessageScopeResolver(policies.values().stream().filter(p -> p.messages().isPresent())
                        .collect(Collectors.toMap(EndpointPolicy::endpoint, p -> p.messages().get()))), clock);
        RequestPreparation calls = new RequestPreparation(keyRules, canonicalJson, fingerprinter, scopeDigest,
                new CallScopeResolver(callSources), clock);
        return new IdempotentEndpoints(found.stream().map(method -> new IdempotentEndpoint(method,
                policies.get(method.endpoint()), resolvers.get(method.endpoint()), switch (method.trigger()) {
                    case REQUEST -> requests;
                    case MESSAGE -> messages;
                    case CALL -> calls;
                })).toList());
    }
}
