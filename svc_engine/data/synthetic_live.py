"""The embedded market, continued past its end for as long as the service runs (synthetic, invented).

:func:`~svc_engine.data.synthetic.generate_market` writes a fixed history ending before
2026-11-01. A live platform needs candles that keep coming, so this source carries every series of
that market on with the same generator: the same Student-t shocks from a common market factor, the
same GARCH kernel, regimes, jumps, intraday volume cycle and tick rounding. It works in blocks (one
UTC day of 1-minute steps for a coin, one 79-step weekday for a daily instrument), each drawn from a
seed of its own (``[seed, instrument, day]``) and started at the close the store holds at the
block's start. The candles of a block are therefore the same whenever and however often they are
asked for, in this process or another, and a coin's 1h candles are the aggregation of its 1m ones
to the last digit, as in the history. Nothing here is real data.

Example:
    >>> import tempfile
    >>> from svc_engine.data.store import DataStore
    >>> from svc_engine.data.synthetic import END_MS, generate_market
    >>> store = DataStore(tempfile.mkdtemp()); _ = generate_market(store, small=True)
    >>> live = SyntheticContinuation(store)
    >>> hour = live.closed_klines("crypto", "BTCUSDT", "1h", END_MS, END_MS + 7_200_000)
    >>> minutes = live.closed_klines("crypto", "BTCUSDT", "1m", END_MS, END_MS + 3_600_000)
    >>> hour.height, minutes.height, hour["close"][0] == minutes["close"][-1]
    (2, 60, True)
"""

from __future__ import annotations

import zlib

import numpy as np
import polars as pl

from svc_engine.data.schema import SCHEMA, timeframe_ms
from svc_engine.data.store import DataStore
from svc_engine.data.synthetic import (
    DEFAULT_SEED,
    crypto_volume,
    daily_path,
    draw_shocks,
    market_frame,
    minute_path,
    rounded_prices,
    step_bars,
)
from svc_engine.data.synthetic_kernels import aggregate_nb, regimes_nb
from svc_engine.data.synthetic_params import CRYPTO, DAILY, DAILY_REGIME, FACTOR, HOURLY, OVERNIGHT
from svc_engine.instruments import precision
from svc_engine.instruments.universe import DEFINITION

_MINUTE_MS, _HOUR_MS, _DAY_MS = 60_000, 3_600_000, 86_400_000
_DAILY_STEPS = 79


class SyntheticContinuation:
    """A kline source continuing the embedded market of ``store`` (see the module docstring).

    Serves the crypto pairs of the embedded universe on every timeframe that divides a day (built
    from the 1-minute path) and the daily instruments on ``1d``.
    """

    def __init__(self, store: DataStore, *, seed: int = DEFAULT_SEED) -> None:
        self.store, self.seed = store, seed

    def serves(self, market: str, symbol: str, timeframe: str) -> bool:
        """Whether this source can continue a series.

        Example:
            >>> s = SyntheticContinuation(DataStore("/nonexistent"))
            >>> s.serves("crypto", "BTCUSDT", "1h"), s.serves("us_stocks", "AAPL", "1h")
            (True, False)
        """
        step = timeframe_ms(timeframe)
        if market == "crypto" and symbol in CRYPTO:
            return _DAY_MS % step == 0
        return market in OVERNIGHT and symbol in DAILY and timeframe == "1d"

    def listed(self, stored: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
        """The stored series this source continues, on the feed's timeframes (``datasets/universe.toml``).

        Example:
            >>> SyntheticContinuation(DataStore("/nonexistent")).listed(
            ...     [("crypto", "BTCUSDT", "1m"), ("crypto", "BTCUSDT", "4h"), ("us_stocks", "AAPL", "1d")])
            [('crypto', 'BTCUSDT', '1m'), ('us_stocks', 'AAPL', '1d')]
        """
        feed = DEFINITION["feed"]
        frames = {"crypto": feed["crypto_timeframes"]}
        return [
            (m, s, tf)
            for m, s, tf in stored
            if tf in frames.get(m, feed["daily_timeframes"]) and self.serves(m, s, tf)
        ]

    def closed_klines(
        self, market: str, symbol: str, timeframe: str, start_ms: int, until_ms: int
    ) -> pl.DataFrame:
        """Candles opening at or after ``start_ms`` that have closed by ``until_ms``, continuing the
        stored series; an empty frame when none has (or the store holds nothing before ``start_ms``).

        Raises ``ValueError`` for a series this source does not serve (:meth:`serves`).
        """
        if not self.serves(market, symbol, timeframe):
            raise ValueError(f"the embedded market does not continue {market}/{symbol} {timeframe}")
        step = timeframe_ms(timeframe)
        first_day, last_day = start_ms // _DAY_MS, (until_ms - step) // _DAY_MS
        anchor = self._close_before(market, symbol, timeframe, first_day * _DAY_MS)
        if anchor is None or last_day < first_day:
            return pl.DataFrame(schema=SCHEMA)
        parts = []
        for day in range(first_day, last_day + 1):  # a day per block: a catch-up of weeks is a few dozen
            frame = self._day(market, symbol, timeframe, day, anchor)
            if frame.height:
                anchor = float(frame["close"][-1])
                parts.append(frame)
        if not parts:
            return pl.DataFrame(schema=SCHEMA)
        out = pl.concat(parts)
        t = out["open_time"].dt.epoch("ms")
        return out.filter((t >= start_ms) & (t + step <= until_ms))

    def _close_before(self, market: str, symbol: str, timeframe: str, day_ms: int) -> float | None:
        """The stored close at the start of a block's day (the newest candle opening before it)."""
        key = self.store.key(market, symbol, timeframe)
        if self.store._stat(key) is None:
            return None
        t = pl.col("open_time")
        last = self.store._scan(key).filter(t < day_ms).select(pl.col("close").last()).collect()
        return None if last.height == 0 or last.item() is None else float(last.item())

    def _day(self, market: str, symbol: str, timeframe: str, day: int, anchor: float) -> pl.DataFrame:
        if market == "crypto":
            return _crypto_day(self.seed, symbol, day, anchor, timeframe_ms(timeframe))
        return _daily_bar(self.seed, market, symbol, day, anchor)


def _rng(seed: int, name: str, day: int) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(name.encode()), day])


def _crypto_day(seed: int, symbol: str, day: int, anchor: float, step_ms: int) -> pl.DataFrame:
    """One UTC day of a coin: a 1-minute path from ``anchor``, aggregated to ``step_ms``."""
    p, rules = CRYPTO[symbol], precision("crypto", symbol)
    common_rng = _rng(seed, "factor:crypto", day)
    common = draw_shocks(common_rng, 1440)
    states = regimes_nb(common_rng.random(24), HOURLY.stay_range, HOURLY.stay_trend, HOURLY.reverse)
    rng = _rng(seed, symbol, day)
    z, x, sd, activity = minute_path(rng, common, states, p)
    o, hi, lo, c = rounded_prices(rules.price_precision, *(anchor * np.exp(a) for a in step_bars(rng, x, sd)))
    minutes = day * _DAY_MS + np.arange(1440, dtype=np.int64) * _MINUTE_MS
    volume = crypto_volume(rng, p.quote_volume, z, activity, minutes, c, rules.quantity_precision)
    per = step_ms // _MINUTE_MS
    if per == 1:
        return market_frame(minutes, np.stack([o, hi, lo, c, volume]))
    bars = aggregate_nb(o, hi, lo, c, volume, per, 0)
    bars[4] = np.round(bars[4], rules.quantity_precision)
    return market_frame(minutes[::per], bars)


def _daily_bar(seed: int, market: str, symbol: str, day: int, anchor: float) -> pl.DataFrame:
    """The candle of one weekday (none at weekends): 79 steps from ``anchor``, the overnight one first."""
    if (day + 3) % 7 >= 5:
        return pl.DataFrame(schema=SCHEMA)
    p, rules = DAILY[symbol], precision(market, symbol)
    common_rng = _rng(seed, f"factor:{FACTOR[market]}", day)
    common = draw_shocks(common_rng, _DAILY_STEPS)
    states = regimes_nb(
        common_rng.random(1), DAILY_REGIME.stay_range, DAILY_REGIME.stay_trend, DAILY_REGIME.reverse
    )
    rng = _rng(seed, symbol, day)
    x, sd = daily_path(rng, common, states, p, market)
    o, hi, lo, c = (anchor * np.exp(a) for a in step_bars(rng, x, sd))
    bar = aggregate_nb(o, hi, lo, c, np.zeros(sd.size), _DAILY_STEPS, 1)
    bar[:4] = np.maximum(np.round(bar[:4], rules.price_precision), 10.0**-rules.price_precision)
    bar[4] = np.round(p.quote_volume / bar[3] * rng.lognormal(0.0, 0.3, 1))
    return market_frame(np.array([day * _DAY_MS], dtype=np.int64), bar)
