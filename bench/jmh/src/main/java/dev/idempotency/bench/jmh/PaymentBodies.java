package dev.idempotency.bench.jmh;

import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * A deterministic JSON request body of about a given size: a payment with a customer and as many order
 * items as it takes. Keys out of order, decimals, nested objects and arrays, so that canonicalization has
 * its usual work to do.
 */
final class PaymentBodies {
    private PaymentBodies() {
    }

    static byte[] of(int bytes) {
        StringBuilder json = new StringBuilder(bytes + 256);
        json.append("{\"merchantOrderNo\":\"A-2026-000001\",\"traceId\":\"t-8f14e45f\",\"currency\":\"EUR\",")
                .append("\"amount\":1234.50,\"customer\":{\"name\":\"Alice Example\",\"email\":\"alice@example.com\",")
                .append("\"address\":{\"street\":\"Hauptstrasse 1\",\"city\":\"Berlin\",\"zip\":\"10115\"}},\"items\":[");
        for (int i = 0; json.length() < bytes - 2; i++) {
            if (i > 0) {
                json.append(',');
            }
            json.append(String.format(Locale.ROOT,
                    "{\"sku\":\"SKU-%05d\",\"quantity\":%d,\"price\":%d.%02d,\"name\":\"Item %d\",\"tags\":[\"t%d\",\"new\"]}",
                    i, 1 + i % 5, 3 + i % 97, i % 100, i, i % 7));
        }
        json.append("]}");
        return json.toString().getBytes(StandardCharsets.UTF_8);
    }
}
