"""Live signals: the signal worker evaluates active strategies at each candle close the market clock
reveals; active and closed signals, their delivery to owners and subscribers, per-signal charges."""
