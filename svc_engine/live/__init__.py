"""The live half of the engine: compiled programs on the coins they watch, advanced candle by
candle with the positions ``backtest`` gives (``docs/signals-api.md``, "The live evaluator").

Example:
    >>> from svc_engine import live
    >>> w = live.watchlist(["close crosses above SMA(20)"], [(0, "BTCUSDT")], "1h", spread_pct=0.1)
    >>> live.new_state(w)["phase"].tolist()
    [0]
"""

from __future__ import annotations

from svc_engine.live.evaluator import (
    Watchlist,
    advance,
    candles_needed,
    events_frame,
    new_state,
    rebuild_state,
    watchlist,
)
from svc_engine.live.shards import advance_all
from svc_engine.live.state import EVENT_DTYPE, EVENTS, PHASES, STATE_DTYPE

__all__ = [
    "EVENTS",
    "EVENT_DTYPE",
    "PHASES",
    "STATE_DTYPE",
    "Watchlist",
    "advance",
    "advance_all",
    "candles_needed",
    "events_frame",
    "new_state",
    "rebuild_state",
    "watchlist",
]
