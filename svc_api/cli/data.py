"""``svc data``: fill, import into, download into, list, describe and check the kline data store.

Long work shows a progress bar on stderr; every error is one line and a non-zero exit status.

Example:
    >>> import tempfile
    >>> from click.testing import CliRunner
    >>> result = CliRunner().invoke(command, ["--data-dir", tempfile.mkdtemp(), "list"])
    >>> result.exit_code, "no data in" in result.output
    (0, True)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import click
import polars as pl
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from svc_api.settings import tunables_from_env
from svc_engine.data import Catalog, DataStore, KlineValidationError, validate_klines
from svc_engine.data.importers import FORMATS, TIME_UNITS, import_paths, read_path
from svc_engine.data.schema import TIMEFRAMES, grid_offset_ms
from svc_engine.data.sources import BinanceKlines, KlineSourceError
from svc_engine.data.sources.pacing import wall_clock_ms
from svc_engine.data.times import epoch_ms

_ERRORS = (ValueError, LookupError, OSError, pl.exceptions.PolarsError, KlineSourceError)
_DATES = ["%Y-%m-%d", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S"]
DOWNLOAD_CHUNK_CANDLES = 50_000
"""Candles fetched between two writes: a long download keeps what it has, yet rewrites few files."""
_FILE_SUFFIXES = (".csv", ".zip", ".parquet")


@contextmanager
def _one_line_errors() -> Iterator[None]:
    try:
        yield
    except click.ClickException:
        raise
    except _ERRORS as exc:
        raise click.ClickException((str(exc).strip().splitlines() or [type(exc).__name__])[0]) from None


@contextmanager
def _progress(label: str) -> Iterator[Callable[[int, int, str], None]]:
    console = Console(stderr=True)
    # Only on a terminal: in pipes and logs a bar is noise, and errors stay the one line they are.
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[item]}"),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    ) as bar:
        task = bar.add_task(label, total=None, item="")

        def update(done: int, total: int, item: str) -> None:
            bar.update(task, completed=done, total=total, item=item)

        yield update


def _store(ctx: click.Context) -> DataStore:
    return ctx.find_object(DataStore) or DataStore()


def _print(table: Table) -> None:
    Console(width=160).print(table)


@click.group(name="data")
@click.option(
    "--data-dir",
    default=None,
    metavar="DIR|s3://BUCKET/PREFIX",
    help="Store root (default: $DATA_DIR, else var/data of the checkout).",
)
@click.pass_context
def command(ctx: click.Context, data_dir: str | None) -> None:
    """Manage the kline data store: init, import, download, list, info, validate."""
    ctx.obj = DataStore(data_dir)


@command.command()
@click.option("--if-missing", is_flag=True, help="Do nothing when the store already holds data.")
@click.option("--seed", type=int, default=None, help="Seed of the synthetic market (same seed, same data).")
@click.option("--small", is_flag=True, help="A few instruments and a short history (tests, demos).")
@click.pass_context
def init(ctx: click.Context, if_missing: bool, seed: int | None, small: bool) -> None:
    """Fill the store with the embedded SYNTHETIC market (not real prices)."""
    store = _store(ctx)
    with _one_line_errors():
        held = Catalog(store).entries().height
        if if_missing and held:
            click.echo(f"{store.root} already holds {held} series; nothing to do")
            return
        from svc_engine.data.synthetic import generate_market  # heavy (numba); only `init` needs it

        kwargs: dict[str, Any] = {"small": small} if seed is None else {"small": small, "seed": seed}
        with _progress("generating") as progress:
            summary = generate_market(store, progress=progress, **kwargs)
    click.echo(
        f"synthetic market written to {store.root}: "
        + ", ".join(
            f"{k} {summary[k]}" for k in ("instruments", "files", "candles", "seconds") if k in summary
        )
    )


def _mapping(_: click.Context, __: click.Parameter, values: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in values:
        target, sep, column = item.partition("=")
        if not sep or not target or not column:
            raise click.BadParameter(f"{item!r} is not COLUMN=SOURCE (for example open_time=Date)")
        out[target.strip()] = column.strip()
    return out


@command.command(name="import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--market", help="Market folder (default: from the path; crypto for Binance dumps).")
@click.option("--symbol", help="Data symbol (default: from the file name).")
@click.option("--timeframe", type=click.Choice(list(TIMEFRAMES)), help="Timeframe (default: from the name).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True)
@click.option(
    "--map",
    "mapping",
    multiple=True,
    callback=_mapping,
    metavar="COLUMN=SOURCE",
    help="Generic CSV: which source column holds open_time/open/high/low/close/volume.",
)
@click.option(
    "--time-unit",
    type=click.Choice(TIME_UNITS),
    default="auto",
    show_default=True,
    help="Generic CSV: unit of numeric times, or iso for dates.",
)
@click.pass_context
def import_(
    ctx: click.Context,
    paths: tuple[Path, ...],
    market: str | None,
    symbol: str | None,
    timeframe: str | None,
    fmt: str,
    mapping: dict[str, str],
    time_unit: str,
) -> None:
    """Import Binance kline dumps (CSV/ZIP), a generic CSV, or Parquet in the store's schema."""
    with _one_line_errors(), _progress("importing") as progress:
        results = import_paths(
            paths,
            store=_store(ctx),
            format=fmt,
            market=market,
            symbol=symbol,
            timeframe=timeframe,
            mapping=mapping or None,
            time_unit=time_unit,
            progress=progress,
        )
    for r in results:
        click.echo(
            f"{r.market}/{r.symbol} {r.timeframe}: {r.files} file(s), {r.rows_read} candles read, "
            f"{r.rows_added} added"
        )


@command.command()
@click.argument("symbol")
@click.option("--timeframe", type=click.Choice(list(TIMEFRAMES)), default="1h", show_default=True)
@click.option("--start", type=click.DateTime(_DATES), required=True, help="First open time, UTC.")
@click.option("--end", type=click.DateTime(_DATES), help="Candles closed by then, UTC (default: now).")
@click.option("--futures", is_flag=True, help="USDT-M futures instead of spot.")
@click.option("--market", help="Market folder (default: crypto, crypto_futures with --futures).")
@click.option(
    "--base-url",
    metavar="URL",
    help="API root (default: $BINANCE_API_URL or $BINANCE_FUTURES_URL, else Binance's).",
)
@click.pass_context
def download(
    ctx: click.Context,
    symbol: str,
    timeframe: str,
    start: datetime,
    end: datetime | None,
    futures: bool,
    market: str | None,
    base_url: str | None,
) -> None:
    """Download closed candles of SYMBOL from Binance's public API into the store."""
    symbol, market = symbol.upper(), market or ("crypto_futures" if futures else "crypto")
    step = TIMEFRAMES[timeframe]
    start_ms, end_ms = epoch_ms(start), epoch_ms(end) if end is not None else wall_clock_ms()
    if end_ms <= start_ms:
        raise click.BadParameter(f"--end {end} is not after --start {start}", param_hint="--end")
    # Chunks start on the timeframe's grid, so no candle straddles two of them and goes missing.
    offset = grid_offset_ms(timeframe)
    first = start_ms + (offset - start_ms) % step
    chunks = list(range(first, end_ms, DOWNLOAD_CHUNK_CANDLES * step))
    span = DOWNLOAD_CHUNK_CANDLES * step
    chunks = [(lo, min(lo + span, end_ms)) for lo in range(first, end_ms, span)]
    url = base_url or tunables_from_env(os.environ).get(
        "binance_futures_url" if futures else "binance_api_url"
    )
    store, read, added = _store(ctx), 0, 0
    source = BinanceKlines(url, futures=futures)
    with _one_line_errors(), source, _progress("downloading") as progress:
        for done, (lo, hi) in enumerate(chunks, start=1):
            frame = source.closed_klines(symbol, timeframe, lo, hi)
            read += frame.height
            if frame.height:
                added += store.write_klines(market, symbol, timeframe, frame, source=f"binance {symbol}")
            progress(done, len(chunks), symbol)
    where = source.base_url
    click.echo(f"{market}/{symbol} {timeframe}: {read} closed candles from {where}, {added} added")


@command.command(name="list")
@click.option("--market", help="Only this market.")
@click.pass_context
def list_(ctx: click.Context, market: str | None) -> None:
    """Every stored series with its range and size."""
    store = _store(ctx)
    with _one_line_errors():
        entries = Catalog(store).entries(market=market)
    if entries.height == 0:
        click.echo(f"no data in {store.root}; run `svc data init` or `svc data import PATH`")
        return
    table = Table("market", "symbol", "timeframe", "first", "last", "candles", "dataset_key")
    for e in entries.iter_rows(named=True):
        table.add_row(
            e["market"],
            e["symbol"],
            e["timeframe"],
            e["first_date"],
            e["last_date"],
            f"{e['total_candles']:,}",
            e["dataset_key"],
        )
    _print(table)


@command.command()
@click.argument("symbol")
@click.option("--market", help="Market holding SYMBOL (needed when several do).")
@click.pass_context
def info(ctx: click.Context, symbol: str, market: str | None) -> None:
    """Ranges, gaps and off-grid candles of each stored timeframe of SYMBOL."""
    store = _store(ctx)
    with _one_line_errors():
        market = market or store.find_market(symbol)
        entries = Catalog(store).entries(market=market, symbol=symbol)
        if entries.height == 0:
            raise click.ClickException(f"no data for {symbol.upper()} in market {market!r} of {store.root}")
        table = Table("timeframe", "first", "last", "candles", "gaps", "missing", "off grid")
        for e in entries.iter_rows(named=True):
            where = str(store.location(e["dataset_key"]))
            report = validate_klines(store._read(e["dataset_key"]), source=where, timeframe=e["timeframe"])
            table.add_row(
                e["timeframe"],
                e["first_date"],
                e["last_date"],
                f"{report.rows:,}",
                str(report.gaps),
                f"{report.missing_candles:,}",
                str(report.off_grid),
            )
    click.echo(f"{market}/{symbol.upper()} in {store.root}")
    _print(table)
    finest = entries["timeframe"][0]
    derived = [
        tf
        for tf in TIMEFRAMES
        if tf not in entries["timeframe"]
        and TIMEFRAMES[tf] % TIMEFRAMES[finest] == 0
        and TIMEFRAMES[tf] > TIMEFRAMES[finest]
    ]
    if derived:
        click.echo(f"also loadable by resampling {finest}: {', '.join(derived)}")


@command.command()
@click.argument("target", required=False)
@click.option("--market", help="Market of SYMBOL, when TARGET is a symbol held by several.")
@click.pass_context
def validate(ctx: click.Context, target: str | None, market: str | None) -> None:
    """Check every rule of the candle schema: the whole store, one SYMBOL, or a file (PATH)."""
    store = _store(ctx)
    with _one_line_errors():
        checks = _targets(store, target, market)
        bad = 0
        for source, frame, timeframe in checks:
            try:
                report = validate_klines(frame(), source=source, timeframe=timeframe)
            except KlineValidationError as exc:
                bad += 1
                click.echo(f"INVALID {exc}")
                continue
            click.echo(
                f"ok {source}: {report.rows:,} candles, {report.gaps} gaps "
                f"({report.missing_candles:,} missing), {report.off_grid} off grid"
            )
    if bad:
        raise click.ClickException(f"{bad} of {len(checks)} series are invalid")


Check = tuple[str, Callable[[], pl.DataFrame], str | None]


def _targets(store: DataStore, target: str | None, market: str | None) -> list[Check]:
    if target is not None and (Path(target).exists() or Path(target).suffix.lower() in _FILE_SUFFIXES):
        return [(source, (lambda f=frame: f), tf) for source, frame, tf in read_path(target)]
    entries = Catalog(store).entries(market=market)
    if target is not None:
        market = market or store.find_market(target)
        entries = Catalog(store).entries(market=market, symbol=target)
    if entries.height == 0:
        raise click.ClickException(f"no data in {store.root} to validate")
    keys = entries.select("dataset_key", "timeframe").rows()
    return [(str(store.location(key)), (lambda k=key: store._read(k)), tf) for key, tf in keys]
