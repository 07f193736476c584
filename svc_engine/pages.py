"""The old name of :mod:`svc_engine.scratch` (the per-thread scratch-buffer pool),
kept for the code that still imports it: every read, patch and deletion of an attribute here
goes to that module, so both names see one set of values.

Example:
    >>> import svc_engine.scratch, svc_engine.pages as old
    >>> old.__name__, old.__file__ == svc_engine.scratch.__file__
    ('svc_engine.scratch', True)
"""

import sys
import types
from typing import Any

from svc_engine import scratch


class _Alias(types.ModuleType):
    def __getattribute__(self, name: str) -> Any:
        return getattr(scratch, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(scratch, name, value)

    def __delattr__(self, name: str) -> None:
        delattr(scratch, name)


sys.modules[__name__].__class__ = _Alias  # this module object, wherever the importer keeps it
sys.modules[__name__] = scratch  # later imports get the module itself
