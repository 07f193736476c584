"""``svc admin changelog ...``: operator commands on the app changelog kept in the store (attached to
``svc admin`` by :mod:`svc_api.cli`). Each prints JSON; bad input is one line and exit status 1,
with nothing written.

Example:
    >>> from click.testing import CliRunner
    >>> sorted(changelog.commands)
    ['add', 'import', 'release', 'remove', 'show', 'versions']
    >>> "--uncategorized" in CliRunner().invoke(changelog, ["add", "--help"]).output
    True
"""

from __future__ import annotations

import click

from svc_api.cli.admin import _run
from svc_api.platform import service as platform


@click.group("changelog")
def changelog() -> None:
    """The app changelog: version fields, released versions and entries."""


@changelog.command("versions")
@click.option("--current", help="The current app version (1.3.0).")
@click.option("--latest-build", help="The latest build number (an integer >= 0).")
@click.option("--min-supported", help="The oldest app version still supported (1.1.0).")
def versions(current: str | None, latest_build: str | None, min_supported: str | None) -> None:
    """Set any of the version fields; the others are kept."""
    _run(
        lambda services: platform.set_versions(
            services.store, current=current, latest_build=latest_build, min_supported=min_supported
        )
    )


@changelog.command("release")
@click.argument("version")
@click.option("--date", "date", required=True, help="The release date, YYYY-MM-DD.")
def release(version: str, date: str) -> None:
    """Record VERSION as released on --date (again: change its date)."""
    _run(lambda services: platform.release(services.store, version, date))


@changelog.command("add")
@click.argument("version")
@click.option("--title", required=True, help="The entry's title.")
@click.option("--item", "items", multiple=True, required=True, help="One line of the entry (repeatable).")
@click.option("--date", "date", help="The entry's date, YYYY-MM-DD (default: the release date of VERSION).")
@click.option("--uncategorized", is_flag=True, help="A note of the release without a date.")
def add(version: str, title: str, items: tuple[str, ...], date: str | None, uncategorized: bool) -> None:
    """Add an entry to VERSION; prints it with its new entry_id."""
    _run(
        lambda services: platform.add_entry(
            services.store, version, title=title, items=items, date=date, uncategorized=uncategorized
        )
    )


@changelog.command("remove")
@click.argument("entry_id")
def remove(entry_id: str) -> None:
    """Delete the entry ENTRY_ID (see ``show`` for the ids)."""
    _run(lambda services: platform.remove_entry(services.store, entry_id))


@changelog.command("import")
@click.argument("file")
def import_(file: str) -> None:
    """Merge FILE (JSON, the shape of the bundled changelog.json) into the store; a second import
    of the same file changes nothing."""
    _run(lambda services: platform.import_file(services.store, file))


@changelog.command("show")
def show() -> None:
    """Print the whole changelog, each entry with its entry_id."""
    _run(lambda services: platform.show(services.store))
