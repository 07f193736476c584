"""Instruments: the universe, resolving, the precision manifest, formatting, tiers and spreads."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc_engine.instruments import (
    FALLBACK_TIER,
    MARKETS,
    Instrument,
    UnknownInstrumentError,
    avg_daily_quote_volume,
    display_symbol,
    format_price,
    format_quantity,
    instrument_for,
    manifest,
    precision,
    resolve,
    spread_pct_for,
    universe,
    volume_tier,
)

# ---- universe -------------------------------------------------------------------------------


def test_markets_and_asset_classes() -> None:
    assert dict(MARKETS) == {
        "crypto": "crypto",
        "us_stocks": "stock",
        "etfs": "etf",
        "forex": "forex",
        "commodities": "commodity",
    }


def test_universe_per_market() -> None:
    counts = {m: len(universe(m)) for m in MARKETS}
    assert counts == {"crypto": 24, "us_stocks": 6, "etfs": 2, "forex": 3, "commodities": 3}
    assert len(universe()) == 38
    assert [i.symbol for i in universe("forex")] == ["EURUSD", "GBPUSD", "USDJPY"]
    assert [i.symbol for i in universe("commodities")] == ["GOLD", "SILVER", "OIL"]
    assert [i.symbol for i in universe("us_stocks")] == ["AAPL", "MSFT", "AMZN", "GOOGL", "NVDA", "TSLA"]
    assert len({i.symbol for i in universe()}) == 38


def test_crypto_instruments_are_binance_usdt_pairs() -> None:
    for inst in universe("crypto"):
        assert inst.symbol == inst.display + "USDT"
        assert (inst.provider, inst.exchange, inst.quote, inst.asset_class) == (
            "binance",
            "binance",
            "USDT",
            "crypto",
        )


def test_daily_instruments_share_the_daily_provider() -> None:
    for inst in universe():
        if inst.market != "crypto":
            assert inst.display == inst.symbol
            assert inst.provider == inst.exchange == "svc-daily"
            assert inst.asset_class == MARKETS[inst.market]


def test_universe_unknown_market() -> None:
    with pytest.raises(UnknownInstrumentError, match="unknown market 'bonds'; markets: crypto, us_stocks"):
        universe("bonds")


# ---- resolve ------------------------------------------------------------------------------------


BTC = Instrument("BTCUSDT", "BTC", "crypto", "crypto", "binance", "binance", "USDT")


@pytest.mark.parametrize("coin", ["BTC", "btc", " Btc ", "BTCUSDT", "btcusdt", "BTC/USDT", "btc-usdt"])
def test_resolve_legacy_coin_and_pair(coin: str) -> None:
    assert resolve(coin) == BTC


def test_resolve_by_symbol_and_metadata() -> None:
    assert (
        resolve(
            symbol="BTCUSDT", asset_class="crypto", provider="binance", market="crypto", exchange="Binance"
        )
        == BTC
    )
    assert resolve("BTC", "BTCUSDT") == BTC
    assert resolve(symbol="spy").market == "etfs"
    assert resolve(symbol="USDJPY").quote == "JPY"
    assert resolve(symbol="oil", asset_class="COMMODITY").market == "commodities"
    assert resolve(symbol="NVDA", market="us_stocks", provider="svc-daily").asset_class == "stock"


def test_metadata_block() -> None:
    assert resolve("AAPL").metadata() == {
        "asset_class": "stock",
        "provider": "svc-daily",
        "market": "us_stocks",
        "symbol": "AAPL",
    }


def test_resolve_unknown_suggests_close_matches() -> None:
    with pytest.raises(UnknownInstrumentError) as err:
        resolve(symbol="ETHUSD")
    assert str(err.value) == "unknown instrument: symbol='ETHUSD'; did you mean ETHUSDT, ETCUSDT, EURUSD?"
    with pytest.raises(UnknownInstrumentError, match=r"^unknown instrument: coin='ZZZZQ'$"):
        resolve("ZZZZQ")


def test_resolve_refuses_mismatching_metadata() -> None:
    with pytest.raises(UnknownInstrumentError) as err:
        resolve("BTC", market="forex")
    assert str(err.value) == (
        "no instrument matches coin='BTC', market='forex'; that name is BTCUSDT (crypto, crypto, binance)"
    )
    with pytest.raises(UnknownInstrumentError, match="unknown asset_class 'bond'"):
        resolve("BTC", asset_class="bond")
    with pytest.raises(UnknownInstrumentError, match="no instrument matches coin='SPY', asset_class='index'"):
        resolve("SPY", asset_class="index")
    with pytest.raises(UnknownInstrumentError, match=r"no instrument matches .*provider='kraken'"):
        resolve("ETH", provider="kraken")


def test_resolve_refuses_conflicts_and_nothing() -> None:
    with pytest.raises(UnknownInstrumentError, match="coin and symbol name different instruments"):
        resolve("BTC", "ETHUSDT")
    with pytest.raises(UnknownInstrumentError, match="no instrument given"):
        resolve()
    with pytest.raises(UnknownInstrumentError, match="no instrument given"):
        resolve("  ")
    assert issubclass(UnknownInstrumentError, LookupError)


def test_instrument_for_stored_series() -> None:
    assert instrument_for("crypto", "btcusdt") is resolve("BTC")
    assert instrument_for("crypto_futures", "XRPUSDT") == Instrument(
        "XRPUSDT", "XRP", "crypto_futures", "crypto", "futures", "futures", "USDT"
    )
    assert instrument_for("crypto", "ETHBTC") == Instrument(
        "ETHBTC", "ETHBTC", "crypto", "crypto", "binance", "binance", "BTC"
    )
    assert instrument_for("forex_fxcm", "usdjpy") == Instrument(
        "USDJPY", "USDJPY", "forex_fxcm", "forex", "fxcm", "fxcm", "JPY"
    )
    assert instrument_for("cfd", "XAUUSD").metadata() == {
        "asset_class": "commodity",
        "provider": "svc-daily",
        "market": "cfd",
        "symbol": "XAUUSD",
    }
    expected = (
        "market 'weather' has no known asset class; name it like crypto_<provider>, us_stocks_<provider>"
    )
    with pytest.raises(UnknownInstrumentError, match=expected):
        instrument_for("weather", "RAIN")


def test_resolve_imported_series() -> None:
    stored = [
        ("crypto", "PEPEUSDT"),
        ("crypto_futures", "BTCUSDT"),
        ("crypto", "ADABTC"),
        ("crypto_bittrex", "ADABTC"),
    ]
    assert resolve("pepe", stored=stored).symbol == "PEPEUSDT"
    assert resolve("BTC", stored=stored) == BTC  # the built-in instrument wins
    assert resolve("BTC", market="crypto_futures", stored=stored).market == "crypto_futures"
    assert resolve("ADABTC", market="crypto_bittrex", stored=stored).provider == "bittrex"
    with pytest.raises(UnknownInstrumentError) as err:
        resolve("ADABTC", stored=stored)
    assert str(err.value) == (
        "ambiguous instrument coin='ADABTC': crypto/ADABTC, crypto_bittrex/ADABTC; pass market= to choose"
    )
    with pytest.raises(UnknownInstrumentError, match=r"^unknown instrument: coin='PEPE'$"):
        resolve("PEPE")
    with pytest.raises(UnknownInstrumentError, match=r"did you mean PEPE, PEPEUSDT\?$"):
        resolve("PEPEE", stored=stored)
    with pytest.raises(UnknownInstrumentError, match="unknown market 'crypto_futures'"):
        resolve("BTC", market="crypto_futures")


def test_display_symbol() -> None:
    assert display_symbol("crypto", "BTCUSDT") == "BTC"
    assert display_symbol("crypto", "shibusdt") == "SHIB"
    assert display_symbol("crypto", "USDT") == "USDT"
    assert display_symbol("crypto", "ETHBTC") == "ETHBTC"
    assert display_symbol("commodities", "gold") == "GOLD"
    assert display_symbol("crypto_futures", "XRPUSDT") == "XRP"
    assert display_symbol("us_stocks_yahoo", "nvda") == "NVDA"


# ---- precision manifest ----------------------------------------------------------------------


def test_manifest_document() -> None:
    doc = manifest()
    assert doc["version"] == 1
    assert datetime.fromisoformat(doc["updated_at"]).isoformat() == "2026-11-01T00:00:00+00:00"
    assert sorted(doc["markets"]) == sorted(MARKETS)
    for group in doc["markets"].values():
        assert sorted(group["defaults"]) == sorted(
            [
                "price_precision",
                "quantity_precision",
                "tick_size",
                "step_size",
                "min_quantity",
                "min_notional",
            ]
        )
    assert doc["markets"]["crypto"]["symbols"]["BTCUSDT"]["tick_size"] == 0.01
    doc["version"] = 99  # a copy: changing it leaves the served manifest alone
    assert manifest()["version"] == 1


def test_every_instrument_has_consistent_precision() -> None:
    for inst in universe():
        p = precision(inst.market, inst.symbol)
        assert p.tick_size == Decimal(1).scaleb(-p.price_precision), inst.symbol
        assert p.step_size >= Decimal(1).scaleb(-p.quantity_precision), inst.symbol
        assert p.min_quantity >= p.step_size and p.min_notional > 0, inst.symbol


def test_precision_overrides_and_defaults() -> None:
    btc = precision("crypto", "BTCUSDT")
    assert (
        btc.price_precision,
        btc.quantity_precision,
        btc.tick_size,
        btc.step_size,
        btc.min_quantity,
        btc.min_notional,
    ) == (2, 5, Decimal("0.01"), Decimal("0.00001"), Decimal("0.00001"), Decimal(5))
    imported = precision("crypto", "PEPEUSDT")  # not in the universe: the market's defaults
    assert (imported.price_precision, imported.tick_size, imported.step_size) == (
        4,
        Decimal("0.0001"),
        Decimal("0.1"),
    )
    assert precision("forex", "USDJPY").price_precision == 3
    assert precision("forex", "EURUSD").price_precision == 5
    assert precision("forex", "EURUSD").to_dict() == {
        "market": "forex",
        "symbol": "EURUSD",
        "price_precision": 5,
        "quantity_precision": 0,
        "tick_size": 0.00001,
        "step_size": 1.0,
        "min_quantity": 1000.0,
        "min_notional": 1000.0,
    }
    with pytest.raises(UnknownInstrumentError, match="unknown market 'spot'"):
        precision("spot", "BTCUSDT")


@pytest.mark.parametrize(
    ("market", "symbol", "value", "expected"),
    [
        ("crypto", "BTCUSDT", 91234.5678, "91234.57"),
        ("crypto", "BTCUSDT", 91234.565, "91234.57"),  # half up, decided on the decimal not the binary float
        ("crypto", "BTCUSDT", 100, "100.00"),
        ("crypto", "BTCUSDT", "1e3", "1000.00"),
        ("crypto", "BTCUSDT", -0.001, "0.00"),
        ("crypto", "DOGEUSDT", 0.123456, "0.12346"),
        ("crypto", "ETHUSDT", Decimal("3000.005"), "3000.01"),
        ("forex", "USDJPY", 151.23456, "151.235"),
        ("forex", "EURUSD", 1.1, "1.10000"),
        ("commodities", "SILVER", 31.0004, "31.000"),
    ],
)
def test_format_price(market: str, symbol: str, value: object, expected: str) -> None:
    assert format_price(market, symbol, value) == expected


@pytest.mark.parametrize(
    ("market", "symbol", "value", "expected"),
    [
        ("crypto", "BTCUSDT", 0.123456789, "0.12345"),
        ("crypto", "BTCUSDT", 0.000019, "0.00001"),
        ("crypto", "BTCUSDT", 2, "2.00000"),
        ("crypto", "XRPUSDT", 10.9, "10"),
        ("crypto", "ADAUSDT", 10.99, "10.9"),
        ("us_stocks", "TSLA", 7.999, "7"),
        ("commodities", "GOLD", 1.239, "1.23"),
    ],
)
def test_format_quantity_rounds_down(market: str, symbol: str, value: object, expected: str) -> None:
    assert format_quantity(market, symbol, value) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("abc", "price 'abc' is not a number"),
        (float("nan"), "price nan is not finite"),
        (float("inf"), "price inf is not finite"),
        (1e40, "price 1E\\+40 is too large to format"),
    ],
)
def test_format_refuses_non_numbers(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{message}$"):
        format_price("crypto", "BTCUSDT", value)


# ---- tiers and spreads -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("volume", "name", "spread"),
    [
        (5e9, "high", 0.02),
        (500e6, "high", 0.02),
        (499_999_999.99, "mid", 0.05),
        (50e6, "mid", 0.05),
        (49_999_999.0, "low", 0.10),
        (5e6, "low", 0.10),
        (4_999_999.0, "micro", 0.20),
        (0.0, "micro", 0.20),
    ],
)
def test_volume_tier_boundaries(volume: float, name: str, spread: float) -> None:
    tier = volume_tier(volume)
    assert (tier.name, tier.spread_pct) == (name, spread)


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_volume_tier_refuses_bad_volume(bad: float) -> None:
    with pytest.raises(ValueError, match="finite number >= 0"):
        volume_tier(bad)


def _hourly(days: int, quote_per_hour: float, price: float = 50.0) -> pl.DataFrame:
    n = days * 24
    return pl.DataFrame(
        {
            "open_time": [i * 3_600_000 for i in range(n)],
            "open": [price] * n,
            "high": [price] * n,
            "low": [price] * n,
            "close": [price] * n,
            "volume": [quote_per_hour / price] * n,
        }
    )


def test_avg_daily_quote_volume_by_utc_day() -> None:
    assert avg_daily_quote_volume(_hourly(3, 1e6), "1h") == pytest.approx(24e6)
    weekly = pl.DataFrame({"open_time": [0, 7 * 86_400_000], "close": [10.0, 20.0], "volume": [7.0, 7.0]})
    assert avg_daily_quote_volume(weekly, "1w") == pytest.approx((70 + 140) / 14)
    assert avg_daily_quote_volume(_hourly(1, 0.0).head(0), "1h") == 0.0


def test_spread_by_tier_for_crypto_fallback_elsewhere() -> None:
    assert spread_pct_for("crypto", _hourly(2, 25e6), "1h") == 0.02  # 600M a day
    assert spread_pct_for("crypto", _hourly(2, 1e6), "1h") == 0.10  # 24M a day
    assert spread_pct_for("crypto", _hourly(2, 1e5), "1h") == 0.20  # 2.4M a day
    assert spread_pct_for("crypto", _hourly(2, 0.0), "1h") == FALLBACK_TIER.spread_pct == 0.10
    assert spread_pct_for("us_stocks", _hourly(2, 25e6), "1h") == 0.10
    assert spread_pct_for("FOREX", _hourly(2, 25e6), "1h") == 0.10
    with pytest.raises(ValueError, match="unknown timeframe '7m'"):
        spread_pct_for("crypto", _hourly(2, 1e6), "7m")
    assert spread_pct_for("crypto_futures", _hourly(2, 25e6), "1h") == 0.02  # an imported crypto venue
    assert spread_pct_for("cfd", _hourly(2, 25e6), "1h") == 0.10  # any other dataset market


# ---- properties of formatting ------------------------------------------------------------------------

_SYMBOLS = [(i.market, i.symbol) for i in universe()]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(_SYMBOLS), st.decimals(min_value=0, max_value=10**9, places=9, allow_nan=False))
def test_formatted_price_is_the_nearest_tick(instrument: tuple[str, str], value: Decimal) -> None:
    rules = precision(*instrument)
    text = format_price(*instrument, value)
    price = Decimal(text)
    decimals = len(text.partition(".")[2])
    assert decimals == rules.price_precision
    assert price % rules.tick_size == 0
    assert abs(price - value) <= rules.tick_size / 2


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(_SYMBOLS), st.decimals(min_value=0, max_value=10**9, places=9, allow_nan=False))
def test_formatted_quantity_never_exceeds_the_input(instrument: tuple[str, str], value: Decimal) -> None:
    rules = precision(*instrument)
    text = format_quantity(*instrument, value)
    quantity = Decimal(text)
    assert len(text.partition(".")[2]) == rules.quantity_precision
    assert quantity % rules.step_size == 0
    assert Decimal(0) <= value - quantity < rules.step_size


def test_daily_quote_volume_in_one_pass_equals_the_grouped_mean() -> None:
    """The sorted one-pass kernel gives the polars group-by mean (NaN products skipped, a day
    of NaN counts as 0); an unsorted frame takes the group-by."""
    import numpy as np

    from svc_engine.instruments.tiers import avg_daily_quote_volume

    rng = np.random.default_rng(4)
    n = 5_000
    k = pl.DataFrame(
        {
            "open_time": np.arange(n, dtype=np.int64) * 300_000 + 123,
            "close": rng.uniform(1, 2, n),
            "volume": rng.uniform(0, 50, n),
        }
    )
    holes = pl.when(pl.int_range(n) % 97 == 0).then(np.nan).otherwise(pl.col("volume"))
    k = k.with_columns(holes.alias("volume"))
    quote = (pl.col("volume") * pl.col("close")).fill_nan(None)
    grouped = k.group_by(pl.col("open_time") // 86_400_000).agg(quote.sum().alias("q"))["q"].mean()
    assert avg_daily_quote_volume(k, "5m") == pytest.approx(grouped, rel=1e-12)
    assert avg_daily_quote_volume(k.reverse(), "5m") == pytest.approx(grouped, rel=1e-12)


def test_the_fast_tier_of_a_validated_series_is_the_exact_one() -> None:
    """``spread_pct_for(..., series=)`` sums in lanes and counts days by galloping; it gives the
    tier of the day-by-day mean, also for means sitting on a tier's floor and for gappy series."""
    import numpy as np

    from svc_engine.instruments.tiers import _daily_mean_nb, _day_count_nb

    rng = np.random.default_rng(19)
    day = 86_400_000
    for _ in range(400):
        n = int(rng.integers(1, 2_000))
        step = int(rng.choice([60_000, 3_600_000, day, 7_777]))
        t = (np.cumsum(rng.integers(1, 4, n) * step) - 5 * day).astype(np.int64)
        close, volume = rng.uniform(1, 100, n), rng.uniform(0, 1e6, n) * (rng.random(n) < 0.9)
        mean = _daily_mean_nb(t, volume, close, day)
        if mean > 0 and rng.random() < 0.5:  # put the mean on (or next to) a floor
            volume = volume * (float(rng.choice([5e6, 50e6, 500e6])) / mean)
        assert _day_count_nb(t, day) == np.unique(t // day).size
        frame = pl.DataFrame({"open_time": t, "close": close, "volume": volume})
        for timeframe in ("1m", "1h", "1d"):
            fast = spread_pct_for("crypto", frame, timeframe, series=(t, volume, close))
            assert fast == spread_pct_for("crypto", frame, timeframe)
