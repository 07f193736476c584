"""The changelog kept in the store: the ``changelog`` reply (empty shape, order, version filter,
limits), the operator commands of ``svc admin changelog`` (every command, idempotent import, bad input
as one line with exit status 1 and nothing written) and the bundled sample seeded at start-up. Every
test runs on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner

from svc_api.cli import main
from svc_api.platform.service import CHANGELOG, seed_changelog_if_empty
from svc_api.settings import Settings

if TYPE_CHECKING:
    from tests.api.conftest import Api

SAMPLE = json.loads(CHANGELOG.read_text())
EMPTY = {
    "current_version": None,
    "latest_build": None,
    "min_supported_version": None,
    "released": [],
    "entries": [],
}


def _svc(*args: str) -> Any:
    """``svc admin changelog ARGS``: the result, with ``.json`` the printed JSON when it succeeded."""
    result = CliRunner().invoke(main, ["admin", "changelog", *args])
    result.json = json.loads(result.stdout) if result.exit_code == 0 else None
    return result


def _log(api: Api, **params: str) -> Any:
    reply = api.get("/tradingdata", params={"request_type": "changelog", **params})
    return reply.json() if reply.status_code == 200 else reply


@pytest.fixture
def bare(api: Api, cli_env: None) -> Api:
    """An app whose store starts with no changelog (the tests' apps plant no samples)."""
    return api


def test_no_changelog_is_the_spec_shape(bare: Api) -> None:
    assert _log(bare) == EMPTY
    assert _log(bare, min_version="1.0.0", limit="5") == EMPTY
    assert _svc("show").json == EMPTY


def test_the_bundled_sample_is_seeded_once_at_start_up(
    make_api: Any, settings: Settings, cli_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SVC_SEED_SAMPLES", "1")  # make_api turns it off for the other tests
    api = make_api(settings)
    assert _log(api) == SAMPLE
    assert _svc("show").json["entries"][0]["entry_id"].startswith("chl_")
    again = make_api(settings)  # a second start-up on the same store seeds nothing more
    assert _log(again) == SAMPLE
    for entry in _svc("show").json["entries"]:
        assert _svc("remove", entry["entry_id"]).exit_code == 0
    restarted = make_api(settings)  # emptied by an operator: not a store without a changelog
    assert _log(restarted) == {**SAMPLE, "entries": []}


def test_racing_seeds_write_the_sample_once(bare: Api) -> None:
    store = bare.app.state.services.store
    results: list[bool] = []
    threads = [
        threading.Thread(target=lambda: results.append(seed_changelog_if_empty(store, CHANGELOG)))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False, False, False, True]
    assert _log(bare) == SAMPLE


def test_every_command(bare: Api) -> None:
    assert _svc("versions", "--current", "1.3.0").json == {
        "current_version": "1.3.0",
        "latest_build": None,
        "min_supported_version": None,
    }
    assert _svc("versions", "--latest-build", "130", "--min-supported", "1.1.0").json == {
        "current_version": "1.3.0",
        "latest_build": 130,
        "min_supported_version": "1.1.0",
    }
    assert _svc("versions", "--latest-build", "0").json["latest_build"] == 0
    assert _svc("release", "1.3.0", "--date", "2026-11-30").json == {"version": "1.3.0", "date": "2026-11-30"}
    assert _svc("release", "1.3.0", "--date", "2026-12-01").json == {"version": "1.3.0", "date": "2026-12-01"}
    assert _svc("release", "1.2.0", "--date", "2026-11-22").json == {"version": "1.2.0", "date": "2026-11-22"}
    alerts = _svc("add", "1.3.0", "--title", "Alerts", "--item", "Push alerts.", "--item", "Quiet hours.")
    assert alerts.exit_code == 0, alerts.output
    assert alerts.json["entry_id"].startswith("chl_")
    assert {k: v for k, v in alerts.json.items() if k != "entry_id"} == {
        "version": "1.3.0",
        "title": "Alerts",
        "date": "2026-12-01",  # the release date of 1.3.0
        "items": ["Push alerts.", "Quiet hours."],
    }
    keys = _svc("add", "1.2.0", "--title", "Keys", "--item", "API keys.", "--date", "2026-11-20").json
    note = _svc("add", "1.3.0", "--title", "Notes", "--item", "Faster.", "--uncategorized").json
    assert note["date"] is None
    assert _log(bare) == {
        "current_version": "1.3.0",
        "latest_build": 0,
        "min_supported_version": "1.1.0",
        "released": [{"version": "1.3.0", "date": "2026-12-01"}, {"version": "1.2.0", "date": "2026-11-22"}],
        "entries": [
            {"version": "1.3.0", "title": "Notes", "date": None, "items": ["Faster."]},
            {
                "version": "1.3.0",
                "title": "Alerts",
                "date": "2026-12-01",
                "items": ["Push alerts.", "Quiet hours."],
            },
            {"version": "1.2.0", "title": "Keys", "date": "2026-11-20", "items": ["API keys."]},
        ],
    }
    assert [e["entry_id"] for e in _svc("show").json["entries"]] == [
        note["entry_id"],
        alerts.json["entry_id"],
        keys["entry_id"],
    ]
    assert _svc("remove", alerts.json["entry_id"]).json == {"removed": alerts.json["entry_id"]}
    assert [e["title"] for e in _log(bare)["entries"]] == ["Notes", "Keys"]


def test_a_null_date_note_comes_first_in_its_version(bare: Api) -> None:
    _svc("release", "1.2.0", "--date", "2026-11-22")
    _svc("add", "1.2.0", "--title", "Later", "--item", "b", "--date", "2026-11-25")
    _svc("add", "1.2.0", "--title", "Earlier", "--item", "a")
    _svc("add", "1.2.0", "--title", "Notes", "--item", "n", "--uncategorized")
    _svc("add", "1.1.0", "--title", "Old", "--item", "o", "--uncategorized")
    entries = _log(bare)["entries"]
    assert [(e["title"], e["date"]) for e in entries] == [
        ("Notes", None),
        ("Later", "2026-11-25"),
        ("Earlier", "2026-11-22"),
        ("Old", None),
    ]


def test_the_version_filter_compares_numbers(bare: Api) -> None:
    for version in ("1.9.0", "1.10.0", "1.2.0", "2.0"):
        assert (
            _svc("add", version, "--title", f"In {version}", "--item", "x", "--uncategorized").exit_code == 0
        )
        assert _svc("release", version, "--date", "2026-01-01").exit_code == 0
    assert [r["version"] for r in _log(bare)["released"]] == ["2.0", "1.10.0", "1.9.0", "1.2.0"]
    assert [e["version"] for e in _log(bare)["entries"]] == ["2.0", "1.10.0", "1.9.0", "1.2.0"]
    assert [e["version"] for e in _log(bare, min_version="1.10.0")["entries"]] == ["2.0", "1.10.0"]
    assert [e["version"] for e in _log(bare, min_version="1.9")["entries"]] == ["2.0", "1.10.0", "1.9.0"]
    assert [e["version"] for e in _log(bare, min_version="1.9.1")["entries"]] == ["2.0", "1.10.0"]
    assert _log(bare, min_version="2.0.1")["entries"] == []
    assert len(_log(bare, min_version="2.0.1")["released"]) == 4  # the filter applies to entries
    for bad in ("v1", "1.2.3.4.5", "1..2", "", "1.1234567"):
        reply = _log(bare, min_version=bad)
        assert reply.status_code == 400, bad
        assert reply.json()["error"] == "invalid_request"


def test_limit_default_clamp_and_400s(bare: Api, tmp_path: Path) -> None:
    entries = [{"version": "1.0.0", "title": f"E{i:03d}", "date": None, "items": ["x"]} for i in range(205)]
    file = tmp_path / "many.json"
    file.write_text(json.dumps({"entries": entries}))
    assert _svc("import", str(file)).json["entries_added"] == 205
    assert len(_log(bare)["entries"]) == 50
    assert [e["title"] for e in _log(bare, limit="3")["entries"]] == ["E000", "E001", "E002"]  # file order
    assert len(_log(bare, limit="200")["entries"]) == 200
    assert len(_log(bare, limit="999")["entries"]) == 200
    assert len(_log(bare, limit="1")["entries"]) == 1
    for bad in ("x", "0", "-1", "2.5"):
        reply = _log(bare, limit=bad)
        assert reply.status_code == 400, bad
        assert reply.json()["error"] == "invalid_page_size"


def test_import_is_idempotent(bare: Api, tmp_path: Path) -> None:
    first = _svc("import", str(CHANGELOG))
    assert first.json == {
        "versions_changed": ["current_version", "latest_build", "min_supported_version"],
        "releases_written": 3,
        "entries_added": 4,
        "entries_updated": 0,
        "entries_unchanged": 0,
    }
    shown = _svc("show").json
    assert _log(bare) == SAMPLE
    second = _svc("import", str(CHANGELOG))
    assert second.json == {
        "versions_changed": [],
        "releases_written": 0,
        "entries_added": 0,
        "entries_updated": 0,
        "entries_unchanged": 4,
    }
    assert _svc("show").json == shown
    # what show prints imports back unchanged; a changed item updates that entry in place
    exported = tmp_path / "shown.json"
    shown["entries"][3]["items"] = ["Strategies and backtests."]
    exported.write_text(json.dumps(shown))
    assert _svc("import", str(exported)).json["entries_updated"] == 1
    after = _svc("show").json
    assert after["entries"][3] == shown["entries"][3]
    assert [e["entry_id"] for e in after["entries"]] == [e["entry_id"] for e in shown["entries"]]


def _bad_files(root: Path) -> list[Path]:
    good = {"version": "1.4.0", "title": "Good", "date": "2026-12-10", "items": ["ok"]}
    documents: list[Any] = [
        {"entries": [good, {**good, "title": "Bad", "date": "2026-12-32"}]},
        {"entries": [good, good]},
        {"current_version": "1.4.0", "latest_build": -1},
        {"released": [{"version": "1.4.0", "date": "2026-12-10"}, {"version": "1.4", "date": None}]},
        {"entries": [{**good, "items": []}]},
        {"entries": [{**good, "version": "1.4.0-rc1"}]},
        {"changelog": []},
        [good],
    ]
    paths = []
    for i, doc in enumerate(documents):
        paths.append(root / f"bad{i}.json")
        paths[-1].write_text(json.dumps(doc))
    paths.append(root / "not-json.json")
    paths[-1].write_text("{not json")
    paths.append(root / "missing.json")
    return paths


def test_bad_input_is_one_line_exit_1_and_writes_nothing(bare: Api, tmp_path: Path) -> None:
    _svc("import", str(CHANGELOG))
    before = _svc("show").json
    bad_commands = [
        ["versions"],
        ["versions", "--current", "v1.3.0"],
        ["versions", "--current", "1.03.0"],
        ["versions", "--current", "1.3.0", "--min-supported", "1"],
        ["versions", "--latest-build", "-1"],
        ["versions", "--latest-build", "1.5"],
        ["versions", "--current", "1.3.0", "--latest-build", "x"],
        ["release", "1.3.0", "--date", "2026-02-30"],
        ["release", "1.3.0", "--date", "20261201"],
        ["release", "1.3.0-beta", "--date", "2026-12-01"],
        ["add", "1.3.0", "--title", "T", "--item", "x"],  # 1.3.0 is not released: a date is needed
        ["add", "1.3.0", "--title", "T", "--item", "x", "--date", "2026/12/01"],
        ["add", "1.3.0", "--title", "T", "--item", "x", "--date", "2026-12-01", "--uncategorized"],
        ["add", "1.3.0", "--title", " ", "--item", "x", "--uncategorized"],
        ["add", "1.3.0", "--title", "T", "--item", "", "--uncategorized"],
        ["add", "x.y", "--title", "T", "--item", "x", "--uncategorized"],
        ["remove", "chl_nope"],
        *(["import", str(path)] for path in _bad_files(tmp_path)),
    ]
    for args in bad_commands:
        result = _svc(*args)
        assert result.exit_code == 1, (args, result.output)
        assert result.stdout == ""
        assert result.output.startswith("Error: ") and result.output.count("\n") == 1, result.output
    assert _svc("show").json == before
    assert (
        _svc("versions", "--latest-build", "-1").output
        == "Error: latest_build must be an integer >= 0, got '-1'\n"
    )
    assert _svc("release", "1.3.0", "--date", "2026-02-30").output == (
        "Error: date must be a date YYYY-MM-DD, got '2026-02-30'\n"
    )
    assert _svc("import", str(tmp_path / "bad0.json")).output == (
        "Error: entries[1].date must be a date YYYY-MM-DD, got '2026-12-32'\n"
    )
    assert _svc("remove", "chl_nope").output == "Error: no changelog entry chl_nope\n"
