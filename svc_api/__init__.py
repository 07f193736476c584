"""svc_api: the Starlette service of the platform, a thin layer over :mod:`svc_engine`."""

__version__ = "0.1.0"
