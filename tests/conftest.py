"""Fixtures shared by the whole suite: the real datasets beside the checkout."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATASETS = Path(os.environ.get("SVC_SHARED_DATASETS", REPO.parent / "shared" / "datasets"))


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    """``../shared/datasets`` (real candles); tests that need it skip where it is missing."""
    if not (SHARED_DATASETS / "crypto").is_dir():
        pytest.skip(f"real datasets not found at {SHARED_DATASETS} (set SVC_SHARED_DATASETS)")
    return SHARED_DATASETS
