"""The old name of :mod:`svc_engine.strategy.sparse` (conditions evaluated at chosen
candles only), kept for the code that still imports it: every read, patch and deletion of an
attribute here goes to that module, so both names see one set of values.

Example:
    >>> import svc_engine.strategy.sparse, svc_engine.strategy.points as old
    >>> old.__name__, old.__file__ == svc_engine.strategy.sparse.__file__
    ('svc_engine.strategy.sparse', True)
"""

import sys
import types
from typing import Any

from svc_engine.strategy import sparse


class _Alias(types.ModuleType):
    def __getattribute__(self, name: str) -> Any:
        return getattr(sparse, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(sparse, name, value)

    def __delattr__(self, name: str) -> None:
        delattr(sparse, name)


sys.modules[__name__].__class__ = _Alias  # this module object, wherever the importer keeps it
sys.modules[__name__] = sparse  # later imports get the module itself
