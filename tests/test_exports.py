"""The public surface of svc_engine is stated once (``_EXPORTS``) and every name resolves."""

from __future__ import annotations

import importlib

import pytest

import svc_engine


@pytest.mark.parametrize("name", svc_engine.__all__)
def test_every_public_name_resolves(name: str) -> None:
    value = getattr(svc_engine, name)
    module = importlib.import_module(svc_engine._EXPORTS[name])
    assert value is getattr(module, name)
    assert (value.__doc__ or "").strip(), f"{name} has no docstring"


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        svc_engine.nope  # noqa: B018
