"""The grammar of the strategy language, one concern per module, composed into one parser by
:mod:`svc_engine.strategy.parser`: ``words`` (the word tables), ``cursor`` (tokens, errors),
``conditions`` (and/or/not/then/after, grouping, timeframes), ``comparisons`` (what follows a
value), ``tails`` (its grammar table: the word after a value -> the rules it starts), ``amounts``
(comparisons by a margin, move, gap or percentile), ``events`` (conditions without a value:
patterns, candle colours, trend lines), ``values`` (arithmetic and primaries), ``indicators``
(indicator names, parameters, windows), ``calendars`` and ``numbers`` (the grammar tables of a
calendar phrase and of what a number starts).

Example:
    >>> from svc_engine.strategy.parser import parse_entry
    >>> type(parse_entry("close above SMA(20) and RSI(14) below 30").condition).__name__
    'And'
"""
