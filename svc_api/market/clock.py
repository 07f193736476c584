"""The market clock: which candles have closed "now".

Three ways to run it, one rule for all (a candle is revealed once ``open_time + timeframe <= now``):

- wall time (the default, real data arriving in the store): market time is the service clock;
- a replay (``MARKET_REPLAY_SPEED`` > 0, as ``make run`` does on the embedded market, whose candles
  end in the past): market time starts at ``MARKET_REPLAY_FROM`` (default: three days before the
  newest crypto candle) when the process starts and runs ``speed`` times faster than the wall, never
  past the newest candle in the store. The market feed (:mod:`svc_api.market.feed`) appends candles
  up to :meth:`MarketClock.target`, the uncapped replay time, so market time runs on past the
  history exactly as fast as the feed brings candles in (``latest`` follows the store);
- stepped (tests): the service clock is a :class:`~svc_api.core.clock.ManualClock` set to a candle's
  close, so each step reveals exactly the candles the test names.

Example:
    >>> from svc_api.core.clock import ManualClock
    >>> wall = ManualClock(1_000)
    >>> replay = MarketClock(wall, speed=600.0, replay_from=500_000, latest=600_000)
    >>> replay.now()
    500000
    >>> wall.advance(6); replay.now()  # six seconds of wall time are an hour of market time
    503600
    >>> wall.advance(10_000); replay.now()  # never past the newest candle
    600000
    >>> MarketClock(wall).now() == wall.now()
    True
    >>> last_closed_open(3_600_000 * 5 + 10, 3_600_000)  # at 5:00:00.010 the 4:00 candle has closed
    14400000
"""

from __future__ import annotations

from typing import Any

from svc_api.core.clock import Clock

REPLAY_LEAD_SECONDS = 3 * 86_400
"""How far before the newest candle a replay starts when ``MARKET_REPLAY_FROM`` is not set."""


class MarketClock:
    """Market time in Unix seconds; see the module docstring."""

    def __init__(
        self, clock: Clock, *, speed: float = 0.0, replay_from: int | None = None, latest: int | None = None
    ) -> None:
        self.clock = clock
        self.speed = float(speed)
        self.replay_from = replay_from
        self.latest = latest
        self.started_at = clock.now()

    @property
    def replaying(self) -> bool:
        """Whether market time is a replay of stored candles rather than the service clock."""
        return self.speed > 0 and self.replay_from is not None

    def target(self) -> int:
        """Where market time would be if every candle were already in (Unix seconds): the wall
        clock, or the replay time uncapped; the market feed brings the store up to it.

        Example:
            >>> from svc_api.core.clock import ManualClock
            >>> MarketClock(ManualClock(0), speed=60.0, replay_from=100, latest=100).target()
            100
        """
        wall = self.clock.now()
        if not self.replaying:
            return wall
        assert self.replay_from is not None
        return self.replay_from + int((wall - self.started_at) * self.speed)

    def now(self) -> int:
        """Market time now (Unix seconds)."""
        now = self.target()
        if not self.replaying:
            return now
        return now if self.latest is None else min(now, self.latest)


def horizon(services: Any, wall_now: int) -> int:
    """How far market time may reach (Unix seconds): the wall clock, or in a replay whichever of the
    wall and the replay's time is later (a replay of the embedded market at 600x passes the wall
    clock after a while, and its candles, trend signals and live signals go on).

    Example:
        >>> from types import SimpleNamespace
        >>> from svc_api.core.clock import ManualClock
        >>> settings = SimpleNamespace(market_replay_speed=0.0, market_replay_from=None)
        >>> horizon(SimpleNamespace(settings=settings, clock=ManualClock(42)), 100)
        100
    """
    if services.settings.market_replay_speed <= 0:
        return wall_now
    clock = getattr(services, "market_clock", None)
    return wall_now if clock is None else max(wall_now, clock.target())


def last_closed_open(now_ms: int, tf_ms: int) -> int:
    """The open time (ms) of the newest candle of a ``tf_ms`` grid that has closed at ``now_ms``."""
    return (now_ms // tf_ms) * tf_ms - tf_ms


def newest_close(catalog: Any) -> int | None:
    """The close (Unix seconds) of the newest crypto candle in the store (None when it has none).

    Example:
        >>> import tempfile
        >>> from svc_engine.data import Catalog, DataStore
        >>> newest_close(Catalog(DataStore(tempfile.mkdtemp()))) is None
        True
    """
    from svc_engine.data import timeframe_ms
    from svc_engine.instruments import is_crypto_market

    closes = [
        int(r["last_ts"]) + timeframe_ms(r["timeframe"]) // 1000
        for r in catalog.entries().iter_rows(named=True)
        if is_crypto_market(r["market"])
    ]
    return max(closes) if closes else None


def market_clock_of(services: Any, newest_close: int | None) -> MarketClock:
    """The app's market clock (one per app, made on first use); ``newest_close`` is the close
    (Unix seconds) of the newest crypto candle in the store, used by a replay.

    Example:
        >>> from types import SimpleNamespace
        >>> from svc_api.core.clock import ManualClock
        >>> settings = SimpleNamespace(market_replay_speed=0.0, market_replay_from=None)
        >>> services = SimpleNamespace(settings=settings, clock=ManualClock(42))
        >>> market_clock_of(services, None).now()
        42
    """
    made = getattr(services, "market_clock", None)
    if made is not None:
        if newest_close is not None and made.replaying:
            made.latest = max(made.latest or newest_close, newest_close)  # the feed brought candles
        return made
    settings = services.settings
    start = settings.market_replay_from
    if start is None and newest_close is not None:
        start = newest_close - REPLAY_LEAD_SECONDS
    speed = settings.market_replay_speed
    made = MarketClock(services.clock, speed=speed, replay_from=start, latest=newest_close)
    services.market_clock = made
    return made
