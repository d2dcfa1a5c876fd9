package dev.idempotency.demo;

import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Digits;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;

import java.math.BigDecimal;

/** The body of {@code POST /payments} and of the acquirer's {@code POST /acquirer/charges}. */
public class PaymentRequest {
    static final String MERCHANT_ORDER_NO = "merchantOrderNo must be 1 to 128 characters";
    static final String AMOUNT = "amount must be positive, below 1e9, with at most 2 decimals";
    static final String CURRENCY = "currency must be 3 upper-case letters";

    @NotBlank(message = MERCHANT_ORDER_NO)
    @Size(max = 128, message = MERCHANT_ORDER_NO)
    public String merchantOrderNo;
    @NotNull(message = AMOUNT)
    @DecimalMin(value = "0", inclusive = false, message = AMOUNT)
    @DecimalMax(value = "1000000000", inclusive = false, message = AMOUNT)
    @Digits(integer = 9, fraction = 2, message = AMOUNT)
    public BigDecimal amount;
    @NotNull(message = CURRENCY)
    @Pattern(regexp = "[A-Z]{3}", message = CURRENCY)
    public String currency;
    /** Tracing only: left out of the fingerprint ({@code idempotency.fingerprint.ignore-fields}). */
    public String traceId;
}
