"""A slow, plainly written pure-Python reading of ``engine-semantics.md`` (sections 1-7).

It is written from the page alone, candle by candle, and exists only to check the numba engine
trade for trade. Nothing here is fast or clever on purpose.

Inputs are plain lists: candles as ``(open_time, open, high, low, close)`` tuples, signals as
dicts with ``open_time``, ``side``, ``limit_price`` (None allowed), ``tp_price``, ``sl_price`` (in
input order), and the settings as a dict of the API's names. ``half_spread`` is ``spread_pct / 200``.

Stop-and-reverse (docs/sim.md) extends the page: a signal dict may carry ``order`` (``"market"``:
fill at the next open) and ``reverse`` (True: an opposite signal that would place an order closes
this signal's trade at the next open, reason ``reverse``, and places its own order all the same);
with either key present an infinite take-profit or stop on its own side means none (docs/exits.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

DAY_MS = 86_400_000
EPS = 1e-12
DEFAULTS: dict[str, Any] = {
    "commission_pct": 0.2,
    "position_size_pct": 100.0,
    "min_candles_between_signals": 4,
    "max_wait_days": 30.0,
    "min_profit_pct": 0.1,
    "max_profit_pct": 30.0,
    "min_loss_pct": 0.1,
    "max_loss_pct": 50.0,
    "signal_filter_mode": "clamp",
    "initial_balance": 100.0,
    "leverage": 1.0,
}


@dataclass
class Sig:
    """A signal after mapping to its candle and the filter."""

    index: int  # candle index in the (range-cut) series
    side: str
    L: float
    TP: float
    SL: float
    tp: float = math.nan
    sl: float = math.nan
    fate: str | None = None  # None: passed the filter
    market: bool = False  # a market order: fills at the next open
    reverse: bool = False  # stop-and-reverse
    open_levels: bool = False  # an infinite level on its own side is none


@dataclass
class Order:
    sig: Sig
    e: int  # last live candle


@dataclass
class Position:
    sig: Sig
    i: int
    E: float  # raw fill price
    open_fill: bool
    stake: float
    Q: float | None = None
    exit: tuple[int, float, str] | None = None
    fine_fill: int | None = None  # intrabar detail: index of the fill among the fill candle's fine candles
    reverse_at: int | None = None  # stop-and-reverse: the candle at whose close an opposite signal came


@dataclass
class Trade:
    signal_time: int
    fill_time: int
    exit_time: int
    side: str
    entry_price: float
    exit_price: float
    reason: str
    return_frac: float
    pnl: float
    balance: float = math.nan
    coin: str = ""
    sl_dist: float = math.nan
    tp_dist: float = math.nan


@dataclass
class Outcome:
    trades: list[Trade] = field(default_factory=list)
    fates: list[str] = field(default_factory=list)
    equity: list[float] = field(default_factory=list)
    final_balance: float = 0.0
    max_drawdown_pct: float = 0.0
    max_open: int = 0


def cut_range(candles: list[tuple], start_ts: int | None, end_ts: int | None) -> list[tuple]:
    lo = -math.inf if start_ts is None else start_ts * 1000
    hi = math.inf if end_ts is None else end_ts * 1000
    return [k for k in candles if lo <= k[0] <= hi]


def map_signals(signals: list[dict], all_candles: list[tuple], candles: list[tuple]) -> list[Sig]:
    """Section 2: refuse times that are no candle, keep the range, sort stably, first per candle."""
    all_times = {k[0] for k in all_candles}
    index_of = {k[0]: n for n, k in enumerate(candles)}
    kept = []
    for s in signals:
        if s["open_time"] not in all_times:
            raise ValueError("signal time is no candle")
        if s["side"] not in ("long", "short"):
            raise ValueError("bad side")
        if s["open_time"] in index_of:
            kept.append(s)
    kept.sort(key=lambda s: s["open_time"])  # Python's sort is stable
    out, seen = [], set()
    for s in kept:
        n = index_of[s["open_time"]]
        L = candles[n][4] if s["limit_price"] is None else s["limit_price"]
        sig = Sig(n, s["side"], L, _num(s["tp_price"]), _num(s["sl_price"]))
        sig.market, sig.reverse = s.get("order") == "market", bool(s.get("reverse"))
        sig.open_levels = "order" in s or "reverse" in s
        if n in seen:
            sig.fate = "skipped_min_gap"
        seen.add(n)
        out.append(sig)
    return out


def _num(x: Any) -> float:
    return math.nan if x is None else float(x)


def apply_filter(sig: Sig, st: dict) -> None:
    if sig.fate is not None:
        return
    L, TP, SL = sig.L, sig.TP, sig.SL
    up = 1 if sig.side == "long" else -1
    no_tp = sig.open_levels and up * math.inf == TP
    no_sl = sig.open_levels and -up * math.inf == SL
    for x in (L, *(() if no_tp else (TP,)), *(() if no_sl else (SL,))):
        if not math.isfinite(x) or x <= 0:
            sig.fate = "skipped_invalid"
            return
    if sig.side == "long":
        tp, sl = (TP - L) / L, (L - SL) / L
    else:
        tp, sl = (L - TP) / L, (SL - L) / L
    tp, sl = (math.nan if no_tp else tp), (math.nan if no_sl else sl)
    if no_tp or no_sl:  # a missing level passes every test of its own
        _filter_open(sig, st, tp, sl)
        return
    if tp <= 0 or sl <= 0:
        sig.fate = "skipped_invalid"
        return
    min_p, max_p = st["min_profit_pct"] / 100, st["max_profit_pct"] / 100
    min_l, max_l = st["min_loss_pct"] / 100, st["max_loss_pct"] / 100
    above = lambda d, lim: d - lim > EPS  # noqa: E731
    below = lambda d, lim: lim - d > EPS  # noqa: E731
    if st["signal_filter_mode"] == "reject":
        for cond, name in (
            (below(tp, min_p), "skipped_tp_below_min"),
            (above(tp, max_p), "skipped_tp_above_max"),
            (below(sl, min_l), "skipped_sl_below_min"),
            (above(sl, max_l), "skipped_sl_above_max"),
        ):
            if cond:
                sig.fate = name
                return
    else:
        if below(tp, min_p):
            sig.fate = "skipped_tp_below_min"
            return
        up = 1 if sig.side == "long" else -1
        if above(tp, max_p):
            tp, sig.TP = max_p, L * (1 + max_p) if up == 1 else L * (1 - max_p)
        if above(sl, max_l):
            sl, sig.SL = max_l, L * (1 - max_l) if up == 1 else L * (1 + max_l)
        elif below(sl, min_l):
            sl, sig.SL = min_l, L * (1 - min_l) if up == 1 else L * (1 + min_l)
    sig.tp, sig.sl = tp, sl


def _filter_open(sig: Sig, st: dict, tp: float, sl: float) -> None:
    """``apply_filter`` of a signal with a missing take-profit or stop (NaN distance)."""
    if (not math.isnan(tp) and tp <= 0) or (not math.isnan(sl) and sl <= 0):
        sig.fate = "skipped_invalid"
        return
    min_p, max_p = st["min_profit_pct"] / 100, st["max_profit_pct"] / 100
    min_l, max_l = st["min_loss_pct"] / 100, st["max_loss_pct"] / 100
    up, L = (1 if sig.side == "long" else -1), sig.L
    checks = []
    if not math.isnan(tp):
        checks += [(min_p - tp > EPS, "skipped_tp_below_min"), (tp - max_p > EPS, "skipped_tp_above_max")]
    if not math.isnan(sl):
        checks += [(min_l - sl > EPS, "skipped_sl_below_min"), (sl - max_l > EPS, "skipped_sl_above_max")]
    if st["signal_filter_mode"] == "reject":
        for cond, name in checks:
            if cond:
                sig.fate = name
                return
    else:
        if not math.isnan(tp) and min_p - tp > EPS:
            sig.fate = "skipped_tp_below_min"
            return
        if not math.isnan(tp) and tp - max_p > EPS:
            tp, sig.TP = max_p, L * (1 + up * max_p)
        if not math.isnan(sl) and sl - max_l > EPS:
            sl, sig.SL = max_l, L * (1 - up * max_l)
        elif not math.isnan(sl) and min_l - sl > EPS:
            sl, sig.SL = min_l, L * (1 - up * min_l)
    sig.tp, sig.sl = tp, sl


def reverses(pos: Position | None, sig: Sig, k: int) -> bool:
    """Stop-and-reverse: ``sig`` (valid, past the minimum gap) at candle ``k`` closes ``pos``."""
    return pos is not None and pos.sig.reverse and sig.side != pos.sig.side and k >= pos.i


def last_live(candles: list[tuple], s: int, tf_ms: int, st: dict) -> int:
    deadline = candles[s][0] + tf_ms + round(st["max_wait_days"] * DAY_MS)
    e = s
    while e + 1 < len(candles) and candles[e + 1][0] < deadline:
        e += 1
    return e


def try_fill(candle: tuple, sig: Sig) -> tuple[float, bool] | None:
    _, o, h, lo, _ = candle
    if sig.market:  # only ever tried on the candle after its signal
        return o, True
    if sig.side == "long" and lo <= sig.L:
        return min(o, sig.L), o <= sig.L
    if sig.side == "short" and h >= sig.L:
        return max(o, sig.L), o >= sig.L
    return None


def check_exit(candle: tuple, p: Position, j: int) -> tuple[float, str] | None:
    """Rules 1-3 of section 4 on candle j (mirrored for a short)."""
    return rules(candle, p, j == p.i and not p.open_fill)


def stop_of(p: Position) -> tuple[float, str, str]:
    if p.Q is not None:
        return p.Q, "liquidation", "liquidation"
    return p.sig.SL, "sl", "sl_gap"


def rules(candle: tuple, p: Position, fill_candle_intrabar: bool) -> tuple[float, str] | None:
    _, o, h, lo, c = candle
    stop, stop_name, gap_name = stop_of(p)
    long = p.sig.side == "long"
    TP = p.sig.TP
    if not fill_candle_intrabar:
        if (long and o <= stop) or (not long and o >= stop):
            return o, gap_name
        if (long and o >= TP) or (not long and o <= TP):
            return o, "tp_gap"
    if (long and lo <= stop) or (not long and h >= stop):
        return stop, stop_name
    reached = (long and h >= TP) or (not long and lo <= TP)
    closed_beyond = (long and c >= TP) or (not long and c <= TP)
    if reached and (not fill_candle_intrabar or closed_beyond):
        return TP, "tp"
    return None


def check_exit_detail(candle: tuple, p: Position, j: int, inner: list[tuple]) -> tuple[float, str] | None:
    """Intrabar detail: the fill candle from the fine fill on, and a candle touching both levels,
    are replayed on the fine candles ``inner`` of candle j; otherwise the conservative rules."""
    if j == p.i and p.fine_fill is not None:
        for n in range(p.fine_fill, len(inner)):
            hit = rules(inner[n], p, n == p.fine_fill and not p.open_fill)
            if hit is not None:
                return hit
        return None
    stop = stop_of(p)[0]
    _, _, h, lo, _ = candle
    long = p.sig.side == "long"
    both = (lo <= stop and h >= p.sig.TP) if long else (h >= stop and lo <= p.sig.TP)
    if both and inner and not (j == p.i and not p.open_fill):
        for fine in inner:
            hit = rules(fine, p, False)
            if hit is not None:
                return hit
    return check_exit(candle, p, j)


def liquidation_level(sig: Sig, E: float, lev: float) -> float | None:
    """Section 4: ``Q`` at any leverage (1x: long 0, short ``2E``) where it lies between E and SL."""
    if sig.side == "long":
        q = E * (1 - 1 / lev)
        return q if q > sig.SL else None
    q = E * (1 + 1 / lev)
    return q if q < sig.SL else None


def buy(price: float, h: float) -> float:
    return price * (1 + h)


def sell(price: float, h: float) -> float:
    return price * (1 - h)


def trade_return(side: str, E_raw: float, X_raw: float, st: dict, h: float) -> float:
    """``max(leverage * r, -1)`` with executed prices."""
    c = st["commission_pct"] / 100
    if side == "long":
        E, X = buy(E_raw, h), sell(X_raw, h)
        r = X * (1 - c) / (E * (1 + c)) - 1
    else:
        E, X = sell(E_raw, h), buy(X_raw, h)
        r = (E * (1 - c) - X * (1 + c)) / E
    return max(st["leverage"] * r, -1.0)


def position_value(p: Position, close: float, st: dict, h: float) -> float:
    return max(0.0, p.stake * (1 + trade_return(p.sig.side, p.E, close, st, h)))


def make_trade(p: Position, candles: list[tuple], j: int, X: float, reason: str, st: dict, h: float) -> Trade:
    ret = -1.0 if reason == "liquidation" else trade_return(p.sig.side, p.E, X, st, h)
    long = p.sig.side == "long"
    return Trade(
        candles[p.sig.index][0],
        candles[p.i][0],
        candles[j][0],
        p.sig.side,
        buy(p.E, h) if long else sell(p.E, h),
        sell(X, h) if long else buy(X, h),
        reason,
        ret,
        p.stake * ret,
        sl_dist=p.sig.sl,
        tp_dist=p.sig.tp,
    )


def drawdown(equity: list[float], initial: float) -> float:
    peak, worst = initial, 0.0
    for v in equity:
        peak = max(peak, v)
        worst = max(worst, (peak - v) / peak * 100)
    return worst


# ----------------------------------------------------------------------------- single coin


def run_single(
    all_candles: list[tuple],
    signals: list[dict],
    settings: dict,
    *,
    tf_ms: int,
    half_spread: float,
    start_ts: int | None = None,
    end_ts: int | None = None,
    fine: list[tuple] | None = None,
) -> Outcome:
    st = DEFAULTS | settings
    candles = cut_range(all_candles, start_ts, end_ts)
    inner: list[list[tuple]] = [[] for _ in candles]
    if fine is not None:
        for n, k in enumerate(candles):
            inner[n] = [f for f in fine if k[0] <= f[0] < k[0] + tf_ms]
    sigs = map_signals(signals, all_candles, candles)
    for sig in sigs:
        apply_filter(sig, st)
    by_candle: dict[int, list[Sig]] = {}
    for sig in sigs:
        by_candle.setdefault(sig.index, []).append(sig)
    out = Outcome()
    balance = st["initial_balance"]
    order: Order | None = None
    pos: Position | None = None
    anchor: int | None = None
    last = len(candles) - 1
    for k, candle in enumerate(candles):
        if pos is not None and pos.reverse_at == k - 1:  # stop-and-reverse: out at this open first
            t = make_trade(pos, candles, k, candle[1], "reverse", st, half_spread)
            balance += t.pnl
            t.balance = balance
            out.trades.append(t)
            pos = None
        if order is not None and k > order.sig.index:
            filled = try_fill(candle, order.sig)
            if filled is not None:
                stake = st["position_size_pct"] / 100 * balance
                if stake <= 0:
                    order.sig.fate = "skipped_no_slot"
                else:
                    order.sig.fate = "traded"
                    E, open_fill = filled
                    fine_fill = None
                    for n, f in enumerate(inner[k]):
                        got = try_fill(f, order.sig)
                        if got is not None:
                            (E, open_fill), fine_fill = got, n
                            break
                    pos = Position(
                        order.sig, k, E, open_fill, stake, liquidation_level(order.sig, E, st["leverage"])
                    )
                    pos.fine_fill = fine_fill
                order = None
            elif k == order.e:
                order.sig.fate, order = "expired", None
        if pos is not None:
            hit = check_exit(candle, pos, k) if fine is None else check_exit_detail(candle, pos, k, inner[k])
            if hit is None and k == last:
                hit = (candle[4], "end")
            if hit is not None:
                t = make_trade(pos, candles, k, hit[0], hit[1], st, half_spread)
                balance += t.pnl
                t.balance = balance
                out.trades.append(t)
                pos = None
        for sig in by_candle.get(k, []):
            if sig.fate is not None:
                continue
            if anchor is not None and k - anchor < st["min_candles_between_signals"]:
                sig.fate = "skipped_min_gap"
            elif order is None and reverses(pos, sig, k):
                pos.reverse_at, anchor = k, k
                order = Order(sig, last_live(candles, k, tf_ms, st))
                if order.e == k:  # no live candle at all
                    sig.fate, order = "expired", None
            elif order is not None or pos is not None:
                sig.fate = "skipped_busy"
            else:
                anchor = k
                order = Order(sig, last_live(candles, k, tf_ms, st))
                if order.e == k:  # no live candle at all
                    sig.fate, order = "expired", None
        value = balance
        if pos is not None:
            value = balance - pos.stake + position_value(pos, candle[4], st, half_spread)
        out.equity.append(value)
    if order is not None:
        order.sig.fate = "expired"
    out.fates = [s.fate for s in sigs]
    out.final_balance = balance
    out.max_drawdown_pct = drawdown(out.equity, st["initial_balance"])
    return out


# ----------------------------------------------------------------------------- portfolio


@dataclass
class CoinState:
    name: str
    candles: list[tuple]
    sigs: list[Sig]
    h: float
    by_time: dict[int, int] = field(default_factory=dict)
    order: Order | None = None
    pos: Position | None = None
    anchor: int | None = None
    latest_close: float = math.nan


def run_portfolio(
    all_by_coin: dict[str, list[tuple]],
    signals_by_coin: dict[str, list[dict]],
    settings: dict,
    *,
    coins: list[str],
    divide: int,
    tf_ms: int,
    half_spread: dict[str, float],
    start_ts: int | None = None,
    end_ts: int | None = None,
) -> Outcome:
    st = DEFAULTS | settings
    states = []
    for name in coins:
        candles = cut_range(all_by_coin[name], start_ts, end_ts)
        sigs = map_signals(signals_by_coin.get(name, []), all_by_coin[name], candles)
        for sig in sigs:
            apply_filter(sig, st)
        cs = CoinState(name, candles, sigs, half_spread[name])
        cs.by_time = {k[0]: n for n, k in enumerate(candles)}
        states.append(cs)
    times = sorted({k[0] for cs in states for k in cs.candles})
    out = Outcome()
    cash = st["initial_balance"]

    def balance() -> float:
        return cash + sum(cs.pos.stake for cs in states if cs.pos is not None)

    def close(cs: CoinState, k: int, X: float, reason: str) -> None:
        nonlocal cash
        t = make_trade(cs.pos, cs.candles, k, X, reason, st, cs.h)
        t.coin = cs.name
        cash += cs.pos.stake + t.pnl
        cs.pos = None
        t.balance = balance()
        out.trades.append(t)

    def exit_now(cs: CoinState, k: int) -> tuple[float, str] | None:
        hit = check_exit(cs.candles[k], cs.pos, k)
        if hit is None and k == len(cs.candles) - 1:
            hit = (cs.candles[k][4], "end")
        return hit

    for T in times:
        here = [(cs, cs.by_time[T]) for cs in states if T in cs.by_time]
        for cs, k in here:  # exits and expiries of positions and orders from earlier candles
            cs.latest_close = cs.candles[k][4]
            if cs.pos is not None and cs.pos.reverse_at == k - 1:
                close(cs, k, cs.candles[k][1], "reverse")
            if cs.pos is not None:
                hit = exit_now(cs, k)
                if hit is not None:
                    close(cs, k, *hit)
            elif (
                cs.order is not None
                and k > cs.order.sig.index
                and try_fill(cs.candles[k], cs.order.sig) is None
            ) and k == cs.order.e:
                cs.order.sig.fate, cs.order = "expired", None
        for cs, k in here:  # fills, coin by coin in the order of coins
            if cs.order is None or k <= cs.order.sig.index:
                continue
            filled = try_fill(cs.candles[k], cs.order.sig)
            if filled is None:
                continue
            n_open = sum(1 for x in states if x.pos is not None)
            stake = min(balance() / divide, cash)
            sig = cs.order.sig
            cs.order = None
            if n_open >= divide or stake <= 0:
                sig.fate = "skipped_no_slot"
                continue
            sig.fate = "traded"
            E, open_fill = filled
            cs.pos = Position(sig, k, E, open_fill, stake, liquidation_level(sig, E, st["leverage"]))
            cash -= stake
            out.max_open = max(out.max_open, n_open + 1)
            hit = exit_now(cs, k)
            if hit is not None:
                close(cs, k, *hit)
        for cs, k in here:  # new signals: minimum gap, then busy
            for sig in [s for s in cs.sigs if s.index == k]:
                if sig.fate is not None:
                    continue
                if cs.anchor is not None and k - cs.anchor < st["min_candles_between_signals"]:
                    sig.fate = "skipped_min_gap"
                elif cs.order is None and reverses(cs.pos, sig, k):
                    cs.pos.reverse_at, cs.anchor = k, k
                    cs.order = Order(sig, last_live(cs.candles, k, tf_ms, st))
                    if cs.order.e == k:
                        sig.fate, cs.order = "expired", None
                elif cs.order is not None or cs.pos is not None:
                    sig.fate = "skipped_coin_busy"
                else:
                    cs.anchor = k
                    cs.order = Order(sig, last_live(cs.candles, k, tf_ms, st))
                    if cs.order.e == k:
                        sig.fate, cs.order = "expired", None
        value = cash
        for cs in states:
            if cs.pos is not None:
                value += position_value(cs.pos, cs.latest_close, st, cs.h)
        out.equity.append(value)
    for cs in states:
        if cs.order is not None:
            cs.order.sig.fate = "expired"
    out.fates = [s.fate for cs in states for s in cs.sigs]
    out.final_balance = cash
    out.max_drawdown_pct = drawdown(out.equity, st["initial_balance"])
    return out


def score(final_balance: float, max_dd: float) -> float:
    return final_balance * (1 - max_dd / 200)


def recommended_divide(
    all_by_coin: dict[str, list[tuple]],
    signals_by_coin: dict[str, list[dict]],
    settings: dict,
    *,
    coins: list[str],
    **kw: Any,
) -> tuple[int, int]:
    """(best divide, max_concurrent_signals) by running the sweep for each candidate."""
    best, best_score = None, None
    for d in [x for x in (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20) if x <= len(coins)]:
        o = run_portfolio(all_by_coin, signals_by_coin, settings, coins=coins, divide=d, **kw)
        sc = score(o.final_balance, o.max_drawdown_pct)
        if best is None or (sc > best_score and abs(sc - best_score) > 1e-12 * max(abs(sc), abs(best_score))):
            best, best_score = d, sc
    conc = run_portfolio(
        all_by_coin, signals_by_coin, settings, coins=coins, divide=len(coins), **kw
    ).max_open
    return best, conc
