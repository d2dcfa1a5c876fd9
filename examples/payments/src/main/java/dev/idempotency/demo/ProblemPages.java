package dev.idempotency.demo;

import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;

/** The container's own errors (401 without credentials, 403, 404, 405) as problem+json too. */
@WebServlet("/problem")
public class ProblemPages extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        Object code = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
        int status = code instanceof Integer i ? i : response.getStatus();
        String slug = switch (status) {
            case 401 -> "unauthorized";
            case 403 -> "forbidden";
            case 404 -> "not-found";
            case 405 -> "method-not-allowed";
            default -> "http-" + status;
        };
        String detail = switch (status) {
            case 401 -> "authenticate with HTTP Basic";
            case 403 -> "this user may not call this resource";
            case 404 -> "no such resource";
            case 405 -> "method not allowed on this resource";
            default -> "the request could not be served";
        };
        response.setStatus(status);
        response.setContentType("application/problem+json");
        response.getWriter().write("{\"type\":\"" + DemoProblem.TYPE_BASE + slug + "\",\"title\":\"" + slug
                + "\",\"status\":" + status + ",\"detail\":\"" + detail + "\"}");
    }
}
