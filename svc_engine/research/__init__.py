"""Research at scale: parameter sweeps, walk-forward analysis and their helpers.

Example:
    >>> from svc_engine import research
    >>> sorted(research.__all__)[:3]
    ['SweepResult', 'Template', 'WalkForwardResult']
"""

from svc_engine.research.params import Template, combinations
from svc_engine.research.results import SweepResult
from svc_engine.research.sweeper import sweep
from svc_engine.research.walkforward import WalkForwardResult, walk_forward

__all__ = ["SweepResult", "Template", "WalkForwardResult", "combinations", "sweep", "walk_forward"]
