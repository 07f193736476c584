"""Candle-pattern kernels with TA-Lib's definitions (CDL* functions, default candle settings): each
returns TA-Lib's value per candle as float64: +100 bullish, -100 bearish, +-80 for the weaker form
of engulfing and harami, 0 for none (also during the warm-up, as TA-Lib reports).

"Long", "short", "near" are measured against the average of the 10 (5 for near/far) candles before
the candle looked at, as TA-Lib's candle settings say:

=================  ============  ======  ======
setting            measures      period  factor
=================  ============  ======  ======
body long          real body     10      1.0
body short         real body     10      1.0
body doji          high - low    10      0.1
shadow long        real body     0       1.0    (the candle's own body)
shadow very short  high - low    10      0.1
near               high - low    5       0.2
far                high - low    5       0.6
=================  ============  ======  ======

Window sums are computed afresh for each candle (TA-Lib keeps running sums), so a restart anywhere
gives the same answer; the two agree except where a body equals its threshold to the last bit.

Example:
    >>> import numpy as np
    >>> o, c = np.array([5.0, 10.0, 9.0]), np.array([5.0, 9.5, 10.5])
    >>> engulfing_nb(o, np.maximum(o, c), np.minimum(o, c), c).tolist()
    [0.0, 0.0, 100.0]
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svc_engine.scratch import zeros_nb

BODY, HIGHLOW, SHADOWS = 0, 1, 2


@njit(cache=True, nogil=True)
def _range(kind: int, o: np.ndarray, h: np.ndarray, lo: np.ndarray, c: np.ndarray, i: int) -> float:
    if kind == BODY:
        return abs(c[i] - o[i])
    if kind == HIGHLOW:
        return h[i] - lo[i]
    return (h[i] - max(o[i], c[i])) + (min(o[i], c[i]) - lo[i])


@njit(cache=True, nogil=True)
def _average(
    kind: int, period: int, factor: float, o: np.ndarray, h: np.ndarray, lo: np.ndarray, c: np.ndarray, i: int
) -> float:
    """TA-Lib's TA_CANDLEAVERAGE at candle ``i``: the mean range of the ``period`` candles before it
    (the candle's own range when ``period`` is 0), times ``factor``, halved for shadows."""
    if period == 0:
        value = _range(kind, o, h, lo, c, i)
    else:
        total = 0.0
        for j in range(i - period, i):
            total += _range(kind, o, h, lo, c, j)
        value = total / period
    return factor * value / (2.0 if kind == SHADOWS else 1.0)


@njit(cache=True, nogil=True)
def _color(o: np.ndarray, c: np.ndarray, i: int) -> int:
    return 1 if c[i] >= o[i] else -1


@njit(cache=True, nogil=True)
def _body(o: np.ndarray, c: np.ndarray, i: int) -> float:
    return abs(c[i] - o[i])


@njit(cache=True, nogil=True)
def _upper(o: np.ndarray, h: np.ndarray, c: np.ndarray, i: int) -> float:
    return h[i] - max(o[i], c[i])


@njit(cache=True, nogil=True)
def _lower(o: np.ndarray, lo: np.ndarray, c: np.ndarray, i: int) -> float:
    return min(o[i], c[i]) - lo[i]


@njit(cache=True, nogil=True)
def engulfing_nb(o: np.ndarray, h: np.ndarray, lo: np.ndarray, c: np.ndarray) -> np.ndarray:
    """TA-Lib CDLENGULFING: a body of the other color that engulfs the previous body (+-80 when one
    end only touches it).

    >>> o, c = np.array([5.0, 9.0, 10.5]), np.array([5.0, 10.0, 8.5])
    >>> engulfing_nb(o, np.maximum(o, c), np.minimum(o, c), c).tolist()
    [0.0, 0.0, -100.0]
    """
    out = zeros_nb(c.size)
    for i in range(2, c.size):  # TA-Lib's lookback is 2
        now, before = _color(o, c, i), _color(o, c, i - 1)
        bull = (
            now == 1
            and before == -1
            and ((c[i] >= o[i - 1] and o[i] < c[i - 1]) or (c[i] > o[i - 1] and o[i] <= c[i - 1]))
        )
        bear = (
            now == -1
            and before == 1
            and ((o[i] >= c[i - 1] and c[i] < o[i - 1]) or (o[i] > c[i - 1] and c[i] <= o[i - 1]))
        )
        if bull or bear:
            full = o[i] != c[i - 1] and c[i] != o[i - 1]
            out[i] = now * (100.0 if full else 80.0)
    return out


@njit(cache=True, nogil=True)
def doji_nb(o: np.ndarray, h: np.ndarray, lo: np.ndarray, c: np.ndarray) -> np.ndarray:
    """TA-Lib CDLDOJI: a body of at most 10% of the average high-low range of the 10 candles before.

    >>> o = np.full(11, 10.0); c = o + 1.0; c[10] = 10.05
    >>> doji_nb(o, c + 0.5, o - 0.5, c).tolist()[10]
    100.0
    """
    out = zeros_nb(c.size)
    for i in range(10, c.size):
        if _body(o, c, i) <= _average(HIGHLOW, 10, 0.1, o, h, lo, c, i):
            out[i] = 100.0
    return out


@njit(cache=True, nogil=True)
def _small_body_long_shadow(o, h, lo, c, i, upper_long):  # type: ignore[no-untyped-def]
    body = _body(o, c, i)
    short = body < _average(BODY, 10, 1.0, o, h, lo, c, i)
    long_shadow = _average(BODY, 0, 1.0, o, h, lo, c, i)
    very_short = _average(HIGHLOW, 10, 0.1, o, h, lo, c, i)
    if upper_long:
        return short and _upper(o, h, c, i) > long_shadow and _lower(o, lo, c, i) < very_short
    return short and _lower(o, lo, c, i) > long_shadow and _upper(o, h, c, i) < very_short


@njit(cache=True, nogil=True)
def hammer_nb(o: np.ndarray, h: np.ndarray, lo: np.ndarray, c: np.ndarray) -> np.ndarray:
    """TA-Lib CDLHAMMER (+100): a short body, a lower shadow longer than the body, almost no upper
    shadow, the body near (0.2 average range) or below the previous candle's low.

    >>> hammer_nb(*(np.ones(3) for _ in range(4))).tolist()
    [0.0, 0.0, 0.0]
    """
    out = zeros_nb(c.size)
    for i in range(11, c.size):
        near = _average(HIGHLOW, 5, 0.2, o, h, lo, c, i - 1)
        if _small_body_long_shadow(o, h, lo, c, i, False) and min(o[i], c[i]) <= lo[i - 1] + near:
            out[i] = 100.0
    return out


@njit(cache=True, nogil=True)
def inverted_hammer_nb(o: np.ndarray, h: np.ndarray, lo: np.ndarray, c: np.ndarray) -> np.ndarray:
    """TA-Lib CDLINVERTEDHAMMER (+100): a short body gapping below the previous body, a long upper
    shadow, almost no lower shadow.

    >>> inverted_hammer_nb(*(np.ones(3) for _ in range(4))).tolist()
    [0.0, 0.0, 0.0]
    """
    out = zeros_nb(c.size)
    for i in range(11, c.size):
        gap_down = max(o[i], c[i]) < min(o[i - 1], c[i - 1])
        if _small_body_long_shadow(o, h, lo, c, i, True) and gap_down:
            out[i] = 100.0
    return out


@njit(cache=True, nogil=True)
def shooting_star_nb(o: np.ndarray, h: np.ndarray, lo: np.ndarray, c: np.ndarray) -> np.ndarray:
    """TA-Lib CDLSHOOTINGSTAR (-100): a short body gapping above the previous body, a long upper
    shadow, almost no lower shadow.

    >>> shooting_star_nb(*(np.ones(3) for _ in range(4))).tolist()
    [0.0, 0.0, 0.0]
    """
    out = zeros_nb(c.size)
    for i in range(11, c.size):
        gap_up = min(o[i], c[i]) > max(o[i - 1], c[i - 1])
        if _small_body_long_shadow(o, h, lo, c, i, True) and gap_up:
            out[i] = -100.0
    return out


@njit(cache=True, nogil=True)
def harami_nb(o: np.ndarray, h: np.ndarray, lo: np.ndarray, c: np.ndarray) -> np.ndarray:
    """TA-Lib CDLHARAMI: a long body, then a short body inside it; bullish after a black candle
    (+100, +80 when an end touches), bearish after a white one.

    >>> harami_nb(*(np.ones(3) for _ in range(4))).tolist()
    [0.0, 0.0, 0.0]
    """
    out = zeros_nb(c.size)
    for i in range(11, c.size):
        if _body(o, c, i - 1) > _average(BODY, 10, 1.0, o, h, lo, c, i - 1) and _body(o, c, i) <= _average(
            BODY, 10, 1.0, o, h, lo, c, i
        ):
            top, bottom = max(o[i], c[i]), min(o[i], c[i])
            top1, bottom1 = max(o[i - 1], c[i - 1]), min(o[i - 1], c[i - 1])
            if top < top1 and bottom > bottom1:
                out[i] = -_color(o, c, i - 1) * 100.0
            elif top <= top1 and bottom >= bottom1:
                out[i] = -_color(o, c, i - 1) * 80.0
    return out


@njit(cache=True, nogil=True)
def star_nb(o: np.ndarray, h: np.ndarray, lo: np.ndarray, c: np.ndarray, morning: bool) -> np.ndarray:
    """TA-Lib CDLMORNINGSTAR (+100) / CDLEVENINGSTAR (-100), penetration 0.3: a long body, a short
    body gapping away from it, then a body longer than short of the other color closing back at
    least 30% into the first body.

    >>> star_nb(*(np.ones(3) for _ in range(4)), True).tolist()
    [0.0, 0.0, 0.0]
    """
    out = zeros_nb(c.size)
    first = -1 if morning else 1
    for i in range(12, c.size):
        if not (
            _body(o, c, i - 2) > _average(BODY, 10, 1.0, o, h, lo, c, i - 2)
            and _color(o, c, i - 2) == first
            and _body(o, c, i - 1) <= _average(BODY, 10, 1.0, o, h, lo, c, i - 1)
            and _body(o, c, i) > _average(BODY, 10, 1.0, o, h, lo, c, i)
            and _color(o, c, i) == -first
        ):
            continue
        if morning:
            gap = max(o[i - 1], c[i - 1]) < min(o[i - 2], c[i - 2])
            if gap and c[i] > c[i - 2] + _body(o, c, i - 2) * 0.3:
                out[i] = 100.0
        else:
            gap = min(o[i - 1], c[i - 1]) > max(o[i - 2], c[i - 2])
            if gap and c[i] < c[i - 2] - _body(o, c, i - 2) * 0.3:
                out[i] = -100.0
    return out


@njit(cache=True, nogil=True)
def three_soldiers_nb(o: np.ndarray, h: np.ndarray, lo: np.ndarray, c: np.ndarray) -> np.ndarray:
    """TA-Lib CDL3WHITESOLDIERS (+100): three white candles with rising closes and almost no upper
    shadows, each opening within or near the previous body, none far shorter than the one before,
    the last not short.

    >>> three_soldiers_nb(*(np.ones(3) for _ in range(4))).tolist()
    [0.0, 0.0, 0.0]
    """
    out = zeros_nb(c.size)
    for i in range(12, c.size):
        ok = True
        for j in (i - 2, i - 1, i):
            if _color(o, c, j) != 1 or _upper(o, h, c, j) >= _average(HIGHLOW, 10, 0.1, o, h, lo, c, j):
                ok = False
        if not ok:
            continue
        if (
            c[i] > c[i - 1]
            and c[i - 1] > c[i - 2]
            and o[i - 1] > o[i - 2]
            and o[i - 1] <= c[i - 2] + _average(HIGHLOW, 5, 0.2, o, h, lo, c, i - 2)
            and o[i] > o[i - 1]
            and o[i] <= c[i - 1] + _average(HIGHLOW, 5, 0.2, o, h, lo, c, i - 1)
            and _body(o, c, i - 1) > _body(o, c, i - 2) - _average(HIGHLOW, 5, 0.6, o, h, lo, c, i - 2)
            and _body(o, c, i) > _body(o, c, i - 1) - _average(HIGHLOW, 5, 0.6, o, h, lo, c, i - 1)
            and _body(o, c, i) > _average(BODY, 10, 1.0, o, h, lo, c, i)
        ):
            out[i] = 100.0
    return out


@njit(cache=True, nogil=True)
def three_crows_nb(o: np.ndarray, h: np.ndarray, lo: np.ndarray, c: np.ndarray) -> np.ndarray:
    """TA-Lib CDL3BLACKCROWS (-100): after a white candle, three black candles with falling closes
    and almost no lower shadows, each opening within the previous body, the first closing under the
    white candle's high.

    >>> three_crows_nb(*(np.ones(4) for _ in range(4))).tolist()
    [0.0, 0.0, 0.0, 0.0]
    """
    out = zeros_nb(c.size)
    for i in range(13, c.size):
        if _color(o, c, i - 3) != 1:
            continue
        ok = True
        for j in (i - 2, i - 1, i):
            if _color(o, c, j) != -1 or _lower(o, lo, c, j) >= _average(HIGHLOW, 10, 0.1, o, h, lo, c, j):
                ok = False
        if (
            ok
            and o[i - 1] < o[i - 2]
            and o[i - 1] > c[i - 2]
            and o[i] < o[i - 1]
            and o[i] > c[i - 1]
            and h[i - 3] > c[i - 2]
            and c[i - 2] > c[i - 1]
            and c[i - 1] > c[i]
        ):
            out[i] = -100.0
    return out
