"""Classification of economic news from its words: sentiment, impact, category, coins, markets, country.

The rule is a keyword match, deterministic and documented (docs/api.md, "Economic data"):

1. The title and summary are lower-cased and split into words (letters, digits, ``&``; ``U.S.``
   reads as ``us``). A keyword is one or more whole words (``rate cut``, ``all time high``); each
   keyword counts once however often it appears.
2. ``sentiment_score`` = 25 x (bullish keywords found - bearish keywords found), kept within
   -100..100; ``sentiment`` is ``bullish`` above 0, ``bearish`` below 0, ``neutral`` at 0, and
   ``sentiment_label`` the same word capitalised.
3. ``impact``: ``high`` when a high-impact keyword is found, else ``medium`` when a medium one is,
   else ``low``.
4. ``category``: the category with the most keywords found; a tie goes to the first in
   :data:`CATEGORIES` order; ``other`` when none is found.
5. ``affected_coins``: coin symbols named (``bitcoin``/``btc`` -> ``BTC``...), sorted;
   ``affected_markets``: markets named (``crypto`` also whenever a coin is), sorted.
6. ``country``: the first of :data:`COUNTRIES` whose keywords occur (``EU`` for the euro area),
   ``""`` when none does.

Negations are not understood ("no rate cut" counts as a rate cut): a known limit of the rule.

Example:
    >>> c = classify("Bitcoin surges to record high as ETF inflows jump", "")
    >>> c.sentiment, c.sentiment_score, c.impact, c.category, c.affected_coins
    ('bullish', 100, 'high', 'crypto', ['BTC'])
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SENTIMENTS = ("bullish", "bearish", "neutral")
IMPACTS = ("high", "medium", "low")
CATEGORIES = (
    "monetary_policy",
    "inflation",
    "employment",
    "growth",
    "regulation",
    "crypto",
    "markets",
    "other",
)
STEP = 25
"""Points of ``sentiment_score`` per keyword."""


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split(","))


BULLISH = _words(
    "surge,surges,surged,surging,rally,rallies,rallied,soar,soars,soared,jump,jumps,jumped,gain,gains,"
    "gained,rise,rises,rising,rose,climb,climbs,climbed,record high,all time high,approve,approves,"
    "approved,approval,inflows,adoption,adopts,upgrade,upgraded,beats,beat expectations,bullish,rebound,"
    "rebounds,recovery,boost,boosts,easing,rate cut,rate cuts,cuts rates,strong,stronger,optimism"
)
BEARISH = _words(
    "plunge,plunges,plunged,crash,crashes,crashed,fall,falls,fell,drop,drops,dropped,slump,slumps,"
    "slumped,tumble,tumbles,tumbled,decline,declines,declined,sink,sinks,sank,hack,hacked,exploit,"
    "ban,bans,banned,lawsuit,sues,sued,fraud,outflows,sell off,selloff,liquidations,bankruptcy,"
    "bankrupt,downgrade,downgraded,misses,bearish,recession,weak,weaker,fears,rate hike,rate hikes,"
    "hikes rates,tightening,crackdown,default,losses"
)
HIGH_IMPACT = _words(
    "fomc,federal reserve,fed,ecb,boj,bank of england,central bank,interest rate,interest rates,"
    "rate decision,rate cut,rate hike,cpi,consumer price index,inflation,nonfarm payrolls,payrolls,"
    "gdp,etf,sec,hack,hacked,exploit,bankruptcy,default,recession,halving,ban,banned,war,sanctions"
)
MEDIUM_IMPACT = _words(
    "pmi,retail sales,jobless claims,unemployment,ppi,pce,earnings,treasury,yields,lawsuit,regulation,"
    "regulator,stablecoin,upgrade,listing,inflows,outflows,liquidations,tariff,tariffs,housing,"
    "consumer confidence,minutes,testimony,speech"
)
KEYWORDS: dict[str, frozenset[str]] = {
    "monetary_policy": _words(
        "fed,federal reserve,fomc,ecb,boj,bank of england,central bank,interest rate,interest rates,"
        "rate cut,rate cuts,rate hike,rate hikes,rate decision,monetary,powell,lagarde,ueda,"
        "quantitative tightening,balance sheet,easing,tightening"
    ),
    "inflation": _words("inflation,cpi,consumer price index,ppi,producer prices,pce,prices,deflation"),
    "employment": _words(
        "payrolls,nonfarm payrolls,jobs,jobless,jobless claims,unemployment,employment,labor,labour,"
        "wages,hiring,layoffs"
    ),
    "growth": _words(
        "gdp,growth,recession,pmi,manufacturing,retail sales,output,economy,economic,industrial production,"
        "consumer confidence,housing"
    ),
    "regulation": _words(
        "sec,cftc,regulator,regulators,regulation,regulatory,lawsuit,sues,sued,ban,bans,banned,law,bill,"
        "compliance,mica,crackdown,court,license,licence,sanctions"
    ),
    "crypto": _words(
        "bitcoin,btc,ethereum,ether,eth,crypto,cryptocurrency,stablecoin,stablecoins,blockchain,defi,"
        "solana,xrp,altcoin,altcoins,token,tokens,miners,halving,exchange,etf,nft"
    ),
    "markets": _words(
        "stocks,equities,shares,nasdaq,s&p,dow,treasury,treasuries,yields,bond,bonds,dollar,gold,oil,"
        "crude,market,markets,index,futures,volatility"
    ),
}
COINS: dict[str, frozenset[str]] = {
    "ADA": _words("cardano,ada"),
    "BNB": _words("bnb"),
    "BTC": _words("bitcoin,btc"),
    "DOGE": _words("dogecoin,doge"),
    "ETH": _words("ethereum,ether,eth"),
    "SOL": _words("solana,sol"),
    "XRP": _words("xrp,ripple"),
}
MARKETS: dict[str, frozenset[str]] = {
    "bonds": _words("treasury,treasuries,bond,bonds,yields"),
    "commodities": _words("gold,oil,crude,commodities,copper"),
    "crypto": KEYWORDS["crypto"],
    "forex": _words("dollar,euro,yen,sterling,pound,currency,currencies,forex,fx"),
    "stocks": _words("stocks,equities,shares,nasdaq,s&p,dow,earnings"),
}
COUNTRIES: dict[str, frozenset[str]] = {
    "US": _words(
        "fed,federal reserve,fomc,powell,us,usa,united states,america,american,nonfarm payrolls,sec"
    ),
    "EU": _words("ecb,lagarde,eurozone,euro area,european union,eu"),
    "GB": _words("bank of england,boe,uk,britain,british"),
    "JP": _words("boj,bank of japan,japan,japanese,ueda"),
    "CN": _words("china,chinese,pboc,beijing"),
}
_TOKEN = re.compile(r"[a-z0-9&]+")


@dataclass(frozen=True)
class Classification:
    """What :func:`classify` finds in a text."""

    sentiment: str
    sentiment_score: int
    impact: str
    category: str
    affected_coins: list[str]
    affected_markets: list[str]
    country: str

    @property
    def sentiment_label(self) -> str:
        """``Bullish``, ``Bearish`` or ``Neutral``.

        Example:
            >>> classify("Stocks tumble", "").sentiment_label
            'Bearish'
        """
        return self.sentiment.capitalize()


def _text(*parts: str) -> str:
    joined = " ".join(parts).lower().replace("u.s.", "us").replace("u.k.", "uk")
    return " " + " ".join(_TOKEN.findall(joined.replace("-", " "))) + " "


def _found(text: str, keywords: frozenset[str]) -> int:
    return sum(1 for k in keywords if f" {k} " in text)


def impact_of(*parts: str) -> str:
    """The impact of a text by rule 3 (also used for calendar events that carry none).

    Example:
        >>> impact_of("US CPI (YoY)"), impact_of("ISM Manufacturing PMI"), impact_of("Crude Oil Inventories")
        ('high', 'medium', 'low')
    """
    text = _text(*parts)
    if _found(text, HIGH_IMPACT):
        return "high"
    return "medium" if _found(text, MEDIUM_IMPACT) else "low"


def classify(title: str, summary: str) -> Classification:
    """Classify a news item from its title and summary by the rule of this module.

    Example:
        >>> c = classify("Fed signals rate hike as U.S. inflation stays high", "Treasury yields rise.")
        >>> c.sentiment, c.sentiment_score, c.category, c.country, c.affected_markets
        ('neutral', 0, 'monetary_policy', 'US', ['bonds'])
    """
    text = _text(title, summary)
    score = STEP * (_found(text, BULLISH) - _found(text, BEARISH))
    score = max(-100, min(100, score))
    sentiment = "bullish" if score > 0 else "bearish" if score < 0 else "neutral"
    hits = {name: _found(text, words) for name, words in KEYWORDS.items()}
    best = max(hits.values())
    category = next(name for name in CATEGORIES if name == "other" or (best and hits[name] == best))
    coins = sorted(symbol for symbol, words in COINS.items() if _found(text, words))
    markets = {name for name, words in MARKETS.items() if _found(text, words)}
    if coins:
        markets.add("crypto")
    country = next((code for code, words in COUNTRIES.items() if _found(text, words)), "")
    return Classification(
        sentiment=sentiment,
        sentiment_score=score,
        impact=impact_of(title, summary),
        category=category,
        affected_coins=coins,
        affected_markets=sorted(markets),
        country=country,
    )
