"""Retention: how long the service keeps what grows on disk, and the worker that removes the rest."""
