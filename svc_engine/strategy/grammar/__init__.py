"""The grammar of the strategy language: parse functions ``rule(p, ...)`` of the one parser,
:class:`svc_engine.strategy.parser.Parser`, one concern per module, most of them registered in
grammar tables (a word -> the rules it starts, as sqlglot's parser keeps its tables).
``words`` (the word tables), ``cursor`` (the parser's protocol: tokens, errors, entry points),
``lookahead`` (tests of what follows), ``conditions`` (and/or/not/then/after, grouping),
``predicates`` (a value and its tail, timeframes), ``tails`` (the word after a value -> the
rules it starts), ``comparisons`` (comparisons, crosses, zones), ``amounts`` (comparisons by a
margin, move, gap or percentile), ``starts`` and ``events`` (conditions without a value:
patterns, candle colours, trend lines), ``values`` (arithmetic and primaries), ``primaries`` and
``numbers`` (the words and numbers that start a value), ``indicators`` (indicator names,
parameters, windows), ``calendars`` (calendar phrases), ``entries`` (an entry's side and price).

Example:
    >>> from svc_engine.strategy.parser import parse_entry
    >>> type(parse_entry("close above SMA(20) and RSI(14) below 30").condition).__name__
    'And'
"""
