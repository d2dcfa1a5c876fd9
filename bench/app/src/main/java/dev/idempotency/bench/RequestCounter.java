package dev.idempotency.bench;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.annotation.WebFilter;
import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts the requests the server answered, so that the harness divides the database's counters by the
 * requests that made them (wrk counts only the answers it received before its time ran out, not those
 * still in flight). {@code GET /bench/answered} reads the count; it does not count itself.
 */
@WebFilter("/api/*")
public class RequestCounter extends HttpFilter {
    private static final long serialVersionUID = 1L;
    static final LongAdder ANSWERED = new LongAdder();

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        try {
            chain.doFilter(request, response);
        } finally {
            ANSWERED.increment();
        }
    }

    /** The count, as plain text. */
    @WebServlet("/answered")
    public static class Count extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            response.setContentType("text/plain");
            response.getWriter().print(ANSWERED.sum());
        }
    }
}
