"""Per-account rate-limit overrides (operator-set), read by the rate limiter."""
