package dev.idempotency.it.statuses;

import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A downstream service that answers each key's calls as scripted ({@code script}: the states of the answers before
 * its outcome, e.g. {@code in-progress,unknown}; {@code unknown*}: unknown for ever), then 201 with how many calls of
 * that key it saw: what the client half makes of each answer.
 */
@Path("downstream/scripted")
public class ScriptedDownstream {
    private static final Map<String, List<String>> CALLS = new ConcurrentHashMap<>();

    @POST
    @Produces(MediaType.APPLICATION_JSON)
    public Response answer(@HeaderParam("Idempotency-Key") String key, @QueryParam("script") String script,
                           String body) {
        List<String> calls = CALLS.computeIfAbsent(key == null ? "none" : key, k -> new CopyOnWriteArrayList<>());
        calls.add(body);
        String[] states = script == null || script.isEmpty() ? new String[0] : script.split(",");
        boolean forever = states.length > 0 && states[states.length - 1].endsWith("*");
        if (calls.size() <= states.length || forever) {
            String state = states[Math.min(calls.size(), states.length) - 1].replace("*", "");
            int status = state.equals("in-progress") ? 409 : 503;
            return Response.status(status).header("Retry-After", "1")
                    .header("Idempotency-State", state + ";next=same-key").build();
        }
        return Response.status(201).header("Idempotency-State", "applied;next=stop")
                .entity("{\"key\":\"" + key + "\",\"calls\":" + calls.size() + ",\"sameBody\":"
                        + (calls.stream().distinct().count() == 1) + "}").build();
    }
}
