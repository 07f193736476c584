"""Real-time channels: WebSockets for job progress and new signals, fanned out through Redis."""
