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
    """Run the HTTP service (settings from the environment: DATABASE_URL, REDIS_URL, ...).

    X-Forwarded-For is believed only from TRUSTED_PROXIES (none by default: a same-host proxy could
    otherwise reset any client's guest and login budgets). Idle keep-alive connections close after
    5 s, a request head (line and headers) not complete within HEADER_READ_TIMEOUT_SECONDS (default
    5) gets a 408 and its connection closes (svc_api.cli.protocol), a request body that stalls gets a
    408 (BODY_READ_TIMEOUT_SECONDS), and at most SVC_MAX_CONNECTIONS (default 2048) connections are
    held, so stalled clients cannot starve others.
    """
    import uvicorn

    from svc_api.settings import Settings

    settings = Settings.from_env()
    uvicorn.run(
        "svc_api.app:create_app",
        factory=True,
        # The protocol is named, not passed as a class: `--workers` processes import it themselves.
        http="svc_api.cli.protocol:HeadDeadlineProtocol",
        host=host,
        port=port,
        workers=None if reload else workers,
        reload=reload,
        log_level=log_level,
        access_log=False,
        proxy_headers=bool(settings.trusted_proxies),
        forwarded_allow_ips=list(settings.trusted_proxies) or None,
        timeout_keep_alive=5,
        limit_concurrency=settings.max_connections,
        h11_max_incomplete_event_size=16 * 1024,
    )
