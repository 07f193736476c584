"""Candles of a stored series in Binance's ``klines`` shape, prices with the instrument's precision.

Example:
    >>> KLINES_DEFAULT, KLINES_MAX
    (500, 1500)
"""

from __future__ import annotations

from typing import Any

import polars as pl

from svc_api.core.errors import Invalid
from svc_api.market.series import last_ms, rules

KLINES_DEFAULT, KLINES_MAX = 500, 1500


def klines(
    catalog: Any,
    market: str,
    symbol: str,
    interval: str,
    *,
    start_ms: int | None,
    end_ms: int | None,
    limit: int,
) -> dict[str, Any]:
    """Candles like Binance's ``klines``: ``[open_time_ms, "open", "high", "low", "close", "volume"]``.

    With ``start_ms`` the first ``limit`` candles opening at or after it (and at or before
    ``end_ms``); without, the last ``limit`` candles opening at or before ``end_ms`` (default: the
    newest). A range with no candle gives an empty list.

    Example:
        >>> import tempfile
        >>> from svc_engine.data import Catalog, DataStore
        >>> store = DataStore(tempfile.mkdtemp())
        >>> df = pl.DataFrame({"open_time": [0, 60_000], "open": [1.0, 1.1], "high": [1.2, 1.2],
        ...                    "low": [0.9, 1.0], "close": [1.1, 1.15], "volume": [5.0, 6.0]})
        >>> _ = store.write_klines("crypto", "BTCUSDT", "1m", df)
        >>> klines(Catalog(store), "crypto", "BTCUSDT", "1m", start_ms=None, end_ms=None, limit=1)["klines"]
        [[60000, '1.10', '1.20', '1.00', '1.15', '6.00000']]
    """
    from svc_engine.data import load_klines, timeframe_ms

    try:
        step = timeframe_ms(interval)
    except ValueError as exc:
        raise Invalid(str(exc)) from None
    if start_ms is not None and end_ms is not None and start_ms > end_ms:
        raise Invalid(f"start_time {start_ms} is after end_time {end_ms}")

    def load(lo: int | None, hi: int | None) -> pl.DataFrame:
        try:
            return load_klines(
                symbol,
                interval,
                start_ts=None if lo is None else lo / 1000,
                end_ts=None if hi is None else hi / 1000,
                market=market,
                store=catalog.store,
            )
        except ValueError as exc:
            if "selects no candle" in str(exc):
                return pl.DataFrame()
            raise Invalid(str(exc)) from None

    if start_ms is not None:
        span_end = start_ms + limit * step
        frame = load(start_ms, span_end if end_ms is None else min(end_ms, span_end))
        if frame.height < limit and (end_ms is None or end_ms > span_end):
            frame = load(start_ms, end_ms)  # gaps in the data: read on to the end of the range
        frame = frame.head(limit)
    else:
        hi = end_ms if end_ms is not None else last_ms(catalog, market, symbol)
        frame = load(max(0, hi - limit * step), hi)
        if frame.height < limit:
            frame = load(None, hi)
        frame = frame.tail(limit)
    return {
        "symbol": symbol,
        "market": market,
        "interval": interval,
        "klines": _rows(frame, rules(market, symbol)),
        "count": frame.height,
    }


def _rows(frame: pl.DataFrame, precision: Any) -> list[list[Any]]:
    if frame.height == 0:
        return []
    from svc_engine.data.times import ms_array

    p, q = precision.price_precision, precision.quantity_precision
    cols = [ms_array(frame["open_time"]).tolist()]  # Datetime("ms", "UTC") -> Unix ms in the JSON
    cols += [[f"{x:.{p}f}" for x in frame[c].to_list()] for c in ("open", "high", "low", "close")]
    cols.append([f"{x:.{q}f}" for x in frame["volume"].to_list()])
    return [list(r) for r in zip(*cols, strict=True)]
