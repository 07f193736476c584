"""HTTP plumbing shared by every route family, one concern per module.

- ``correlation``: ``X-Correlation-ID`` echoed or generated.
- ``errors``: ``ApiError`` and the catch-all error envelope.
- ``cors``: CORS from the settings.
- ``ratelimit``: per-plan limits and ``X-RateLimit-*`` headers (memory or Redis).
- ``cursors``: signed keyset cursors and page sizes.
- ``idempotency``: replay of mutating operations under an ``idempotency_key``.
"""
