package dev.idempotency.openapi;

import org.eclipse.microprofile.openapi.models.media.Schema;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Sets a schema's type on either version of the MicroProfile OpenAPI API: 3.x (Payara 6) has
 * {@code setType(SchemaType)}, 4.x (WildFly 39, Jakarta EE 11 servers) has a list of types and
 * {@code addType(SchemaType)}. The library is compiled against 3.x; a direct call to {@code type(SchemaType)} would
 * fail with {@code NoSuchMethodError} on 4.x.
 */
final class SchemaTypes {
    private static final MethodHandle SET_TYPE = find();

    private SchemaTypes() {
    }

    static Schema typed(Schema schema, Schema.SchemaType type) {
        try {
            SET_TYPE.invoke(schema, type);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("setting a schema's type failed", e);
        }
        return schema;
    }

    private static MethodHandle find() {
        MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        try {
            return lookup.findVirtual(Schema.class, "addType", MethodType.methodType(Schema.class, Schema.SchemaType.class));
        } catch (NoSuchMethodException | IllegalAccessException absent) {
            try {
                return lookup.findVirtual(Schema.class, "setType", MethodType.methodType(void.class, Schema.SchemaType.class));
            } catch (NoSuchMethodException | IllegalAccessException e) {
                throw new IllegalStateException("this MicroProfile OpenAPI API sets a schema's type neither way", e);
            }
        }
    }
}
