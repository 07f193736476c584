"""Settings: the API's defaults and the refusals of bad values."""

from __future__ import annotations

import pytest

from svc_engine.sim import Settings


def test_defaults_are_the_apis() -> None:
    s = Settings()
    assert (s.commission_pct, s.position_size_pct, s.min_candles_between_signals, s.max_wait_days) == (
        0.2,
        100,
        4,
        30,
    )
    assert (s.min_profit_pct, s.max_profit_pct, s.min_loss_pct, s.max_loss_pct) == (0.1, 30, 0.1, 50)
    assert (s.signal_filter_mode, s.spread_pct, s.intrabar, s.initial_balance, s.leverage, s.market_type) == (
        "clamp",
        None,
        "conservative",
        100,
        1,
        "spot",
    )


def test_from_kwargs_coerces_numbers() -> None:
    s = Settings.from_kwargs(commission_pct=1, min_candles_between_signals=3.0, spread_pct=None)
    assert s.commission_pct == 1.0 and isinstance(s.commission_pct, float)
    assert s.min_candles_between_signals == 3 and isinstance(s.min_candles_between_signals, int)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"comission_pct": 1}, r"unknown setting\(s\) \['comission_pct'\]; known settings: commission_pct, "),
        (
            {"min_profit_pct": 2, "max_profit_pct": 1},
            r"min_profit_pct \(2.0\) exceeds max_profit_pct \(1.0\)",
        ),
        ({"min_loss_pct": 60}, r"min_loss_pct \(60.0\) exceeds max_loss_pct \(50.0\)"),
        ({"position_size_pct": 0}, r"position_size_pct must be a finite number > 0 and <= 100 \(got 0.0\)"),
        ({"position_size_pct": 101}, r"position_size_pct must be a finite number > 0 and <= 100"),
        ({"commission_pct": -0.1}, r"commission_pct must be a finite number >= 0"),
        ({"max_wait_days": 0}, r"max_wait_days must be a finite number > 0"),
        ({"initial_balance": float("nan")}, r"initial_balance must be a finite number > 0"),
        ({"min_candles_between_signals": -1}, r"min_candles_between_signals must be >= 0"),
        ({"min_candles_between_signals": 1.5}, r"must be a whole number of candles"),
        ({"signal_filter_mode": "soft"}, r"signal_filter_mode must be one of clamp, reject \(got 'soft'\)"),
        ({"intrabar": "fine"}, r"intrabar must be one of conservative, detail"),
        ({"market_type": "margin"}, r"market_type must be one of spot, futures"),
        ({"leverage": 2}, r"spot requires leverage 1 \(got 2\); use market_type='futures'"),
        ({"leverage": 0.5, "market_type": "futures"}, r"leverage must be a finite number >= 1"),
        ({"commission_pct": "0.2"}, r"commission_pct must be a number \(got '0.2'\)"),
        ({"spread_pct": -1}, r"spread_pct must be a finite number >= 0"),
    ],
)
def test_bad_settings_are_refused(kw: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Settings.from_kwargs(**kw)


def test_futures_allow_leverage() -> None:
    assert Settings.from_kwargs(market_type="futures", leverage=10).leverage == 10.0


def test_numpy_numbers_are_numbers() -> None:
    import numpy as np

    s = Settings.from_kwargs(commission_pct=np.float32(0.5), min_candles_between_signals=np.int64(2))
    assert (s.commission_pct, s.min_candles_between_signals) == (0.5, 2)
    with pytest.raises(ValueError, match="commission_pct must be a number"):
        Settings.from_kwargs(commission_pct=np.bool_(True))
