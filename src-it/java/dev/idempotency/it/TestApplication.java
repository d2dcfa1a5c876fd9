package dev.idempotency.it;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.EmptyAsset;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.UnaryOperator;

/**
 * The small applications the real-server tests deploy beside the demo, packaged as a user packages one: the library
 * in WEB-INF/lib, the application's settings in its microprofile-config.properties, and the demo's realm and role
 * (HTTP Basic, role user on /api/*) under a context root of its own.
 */
final class TestApplication {
    private static final String WEB_INF = "examples/payments/src/main/webapp/WEB-INF/";

    private TestApplication() {
    }

    /**
     * {@code name}.war at context root /{@code name}, without its classes; {@code webXml} changes the demo's web.xml
     * (its error pages already removed: the library's problems must reach the client as they are).
     */
    static WebArchive create(String name, String settings, UnaryOperator<String> webXml) throws IOException {
        String descriptor = Files.readString(Path.of(WEB_INF, "web.xml"))
                .replaceAll("(?s)\\s*<error-page>.*?</error-page>", "");
        return ShrinkWrap.create(WebArchive.class, name + ".war")
                .addAsLibrary(new File(System.getProperty("it.library")))
                .addAsResource(new StringAsset(settings), "META-INF/microprofile-config.properties")
                .addAsWebInfResource(EmptyAsset.INSTANCE, "beans.xml")
                .addAsWebInfResource(new StringAsset(webXml.apply(descriptor)), "web.xml")
                .addAsWebInfResource(new StringAsset(contextRoot("jboss-web.xml", name)), "jboss-web.xml")
                .addAsWebInfResource(new StringAsset(contextRoot("glassfish-web.xml", name)), "glassfish-web.xml");
    }

    private static String contextRoot(String descriptor, String name) throws IOException {
        return Files.readString(Path.of(WEB_INF, descriptor)).replace("<context-root>/demo</context-root>",
                "<context-root>/" + name + "</context-root>");
    }
}
