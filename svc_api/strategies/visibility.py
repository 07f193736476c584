"""Publishing: a strategy goes ``public`` on the coins whose latest full-range backtest made money.

A coin qualifies when the strategy's latest completed ``full_range`` backtest on the requested
timeframe has a positive return for it; ``BTC`` and ``BTCUSDT`` name one instrument. The returns
come from the backtests domain through :mod:`svc_api.strategies.hooks`.

Example:
    >>> eligibility(["BTC", "ETH", "SOL"], {"BTCUSDT": 4.0, "ETHUSDT": -1.0})
    (['BTC'], {'ETH': 'negative_return', 'SOL': 'no_backtest'})
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.core.errors import Invalid
from svc_api.credits import service as credits
from svc_api.strategies import hooks, queries
from svc_api.strategies.errors import NotEligible
from svc_api.strategies.fields import check_name, public_fields, visibility_of
from svc_api.strategies.limits import check_coin_count, lock_account
from svc_api.strategies.records import load_strategy, strategy_head
from svc_engine.instruments import UnknownInstrumentError, resolve


def set_visibility(conn: Connection, svc_id: str, params: Mapping[str, Any], *, now: int) -> dict[str, Any]:
    """Make a strategy ``public`` (coins with a positive latest ``full_range`` return) or ``private``.

    Raises:
        Invalid: missing or bad fields; no completed ``full_range`` backtest; :class:`NotEligible`
            when no requested coin has a positive return.
        Forbidden: more coins than the plan allows per strategy.
        StrategyNotActive: the strategy is not ``active``.

    Example:
        >>> with store.write() as conn:
        ...     set_visibility(conn, "NOPE00", {"strategy_name": "rsidip", "visibility": "open"}, now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: visibility must be 'public' or 'private', got 'open'
    """
    name = check_name(params.get("strategy_name"))
    if visibility_of(params) == "private":
        return _make_private(conn, svc_id, name, now)
    price, timeframe, coins = public_fields(params)
    lock_account(conn, svc_id)
    load_strategy(conn, svc_id, name)
    check_coin_count(conn, svc_id, len(coins), now=now)
    returns = hooks.full_range_returns(conn, svc_id, name, timeframe)
    if returns is None:
        raise Invalid(f"strategy {name!r} has no completed full_range backtest on {timeframe}; run one first")
    eligible, rejected = eligibility(coins, returns)
    if not eligible:
        raise NotEligible("no requested coin has a positive full_range return", rejected)
    queries.update_strategy(
        conn,
        svc_id,
        name,
        visibility="public",
        credits_per_signal=price,
        public_coins=json.dumps(eligible),
        public_timeframe=timeframe,
        updated_at=now,
    )
    return {
        "strategy_name": name,
        "visibility": "public",
        "credits_per_signal": credits.from_units(price),
        "timeframe": timeframe,
        "eligible_coins": eligible,
        "rejected_coins": rejected,
    }


def _make_private(conn: Connection, svc_id: str, name: str, now: int) -> dict[str, Any]:
    lock_account(conn, svc_id)
    strategy_head(conn, svc_id, name)
    queries.update_strategy(conn, svc_id, name, visibility="private", credits_per_signal=0, public_coins="[]")
    hooks.withdraw_listing(conn, svc_id, name, now)  # no longer public: its listing is unpublished
    return {"strategy_name": name, "visibility": "private"}


def eligibility(coins: list[str], returns: Mapping[str, float]) -> tuple[list[str], dict[str, str]]:
    """The coins with a positive return, and why each other coin was rejected; see the module example."""
    by_key = {coin_key(c): float(r) for c, r in returns.items()}
    eligible: list[str] = []
    rejected: dict[str, str] = {}
    for coin in coins:
        found = by_key.get(coin_key(coin))
        if found is None:
            rejected[coin] = "no_backtest"
        elif found > 0:
            eligible.append(coin)
        else:
            rejected[coin] = "negative_return"
    return eligible, rejected


def coin_key(coin: str) -> tuple[str, str]:
    """The instrument a coin names (``BTC`` and ``BTCUSDT`` are one), else the name itself.

    Example:
        >>> coin_key("BTC") == coin_key("BTCUSDT"), coin_key("NOSUCHCOIN")
        (True, ('', 'NOSUCHCOIN'))
    """
    try:
        found = resolve(coin)
    except (UnknownInstrumentError, ValueError):
        return ("", coin.strip().upper())
    return (found.market, found.symbol)
