package dev.idempotency.core;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The canonical form of a query string for the fingerprint: what the parameters mean, not how they were
 * written. Parameters are decoded ({@code %20} and {@code +} are one space), sorted by name and then value
 * (a repeated name keeps every value), and written again with one encoding; empty segments
 * ({@code a=1&&b=2}) are dropped. So {@code ?b=2&a=1} and {@code ?a=1&b=%32} are the same request, and
 * {@code ?dryRun=true} is not the same as no query.
 */
public final class QueryString {
    private QueryString() {
    }

    /** The canonical query, or "" for none; {@code raw} is the query as sent, without {@code ?}, or null. */
    public static String canonical(String raw) {
        if (raw == null || raw.isEmpty()) {
            return "";
        }
        List<Map.Entry<String, String>> parameters = new ArrayList<>();
        for (String segment : raw.split("&")) {
            if (segment.isEmpty()) {
                continue;
            }
            int eq = segment.indexOf('=');
            String name = eq < 0 ? segment : segment.substring(0, eq);
            String value = eq < 0 ? "" : segment.substring(eq + 1);
            parameters.add(Map.entry(decode(name), decode(value)));
        }
        parameters.sort(Map.Entry.<String, String>comparingByKey().thenComparing(Map.Entry.comparingByValue()));
        StringBuilder out = new StringBuilder(raw.length());
        for (Map.Entry<String, String> parameter : parameters) {
            if (out.length() > 0) {
                out.append('&');
            }
            out.append(URLEncoder.encode(parameter.getKey(), StandardCharsets.UTF_8)).append('=')
                    .append(URLEncoder.encode(parameter.getValue(), StandardCharsets.UTF_8));
        }
        return out.toString();
    }

    // A malformed escape (%G1, a lone %) is kept as written: the same bytes sent again still fingerprint alike.
    private static String decode(String part) {
        try {
            return URLDecoder.decode(part, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException malformed) {
            return part;
        }
    }
}
