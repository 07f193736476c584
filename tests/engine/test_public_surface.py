"""What a new user sees of ``svc_engine``: ``dir(sv)`` lists the public names, no import helpers."""

from __future__ import annotations

import svc_engine as sv


def test_dir_shows_the_public_names_only() -> None:
    names = dir(sv)
    assert {"Any", "annotations", "importlib"}.isdisjoint(names)
    assert {"backtest", "sweep", "walk_forward", "SweepResult"} <= set(names)
    assert set(names) == {*sv.__all__, "__version__"}
