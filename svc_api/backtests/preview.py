"""Before launching: the cost and duration of a job, the data an instrument has, its timeframes.

Nothing here charges or writes; each function reads the catalog of the app's job runner and, where
the strategy matters, the caller's strategy and balance.

Example:
    >>> can_afford(5, 4), can_afford(3.5, 4)
    (True, False)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from svc_api.backtests import pricing
from svc_api.backtests.instruments import instrument_fields, instrument_of, instruments_of, market_of
from svc_api.backtests.jobs import JobRunner
from svc_api.backtests.launch import size_job, strategy_and_balance
from svc_api.core.errors import Invalid
from svc_api.core.store import Store
from svc_api.credits import service as credits
from svc_engine.data import DataNotFoundError
from svc_engine.data.derived import source_timeframe
from svc_engine.data.schema import TIMEFRAMES


def can_afford(balance: Any, cost: Any) -> bool:
    """Whether a balance covers a cost (both in credits, compared exactly); see the module example."""
    return credits.to_units(balance) >= credits.to_units(cost)


def estimate(
    store: Store,
    runner: JobRunner,
    svc_id: str,
    coins: list[str],
    metadata: Mapping[str, str],
    strategy_name: Any,
    *,
    timeframe: str,
    start_ts: float | None,
    end_ts: float | None,
) -> dict[str, Any]:
    """The ``estimate`` reply: mode, candles, cost, duration and chunks of the job, and the balance
    (``strategy_name`` as sent: it is checked once the coins are found).

    Example:
        >>> from types import SimpleNamespace
        >>> from svc_engine.data import Catalog, DataStore
        >>> runner = SimpleNamespace(catalog=lambda: Catalog(DataStore("/nonexistent")))
        >>> estimate(None, runner, "AB12CD", ["BTC", "BTCUSDT"], {}, "s", timeframe="1h", start_ts=None,
        ...          end_ts=None)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: no data for BTC (BTCUSDT) in market crypto
    """
    found = instruments_of(runner.catalog(), coins, metadata)
    _, record, balance = strategy_and_balance(store, svc_id, strategy_name)
    sized = size_job(
        "estimate",
        record.compiled(),
        [i.symbol for i in found],
        timeframe,
        start_ts,
        end_ts,
        market=market_of(found),
        catalog=runner.catalog(),
        workers=runner.workers(),
    )
    out = {
        "action": "estimate",
        "mode": sized["mode"],
        "total_candles": sized["total_candles"],
        "estimated_cost_credits": sized["cost_credits"],
        "estimated_duration_seconds": sized["estimated_duration_seconds"],
        "chunks": sized["chunks"],
        "current_credits": balance,
        "can_afford": can_afford(balance, sized["cost_credits"]),
        "coins": [i.display for i in found],
        "symbols": [i.symbol for i in found],
        "timeframe": timeframe,
    }
    if sized["mode"] == "range":
        out |= {"start_ts": sized["start_ts"], "end_ts": sized["end_ts"]}
    return out


def info(
    store: Store,
    runner: JobRunner,
    svc_id: str,
    named: tuple[str | None, str | None, Mapping[str, str]],
    strategy_name: Any,
    *,
    timeframe: str,
) -> dict[str, Any]:
    """The ``info`` reply: the instrument (``named``: the coin, symbol and metadata sent), its data
    range, the strategy and a full-range price.

    Example:
        >>> from types import SimpleNamespace
        >>> from svc_engine.data import Catalog, DataStore
        >>> runner = SimpleNamespace(catalog=lambda: Catalog(DataStore("/nonexistent")))
        >>> info(None, runner, "AB12CD", ("ETH", None, {}), "s", timeframe="1h")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: no data for ETH (ETHUSDT) in market crypto
    """
    inst = instrument_of(runner.catalog(), *named)
    name, record, balance = strategy_and_balance(store, svc_id, strategy_name)
    try:
        data_range = runner.catalog().data_range(inst.symbol, timeframe, inst.market)
    except (DataNotFoundError, ValueError) as error:
        raise Invalid(str(error)) from None
    full = pricing.price("full_range", total_candles=int(data_range["total_candles"]), chunks=1)
    return {
        "action": "info",
        **instrument_fields(inst),
        "instrument": inst.metadata(),
        "timeframe": timeframe,
        "data_range": dict(data_range),
        "strategy": {"slug": name, "candle_count": int(record.compiled().candle_count)},
        "cost_preview": {"credits_if_full": full},
        "current_credits": balance,
    }


def list_timeframes(
    runner: JobRunner, named: tuple[str | None, str | None, Mapping[str, str]]
) -> dict[str, Any]:
    """The ``list_timeframes`` reply: each timeframe the instrument has, stored or derived.

    Example:
        >>> from types import SimpleNamespace
        >>> from svc_engine.data import Catalog, DataStore
        >>> runner = SimpleNamespace(catalog=lambda: Catalog(DataStore("/nonexistent")))
        >>> list_timeframes(runner, ("ETH", None, {}))
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: no data for ETH (ETHUSDT) in market crypto
    """
    inst = instrument_of(runner.catalog(), *named)
    store = runner.datastore
    out = []
    for timeframe in TIMEFRAMES:
        try:
            source = source_timeframe(store, inst.market, inst.symbol, timeframe)
        except (DataNotFoundError, ValueError):
            continue
        out.append(
            {
                "timeframe": timeframe,
                "suffix": f"-{timeframe}",
                "s3_key": store.key(inst.market, inst.symbol, source),
                "stored": source == timeframe,
            }
        )
    return {
        "action": "list_timeframes",
        **instrument_fields(inst),
        "instrument": inst.metadata(),
        "timeframes": out,
    }
