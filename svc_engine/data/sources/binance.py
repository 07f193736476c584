"""Closed klines from Binance's public REST market data: spot (``/api/v3/klines``) and USDT-M futures
(``/fapi/v1/klines``).

:meth:`BinanceKlines.closed_klines` pages forward by ``startTime`` and returns the candles in the
store's schema (:data:`svc_engine.data.schema.SCHEMA`), sorted, each once, and only closed ones: the
exchange's newest candle is usually still open, so a candle is kept only when both its open time plus
the timeframe and the exchange's ``closeTime`` are within the asked end (and the exchange's clock,
when the end reaches the present). A gap the exchange has stays a gap. Requests are paced by the
documented weights and retried (:mod:`svc_engine.data.sources.pacing`).

Example:
    >>> import httpx
    >>> H = 3_600_000
    >>> def answer(request):  # two closed hours, then the current one, still open
    ...     rows = [[t, "1.0", "2.0", "0.5", "1.5", "10.0", t + H - 1, "15", 3, "5", "7.5", "0"]
    ...             for t in (0, H, 2 * H)]
    ...     return httpx.Response(200, json=rows)
    >>> source = BinanceKlines("http://x", client=httpx.Client(transport=httpx.MockTransport(answer)),
    ...                        clock_ms=lambda: 10 * H)
    >>> frame = source.closed_klines("BTCUSDT", "1h", 0, 2 * H + 1)
    >>> frame.height, frame["close"].to_list()
    (2, [1.5, 1.5])
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

import httpx
import polars as pl

from svc_engine.data.schema import TIMEFRAMES, conform, timeframe_ms
from svc_engine.data.sources.pacing import (
    MAX_BAN_S,
    KlineSourceError,
    PacedClient,
    WeightBudget,
    wall_clock_ms,
)

SPOT_URL = "https://api.binance.com"
FUTURES_URL = "https://fapi.binance.com"
TIMEOUT_S = 10.0
NEAR_NOW_MS = 60_000
"""An end this close to the local clock (or later) is also capped by the exchange's own clock: the
local one may be seconds off, and a candle the exchange has not closed must never be returned."""


def spot_weight(limit: int) -> int:
    """Request weight of ``GET /api/v3/klines`` with ``limit`` (Binance's documented table).

    Example:
        >>> [spot_weight(n) for n in (1, 100, 101, 500, 501, 1000, 1001)]
        [1, 1, 2, 2, 5, 5, 10]
    """
    return 1 if limit <= 100 else 2 if limit <= 500 else 5 if limit <= 1000 else 10


def futures_weight(limit: int) -> int:
    """Request weight of ``GET /fapi/v1/klines`` with ``limit`` (Binance's documented table).

    Example:
        >>> [futures_weight(n) for n in (99, 100, 499, 500, 1000, 1001, 1500)]
        [1, 2, 2, 5, 5, 10, 10]
    """
    return 1 if limit < 100 else 2 if limit < 500 else 5 if limit <= 1000 else 10


@dataclass(frozen=True, slots=True)
class BinanceMarket:
    """One of Binance's kline APIs: its paths, largest page, default weight budget and weight table.

    Example:
        >>> FUTURES.klines_path, FUTURES.max_limit, FUTURES.weight(FUTURES.max_limit)
        ('/fapi/v1/klines', 1500, 10)
    """

    name: str
    default_url: str
    klines_path: str
    time_path: str
    max_limit: int
    budget: int
    weight: Callable[[int], int]


SPOT = BinanceMarket("spot", SPOT_URL, "/api/v3/klines", "/api/v3/time", 1000, 1200, spot_weight)
FUTURES = BinanceMarket(
    "usdt-m futures", FUTURES_URL, "/fapi/v1/klines", "/fapi/v1/time", 1500, 2400, futures_weight
)
TIME_WEIGHT = 1


class BinanceKlines:
    """Closed candles of Binance spot (default) or USDT-M futures (``futures=True``), paced and retried.

    ``base_url`` defaults to https://api.binance.com (spot) or https://fapi.binance.com (futures).
    ``weight_budget`` is the request weight allowed per minute (default 1200 spot, 2400 futures: the
    exchange's limit is per IP, so leave room for other users of the address); ``limit`` the candles
    asked per request (default the largest page, 1000 spot and 1500 futures). ``sleep`` and
    ``clock_ms`` are injectable so tests wait for nothing. A ``client`` passed in is not closed by
    :meth:`close`.

    Example:
        >>> source = BinanceKlines(futures=True)
        >>> source.base_url, source.limit, source.budget.limit
        ('https://fapi.binance.com', 1500, 2400)
        >>> source.close()
    """

    def __init__(
        self,
        base_url: str | None = None,
        *,
        futures: bool = False,
        client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock_ms: Callable[[], int] | None = None,
        max_retries: int = 5,
        weight_budget: int | None = None,
        limit: int | None = None,
        max_ban_s: float = MAX_BAN_S,
    ) -> None:
        self.market = FUTURES if futures else SPOT
        self.base_url = (base_url or self.market.default_url).rstrip("/")
        self.limit = self.market.max_limit if limit is None else limit
        if not 1 <= self.limit <= self.market.max_limit:
            raise ValueError(f"limit must be 1..{self.market.max_limit} on {self.market.name}, got {limit}")
        self.clock_ms = clock_ms or wall_clock_ms
        self.budget = WeightBudget(weight_budget or self.market.budget, clock_ms=self.clock_ms)
        self._owns_client = client is None
        self.client = client if client is not None else httpx.Client(timeout=TIMEOUT_S)
        self.http = PacedClient(
            self.client,
            self.base_url,
            budget=self.budget,
            sleep=sleep,
            max_retries=max_retries,
            max_ban_s=max_ban_s,
        )

    def close(self) -> None:
        """Close the HTTP client this source opened itself."""
        if self._owns_client:
            self.client.close()

    def __enter__(self) -> BinanceKlines:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def server_time_ms(self) -> int:
        """The exchange's clock, Unix milliseconds (``/api/v3/time`` or ``/fapi/v1/time``).

        Example:
            >>> import httpx
            >>> answer = lambda request: httpx.Response(200, json={"serverTime": 1_700_000_000_000})
            >>> http = httpx.Client(transport=httpx.MockTransport(answer))
            >>> BinanceKlines("http://x", client=http).server_time_ms()
            1700000000000
        """
        body = self.http.get(self.market.time_path, {}, weight=TIME_WEIGHT)
        found = body.get("serverTime") if isinstance(body, dict) else None
        if not isinstance(found, int):
            raise KlineSourceError(f"GET {self.market.time_path}: no serverTime in {body!r:.80}")
        return found

    def closed_klines(self, symbol: str, timeframe: str, start_ms: int, until_ms: int) -> pl.DataFrame:
        """Every candle opening at or after ``start_ms`` and closed by ``until_ms`` (both Unix ms).

        Candles come in the store's schema, sorted by ``open_time``, each once: a candle repeated
        with the same values is kept once, two different candles for one open time raise
        ``ValueError`` naming both. :class:`KlineSourceError` when the exchange gives no usable
        answer (an unknown symbol, a long ban, retries exhausted).

        Example:
            >>> import httpx
            >>> empty = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(200, json=[])))
            >>> BinanceKlines("http://x", client=empty, clock_ms=lambda: 10**13).closed_klines(
            ...     "ETHUSDT", "1d", 0, 86_400_000).shape
            (0, 6)
        """
        step = timeframe_ms(timeframe)
        symbol = symbol.upper()
        until = until_ms
        if until_ms > self.clock_ms() - NEAR_NOW_MS:
            until = min(until_ms, self.server_time_ms())
        kept: dict[int, tuple[float, ...]] = {}
        cursor, last_open = start_ms, until - step  # last_open: the latest open time closed by until
        while cursor <= last_open:
            page = self._page(symbol, timeframe, cursor, last_open)
            newest = None
            for raw in page:
                open_time, values, close_time = _parse(raw)
                newest = open_time if newest is None else max(newest, open_time)
                if open_time < start_ms or open_time + step > until or close_time >= until:
                    continue  # before the range, or not closed (the exchange's current candle)
                _keep(kept, open_time, values, symbol, timeframe)
            if len(page) < self.limit or newest is None:
                break  # a short page: the exchange holds nothing more up to last_open
            if newest < cursor:
                raise KlineSourceError(
                    f"{self.market.klines_path}: a page from startTime {cursor} ends at {newest}, "
                    "before it: the exchange does not page forward"
                )
            cursor = newest + step
        return _frame(kept)

    def _page(self, symbol: str, timeframe: str, start_ms: int, end_ms: int) -> list[Any]:
        params = {
            "symbol": symbol,
            "interval": timeframe,
            "startTime": start_ms,
            "endTime": end_ms,
            "limit": self.limit,
        }
        page = self.http.get(self.market.klines_path, params, weight=self.market.weight(self.limit))
        if not isinstance(page, list):
            raise KlineSourceError(f"GET {self.market.klines_path}: not a list of klines: {page!r:.80}")
        return page


def _parse(raw: Any) -> tuple[int, tuple[float, ...], int]:
    # Binance's array: open time, open, high, low, close, volume (decimal strings), close time, ...
    try:
        open_time, close_time = raw[0], raw[6]
        values = tuple(float(raw[i]) for i in range(1, 6))
    except (TypeError, IndexError, KeyError, ValueError):
        raise KlineSourceError(f"malformed kline {raw!r:.120}") from None
    if not isinstance(open_time, int) or not isinstance(close_time, int):
        raise KlineSourceError(f"malformed kline times {raw!r:.120}")
    return open_time, values, close_time


def _keep(
    kept: dict[int, tuple[float, ...]], open_time: int, values: tuple[float, ...], symbol: str, timeframe: str
) -> None:
    held = kept.setdefault(open_time, values)
    if held != values:
        when = datetime.fromtimestamp(open_time / 1000, UTC).isoformat()
        raise ValueError(
            f"{symbol} {timeframe}: two different candles open at {when} ({open_time}): "
            f"{_ohlcv(held)} and {_ohlcv(values)}"
        )


def _ohlcv(values: tuple[float, ...]) -> str:
    return "(" + ", ".join(f"{k}={v:g}" for k, v in zip(("o", "h", "l", "c", "v"), values, strict=True)) + ")"


def _frame(kept: dict[int, tuple[float, ...]]) -> pl.DataFrame:
    times = sorted(kept)
    columns: dict[str, Any] = {"open_time": pl.Series("open_time", times, dtype=pl.Int64)}
    for i, name in enumerate(("open", "high", "low", "close", "volume")):
        columns[name] = pl.Series(name, [kept[t][i] for t in times], dtype=pl.Float64)
    return conform(pl.DataFrame(columns), "binance klines")


class BinanceMarkets:
    """Binance as a feed's source: each store market served by one :class:`BinanceKlines`.

    ``serves(market, symbol, timeframe)`` and ``closed_klines(market, symbol, timeframe, start_ms,
    until_ms)`` are the feed's source protocol; :meth:`default` maps ``crypto`` to spot and
    ``crypto_futures`` to USDT-M futures. Whether Binance lists a symbol is learned by asking: an
    unknown one raises :class:`KlineSourceError` (400 -1121).

    Example:
        >>> feed = BinanceMarkets.default("http://spot.test", "http://futures.test")
        >>> feed.serves("crypto", "BTCUSDT", "1h"), feed.serves("crypto_futures", "BTCUSDT", "2d")
        (True, False)
        >>> feed.serves("forex", "EURUSD", "1h"), feed.sources["crypto_futures"].market.klines_path
        (False, '/fapi/v1/klines')
        >>> feed.close()
    """

    def __init__(self, sources: Mapping[str, BinanceKlines]) -> None:
        self.sources = dict(sources)

    @classmethod
    def default(
        cls, spot_url: str | None = None, futures_url: str | None = None, **options: Any
    ) -> BinanceMarkets:
        """``crypto`` from spot at ``spot_url``, ``crypto_futures`` from futures at ``futures_url``
        (Binance's hosts by default); ``options`` go to both :class:`BinanceKlines`."""
        return cls(
            {
                "crypto": BinanceKlines(spot_url, **options),
                "crypto_futures": BinanceKlines(futures_url, futures=True, **options),
            }
        )

    def serves(self, market: str, symbol: str, timeframe: str) -> bool:
        """Whether ``market`` has a source here and Binance has ``timeframe``."""
        return market in self.sources and timeframe in TIMEFRAMES

    def listed(self, stored: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
        """What a feed from Binance keeps: every crypto pair of ``datasets/universe.toml`` on the
        feed's crypto timeframes (stored or not yet), and the stored futures series on them.

        Example:
            >>> feed = BinanceMarkets.default("http://spot.test", "http://futures.test")
            >>> held = [("crypto_futures", "ETHUSDT", "1h"), ("crypto_futures", "ETHUSDT", "4h")]
            >>> listed = feed.listed(held)
            >>> listed[:2], len(listed)
            ([('crypto', 'AAVEUSDT', '1m'), ('crypto', 'AAVEUSDT', '1h')], 49)
            >>> listed[-1]
            ('crypto_futures', 'ETHUSDT', '1h')
            >>> feed.close()
        """
        from svc_engine.instruments.universe import DEFINITION, universe

        frames = DEFINITION["feed"]["crypto_timeframes"]
        pairs = sorted(i.symbol for i in universe() if i.market == "crypto")
        spot = [("crypto", s, tf) for s in pairs for tf in frames] if "crypto" in self.sources else []
        kept = [(m, s, tf) for m, s, tf in stored if m != "crypto" and tf in frames and self.serves(m, s, tf)]
        return spot + kept

    def closed_klines(
        self, market: str, symbol: str, timeframe: str, start_ms: int, until_ms: int
    ) -> pl.DataFrame:
        """:meth:`BinanceKlines.closed_klines` of the source of ``market``."""
        if market not in self.sources:
            raise LookupError(f"no Binance source for market {market!r}; known: {', '.join(self.sources)}")
        return self.sources[market].closed_klines(symbol, timeframe, start_ms, until_ms)

    def close(self) -> None:
        """Close every source's own HTTP client."""
        for source in self.sources.values():
            source.close()
