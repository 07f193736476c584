"""The one-pass check of the series rules finds the same first offence as the row-by-row scan."""

from __future__ import annotations

import numpy as np
import pytest

from svc_engine.sim.series_nb import first_bad_row, first_bad_row_scan

BREAKS = [
    ("o", np.nan),
    ("h", np.nan),
    ("lo", np.nan),
    ("c", np.nan),
    ("o", np.inf),
    ("h", np.inf),
    ("lo", -np.inf),
    ("c", np.inf),
    ("o", 0.0),
    ("lo", 0.0),
    ("c", -1.0),
    ("h", 0.5),
    ("lo", 150.0),
    ("v", np.nan),
    ("v", np.inf),
    ("v", -1.0),
    ("t", None),
]


def _series(n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(n)
    c = 100 + rng.standard_normal(n).cumsum() * 0.1
    o = np.r_[100.0, c[:-1]]
    return {
        "t": np.arange(n, dtype=np.int64) * 60_000,
        "o": o,
        "h": np.maximum(o, c) + 0.5,
        "lo": np.minimum(o, c) - 0.5,
        "c": c,
        "v": rng.uniform(0, 10, n),
    }


@pytest.mark.parametrize(("column", "value"), BREAKS)
@pytest.mark.parametrize("row", [0, 1, 37, 99])
def test_each_break_is_found_at_its_row(column: str, value: float | None, row: int) -> None:
    s = _series(100)
    if column == "t":
        s["t"][row] = s["t"][row - 1] if row else s["t"][1]
    else:
        s[column][row] = value
    args = (s["t"], s["o"], s["h"], s["lo"], s["c"], s["v"])
    found = first_bad_row(*args)
    assert found == first_bad_row_scan(*args)
    assert found[0] == (1 if column == "t" and row == 0 else row)


def test_a_valid_series_passes_with_its_smallest_step() -> None:
    s = _series(50)
    s["t"][10:] += 30_000
    assert first_bad_row(s["t"], s["o"], s["h"], s["lo"], s["c"], s["v"]) == (-1, 0, 60_000)
    one = {k: v[:1] for k, v in s.items()}
    assert first_bad_row(one["t"], one["o"], one["h"], one["lo"], one["c"], one["v"])[:2] == (-1, 0)
