package dev.idempotency.reliability;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP/1.1 over a plain socket, for requests a well-behaved client library refuses to send: control
 * characters and raw UTF-8 in header values, a header twice, any body with any content type.
 */
final class RawHttp {
    /** A request: header values are raw bytes. */
    static final class Request {
        final List<Map.Entry<String, byte[]>> headers = new ArrayList<>();
        byte[] body = new byte[0];

        Request header(String name, String value) {
            return header(name, value.getBytes(StandardCharsets.ISO_8859_1));
        }

        Request header(String name, byte[] value) {
            headers.add(Map.entry(name, value));
            return this;
        }

        Request body(byte[] bytes) {
            this.body = bytes;
            return this;
        }
    }

    /** What came back; status 0 when the connection ended without a response, -1 when it hung. */
    record Response(int status, Map<String, String> headers, byte[] body) {
        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }

    static Response post(int port, String path, Request request) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 2000);
            socket.setSoTimeout(30_000);
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            head.writeBytes(("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nConnection: close\r\n"
                    + "Content-Length: " + request.body.length + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
            for (Map.Entry<String, byte[]> h : request.headers) {
                head.writeBytes((h.getKey() + ": ").getBytes(StandardCharsets.ISO_8859_1));
                head.writeBytes(h.getValue());
                head.writeBytes("\r\n".getBytes(StandardCharsets.ISO_8859_1));
            }
            head.writeBytes("\r\n".getBytes(StandardCharsets.ISO_8859_1));
            OutputStream out = socket.getOutputStream();
            try {
                out.write(head.toByteArray());
                out.write(request.body);
                out.flush();
            } catch (IOException refusedMidway) {
                // A server may answer (413) and close before a large body is sent: read what it said.
            }
            return read(socket.getInputStream());
        } catch (SocketTimeoutException hung) {
            return new Response(-1, Map.of(), new byte[0]);
        } catch (IOException e) {
            return new Response(0, Map.of("error", e.toString()), new byte[0]);
        }
    }

    private static Response read(InputStream in) throws IOException {
        byte[] all = in.readAllBytes();
        int end = indexOf(all, "\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
        if (all.length == 0 || end < 0) {
            return new Response(0, Map.of(), all);
        }
        String[] lines = new String(all, 0, end, StandardCharsets.ISO_8859_1).split("\r\n");
        int status = Integer.parseInt(lines[0].split(" ")[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0) {
                headers.putIfAbsent(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
                        lines[i].substring(colon + 1).trim());
            }
        }
        byte[] body = java.util.Arrays.copyOfRange(all, end + 4, all.length);
        return new Response(status, headers, body);
    }

    private static int indexOf(byte[] data, byte[] pattern) {
        outer:
        for (int i = 0; i + pattern.length <= data.length; i++) {
            for (int j = 0; j < pattern.length; j++) {
                if (data[i + j] != pattern[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private RawHttp() {
    }
}
