"""What an evaluation reads: the ``Context`` protocol that the evaluators (`conditions`, `values`,
`points`) are written against, implemented by :class:`svc_engine.strategy.compiler.Context`.

The evaluators are registered in the compiler's context and call back into it for their operands;
naming the protocol here, not the class, keeps them below the compiler in the import graph.

Example:
    >>> import polars as pl
    >>> from svc_engine.strategy.compiler import Context as Concrete
    >>> k = pl.DataFrame({"open_time": [0], "open": [1.0], "high": [1.0], "low": [1.0],
    ...                   "close": [2.0], "volume": [0.0]})
    >>> isinstance(Concrete(k), Context)
    True
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from svc_engine.strategy import ast as A


@runtime_checkable
class Context(Protocol):
    """The arrays of one kline frame and the cache of everything computed from them."""

    size: int
    """How many candles."""
    cache: dict[A.Node, np.ndarray]
    """Every node's computed values, by node."""
    rows: dict[A.Node, np.ndarray]
    """Where a condition holds, for those whose evaluation found it on the way."""

    def array(self, name: str) -> np.ndarray:
        """A kline column as a contiguous array (``open_time`` int64 Unix ms, the others float64)."""
        ...

    def values(self, node: A.Node) -> np.ndarray:
        """Float64 values of a numeric node (cached)."""
        ...

    def truth(self, node: A.Node) -> np.ndarray:
        """Bool values of a condition node (cached)."""
        ...

    def where(self, node: A.Node) -> np.ndarray:
        """The rows where a condition node holds."""
        ...

    def column(self, name: str) -> np.ndarray:
        """A field's values; ``typical`` is computed."""
        ...

    def buffer(self) -> np.ndarray | None:
        """An array of ``size`` float64 for a kernel to write a large result into, or None."""
        ...

    def higher(self, timeframe: str) -> tuple[Context, np.ndarray]:
        """A higher timeframe's context and, per candle here, the latest higher candle closed."""
        ...

    def trend(self, event: str) -> np.ndarray:
        """Flags of a trend-line event."""
        ...
