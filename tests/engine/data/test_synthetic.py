"""The synthetic market: content, determinism, consistency of 1h with 1m, and its statistics."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from svc_engine.data.schema import validate_klines
from svc_engine.data.store import DataStore
from svc_engine.data.synthetic import END_MS, _aggregate_nb, _log_path_nb, _regimes_nb, generate_market
from svc_engine.instruments import precision, spread_pct_for, universe, volume_tier

HOUR, DAY = 3_600_000, 86_400_000
SMALL_CRYPTO = ["BTCUSDT", "ETHUSDT", "SOLUSDT", "DOTUSDT", "INJUSDT"]
SMALL_DAILY = [("us_stocks", "AAPL"), ("etfs", "SPY"), ("forex", "EURUSD"), ("commodities", "GOLD")]


def _generate(root: Path, seed: int) -> tuple[DataStore, dict[str, Any]]:
    store = DataStore(root)
    return store, generate_market(store, seed=seed, small=True)


@pytest.fixture(scope="module", params=[20261122, 7], ids=["default-seed", "seed-7"])
def small(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> DataStore:
    store, _ = _generate(tmp_path_factory.mktemp(f"small{request.param}"), request.param)
    return store


def _read(store: DataStore, market: str, symbol: str, timeframe: str) -> pl.DataFrame:
    return pl.read_parquet(store.path(market, symbol, timeframe))


def _hourly(store: DataStore) -> dict[str, pl.DataFrame]:
    return {s: _read(store, "crypto", s, "1h") for s in SMALL_CRYPTO}


def _log_returns(df: pl.DataFrame) -> np.ndarray:
    return np.diff(np.log(df["close"].to_numpy()))


def _autocorr(a: np.ndarray, lag: int = 1) -> float:
    a = a - a.mean()
    return float((a[:-lag] * a[lag:]).sum() / (a * a).sum())


# ---- content -------------------------------------------------------------------------------------


def test_summary_and_layout(tmp_path: Path) -> None:
    calls: list[tuple[int, int, str]] = []
    store = DataStore(tmp_path)
    summary = generate_market(store, small=True, progress=lambda *a: calls.append(a))
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.parquet"))
    assert files == sorted(
        [f"crypto/{s}/{tf}.parquet" for s in SMALL_CRYPTO for tf in ("1h", "1m")]
        + [f"{m}/{s}/1d.parquet" for m, s in SMALL_DAILY]
    )
    assert {k: summary[k] for k in ("instruments", "files", "candles", "seed", "small", "end_ts")} == {
        "instruments": 9,
        "files": 14,
        "candles": 5 * (1440 + 3 * 1440) + 4 * 521,
        "seed": 20261122,
        "small": True,
        "end_ts": 1_793_491_200,
    }
    assert summary["bytes"] == sum((tmp_path / f).stat().st_size for f in files)
    assert summary["seconds"] > 0 and summary["root"] == str(tmp_path)
    assert calls == [
        (i + 1, 9, label)
        for i, label in enumerate(
            [f"crypto/{s}" for s in SMALL_CRYPTO] + [f"{m}/{s}" for m, s in SMALL_DAILY]
        )
    ]


def test_time_ranges_end_at_the_fixed_date(small: DataStore) -> None:
    assert END_MS == 1_793_491_200_000  # 2026-11-01 00:00 UTC
    for symbol in SMALL_CRYPTO:
        hourly, minutes = _read(small, "crypto", symbol, "1h"), _read(small, "crypto", symbol, "1m")
        assert hourly["open_time"].to_list() == list(range(END_MS - 60 * DAY, END_MS, HOUR))
        assert minutes["open_time"].to_list() == list(range(END_MS - 3 * DAY, END_MS, 60_000))
    for market, symbol in SMALL_DAILY:
        t = _read(small, market, symbol, "1d")["open_time"].to_numpy()
        assert len(t) == 521 and t[-1] == END_MS - 2 * DAY  # Friday 2026-10-30
        assert set(((t // DAY + 3) % 7).tolist()) == {0, 1, 2, 3, 4}  # Monday..Friday only
        assert (t % DAY == 0).all() and t[0] >= END_MS - 730 * DAY


def test_every_series_is_valid_without_gaps_intraday(small: DataStore) -> None:
    for path in sorted(small.root.rglob("*.parquet")):
        timeframe = path.stem
        report = validate_klines(pl.read_parquet(path), source=str(path), timeframe=timeframe)
        assert report.off_grid == 0
        if timeframe != "1d":
            assert report.gaps == 0, path
        else:
            assert report.gaps == 104, path  # the weekends of two years


def test_prices_sit_on_the_tick_and_end_at_realistic_levels(small: DataStore) -> None:
    last = {s: _read(small, "crypto", s, "1h")["close"][-1] for s in SMALL_CRYPTO}
    assert last == {"BTCUSDT": 92000.0, "ETHUSDT": 3400.0, "SOLUSDT": 180.0, "DOTUSDT": 5.2, "INJUSDT": 21.0}
    for symbol in SMALL_CRYPTO:
        digits = precision("crypto", symbol).price_precision
        prices = _read(small, "crypto", symbol, "1m").select("open", "high", "low", "close").to_numpy()
        assert np.array_equal(prices, np.round(prices, digits)), symbol
    eurusd = _read(small, "forex", "EURUSD", "1d")["close"]
    assert eurusd.min() > 0.8 and eurusd.max() < 1.4 and eurusd[-1] == 1.08


def test_volumes_spread_the_coins_across_every_tier(small: DataStore) -> None:
    spreads = {s: spread_pct_for("crypto", df, "1h") for s, df in _hourly(small).items()}
    assert spreads == {"BTCUSDT": 0.02, "ETHUSDT": 0.02, "SOLUSDT": 0.05, "DOTUSDT": 0.10, "INJUSDT": 0.20}
    assert spread_pct_for("us_stocks", _read(small, "us_stocks", "AAPL", "1d"), "1d") == 0.10
    aapl = _read(small, "us_stocks", "AAPL", "1d")
    shares = (aapl["volume"] * aapl["close"]).mean()
    assert 9e9 < shares < 15e9  # about 12 billion dollars a day


# ---- determinism ---------------------------------------------------------------------------------


def test_same_seed_gives_byte_identical_files(tmp_path: Path) -> None:
    a, _ = _generate(tmp_path / "a", 20261122)
    b, _ = _generate(tmp_path / "b", 20261122)
    files = sorted(p.relative_to(a.root) for p in a.root.rglob("*.parquet"))
    assert len(files) == 14
    for f in files:
        assert (a.root / f).read_bytes() == (b.root / f).read_bytes(), f
        assert pl.read_parquet(a.root / f).equals(pl.read_parquet(b.root / f))


def test_another_seed_gives_other_prices(tmp_path: Path) -> None:
    a, _ = _generate(tmp_path / "a", 1)
    b, _ = _generate(tmp_path / "b", 2)
    for market, symbol, tf in [
        ("crypto", "BTCUSDT", "1m"),
        ("crypto", "ETHUSDT", "1h"),
        ("forex", "EURUSD", "1d"),
    ]:
        ca, cb = _read(a, market, symbol, tf)["close"], _read(b, market, symbol, tf)["close"]
        assert (ca != cb).mean() > 0.95, symbol


def test_regenerating_replaces_the_series(tmp_path: Path) -> None:
    store, first = _generate(tmp_path, 3)
    before = _read(store, "crypto", "BTCUSDT", "1h")
    again = generate_market(store, seed=3, small=True)
    assert again["candles"] == first["candles"]
    assert _read(store, "crypto", "BTCUSDT", "1h").equals(before)


def test_default_store_is_the_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATA_DIR", str(tmp_path))
    assert generate_market(small=True)["root"] == str(tmp_path)
    assert (tmp_path / "crypto" / "BTCUSDT" / "1m.parquet").exists()


@pytest.mark.parametrize("seed", [-1, 1.5, "42", True])
def test_bad_seed_is_refused(seed: object, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        generate_market(DataStore(tmp_path), seed=seed, small=True)  # type: ignore[arg-type]


# ---- consistency with the finer path -------------------------------------------------------------


def test_hourly_bars_are_the_aggregation_of_the_minutes(small: DataStore) -> None:
    for symbol in SMALL_CRYPTO:
        digits = precision("crypto", symbol).quantity_precision
        minutes = _read(small, "crypto", symbol, "1m")
        aggregated = minutes.group_by(pl.col("open_time") // HOUR * HOUR, maintain_order=True).agg(
            pl.col("open").first(),
            pl.col("high").max(),
            pl.col("low").min(),
            pl.col("close").last(),
            pl.col("volume").sum().round(digits),
        )
        hourly = _read(small, "crypto", symbol, "1h").filter(pl.col("open_time") >= minutes["open_time"][0])
        assert hourly.height == 72
        assert hourly.equals(aggregated), symbol


def test_minute_bars_join_without_gaps(small: DataStore) -> None:
    minutes = _read(small, "crypto", "BTCUSDT", "1m")
    assert minutes["open"][1:].equals(minutes["close"][:-1], check_names=False)
    wick = (minutes["high"] - minutes["low"]) / minutes["close"]
    assert 0.0005 < wick.mean() < 0.003  # a BTC minute spans about 0.1 %


# ---- statistics ----------------------------------------------------------------------------------


def test_fat_tails(small: DataStore) -> None:
    pooled = np.concatenate([(r := _log_returns(df)) / r.std() for df in _hourly(small).values()])
    kurtosis = float((pooled**4).mean() / (pooled**2).mean() ** 2)
    assert kurtosis > 4.0, kurtosis  # a normal distribution has 3


def test_volatility_clustering(small: DataStore) -> None:
    lag1 = [_autocorr(np.abs(_log_returns(df))) for df in _hourly(small).values()]
    raw = [_autocorr(_log_returns(df)) for df in _hourly(small).values()]
    assert np.mean(lag1) > 0.1, lag1
    assert abs(np.mean(raw)) < 0.05, raw  # returns themselves stay nearly unpredictable


def test_coins_move_together(small: DataStore) -> None:
    daily = [
        np.diff(
            np.log(
                df.group_by(pl.col("open_time") // DAY, maintain_order=True)
                .agg(pl.col("close").last())["close"]
                .to_numpy()
            )
        )
        for df in _hourly(small).values()
    ]
    corr = np.corrcoef(np.stack(daily))
    n = corr.shape[0]
    average = (corr.sum() - n) / (n * (n - 1))
    assert average > 0.3, average


def test_intraday_volume_cycle(small: DataStore) -> None:
    for symbol, df in _hourly(small).items():
        by_hour = (
            df.group_by((pl.col("open_time") // HOUR) % 24)
            .agg((pl.col("volume") * pl.col("close")).mean().alias("q"))
            .sort("open_time")
        )
        q = by_hour["q"].to_numpy()
        assert q.max() / q.min() > 1.6, symbol
        assert 13 <= int(np.argmax(q)) <= 17 and (int(np.argmin(q)) <= 5 or int(np.argmin(q)) >= 23), symbol


def test_regimes_trend_and_range_with_the_designed_durations() -> None:
    states = _regimes_nb(np.random.default_rng(0).random(2_000_000), 0.997, 0.996, 0.3)
    changes = np.flatnonzero(np.diff(states)) + 1
    runs = np.diff(np.r_[0, changes, states.size])
    kinds = states[np.r_[0, changes]]
    assert set(np.unique(states).tolist()) == {-1, 0, 1}
    assert np.mean(runs[kinds == 0]) == pytest.approx(1 / 0.003, rel=0.1)
    assert np.mean(runs[kinds != 0]) == pytest.approx(1 / 0.004, rel=0.1)
    assert np.mean(states == 1) == pytest.approx(np.mean(states == -1), abs=0.05)


# ---- the full market -----------------------------------------------------------------------------


@pytest.mark.slow
def test_full_market_content(tmp_path: Path) -> None:
    summary = generate_market(DataStore(tmp_path))
    rows = {
        p.relative_to(tmp_path).as_posix(): pl.scan_parquet(p).select(pl.len()).collect().item()
        for p in tmp_path.rglob("*.parquet")
    }
    crypto = [i.symbol for i in universe("crypto")]
    daily = [(i.market, i.symbol) for i in universe() if i.market != "crypto"]
    assert len(crypto) >= 20 and len(daily) == 14
    expected = {
        **{f"crypto/{s}/1h.parquet": 730 * 24 for s in crypto},
        **{f"crypto/{s}/1m.parquet": 30 * 1440 for s in crypto},
        **{f"{m}/{s}/1d.parquet": 2609 for m, s in daily},
    }
    assert rows == expected
    assert summary["candles"] == sum(expected.values()) and summary["files"] == 62
    assert summary["bytes"] < 1 << 30
    tiers = Counter(volume_tier(_avg_quote(tmp_path / f"crypto/{s}/1h.parquet")).name for s in crypto)
    assert tiers == {"high": 2, "mid": 9, "low": 10, "micro": 3}


def _avg_quote(path: Path) -> float:
    df = pl.read_parquet(path)
    return float(
        df.group_by(pl.col("open_time") // DAY)
        .agg((pl.col("volume") * pl.col("close")).sum())["volume"]
        .mean()
    )


# ---- the kernels on hand-computed cases -------------------------------------------------------------


def _path(
    z: np.ndarray,
    regime: np.ndarray,
    *,
    steps: int = 4,
    sigma: float = 0.01,
    alpha: float = 0.0,
    beta: float = 0.0,
    trend: float = 0.5,
    kappa: float = 0.25,
) -> tuple[np.ndarray, np.ndarray]:
    return _log_path_nb(z, np.ones(1), steps, sigma, regime.astype(np.int8), trend, kappa, alpha, beta)


def test_trend_regime_drifts_by_its_strength() -> None:
    x, sd = _path(np.zeros(12), np.array([1, 1, -1]))
    per_step = 0.5 * 0.01 / 2.0  # trend * sigma / sqrt(steps)
    assert np.allclose(x[[4, 8, 12]], [4 * per_step, 8 * per_step, 4 * per_step])
    assert np.allclose(sd, 0.01)


def test_range_regime_pulls_back_to_where_it_began() -> None:
    z = np.zeros(16)
    z[0] = 100.0  # a 1.0 jump in the first step of a ranging stretch
    x, _ = _path(z, np.zeros(4))
    assert np.allclose(x[[4, 8, 12, 16]], [1.0, 0.75, 0.5625, 0.421875])  # (1 - kappa) per bar


def test_garch_variance_rises_after_a_shock_and_decays() -> None:
    z = np.zeros(20)
    z[1] = 4.0
    _, sd = _path(z, np.zeros(5), alpha=0.1, beta=0.8)
    per_bar = sd[::4] / 0.01
    h1 = 0.1 + 0.1 * 4.0 + 0.8  # omega + alpha * (4 / sqrt(4))**2 + beta
    assert per_bar[0] == 1.0 and per_bar[1] == pytest.approx(np.sqrt(h1))
    assert per_bar[2] == pytest.approx(np.sqrt(0.1 + 0.8 * h1))
    assert per_bar[1] > per_bar[2] > per_bar[3] > per_bar[4]  # back towards omega / (1 - beta) without shocks


def test_aggregate_skips_the_overnight_step() -> None:
    o = np.array([10.0, 11.0, 12.0, 13.0, 14.0, 15.0])
    hi, lo, c = o + 0.5, o - 0.5, o + 0.25
    v = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    bars = _aggregate_nb(o, hi, lo, c, v, 3, 1)
    assert bars.tolist() == [[11.0, 14.0], [12.5, 15.5], [10.5, 13.5], [12.25, 15.25], [5.0, 11.0]]
    assert _aggregate_nb(o, hi, lo, c, v, 3, 0)[:, 0].tolist() == [10.0, 12.5, 9.5, 12.25, 6.0]
