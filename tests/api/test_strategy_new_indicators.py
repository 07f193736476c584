"""The indicators and candle patterns of issue 20 through the API: strategy_generate compiles them
(active, with the engine's candle_count and program) and a full_range backtest of such a strategy
equals the engine's."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import svc_engine.sim.drivers as drivers
from svc_api.accounts import service as accounts
from svc_api.credits import service as credits
from svc_api.settings import Settings
from svc_engine.data import DataStore
from svc_engine.data.synthetic import generate_market
from svc_engine.strategy import compile_strategy
from tests.api.journey_helpers import as_requested

if TYPE_CHECKING:
    from tests.api.conftest import Api

CONDITIONS = {  # a pro plan holds 5 active strategies
    "adxdi": "+DI crosses above -DI and ADX(14) is above 20 and Aroon up is above 50",
    "supertrend": "supertrend flips bullish and close is above the parabolic SAR or price is above the cloud",
    "volumeflow": "MFI(14) crosses above 20 and CMF(20) is above 0 and OBV is above its 20-candle average",
    "stats": "z-score(20) is below -1 and Bollinger %B is below 0.2 and ATR%(14) is above 0.1 or "
    "DEMA(9) crosses above TEMA(21) and close is above HMA(55) and StochRSI %K is below 50",
    "engulf": "a bullish engulfing candle after 3 red candles in a row or a hammer",
}


@pytest.fixture(scope="module")
def market_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("market")
    generate_market(DataStore(root), small=True)
    return root


@pytest.fixture
def api20(settings: Settings, market_dir: Path, make_api: Any) -> Api:
    return make_api(settings.replace(data_dir=market_dir))


def _ok(reply: Any) -> Any:
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_new_indicators_generate_and_backtest_through_the_api(api20: Api, market_dir: Path) -> None:
    data = api20.register()
    token = data["session_token"]
    with api20.app.state.services.store.write() as conn:
        accounts.grant_plan(conn, data["svc_id"], "pro", 30, now=api20.clock.now())
        credits.deposit_credits(conn, data["svc_id"], 50, now=int(time.time()))
    for name, entry in CONDITIONS.items():  # one at a time: generations in progress are capped
        body = {
            "strategy_name": name,
            "market_type": "spot",
            "signal_mode": "signal_orders",
            "timeframe": "1h",
            "entry_condition": entry,
            "tp_condition": "3%",
            "sl_condition": "2%",
        }
        _ok(api20.user("strategy_generate", body, token=token))
        deadline = time.monotonic() + 10
        while True:
            detail = _ok(api20.user("strategy_detail", {"strategy_name": name}, token=token))["data"]
            if detail["status"] != "generating" or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        expected = compile_strategy(entry, "3%", "2%")
        assert detail["status"] == "active", detail
        assert detail["candle_count"] == expected.candle_count

    launch = _ok(
        api20.post(
            "/backtest",
            params={"action": "full_range"},
            json={"strategy_name": "adxdi", "coins": ["BTC"], "timeframe": "1h"},
            headers={"Authorization": f"Bearer {token}"},
        )
    )
    deadline = time.monotonic() + 30
    while True:
        status = _ok(
            api20.post(
                "/backtest",
                params={"action": "status"},
                json={"job_id": launch["job_id"]},
                headers={"Authorization": f"Bearer {token}"},
            )
        )
        if status["status"] != "running" or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert status["status"] == "completed", status
    result = _ok(
        api20.post(
            "/backtest",
            params={"action": "result"},
            json={"job_id": launch["job_id"]},
            headers={"Authorization": f"Bearer {token}"},
        )
    )
    engine = drivers.full_range(
        compile_strategy(CONDITIONS["adxdi"], "3%", "2%"), ["BTCUSDT"], "1h", store=DataStore(market_dir)
    ).to_dict()
    engine = as_requested(engine, {"BTCUSDT": "BTC"})  # the API names coins as requested
    assert {k: result[k] for k in engine} == engine
    assert engine["results"]["BTC"]["summary"]["total_signals"] > 0
