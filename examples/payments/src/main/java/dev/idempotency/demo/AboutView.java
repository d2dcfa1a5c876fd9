package dev.idempotency.demo;

import jakarta.json.bind.annotation.JsonbDateFormat;
import jakarta.json.bind.annotation.JsonbProperty;
import jakarta.json.bind.annotation.JsonbPropertyOrder;
import jakarta.json.bind.annotation.JsonbTransient;

import java.time.OffsetDateTime;

/**
 * What the API is and who asks, as the server's JSON-B writes it: its annotations are JSON-B's, so the answer
 * shows that the application's JSON is still JSON-B with the library in the WAR (the library brings no JSON
 * provider; Jackson would ignore all three annotations).
 */
@JsonbPropertyOrder({"name", "apiVersion", "user", "tenant", "clock"})
public class AboutView {
    public String name;
    /** The version of this API, spelled as its clients know it. */
    @JsonbProperty("api_version")
    public String apiVersion;
    public String user;
    public String tenant;
    /** This node's clock ({@code demo.clock-skew} included), to the second, in UTC. */
    @JsonbDateFormat(value = "yyyy-MM-dd'T'HH:mm:ssX", locale = "en")
    public OffsetDateTime clock;
    /** The server's product and version: the view knows it, the answer keeps it (it helps an attacker). */
    @JsonbTransient
    public String server;
}
