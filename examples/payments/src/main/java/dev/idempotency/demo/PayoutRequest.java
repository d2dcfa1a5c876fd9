package dev.idempotency.demo;

import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;

import java.math.BigDecimal;

/** The body of a payout request (to the payouts API, and from it to the acquirer with a reference). */
public class PayoutRequest {
    @NotBlank(message = "beneficiary is required")
    public String beneficiary;
    @NotNull(message = "a positive amount is required")
    @DecimalMin(value = "0", inclusive = false, message = "a positive amount is required")
    public BigDecimal amount;
    @NotNull(message = PaymentRequest.CURRENCY)
    @Pattern(regexp = "[A-Z]{3}", message = PaymentRequest.CURRENCY)
    public String currency;
    /** Set by the payouts service for the acquirer: the operation's derived key. */
    @NotBlank(groups = AtAcquirer.class, message = "reference is required")
    public String reference;

    /** The rules the acquirer adds: the caller's reference. */
    public interface AtAcquirer {
    }
}
