"""``svc openapi``: write ``svc_api/openapi.yaml`` and the typed client (``svc_api/client/``)
from the operation tables and models, or, with ``--check``, only say whether the committed files are
the ones they make (exit status 1 when not).

Example:
    >>> from click.testing import CliRunner
    >>> CliRunner().invoke(command, ["--check"]).exit_code
    0
"""

from __future__ import annotations

from pathlib import Path

import click

from svc_api.apidoc import build, client_source


def outputs() -> dict[Path, str]:
    """Each generated file and the text it must hold.

    Example:
        >>> sorted(p.name for p in outputs())
        ['backtest.py', 'openapi.yaml', 'tradingdata.py', 'user.py']
    """
    return {build.OUTPUT: build.render(), **client_source.client_sources()}


@click.command("openapi")
@click.option("--check", is_flag=True, help="Compare only; exit 1 when a committed file differs.")
def command(check: bool) -> None:
    """Generate the API description and the typed client from the operation tables and models."""
    for path, text in outputs().items():
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if check and current != text:
            raise click.ClickException(f"{path} is not what `svc openapi` generates; run it")
        if not check and current != text:
            path.write_text(text, encoding="utf-8")
        click.echo(f"{path} is up to date" if check else f"wrote {path}")
