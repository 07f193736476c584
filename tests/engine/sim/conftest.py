"""Makes ``sim_helpers`` and ``tests/reference_sim.py`` importable under ``--import-mode=importlib``."""

from __future__ import annotations

import sys
from pathlib import Path

for _dir in (Path(__file__).resolve().parent, Path(__file__).resolve().parents[2]):
    if str(_dir) not in sys.path:
        sys.path.insert(0, str(_dir))
