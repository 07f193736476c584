"""One evaluation of a watched strategy and coin: the engine's positions from the watch's anchor to
the newest closed candle, each with its live status.

The engine simulates one position at a time per coin (engine semantics sections 2-4), so a signal
depends on the positions before it. A watch keeps an *anchor*: the candle of the newest signal that
placed an order (or the first candle it watched). Before that signal the coin was free, so running
the engine on ``[anchor, newest closed candle]`` (with its usual ``candle_count`` warm-up) gives
exactly the positions a backtest over the whole watched range gives from there on. Each evaluation
costs the candles since the newest order plus the warm-up.

A position's live status: an order the engine reports ``expired`` only because the range ended while
it still had time to fill is ``waiting``; a trade closed at the range's end (reason ``end``) is
``open``; every other traded or expired position is ``closed``. Skipped signals are no signals. The
range's end frees the coin on its last candle, which live it is not: a signal the engine places on
that candle after a still open position is dropped (it is ``skipped_busy`` once more candles come).

Example:
    >>> live_status("traded", "end", signal_ms=0, last_ms=3_600_000, max_wait_ms=86_400_000)
    'open'
    >>> live_status("expired", None, signal_ms=0, last_ms=3_600_000, max_wait_ms=86_400_000)
    'waiting'
    >>> live_status("expired", None, signal_ms=0, last_ms=86_400_000, max_wait_ms=86_400_000)
    'closed'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from svc_engine.data import load_klines
from svc_engine.sim import drivers
from svc_engine.sim.settings import Settings as SimSettings

MAX_WAIT_MS = int(SimSettings().max_wait_days * 86_400_000)


@dataclass(frozen=True)
class Position:
    """A signal as the engine sees it at the newest closed candle."""

    signal_ms: int
    side: str
    limit_price: float
    tp_price: float
    sl_price: float
    status: str  # waiting | open | closed
    fill_ms: int | None = None
    entry_price: float | None = None
    exit_ms: int | None = None
    exit_price: float | None = None
    reason: str | None = None
    return_pct: float | None = None


def live_status(fate: str, reason: str | None, *, signal_ms: int, last_ms: int, max_wait_ms: int) -> str:
    """``waiting``, ``open`` or ``closed``; see the module docstring."""
    if fate == "expired":
        # The order is live on candles opening before close(s) + max_wait; with the signal candle's
        # close at signal_ms + tf, a next candle at last_ms + tf is live while last_ms < signal_ms + max_wait.
        return "waiting" if last_ms < signal_ms + max_wait_ms else "closed"
    return "open" if reason == "end" else "closed"


class Candles:
    """The candles of one pass of the worker, each series read once and shared by every watch of it.

    Example:
        >>> import tempfile
        >>> from svc_engine.data import DataStore
        >>> from svc_engine.data.synthetic import generate_market
        >>> store = DataStore(tempfile.mkdtemp()); _ = generate_market(store, small=True)
        >>> candles = Candles(store)
        >>> window = candles.window("crypto", "BTCUSDT", "1h", 1_790_000_000_000, 1_790_500_000_000, 20)
        >>> window.height
        159
    """

    def __init__(self, store: Any) -> None:
        self.store = store
        self._series: dict[tuple[str, str, str], Any] = {}

    def window(
        self, market: str, symbol: str, timeframe: str, first_ms: int, last_ms: int, warmup: int
    ) -> Any:
        """Candles opening in ``[first_ms, last_ms]`` plus ``warmup`` earlier ones, as a backtest of that
        range loads them."""
        key = (market, symbol, timeframe)
        series = self._series.get(key)
        if series is None:
            series = self._series[key] = load_klines(symbol, timeframe, market=market, store=self.store)
        times = series["open_time"].to_physical()  # Datetime("ms", "UTC") as Int64 Unix ms
        start = max(0, int(times.search_sorted(first_ms, side="left")) - warmup)
        stop = int(times.search_sorted(last_ms, side="right"))
        return series.slice(start, stop - start)


def positions(
    strategy: Any,
    symbol: str,
    market: str,
    timeframe: str,
    *,
    anchor_ms: int,
    last_ms: int,
    store: Any,
    market_type: str = "spot",
    spread_pct: float | None = None,
    candles: Candles | None = None,
) -> list[Position]:
    """The engine's positions on ``[anchor_ms, last_ms]`` (candle open times) with their live status.

    Example:
        >>> import tempfile
        >>> from svc_engine.data import DataStore
        >>> from svc_engine.data.synthetic import generate_market
        >>> store = DataStore(tempfile.mkdtemp()); _ = generate_market(store, small=True)
        >>> found = positions("close crosses above SMA(20)", "BTCUSDT", "crypto", "1h",
        ...                   anchor_ms=1_790_000_000_000, last_ms=1_790_500_000_000, store=store)
        >>> len(found) > 0, {p.status for p in found} <= {"waiting", "open", "closed"}
        (True, True)
    """
    source = (
        symbol
        if candles is None
        else candles.window(market, symbol, timeframe, anchor_ms, last_ms, drivers.warmup_of(strategy))
    )
    result = drivers.backtest(
        strategy,
        source,
        timeframe,
        anchor_ms / 1000,
        last_ms / 1000,
        market=market,
        store=store,
        market_type=market_type,
        **({} if spread_pct is None else {"spread_pct": spread_pct}),
    ).to_dict()
    trades = {int(t["signal_time"]): t for t in result["trades"]}
    out = []
    for p in result["all_positions"]:
        fate = p["fate"]
        if fate not in ("traded", "expired"):
            continue
        signal_ms = int(p["signal_time"])
        trade = trades.get(signal_ms) if fate == "traded" else None
        reason = None if trade is None else trade["exit_reason"]
        status = live_status(fate, reason, signal_ms=signal_ms, last_ms=last_ms, max_wait_ms=MAX_WAIT_MS)
        done = trade is not None and status == "closed"
        if out and out[-1].status != "closed":
            # The range's end closed that trade (reason end) or expired that order on the last
            # candle, which frees the coin there; live, it is still busy: nothing after it is real.
            break
        out.append(
            Position(
                signal_ms=signal_ms,
                side=p["side"],
                limit_price=float(p["limit_price"]),
                tp_price=float(p["tp_price"]),
                sl_price=float(p["sl_price"]),
                status=status,
                fill_ms=None if trade is None else int(trade["fill_time"]),
                entry_price=None if trade is None else float(trade["entry_price"]),
                exit_ms=int(trade["exit_time"]) if done else None,
                exit_price=float(trade["exit_price"]) if done else None,
                reason=(reason if done else ("expired" if status == "closed" else None)),
                return_pct=float(trade["return_pct"]) if done else None,
            )
        )
    return out
