"""The Binance kline source against a loopback fake of the public kline endpoints: paging, spot and
futures, closed candles only, gaps, repeats, dropped connections, timeouts, 5xx, 429/418 and pacing
by request weight (the injected sleep records every wait; the fake shares the injected clock)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from polars.testing import assert_frame_equal

from svc_engine.data import SCHEMA, validate_klines
from svc_engine.data.sources import BinanceKlines, BinanceMarkets, KlineSourceError
from tests.api.fakes.binance_klines import KlineFake, as_frame, make_candles, running_klines

H = 3_600_000
M = 60_000
T0 = 1_704_067_200_000  # 2024-01-01 00:00 UTC
N = 2_600
PAST = T0 + N * H  # the close of the last of the N candles


class Clock:
    """A clock that only moves when the source sleeps: every wait is recorded in ``sleeps``."""

    def __init__(self, now: int) -> None:
        self.now, self.sleeps = now, []

    def __call__(self) -> int:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += round(seconds * 1000)


@pytest.fixture
def clock() -> Clock:
    return Clock(PAST + 2 * M + 15_000)  # 15 s into a minute, the last candle closed long ago


@pytest.fixture
def fake(clock: Clock) -> Iterator[KlineFake]:
    with running_klines(clock) as served:
        served.add("BTCUSDT", "1h", make_candles(T0, N, H))
        served.add("BTCUSDT", "1h", make_candles(T0, N, H, base=300.0), futures=True)
        yield served


OPENED: list[httpx.Client] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while OPENED:
        OPENED.pop().close()


def source(fake: KlineFake, clock: Clock, **kwargs) -> BinanceKlines:
    kwargs.setdefault("client", httpx.Client(timeout=2.0))
    OPENED.append(kwargs["client"])
    return BinanceKlines(fake.url, sleep=clock.sleep, clock_ms=clock, **kwargs)


def kline_calls(fake: KlineFake) -> list[dict[str, str]]:
    return [params for path, params in fake.calls if path.endswith("/klines")]


def test_spot_pages_2600_candles_by_start_time_and_returns_the_fakes_candles_exactly(fake, clock):
    got = source(fake, clock).closed_klines("btcusdt", "1h", T0, PAST)
    assert got.schema == SCHEMA
    assert_frame_equal(got, as_frame(fake.held("BTCUSDT", "1h")))
    calls = kline_calls(fake)
    assert [int(c["startTime"]) for c in calls] == [T0, T0 + 1000 * H, T0 + 2000 * H]
    assert {(c["symbol"], c["interval"], c["limit"], c["endTime"]) for c in calls} == {
        ("BTCUSDT", "1h", "1000", str(PAST - H))
    }
    assert [p for p, _ in fake.calls] == ["/api/v3/klines"] * 3  # an end in the past: no clock asked
    assert clock.sleeps == []


def test_futures_use_the_fapi_paths_and_pages_of_1500(fake, clock):
    got = source(fake, clock, futures=True).closed_klines("BTCUSDT", "1h", T0 + 10 * H, PAST)
    assert_frame_equal(got, as_frame(fake.held("BTCUSDT", "1h", futures=True)[10:]))
    assert got["open"][0] == pytest.approx(300.0 + 10 * 0.25 + 10 * 0.01)
    assert [p for p, _ in fake.calls] == ["/fapi/v1/klines"] * 2
    assert [int(c["startTime"]) for c in kline_calls(fake)] == [T0 + 10 * H, T0 + 1510 * H]
    assert {c["limit"] for c in kline_calls(fake)} == {"1500"}


def test_the_still_open_current_candle_is_never_returned(fake, clock):
    clock.now = PAST + 30 * M  # the candle opening at PAST is half way through its hour
    fake.add("BTCUSDT", "1h", make_candles(PAST, 1, H, base=999.0))
    fake.serve_open_candle = True  # and the fake sends it whatever endTime says
    src = source(fake, clock)
    got = src.closed_klines("BTCUSDT", "1h", PAST - 5 * H, PAST + 10 * H)
    assert got.height == 5 and got["open_time"].dt.epoch("ms").max() == PAST - H
    assert [p for p, _ in fake.calls] == ["/api/v3/time", "/api/v3/klines"]
    assert kline_calls(fake)[0]["endTime"] == str(PAST + 30 * M - H)  # capped by the exchange's clock
    # An end inside the past is the source's own check: the fake's page still ends with the open candle.
    fake.calls.clear()
    got = src.closed_klines("BTCUSDT", "1h", PAST - 5 * H, PAST - 2 * H)
    assert got["open_time"].dt.epoch("ms").to_list() == [PAST - 5 * H, PAST - 4 * H, PAST - 3 * H]
    assert [p for p, _ in fake.calls] == ["/api/v3/klines"]


def test_a_candle_whose_exchange_close_time_is_past_the_end_is_dropped(fake, clock):
    rows = fake.held("BTCUSDT", "1h")
    rows[4] = [*rows[4][:6], PAST + 10 * H, *rows[4][7:]]  # the exchange says it closes later
    got = source(fake, clock).closed_klines("BTCUSDT", "1h", T0, T0 + 6 * H)
    assert got["open_time"].dt.epoch("ms").to_list() == [T0 + i * H for i in (0, 1, 2, 3, 5)]


def test_a_gap_the_exchange_has_stays_a_gap(fake, clock):
    fake.cut("BTCUSDT", "1h", T0 + 1500 * H, T0 + 1520 * H)
    got = source(fake, clock).closed_klines("BTCUSDT", "1h", T0, PAST)
    assert got.height == N - 20
    assert_frame_equal(got, as_frame(fake.held("BTCUSDT", "1h")))
    report = validate_klines(got, timeframe="1h")
    assert (report.gaps, report.missing_candles, report.max_gap_ms) == (1, 20, 21 * H)


def test_candles_repeated_across_pages_are_kept_once(fake, clock):
    fake.repeat_next(overlap=3)  # the first page starts before the asked start
    fake.repeat_next(overlap=7)  # and the second 7 candles early, repeating the end of the first
    got = source(fake, clock).closed_klines("BTCUSDT", "1h", T0 + 100 * H, PAST)
    assert_frame_equal(got, as_frame(fake.held("BTCUSDT", "1h")[100:]))
    assert [int(c["startTime"]) for c in kline_calls(fake)] == [
        T0 + 100 * H,
        T0 + 1097 * H,
        T0 + 2090 * H,
    ]


def test_two_different_candles_for_one_open_time_are_refused_naming_both(fake, clock):
    fake.repeat_next(overlap=2, conflicting=True, skip=1)
    rows = fake.held("BTCUSDT", "1h")
    with pytest.raises(ValueError, match="two different candles open at 2024-02-11T14:00:00") as err:
        source(fake, clock).closed_klines("BTCUSDT", "1h", T0, PAST)
    first, other = float(rows[998][4]), float(rows[998][4]) + 1
    assert f"c={first:g}" in str(err.value) and f"c={other:g}" in str(err.value)
    assert str(T0 + 998 * H) in str(err.value)


def test_dropped_connections_are_retried_with_growing_backoff(fake, clock):
    fake.drop_next(3)
    got = source(fake, clock).closed_klines("BTCUSDT", "1h", T0, PAST)
    assert_frame_equal(got, as_frame(fake.held("BTCUSDT", "1h")))
    assert clock.sleeps == [0.5, 1.0, 2.0]
    assert len(kline_calls(fake)) == 6


def test_a_timeout_is_retried(fake, clock):
    fake.slow_next(1.0)
    src = source(fake, clock, client=httpx.Client(timeout=0.2))
    got = src.closed_klines("BTCUSDT", "1h", T0, T0 + 3 * H)
    assert got.height == 3 and clock.sleeps == [0.5]


def test_5xx_answers_are_retried_then_raised_after_max_retries(fake, clock):
    fake.fail_next(2, status=503)
    assert source(fake, clock).closed_klines("BTCUSDT", "1h", T0, T0 + 2 * H).height == 2
    assert clock.sleeps == [0.5, 1.0]

    clock.sleeps.clear()
    fake.fail_next(4, status=502)
    with pytest.raises(KlineSourceError, match=r"no answer after 4 attempts \(last: 502") as err:
        source(fake, clock, max_retries=3).closed_klines("BTCUSDT", "1h", T0, T0 + 2 * H)
    assert err.value.status == 502
    assert clock.sleeps == [0.5, 1.0, 2.0]  # nothing waited after the last attempt


def test_backoff_is_bounded_at_30_seconds(fake, clock):
    fake.drop_next(8)
    got = source(fake, clock, max_retries=8).closed_klines("BTCUSDT", "1h", T0, T0 + H)
    assert got.height == 1
    assert clock.sleeps == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]


def test_dropped_connections_beyond_max_retries_raise(fake, clock):
    fake.drop_next(2)
    with pytest.raises(KlineSourceError, match=r"no answer after 2 attempts \(last: RemoteProtocolError"):
        source(fake, clock, max_retries=1).closed_klines("BTCUSDT", "1h", T0, T0 + H)


def test_429_waits_its_retry_after_and_tries_again(fake, clock):
    fake.rate_limit_next(retry_after=7)
    fake.rate_limit_next(retry_after=None)  # no header: the backoff of the second attempt
    got = source(fake, clock).closed_klines("BTCUSDT", "1h", T0, PAST)
    assert_frame_equal(got, as_frame(fake.held("BTCUSDT", "1h")))
    assert clock.sleeps == [7.0, 1.0]


def test_418_waits_a_short_ban_and_raises_on_a_long_one(fake, clock):
    fake.ban_next(retry_after=120)
    assert source(fake, clock).closed_klines("BTCUSDT", "1h", T0, T0 + 2 * H).height == 2
    assert clock.sleeps == [120.0]

    clock.sleeps.clear()
    fake.ban_next(retry_after=7200)
    with pytest.raises(KlineSourceError, match=r"banned by the exchange \(418\) for 7200 s") as err:
        source(fake, clock).closed_klines("BTCUSDT", "1h", T0, T0 + 2 * H)
    assert (err.value.status, err.value.code, clock.sleeps) == (418, -1003, [])


def test_weight_pacing_sleeps_to_the_next_minute_before_going_over_the_budget(fake, clock):
    # Pages of 1000 weigh 5 each: a budget of 12 takes two, the third waits the 45 s left of the minute.
    got = source(fake, clock, weight_budget=12).closed_klines("BTCUSDT", "1h", T0, PAST)
    assert got.height == N and clock.sleeps == [45.0]
    assert sum(fake.used.values()) == 15 and len(fake.used) == 2


def test_weight_pacing_trusts_the_exchanges_used_weight_header(fake, clock):
    fake.other_weight = 1193  # others behind this IP, every minute: after a page the header says 1198
    got = source(fake, clock).closed_klines("BTCUSDT", "1h", T0, PAST)
    assert got.height == N and clock.sleeps == [45.0, 60.0]  # one page a minute fits
    assert [p for p, _ in fake.calls] == ["/api/v3/klines"] * 3  # no request went over: no 429


def test_futures_weights_follow_their_own_table(fake, clock):
    # 1000 candles a page weigh 5 on futures (and 10 above 1000): a budget of 9 is one page a minute.
    src = source(fake, clock, futures=True, limit=1000, weight_budget=9)
    assert src.closed_klines("BTCUSDT", "1h", T0, PAST).height == N
    assert clock.sleeps == [45.0, 60.0]
    assert sorted(fake.used.values()) == [5, 5, 5]


def test_the_exchanges_own_limit_answers_429_and_is_waited_out(fake, clock):
    fake.weight_limit["spot"] = 12  # the exchange allows less than the source's budget
    got = source(fake, clock).closed_klines("BTCUSDT", "1h", T0, PAST)
    assert got.height == N and clock.sleeps == [45.0]  # its Retry-After: the rest of the minute


def test_an_unknown_symbol_is_raised_at_once_with_the_exchanges_code(fake, clock):
    with pytest.raises(KlineSourceError, match="400 -1121 Invalid symbol") as err:
        source(fake, clock).closed_klines("NOPEUSDT", "1h", T0, PAST)
    assert (err.value.status, err.value.code, len(fake.calls), clock.sleeps) == (400, -1121, 1, [])


def test_server_time_and_an_empty_range(fake, clock):
    src = source(fake, clock, futures=True)
    assert src.server_time_ms() == clock.now
    assert src.closed_klines("BTCUSDT", "1h", T0 + H, T0 + H + 1).height == 0  # nothing closes by then
    assert [p for p, _ in fake.calls] == ["/fapi/v1/time"]
    with pytest.raises(ValueError, match="unknown timeframe '2d'"):
        src.closed_klines("BTCUSDT", "2d", T0, PAST)
    with pytest.raises(ValueError, match=r"limit must be 1\.\.1000"):
        BinanceKlines(fake.url, limit=1500)


def test_binance_markets_serve_a_feed_by_store_market(fake, clock):
    feed = BinanceMarkets.default(fake.url, fake.url, sleep=clock.sleep, clock_ms=clock)
    assert [feed.serves(m, "BTCUSDT", "1h") for m in ("crypto", "crypto_futures", "forex")] == [
        True,
        True,
        False,
    ]
    spot = feed.closed_klines("crypto", "BTCUSDT", "1h", T0 + 2000 * H, PAST)
    futures = feed.closed_klines("crypto_futures", "BTCUSDT", "1h", T0 + 2000 * H, PAST)
    assert_frame_equal(spot, as_frame(fake.held("BTCUSDT", "1h")[2000:]))
    assert_frame_equal(futures, as_frame(fake.held("BTCUSDT", "1h", futures=True)[2000:]))
    assert [p for p, _ in fake.calls] == ["/api/v3/klines", "/fapi/v1/klines"]
    with pytest.raises(LookupError, match="no Binance source for market 'forex'"):
        feed.closed_klines("forex", "EURUSD", "1h", T0, PAST)
    feed.close()
