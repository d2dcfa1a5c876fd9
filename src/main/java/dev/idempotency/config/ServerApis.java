package dev.idempotency.config;

import java.util.Optional;

/**
 * The optional APIs a server may give a deployment (MicroProfile Config, Health, Metrics; Micrometer): the library
 * looks for each before it touches a class that names it, so that a server without it deploys the library unchanged.
 */
public final class ServerApis {
    private ServerApis() {
    }

    /** The API's type as the deployment sees it, without initialising it; empty when the server does not offer it. */
    public static Optional<Class<?>> find(String type, ClassLoader loader) {
        try {
            return Optional.of(Class.forName(type, false, loader));
        } catch (ClassNotFoundException | LinkageError absent) {
            return Optional.empty();
        }
    }

    public static boolean visible(String type, ClassLoader loader) {
        return find(type, loader).isPresent();
    }
}
