"""``svc openapi``: write ``svc_api/openapi.yaml`` from the operation tables and models, or, with
``--check``, only say whether the committed file is the one they make (exit status 1 when not).

Example:
    >>> from click.testing import CliRunner
    >>> CliRunner().invoke(command, ["--check"]).exit_code
    0
"""

from __future__ import annotations

from pathlib import Path

import click

from svc_api.apidoc.build import OUTPUT, render


@click.command("openapi")
@click.option("--check", is_flag=True, help="Compare only; exit 1 when the committed file differs.")
@click.option("--output", type=click.Path(path_type=Path), default=OUTPUT, show_default=True)
def command(check: bool, output: Path) -> None:
    """Generate the API description from the operation tables and models."""
    text = render()
    current = output.read_text(encoding="utf-8") if output.exists() else ""
    if check:
        if current != text:
            raise click.ClickException(f"{output} is not what `svc openapi` generates; run it")
        click.echo(f"{output} is up to date")
        return
    if current != text:
        output.write_text(text, encoding="utf-8")
    click.echo(f"wrote {output}")
