"""The settings of a run as the kernels take them: the validated settings, the half spread of the
executed prices, and the position sizing's (mode, value); shared by `svc_engine.sim.single`, the
portfolio and the live evaluator (all import them from `svc_engine.sim.single` too).

Example:
    >>> sizing_args(resolve_settings({"sizing": "risk", "risk_pct": 2}))
    (1, 0.02)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from svc_engine.data import arrays as kept
from svc_engine.sim import nb
from svc_engine.sim.inputs import Candles, timeframe_name
from svc_engine.sim.kernels.args import Terms
from svc_engine.sim.settings import Settings
from svc_engine.sim.stats import MS_PER_DAY


def resolve_settings(settings: dict[str, Any], *, allow_detail: bool = False) -> Settings:
    """Validated settings; ``intrabar="detail"`` is refused unless ``allow_detail`` (only
    ``simulate`` with ``detail_klines`` replays candles on a finer series).

    Example:
        >>> resolve_settings({"intrabar": "detail"})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: intrabar='detail' is not supported by this engine here: ...
    """
    parsed = Settings.from_kwargs(**settings)
    if parsed.intrabar == "detail" and not allow_detail:
        raise ValueError(
            "intrabar='detail' is not supported by this engine here: only simulate(..., detail_klines=) "
            "replays candles on a finer series; use 'conservative'"
        )
    return parsed


def half_spread(
    settings: Settings, market: str, klines: pl.DataFrame, candles: Candles, timeframe: str | None
) -> float:
    """``h = spread_pct / 200``; with no ``spread_pct`` the instrument's tier spread.

    Example:
        >>> half_spread(Settings(spread_pct=0.1), "crypto", pl.DataFrame(), None, None)
        0.0005
    """
    if settings.spread_pct is not None:
        return settings.spread_pct / 200.0
    from svc_engine.instruments import spread_pct_for

    name = timeframe or timeframe_name(candles.tf_ms)
    if name is None:
        raise ValueError("spread_pct is not set and the timeframe is unknown; pass timeframe= or spread_pct=")
    series = (candles.t, candles.v, candles.c)  # validated: the tier comes from one fast sum

    def tier() -> float:
        return float(spread_pct_for(market, klines, name, series=series))

    # Once per frame, market and timeframe (a pass over the volumes and the days; 5 ms on 4.35 M
    # candles): a frame already seen gives the tier it gave (svc_engine.data.arrays).
    if not (isinstance(klines, pl.DataFrame) and all(c in klines.columns for c in _SPREAD_INPUTS)):
        return tier() / 200.0
    spread = kept.derived(klines, ("spread", market, name), _SPREAD_INPUTS, tier)
    return float(spread) / 200.0


_SPREAD_INPUTS = ("open_time", "volume", "close")  # the columns the tier reads


def sizing_args(s: Settings) -> tuple[int, float]:
    """(mode, value) of the kernels' position sizing from the settings.

    Example:
        >>> sizing_args(Settings()), sizing_args(Settings(sizing="risk", risk_pct=1))
        ((0, 1.0), (1, 0.01))
    """
    if s.sizing == "risk":
        return nb.SIZE_RISK, float(s.risk_pct) / 100  # type: ignore[arg-type]
    if s.sizing == "quantity":
        return nb.SIZE_QUANTITY, float(s.quantity)  # type: ignore[arg-type]
    return nb.SIZE_FRACTION, s.position_size_pct / 100


def kernel_terms(s: Settings, hs: np.ndarray, tf_ms: int, sizing: tuple[int, float] | None = None) -> Terms:
    """The money and timing settings of the sweep kernels (:class:`~svc_engine.sim.kernels.args.Terms`),
    built here alone: ``hs`` the half spread per coin, ``sizing`` (mode, value) when not
    :func:`sizing_args` of ``s``.

    Example:
        >>> kernel_terms(Settings(max_wait_days=1), np.zeros(1), 60_000).wait_ms
        86400000
    """
    mode, size = sizing_args(s) if sizing is None else sizing
    return Terms(
        float(s.initial_balance),
        s.commission_pct / 100,
        float(s.leverage),
        hs,
        int(tf_ms),
        round(s.max_wait_days * MS_PER_DAY),
        int(s.min_candles_between_signals),
        int(mode),
        float(size),
    )
