"""``svc economic``: ingest economic news feeds and calendars, or load the bundled sample.

Each FILE_OR_URL is a local path or an ``http(s)://`` URL (fetched with a 10 s timeout). Every
file is read and checked before anything is stored: a malformed one is a one-line error, a
non-zero exit status, and nothing written. Each file is then stored in one transaction. The counts
``{"added": n, "unchanged": m}`` (summed over the files) are printed as JSON; ingesting the same
files again adds nothing.
Settings (``DATABASE_URL``...) come from the environment, as for the service.

Example:
    >>> from click.testing import CliRunner
    >>> sorted(command.commands)
    ['ingest-calendar', 'ingest-news', 'sample']
    >>> CliRunner().invoke(command, ["ingest-news", "/nonexistent.xml"]).output
    'Error: cannot read /nonexistent.xml: No such file or directory\\n'
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from svc_api.core.errors import DomainError
from svc_api.core.services import Services
from svc_api.core.store import StoreUnavailable
from svc_api.economic import service as economic
from svc_api.economic.feeds import MAX_BYTES, Calendar, Feed, FeedError, parse_calendar, parse_news
from svc_api.migrations import migrate
from svc_api.settings import Settings

TIMEOUT_SECONDS = 10.0


def read_source(where: str) -> bytes:
    """The bytes of a local file or of an ``http(s)`` URL; ``click.ClickException`` (one line)
    when it cannot be read.

    Example:
        >>> read_source("/nonexistent/feed.xml")
        Traceback (most recent call last):
        ...
        click.exceptions.ClickException: cannot read /nonexistent/feed.xml: No such file or directory
    """
    if where.startswith(("http://", "https://")):
        return _fetch(where)
    try:
        with Path(where).open("rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise click.ClickException(f"cannot read {where}: {exc.strerror or exc}") from None
    return data


def _fetch(url: str) -> bytes:
    try:
        import httpx  # only fetching needs it (a test dependency of the project, not a runtime one)
    except ImportError:
        raise click.ClickException(f"cannot fetch {url}: install httpx to read URLs") from None

    body = bytearray()
    try:
        with (
            httpx.Client(timeout=TIMEOUT_SECONDS, follow_redirects=True) as client,
            client.stream("GET", url, headers={"User-Agent": "svc-economic/1"}) as response,
        ):
            if response.status_code != 200:
                raise click.ClickException(f"cannot fetch {url}: HTTP {response.status_code}")
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_BYTES:  # the parser refuses it; stop reading here
                    break
    except httpx.HTTPError as exc:
        raise click.ClickException(f"cannot fetch {url}: {type(exc).__name__}: {exc}") from None
    return bytes(body)


def _parsed(where: str, parse: Callable[[bytes], Any]) -> Any:
    try:
        return parse(read_source(where))
    except FeedError as exc:
        raise click.ClickException(f"{where}: {exc}") from None


def _run(work: Callable[[Services], Any]) -> None:
    services = Services(Settings.from_env(), migrate=migrate)
    try:
        result = work(services)
    except (DomainError, StoreUnavailable, ValueError) as exc:
        raise click.ClickException(str(exc).splitlines()[0]) from None
    finally:
        services.close()
    click.echo(json.dumps(result, sort_keys=True))


def _sum(counts: list[dict[str, int]]) -> dict[str, int]:
    return {"added": sum(c["added"] for c in counts), "unchanged": sum(c["unchanged"] for c in counts)}


_SOURCE = click.option(
    "--source", default=None, help="Name the rows' source (default: the file's own title or source)."
)


@click.group("economic")
def command() -> None:
    """Economic news and calendar: ingest files or URLs, load the sample."""


@command.command("ingest-news")
@click.argument("files_or_urls", metavar="FILE_OR_URL...", nargs=-1, required=True)
@_SOURCE
def ingest_news(files_or_urls: tuple[str, ...], source: str | None) -> None:
    """Store the items of RSS or Atom feeds that are not stored yet."""
    feeds: list[Feed] = [_parsed(where, parse_news) for where in files_or_urls]

    def work(services: Services) -> dict[str, int]:
        now = services.clock.now()
        return _sum([economic.ingest_news(services.store, f, now=now, source=source) for f in feeds])

    _run(work)


@command.command("ingest-calendar")
@click.argument("files_or_urls", metavar="FILE_OR_URL...", nargs=-1, required=True)
@_SOURCE
def ingest_calendar(files_or_urls: tuple[str, ...], source: str | None) -> None:
    """Store the events of CSV or JSON calendars that are not stored yet."""

    def work(services: Services) -> dict[str, int]:
        now = services.clock.now()
        calendars: list[Calendar] = [
            _parsed(where, lambda data: parse_calendar(data, now=now)) for where in files_or_urls
        ]
        return _sum([economic.ingest_calendar(services.store, c, now=now, source=source) for c in calendars])

    _run(work)


@command.command("sample")
def sample() -> None:
    """Load the bundled sample (source "sample"; calendar dated from today)."""
    _run(lambda services: economic.load_sample(services.store, services.clock.now()))
