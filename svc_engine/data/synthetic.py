"""A deterministic synthetic market for the whole instrument universe (the embedded default data).

Every price series is the aggregation of a finer simulated log-price path, so bars are always
consistent with what happened inside them:

- crypto: a 1-minute path for two years; the stored 1h bars are the aggregation of the stored 1m
  bars (kept for the last 30 days) to the last digit;
- every other market: 79 steps a weekday (an overnight gap, then 78 five-minute session steps),
  aggregated to ten years of daily bars.

The path has Student-t shocks (fat tails) from a common market factor plus an idiosyncratic part
(correlated coins), a GARCH(1,1) variance updated every bar (volatility clustering), jumps, an
intraday volatility and volume cycle, and Markov-switching regimes: trends up, trends down, and
ranges that mean-revert to where they began. Each path is pinned to realistic first and last
closes of its instrument and rounded to its tick; volumes follow activity, the hour of day and the
weekday, at levels that put the coins in every volume tier. Nothing here is real data.
The calibration tables (instruments, regimes) are in `synthetic_params`, the kernels in
`synthetic_kernels`.

Example:
    >>> import tempfile
    >>> summary = generate_market(DataStore(tempfile.mkdtemp()), small=True)
    >>> summary["instruments"], summary["files"]
    (9, 14)
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from svc_engine.data.schema import SCHEMA
from svc_engine.data.store import DataStore
from svc_engine.data.synthetic_kernels import aggregate_nb as _aggregate_nb
from svc_engine.data.synthetic_kernels import log_path_nb as _log_path_nb
from svc_engine.data.synthetic_kernels import regimes_nb as _regimes_nb
from svc_engine.data.synthetic_params import (
    CRYPTO,
    DAILY,
    DAILY_REGIME,
    FACTOR,
    HOURLY,
    OVERNIGHT,
    Params,
    Regime,
)
from svc_engine.instruments import Instrument, precision, universe

END = datetime(2026, 11, 1, tzinfo=UTC)
"""The generated market ends just before this instant (fixed, not "now", so data is reproducible)."""
END_MS = int(END.timestamp() * 1000)
DEFAULT_SEED = 20261122

_MINUTE_MS = 60_000
_HOUR_MS = 3_600_000
_DAY_MS = 86_400_000
_DAILY_STEPS = 79  # one overnight step, then 78 five-minute session steps
_T_DF = 4.0
_SMALL_CRYPTO = ("BTCUSDT", "ETHUSDT", "SOLUSDT", "DOTUSDT", "INJUSDT")
_SMALL_DAILY = ("AAPL", "SPY", "EURUSD", "GOLD")

Progress = Callable[[int, int, str], None]


def _rng(seed: int, name: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def draw_shocks(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` Student-t shocks scaled to unit variance (the fat tails of the synthetic market).

    Example:
        >>> draw_shocks(np.random.default_rng(0), 3).shape
        (3,)
    """
    return rng.standard_t(_T_DF, n) / math.sqrt(_T_DF / (_T_DF - 2.0))


def _factor(seed: int, name: str, n_bars: int, steps: int, regime: Regime) -> tuple[np.ndarray, np.ndarray]:
    """A market's common shocks per step and its regime per bar (shared by its instruments)."""
    rng = _rng(seed, f"factor:{name}")
    z = draw_shocks(rng, n_bars * steps)
    states = _regimes_nb(rng.random(n_bars), regime.stay_range, regime.stay_trend, regime.reverse)
    return z, states


def _own_shocks(
    rng: np.random.Generator, common: np.ndarray, rho: float, steps: int, regime: Regime
) -> np.ndarray:
    z = rho * common + math.sqrt(1.0 - rho * rho) * draw_shocks(rng, common.size)
    n_bars = common.size // steps
    hit = np.flatnonzero(rng.random(n_bars) < regime.jumps)
    # A jump lands on one step of its bar; its size is in units of that step's deviation.
    z[hit * steps + rng.integers(0, steps, hit.size)] += rng.normal(0.0, 12.0, hit.size)
    return z


def step_bars(rng: np.random.Generator, x: np.ndarray, sd: np.ndarray) -> tuple[np.ndarray, ...]:
    """Open, high, low, close (log) of each fine step, with wicks beyond the body."""
    o, c = x[:-1], x[1:]
    hi = np.maximum(o, c) + 0.6 * np.abs(rng.standard_normal(sd.size)) * sd
    lo = np.minimum(o, c) - 0.6 * np.abs(rng.standard_normal(sd.size)) * sd
    return o, hi, lo, c


def _pin(x: np.ndarray, p: Params, share: float) -> np.ndarray:
    """The path bent by a constant drift so that it ends at 0 (log of ``p.end``) having risen like the
    real instrument: all the way from ``p.start`` over the full span, ``share`` of that (in log) over a
    shorter one."""
    move = share * math.log(p.end / p.start) - (x[-1] - x[0])
    pinned = x + np.linspace(0.0, move, x.size)
    return pinned - pinned[-1]


def rounded_prices(digits: int, *prices: np.ndarray) -> list[np.ndarray]:
    """Each price array rounded to ``digits`` decimals and at least one tick.

    Example:
        >>> [a.tolist() for a in rounded_prices(2, np.array([1.234, 0.0001]))]
        [[1.23, 0.01]]
    """
    tick = 10.0**-digits
    return [np.maximum(np.round(a, digits), tick) for a in prices]


def _intraday_cycle(period: int) -> np.ndarray:
    """Volume weight of each minute of the UTC day: busiest around 15:00 (US open), quiet at 03:00."""
    hours = np.arange(period) * 24.0 / period
    return 1.0 + 0.35 * np.cos(2.0 * np.pi * (hours - 15.0) / 24.0)


def market_frame(open_time: np.ndarray, ohlcv: np.ndarray) -> pl.DataFrame:
    """A kline frame of Unix-ms open times and a (5, n) OHLCV array, with times as
    ``Datetime("ms", "UTC")`` like every kline frame (``schema.SCHEMA``).

    Example:
        >>> market_frame(np.array([0]), np.ones((5, 1))).columns[:2]
        ['open_time', 'open']
    """
    return pl.DataFrame(
        {
            "open_time": open_time.astype(np.int64),
            "open": ohlcv[0],
            "high": ohlcv[1],
            "low": ohlcv[2],
            "close": ohlcv[3],
            "volume": ohlcv[4],
        },
        schema=SCHEMA,
    )


@dataclass(frozen=True, slots=True)
class _Span:
    """What to generate: hours of 1h candles, minutes of 1m candles (the last ones), days of 1d."""

    hours: int
    minutes: int
    days: int


_FULL = _Span(hours=730 * 24, minutes=30 * 1440, days=3652)
_SMALL = _Span(hours=60 * 24, minutes=3 * 1440, days=730)


def minute_path(
    rng: np.random.Generator, common: np.ndarray, states: np.ndarray, p: Params
) -> tuple[np.ndarray, ...]:
    """A coin's 1-minute shocks, log path, step deviations and activity (the GARCH level times the
    intraday cycle, which drives volume), from its market's common shocks and hourly regimes."""
    z = _own_shocks(rng, common, p.rho, 60, HOURLY)
    cycle = _intraday_cycle(1440)
    profile = np.sqrt(cycle / cycle.mean())
    sigma = p.vol / math.sqrt(365.0 * 1440.0)
    h = HOURLY
    x, sd = _log_path_nb(z, profile, 60, sigma, states, h.trend, h.kappa, h.alpha, h.beta)
    return z, x, sd, sd / sigma * profile[np.arange(z.size) % 1440]


def _crypto_frames(
    inst: Instrument, seed: int, span: _Span, factor: tuple[np.ndarray, np.ndarray]
) -> dict[str, pl.DataFrame]:
    """The 1h and 1m candles of one coin, both cut from the same 1-minute path."""
    p, rules = CRYPTO[inst.symbol], precision(inst.market, inst.symbol)
    rng = _rng(seed, inst.symbol)
    common, states = factor
    z, x, sd, activity = minute_path(rng, common, states, p)
    logs = step_bars(rng, _pin(x, p, span.hours / _FULL.hours), sd)
    o, hi, lo, c = rounded_prices(rules.price_precision, *(p.end * np.exp(a) for a in logs))
    start = END_MS - span.hours * _HOUR_MS
    minutes = start + np.arange(z.size, dtype=np.int64) * _MINUTE_MS
    volume = crypto_volume(rng, p.quote_volume, z, activity, minutes, c, rules.quantity_precision)
    hourly = _aggregate_nb(o, hi, lo, c, volume, 60, 0)
    hourly[4] = np.round(hourly[4], rules.quantity_precision)
    tail = slice(z.size - span.minutes, z.size)
    return {
        "1h": market_frame(start + np.arange(span.hours, dtype=np.int64) * _HOUR_MS, hourly),
        "1m": market_frame(minutes[tail], np.stack([o[tail], hi[tail], lo[tail], c[tail], volume[tail]])),
    }


def crypto_volume(
    rng: np.random.Generator,
    quote_per_day: float,
    z: np.ndarray,
    activity: np.ndarray,
    open_time: np.ndarray,
    close: np.ndarray,
    digits: int,
) -> np.ndarray:
    """Base-asset volume per minute: more when volatile, when moving and in busy hours, less at
    weekends, noisy; rounded to the pair's quantity precision so that sums round back exactly."""
    weekend = ((open_time // _DAY_MS + 3) % 7) >= 5
    weight = activity * (0.6 + 0.5 * np.abs(z)) * np.where(weekend, 0.7, 1.0)
    weight *= rng.lognormal(0.0, 0.5, z.size)
    quote = weight * (quote_per_day / 1440.0 / weight.mean())
    return np.round(quote / close, digits)


def _weekdays(days: int) -> np.ndarray:
    """Open times of the weekdays among the ``days`` days before :data:`END`."""
    day = np.arange(END_MS // _DAY_MS - days, END_MS // _DAY_MS, dtype=np.int64)
    return day[(day + 3) % 7 < 5] * _DAY_MS


def daily_path(
    rng: np.random.Generator, common: np.ndarray, states: np.ndarray, p: Params, market: str
) -> tuple[np.ndarray, np.ndarray]:
    """The log path (and step deviations) of 79-step weekdays: an overnight step, then the session."""
    z = _own_shocks(rng, common, p.rho, _DAILY_STEPS, DAILY_REGIME)
    night = OVERNIGHT[market]
    session = np.full(_DAILY_STEPS - 1, (1 - night) * _DAILY_STEPS / (_DAILY_STEPS - 1))
    profile = np.sqrt(np.r_[night * _DAILY_STEPS, session])
    sigma = p.vol / math.sqrt(252.0 * _DAILY_STEPS)
    r = DAILY_REGIME
    return _log_path_nb(z, profile, _DAILY_STEPS, sigma, states, r.trend, r.kappa, r.alpha, r.beta)


def _daily_frame(
    inst: Instrument, seed: int, span: _Span, factor: tuple[np.ndarray, np.ndarray]
) -> pl.DataFrame:
    """Daily candles of one instrument aggregated from a 79-step path per weekday."""
    p, rules = DAILY[inst.symbol], precision(inst.market, inst.symbol)
    rng = _rng(seed, inst.symbol)
    common, states = factor
    x, sd = daily_path(rng, common, states, p, inst.market)
    logs = step_bars(rng, _pin(x, p, span.days / _FULL.days), sd)
    o, hi, lo, c = (p.end * np.exp(a) for a in logs)
    bars = _aggregate_nb(o, hi, lo, c, np.zeros(sd.size), _DAILY_STEPS, 1)
    bars[:4] = np.maximum(np.round(bars[:4], rules.price_precision), 10.0**-rules.price_precision)
    moves = np.abs(np.diff(np.log(bars[3]), prepend=math.log(bars[0, 0])))
    weight = (0.6 + 0.4 * moves / max(moves.mean(), 1e-12)) * rng.lognormal(0.0, 0.3, moves.size)
    bars[4] = np.round(weight * (p.quote_volume / weight.mean()) / bars[3])
    return market_frame(_weekdays(span.days), bars)


# ---- the market ---------------------------------------------------------------------------------


def _market_factor(seed: int, name: str, span: _Span) -> tuple[np.ndarray, np.ndarray]:
    if name == "crypto":
        return _factor(seed, name, span.hours, 60, HOURLY)
    return _factor(seed, name, len(_weekdays(span.days)), _DAILY_STEPS, DAILY_REGIME)


def _frames(
    inst: Instrument, seed: int, span: _Span, factor: tuple[np.ndarray, np.ndarray]
) -> dict[str, pl.DataFrame]:
    if inst.market == "crypto":
        return _crypto_frames(inst, seed, span, factor)
    return {"1d": _daily_frame(inst, seed, span, factor)}


def _plan(small: bool) -> list[Instrument]:
    if small:
        wanted = set(_SMALL_CRYPTO + _SMALL_DAILY)
        return [i for i in universe() if i.symbol in wanted]
    return universe()


def _write(store: DataStore, inst: Instrument, frames: dict[str, pl.DataFrame]) -> tuple[int, int]:
    candles = size = 0
    for timeframe, df in frames.items():
        candles += store.write_klines(inst.market, inst.symbol, timeframe, df, replace=True)
        size += Path(store.path(inst.market, inst.symbol, timeframe)).stat().st_size
    return candles, size


def generate_market(
    store: DataStore | None = None,
    *,
    seed: int = DEFAULT_SEED,
    progress: Progress | None = None,
    small: bool = False,
) -> dict[str, Any]:
    """Fill ``store`` (default: :class:`DataStore` at the default data directory) with the synthetic market.

    Full: every crypto pair with two years of 1h and the last 30 days of 1m candles, ten years of
    weekday 1d candles for every other instrument, all ending before 2026-11-01 00:00 UTC. ``small``:
    five pairs with 60 days of 1h and 3 days of 1m, two years of 1d for one ticker per other market.
    Existing series of those instruments are replaced. ``progress(done, total, label)`` is called
    after each instrument. Returns a summary of what was written.

    Example:
        >>> import tempfile
        >>> generate_market(DataStore(tempfile.mkdtemp()), small=True, seed=1)["candles"]
        30884
    """
    began = time.perf_counter()
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    seed = int(seed)
    store = store if store is not None else DataStore()
    span = _SMALL if small else _FULL
    plan = _plan(small)
    factors: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    candles = size = 0
    for done, inst in enumerate(plan, start=1):
        name = FACTOR[inst.market]
        if name not in factors:
            factors[name] = _market_factor(seed, name, span)
        added, written = _write(store, inst, _frames(inst, seed, span, factors[name]))
        candles, size = candles + added, size + written
        if progress is not None:
            progress(done, len(plan), f"{inst.market}/{inst.symbol}")
    return {
        "instruments": len(plan),
        "files": sum(2 if i.market == "crypto" else 1 for i in plan),
        "candles": candles,
        "bytes": size,
        "seconds": round(time.perf_counter() - began, 3),
        "seed": seed,
        "small": small,
        "end_ts": END_MS // 1000,
        "root": str(store.root),
    }
