"""The calibration of the synthetic market (`svc_engine.data.synthetic`): how each instrument
behaves (first and last close, volatility, loading on its market's factor, daily volume), which
factor each market follows, and the regimes and GARCH parameters of the hourly and daily paths.

Example:
    >>> CRYPTO["BTCUSDT"].end, FACTOR["crypto"]
    (92000.0, 'crypto')
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Params:
    """How one instrument behaves: its first and last close (the path is pinned to both, realistic
    levels of the real instrument at those dates), annual volatility, loading on its market factor,
    and average daily volume in the quote currency."""

    start: float
    end: float
    vol: float
    rho: float
    quote_volume: float


# Average daily quote volumes put the coins in every volume tier (high >= 500M, mid >= 50M,
# low >= 5M, micro below), far enough from the boundaries that the generated average lands inside.
CRYPTO: dict[str, Params] = {
    "BTCUSDT": Params(69000.0, 92_000.0, 0.50, 0.92, 1.6e9),
    "ETHUSDT": Params(2500.0, 3_400.0, 0.65, 0.88, 9.0e8),
    "BNBUSDT": Params(570.0, 640.0, 0.55, 0.80, 2.2e8),
    "SOLUSDT": Params(165.0, 180.0, 0.85, 0.85, 3.2e8),
    "XRPUSDT": Params(0.51, 0.62, 0.80, 0.80, 3.0e8),
    "ADAUSDT": Params(0.33, 0.38, 0.80, 0.80, 9.0e7),
    "DOGEUSDT": Params(0.16, 0.16, 0.95, 0.78, 2.5e8),
    "AVAXUSDT": Params(25.0, 28.0, 0.90, 0.82, 8.0e7),
    "DOTUSDT": Params(4.1, 5.2, 0.85, 0.80, 2.5e7),
    "LINKUSDT": Params(11.5, 14.5, 0.85, 0.82, 1.1e8),
    "LTCUSDT": Params(66.0, 82.0, 0.70, 0.78, 3.5e7),
    "BCHUSDT": Params(340.0, 420.0, 0.70, 0.75, 2.2e7),
    "ATOMUSDT": Params(4.4, 6.4, 0.85, 0.78, 1.6e7),
    "NEARUSDT": Params(4.0, 4.9, 0.95, 0.80, 2.8e7),
    "APTUSDT": Params(9.3, 8.9, 0.95, 0.78, 1.8e7),
    "ARBUSDT": Params(0.53, 0.72, 0.95, 0.80, 2.4e7),
    "OPUSDT": Params(1.55, 1.65, 1.00, 0.80, 2.0e7),
    "FILUSDT": Params(3.6, 4.6, 0.90, 0.75, 2.6e6),
    "ETCUSDT": Params(18.8, 22.0, 0.80, 0.75, 1.2e7),
    "UNIUSDT": Params(7.6, 8.2, 0.90, 0.78, 1.4e7),
    "TRXUSDT": Params(0.16, 0.165, 0.45, 0.50, 1.5e8),
    "SUIUSDT": Params(1.9, 3.4, 1.05, 0.75, 1.3e8),
    "INJUSDT": Params(18.5, 21.0, 1.00, 0.75, 2.2e6),
    "AAVEUSDT": Params(150.0, 165.0, 0.90, 0.78, 1.8e6),
}
DAILY: dict[str, Params] = {
    "AAPL": Params(28.0, 230.0, 0.28, 0.70, 1.2e10),
    "MSFT": Params(59.0, 420.0, 0.25, 0.70, 1.0e10),
    "AMZN": Params(39.0, 190.0, 0.32, 0.70, 8.0e9),
    "GOOGL": Params(40.0, 170.0, 0.30, 0.70, 5.0e9),
    "NVDA": Params(1.8, 135.0, 0.50, 0.65, 3.0e10),
    "TSLA": Params(13.0, 250.0, 0.60, 0.55, 2.5e10),
    "SPY": Params(210.0, 580.0, 0.17, 0.95, 3.5e10),
    "QQQ": Params(117.0, 500.0, 0.21, 0.93, 2.0e10),
    "EURUSD": Params(1.1, 1.08, 0.07, 0.70, 5.0e9),
    "GBPUSD": Params(1.22, 1.29, 0.08, 0.65, 3.0e9),
    "USDJPY": Params(104.5, 152.0, 0.10, -0.50, 4.0e9),
    "GOLD": Params(1290.0, 2_650.0, 0.15, 0.60, 2.0e10),
    "SILVER": Params(18.4, 31.0, 0.28, 0.70, 3.0e9),
    "OIL": Params(46.0, 72.0, 0.35, 0.30, 8.0e9),
}
# Which common factor drives an instrument: stocks and ETFs share one, so do the USD pairs.
FACTOR = {
    "crypto": "crypto",
    "us_stocks": "equity",
    "etfs": "equity",
    "forex": "usd",
    "commodities": "commodity",
}
# Share of a day's variance in the overnight step: gaps at the open for exchange-traded markets.
OVERNIGHT = {"us_stocks": 0.20, "etfs": 0.15, "forex": 0.03, "commodities": 0.10}


@dataclass(frozen=True, slots=True)
class Regime:
    """Markov-switching drift of one bar size: how long ranges and trends last and how strong."""

    stay_range: float
    stay_trend: float
    reverse: float
    trend: float  # drift per bar in units of the bar's standard deviation
    kappa: float  # pull back to the range's anchor per bar
    alpha: float  # GARCH(1,1) reaction
    beta: float  # GARCH(1,1) persistence
    jumps: float  # jumps per bar


HOURLY = Regime(
    stay_range=0.997,
    stay_trend=0.996,
    reverse=0.3,
    trend=0.08,
    kappa=0.02,
    alpha=0.09,
    beta=0.89,
    jumps=1 / 96,
)
DAILY_REGIME = Regime(
    stay_range=0.97,
    stay_trend=0.96,
    reverse=0.3,
    trend=0.15,
    kappa=0.05,
    alpha=0.08,
    beta=0.90,
    jumps=4 / 252,
)
