"""The signal worker's pass over every watch at once, on the engine's batched live evaluator.

The watches of one timeframe and market type form a :class:`Book`: one
:func:`svc_engine.live.watchlist` of their programs on their coins, and one compact state record per
watch (``svc_engine.live.STATE_DTYPE``) that the process keeps between closes. At each close the book
is advanced by the new candles in one call (indicators computed once per coin, programs once over
their coins) and the events (orders placed, filled, expired, trades closed) become the same
:class:`~svc_api.signals.evaluate.Position` records the backtest of the watched range gives.

The store stays the truth: a book is rebuilt from it (each watch replayed from its anchor, the
candle of its newest order, to the candle it was last evaluated at) whenever its watches change, on
the first pass of a process, and after any write that did not go through. Writes go in batches of
``BATCH`` watches per transaction; each watch is first moved from the candle it was read at
(compare-and-set), so two workers never both write one evaluation, and a worker killed in the middle
of a batch wrote nothing of it: the next pass (or process) replays and writes it, once.

Example:
    >>> position_of(None, "placed", 0, "long", 1.0, 1.1, 0.9).status
    'waiting'
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from svc_api.market import service as market
from svc_api.signals import queries
from svc_api.signals.evaluate import Position
from svc_api.signals.partitions import partition_of
from svc_engine import live
from svc_engine.data import load_klines, timeframe_ms
from svc_engine.executors import Executor, LocalExecutor
from svc_engine.strategy import Strategy

logger = logging.getLogger("svc_api.signals")

BATCH = 500
"""Watches written per transaction."""

Member = tuple[str, str, str, int]  # svc_id, strategy name, coin, version
Record = Callable[[Any, Sequence[tuple[Any, Any, Position]]], int]
"""``record(conn, found)`` writes positions (watch, strategy, position) and what they cause."""


@dataclass
class Book:
    """The live evaluator's watchlist and state for the watches of one timeframe and market type."""

    members: tuple[Member, ...]
    watch: live.Watchlist
    state: np.ndarray
    open: dict[int, Position] = field(default_factory=dict)  # pair -> its position not closed yet
    coin_keys: tuple[tuple[str, str], ...] = ()  # the watchlist's coins as (market, symbol)


def position_of(
    old: Position | None,
    event: str,
    ms: int,
    side: str,
    limit: float,
    tp: float,
    sl: float,
    *,
    price: float | None = None,
    reason: str | None = None,
    return_pct: float | None = None,
) -> Position:
    """A pair's position after one event of the evaluator (see the module example)."""
    if event == "placed" or old is None:
        return Position(ms, side, limit, tp, sl, "waiting")
    if event == "filled":
        return replace(old, status="open", fill_ms=ms, entry_price=price)
    if event == "closed":
        return replace(
            old, status="closed", exit_ms=ms, exit_price=price, reason=reason, return_pct=return_pct
        )
    return replace(old, status="closed", reason="expired")  # expired, or no stake left to fill it


SHARDS = max(1, min(8, os.cpu_count() or 1))
"""Shards of a book's coins, advanced at once on the executor (a coin's pairs stay in one shard, so
its indicators are still computed once)."""

Key = tuple[str, str, int]  # timeframe, market type, shard


def run_pass(services: Any, pairs: Sequence[tuple[Any, Any]], now_ms: int, record: Record) -> tuple[int, int]:
    """Advance every watch to the newest closed candle; returns ``(evaluated, signals changed)``.

    The books' shards are evaluated together on the engine's executor (threads, or Ray tasks when
    ``RAY_ADDRESS`` is set): reading candles and writing stay in this thread, in shard order.
    ``record(conn, found)`` writes ``(watch, strategy, position)`` triples (new or changed positions)
    and what they cause, in the caller's transaction.
    """
    books: dict[Key, Book] = services.cached("signals:books", math.inf, dict)
    groups: dict[Key, list[tuple[Any, Any]]] = defaultdict(list)
    for watch, strat in pairs:
        shard = partition_of(watch.market, watch.symbol) % SHARDS
        groups[(watch.timeframe, strat.market_type, shard)].append((watch, strat))
    for stale in set(books) - set(groups):
        del books[stale]
    ready: list[tuple[Key, Book, list[tuple[Any, Any]], dict[tuple[str, str], int], dict[str, Any]]] = []
    with _dropped_on_failure(books, list(groups)):
        for key, members in groups.items():
            got = _prepare(services, books, key, members, now_ms, record)
            if got is not None:
                ready.append((key, got[0], members, got[1], got[2]))
        shards = [(book.watch, book.state, frames) for _, book, _, _, frames in ready]
        found = (
            live.advance_all(shards, executor_of(services))
            if len(shards) > 1
            else [live.advance(*shard) for shard in shards]
        )
        evaluated = changed = 0
        for (_, book, members, last, _), events in zip(ready, found, strict=True):
            touched = _apply(book, events)
            evaluated += sum(1 for w, _ in members if last[(w.market, w.symbol)] > w.evaluated_ms)
            changed += _write(services, book, members, last, touched, record)
    return evaluated, changed


@contextlib.contextmanager
def _dropped_on_failure(books: dict[Key, Book], keys: list[Key]) -> Iterator[None]:
    """A pass that fails drops the books it touched: they are rebuilt from the store next pass."""
    try:
        yield
    except Exception:
        for key in keys:
            books.pop(key, None)
        raise


def executor_of(services: Any) -> Executor:
    """The executor the signal pass evaluates its shards on: Ray when ``RAY_ADDRESS`` is set, else
    threads (one per shard), made once per process."""

    def make() -> Executor:
        address = services.settings.ray_address
        if address:
            from svc_engine.executors import RayExecutor

            return RayExecutor(address=address)
        return LocalExecutor(max_workers=SHARDS)

    return services.cached("signals:executor", math.inf, make)


def _prepare(
    services: Any,
    books: dict[Key, Book],
    key: Key,
    members: list[tuple[Any, Any]],
    now_ms: int,
    record: Record,
) -> tuple[Book, dict[tuple[str, str], int], dict[str, Any]] | None:
    """The book of a group, current with the store, with its coins' newest candles; None when no
    watch of it is due."""
    tf = timeframe_ms(key[0])
    catalog = market.catalog_of(services)
    last = {}
    for watch, _ in members:
        coin = (watch.market, watch.symbol)
        if coin not in last:
            newest = (
                catalog.store.newest_open(*coin, key[0])
                if key[0] in catalog.timeframes(watch.symbol, market=watch.market)
                else _resampled_newest(catalog, coin, key[0])
            )
            last[coin] = -1 if newest is None else min(market.last_closed_open(now_ms, tf), newest)
    if not any(last[(w.market, w.symbol)] > w.evaluated_ms for w, _ in members):
        return None
    book = books.get(key)
    if book is None or not _current(book, members):
        book = books[key] = _rebuild(services, key, members, record, book)
    return book, last, _frames(services, book, last)


def _current(book: Book, members: list[tuple[Any, Any]]) -> bool:
    keys = tuple((w.svc_id, w.strategy_name, w.coin, w.version) for w, _ in members)
    return keys == book.members and bool(
        np.array_equal(book.state["last_ms"], np.array([w.evaluated_ms for w, _ in members], np.int64))
    )


def _resampled_newest(catalog: Any, coin: tuple[str, str], timeframe: str) -> int | None:
    try:
        return int(catalog.data_range(coin[1], timeframe, market=coin[0])["last_ts"]) * 1000
    except (LookupError, ValueError):
        return None


def _watchlist(services: Any, key: Key, members: Sequence[tuple[Any, Any]]) -> tuple[Any, ...]:
    # Two watches of one program on one coin (two users, or one who published it) may stand at
    # different points (one started later), so each gets a copy of the program: the evaluator still
    # computes their indicators once per coin.
    index: dict[tuple[str, int], int] = {}
    copies: dict[tuple[str, str, str], int] = defaultdict(int)
    slots = []
    for w, strat in members:
        k = copies[(strat.program_json, w.market, w.symbol)]
        copies[(strat.program_json, w.market, w.symbol)] += 1
        slots.append(index.setdefault((strat.program_json, k), len(index)))
    programs = [compiled(text) for text, _ in index]
    coins = tuple(dict.fromkeys((w.market, w.symbol) for w, _ in members))
    names = {coin: f"{coin[0]}/{coin[1]}" for coin in coins}
    pairs = [(slot, names[(w.market, w.symbol)]) for slot, (w, _) in zip(slots, members, strict=True)]
    watch = live.watchlist(programs, pairs, key[0], market_type=key[1])
    spreads = np.array([market.coin_spread(services, w.market, w.symbol) / 200.0 for w, _ in members])
    return watch, spreads, coins


@functools.lru_cache(maxsize=4096)
def compiled(program_json: str) -> Strategy:
    """A stored program, compiled once per process (every evaluation of a version runs the same one)."""
    return Strategy.from_json(program_json)


def _rebuild(
    services: Any, key: Key, members: list[tuple[Any, Any]], record: Record, old: Book | None
) -> Book:
    """The book of ``members``: a watch the old book holds at the candle the store has it at keeps
    its state; every other is replayed from its anchor to the candle it was evaluated at, and the
    positions the replay finds are recorded again (a no-op when they were)."""
    watch, spreads, coins = _watchlist(services, key, members)
    state = live.new_state(watch, half_spread=spreads)
    book = Book(
        tuple((w.svc_id, w.strategy_name, w.coin, w.version) for w, _ in members),
        watch,
        state,
        coin_keys=coins,
    )
    kept = {m: i for i, m in enumerate(old.members)} if old is not None else {}
    starts: dict[tuple[int, int], list[int]] = defaultdict(list)
    for i, (w, _) in enumerate(members):
        j = kept.get(book.members[i])
        if old is not None and j is not None and int(old.state["last_ms"][j]) == int(w.evaluated_ms):
            state[i] = old.state[j]
            if j in old.open:
                book.open[i] = old.open[j]
            continue
        starts[(int(w.anchor_ms), int(w.evaluated_ms))].append(i)
    for (anchor, upto), rows in starts.items():
        sub, _, sub_coins = _watchlist(services, key, [members[i] for i in rows])
        frames = {
            f"{m}/{s}": _window(services, (m, s), key[0], min(anchor, upto), upto, live.candles_needed(sub))
            for m, s in sub_coins
        }
        sub_state, events = live.rebuild_state(sub, frames, anchor, half_spread=spreads[rows])
        state[rows] = sub_state
        events["pair"] = np.asarray(rows, np.int64)[events["pair"]]
        touched = _apply(book, events)
        _write_replayed(services, book, members, touched, record)
    return book


def _window(
    services: Any, coin: tuple[str, str], timeframe: str, first_ms: int, last_ms: int, warmup: int
) -> Any:
    store = market.catalog_of(services).store
    return load_klines(
        coin[1], timeframe, first_ms / 1000, last_ms / 1000, market=coin[0], warmup=warmup, store=store
    )


def _frames(services: Any, book: Book, last: dict[tuple[str, str], int]) -> dict[str, Any]:
    """Per coin, its candles from the least advanced watch's newest to the newest closed one, with
    the window the indicators need before them."""
    seen = {
        coin: int(book.state["last_ms"][book.watch.coin == k].min()) for k, coin in enumerate(book.coin_keys)
    }
    frames = {}
    needed: dict[int, int] = {}  # new candles -> window (a scan of every program's indicators)
    for k, coin in enumerate(book.coin_keys):
        new = max(0, (last[coin] - seen[coin]) // timeframe_ms(book.watch.timeframe))
        if new not in needed:
            needed[new] = live.candles_needed(book.watch, new)
        frames[book.watch.coins[k]] = _window(
            services, coin, book.watch.timeframe, seen[coin], max(last[coin], seen[coin]), needed[new]
        )
    return frames


def _apply(book: Book, events: np.ndarray) -> dict[int, dict[int, Position]]:
    """Positions of each pair the events changed (by signal time), the book's open ones updated."""
    touched: dict[int, dict[int, Position]] = defaultdict(dict)
    frame = live.events_frame(book.watch, events)
    for e in frame.iter_rows(named=True):
        pair = int(e["pair"])
        old = book.open.get(pair)
        p = position_of(
            old,
            e["event"],
            int(e["time"] if e["event"] != "placed" else e["signal_time"]),
            e["side"],
            float(e["limit_price"]),
            float(e["tp_price"]),
            float(e["sl_price"]),
            price=float(e["price"]),
            reason=e["reason"],
            return_pct=float(e["return_pct"]),
        )
        touched[pair][p.signal_ms] = p
        if p.status == "closed":
            book.open.pop(pair, None)
        else:
            book.open[pair] = p
    return touched


def _write(
    services: Any,
    book: Book,
    members: list[tuple[Any, Any]],
    last: dict[tuple[str, str], int],
    touched: dict[int, dict[int, Position]],
    record: Record,
) -> int:
    """One transaction per ``BATCH`` due watches: each moved from the candle it was read at, then
    their positions recorded together. When another worker moved a watch of a batch first, that
    batch writes nothing and the book is dropped: the next pass rebuilds it from the store."""
    now = services.clock.now()
    due = [i for i, (w, _) in enumerate(members) if last[(w.market, w.symbol)] > w.evaluated_ms]
    changed = 0
    for start in range(0, len(due), BATCH):
        try:
            changed += _write_batch(services, members, last, touched, record, due[start : start + BATCH], now)
        except queries.Raced:
            book.members = ()  # another worker moved or recorded some of them: rebuild from the store
            break
    return changed


def _write_batch(
    services: Any,
    members: list[tuple[Any, Any]],
    last: dict[tuple[str, str], int],
    touched: dict[int, dict[int, Position]],
    record: Record,
    chunk: list[int],
    now: int,
) -> int:
    with services.store.write() as conn:
        steps: dict[tuple[int, int], list[tuple[str, str, str]]] = defaultdict(list)
        for i in chunk:
            w, _ = members[i]
            steps[(int(w.evaluated_ms), last[(w.market, w.symbol)])].append(_key(w))
        moved = sum(
            queries.move_watches(conn, keys, seen_ms=seen, evaluated_ms=upto, now=now)
            for (seen, upto), keys in steps.items()
        )
        if moved != len(chunk):
            raise queries.Raced
        found: list[tuple[Any, Any, Position]] = []
        anchors: dict[tuple[str, str, str], int] = {}
        for i in chunk:
            if i not in touched:
                continue
            w, strat = members[i]
            newest = max(touched[i])  # the candle of the newest order: replays start there
            if newest > int(w.anchor_ms):
                anchors[_key(w)] = newest
            found += [(w, strat, p) for p in touched[i].values()]
        queries.set_anchors(conn, anchors)
        return record(conn, found)


def _key(w: Any) -> tuple[str, str, str]:
    return (w.svc_id, w.strategy_name, w.coin)


def _write_replayed(
    services: Any,
    book: Book,
    members: list[tuple[Any, Any]],
    touched: dict[int, dict[int, Position]],
    record: Record,
) -> None:
    if not touched:
        return
    try:
        with services.store.write() as conn:
            record(
                conn,
                [(members[i][0], members[i][1], p) for i, found in touched.items() for p in found.values()],
            )
    except queries.Raced:
        book.members = ()  # another worker recorded them first: rebuild from the store next pass
