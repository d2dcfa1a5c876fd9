package dev.idempotency;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Names the downstream call a MicroProfile Rest Client interface (or one of its methods) makes, for
 * {@link dev.idempotency.jaxrs.DerivedKeyClientFilter} registered with {@code @RegisterProvider}: inside an idempotent
 * operation, each call carries the operation's key derived for this purpose
 * ({@link IdempotencyContext#derive(String)}), the same on every retry and takeover of the operation.
 *
 * <pre>{@code
 * @RegisterRestClient(configKey = "acquirer")
 * @RegisterProvider(DerivedKeyClientFilter.class)
 * @DerivedKey("acquirer.charge")
 * public interface AcquirerApi { @POST @Path("charges") Charge charge(ChargeRequest request); }
 * }</pre>
 *
 * A method's annotation wins over its interface's; without either, the purpose comes from the configuration
 * {@code idempotency.client.<configKey or interface name>.purpose}.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
public @interface DerivedKey {
    /** The purpose the key is derived for, such as {@code acquirer.charge}. */
    String value();

    /** The header it is sent in. */
    String header() default "Idempotency-Key";
}
