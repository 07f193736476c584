"""``svc serve``: run the service with uvicorn (the app factory ``svc_api.app:create_app``).

Example:
    >>> from click.testing import CliRunner
    >>> "--port" in CliRunner().invoke(command, ["--help"]).output
    True
"""

from __future__ import annotations

import click


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535), help="TCP port.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64), help="Worker processes.")
@click.option("--reload", is_flag=True, help="Restart on code changes (development).")
@click.option(
    "--log-level", default="info", show_default=True, type=click.Choice(["debug", "info", "warning"])
)
def command(host: str, port: int, workers: int, reload: bool, log_level: str) -> None:
    """Run the HTTP service (settings from the environment: DATABASE_URL, REDIS_URL, ...)."""
    import uvicorn

    uvicorn.run(
        "svc_api.app:create_app",
        factory=True,
        host=host,
        port=port,
        workers=None if reload else workers,
        reload=reload,
        log_level=log_level,
        access_log=False,
    )
