"""``svc sweep SPEC.toml``: a parameter sweep described in a file, resumable after a kill.

Results go to ``--out`` (default: the spec's name with ``-results``, beside it): ``parts/`` as chunks
finish, then ``results.parquet`` and ``report.html``. Run the same command again after a kill and
only the chunks without a part are computed. The spec format is in ``svc_engine.research.spec``.

Example:
    >>> from click.testing import CliRunner
    >>> CliRunner().invoke(command, ["--help"]).exit_code
    0
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
import polars as pl

from svc_engine.executors import Executor, LocalExecutor, RayExecutor, SerialExecutor

_ERRORS = (ValueError, LookupError, OSError, pl.exceptions.PolarsError)


@contextmanager
def _executor(workers: int | None, ray_address: str | None) -> Iterator[Executor]:
    if ray_address is not None:
        ex: Executor = RayExecutor(None if ray_address == "local" else ray_address, num_cpus=workers)
    elif workers == 1:
        ex = SerialExecutor()
    else:
        ex = LocalExecutor(max_workers=workers)
    with ex:
        yield ex


@click.command(name="sweep")
@click.argument("spec", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Results folder (default: SPEC's name + '-results', beside it).",
)
@click.option(
    "--data-dir", default=None, help="Data store root for coins given as symbols (default: $DATA_DIR)."
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Parallel chunks (default: the CPUs; 1 runs in this process).",
)
@click.option(
    "--ray",
    "ray_address",
    default=None,
    metavar="ADDRESS|local",
    help="Run the chunks on Ray: a cluster address, or 'local' to start one.",
)
@click.option("--quiet", is_flag=True, help="No progress bar.")
def command(
    spec: Path,
    out: Path | None,
    data_dir: str | None,
    workers: int | None,
    ray_address: str | None,
    quiet: bool,
) -> None:
    """Run the sweep described in SPEC (TOML): Parquet results and an HTML report."""
    from svc_engine.data import DataStore
    from svc_engine.research.spec import load_spec, run_spec

    out = out if out is not None else spec.with_name(spec.stem + "-results")
    try:
        parsed = load_spec(spec)
        kwargs: dict[str, Any] = {}
        if data_dir is not None:
            kwargs["store"] = DataStore(data_dir)
        with _executor(workers, ray_address) as ex:
            result = run_spec(parsed, out, executor=ex, progress=not quiet, **kwargs)
    except _ERRORS as exc:
        raise click.ClickException((str(exc).strip().splitlines() or [type(exc).__name__])[0]) from None
    click.echo(f"{result.rows.height} rows -> {out / 'results.parquet'}; report {out / 'report.html'}")
