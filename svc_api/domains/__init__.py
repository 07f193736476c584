"""Business rules of the service, one module per domain; route handlers call these functions."""
