"""``openapi.yaml`` against the resource fields of ``../shared/spec/trading-api.md``: every field the
spec lists for a Backtest result, its summary and a Backtest history entry is a required property
of the matching schema (the replies themselves are validated against those schemas by
``test_openapi.py``). Skips, saying so, where the shared spec is not beside the checkout."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT.parent / "shared" / "spec" / "trading-api.md"
pytestmark = pytest.mark.skipif(not SPEC.exists(), reason=f"the shared spec is not at {SPEC}")


def _fields_after(heading: str, lead: str = "") -> list[str]:
    text = SPEC.read_text()
    section = text[text.index(heading) :]
    line = next(
        line for line in section.splitlines()[1:] if line.strip() and line.startswith(lead or line[:1])
    )
    return re.findall(r"`([a-z_]+)`", line.split(".")[0] if not lead else line)


def _schema(name: str) -> dict[str, Any]:
    doc = yaml.safe_load((ROOT / "svc_api" / "openapi.yaml").read_text())
    return doc["components"]["schemas"][name]


def _resolved(node: dict[str, Any]) -> dict[str, Any]:
    """A schema, or the component a ``$ref`` names (the generated description refers to the models)."""
    ref = node.get("$ref", "")
    return _schema(ref.rsplit("/", 1)[1]) if ref else node


def _required(schema: dict[str, Any]) -> set[str]:
    out = set(schema.get("required", []))
    for part in schema.get("allOf", []):
        out |= (
            set(part.get("required", []))
            if "$ref" not in part
            else _required(_schema(part["$ref"].split("/")[-1]))
        )
    return out


def test_backtest_result_fields_are_required() -> None:
    fields = _fields_after("### Backtest result")
    assert {"action", "job_id", "coin", "all_positions", "total_positions", "cost_credits"} <= set(fields)
    assert set(fields) <= _required(_schema("BacktestResult"))


def test_backtest_summary_fields_are_required() -> None:
    fields = _fields_after("### Backtest result", lead="`summary` fields")
    assert len(fields) == 1 + 15 and fields[0] == "summary"
    assert set(fields[1:]) <= _required(_schema("BacktestResultSummary"))


def test_backtest_history_entry_fields_are_required() -> None:
    fields = _fields_after("### Backtest history entry")
    entry = _resolved(_schema("BacktestHistoryPage")["properties"]["backtests"]["items"])
    assert set(fields) - {"total_trades", "win_rate", "total_return_pct"} <= set(entry["required"])
    summary = _resolved(entry["properties"]["summary"])
    assert set(summary["required"]) == {"total_trades", "win_rate", "total_return_pct"}
