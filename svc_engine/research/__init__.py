"""Research at scale: parameter sweeps, walk-forward analysis and their helpers.

Example:
    >>> from svc_engine import research
    >>> sorted(research.__all__)[:3]
    ['SweepResult', 'Template', 'combinations']
"""

from svc_engine.research.params import Template, combinations
from svc_engine.research.results import SweepResult
from svc_engine.research.sweep import sweep

__all__ = ["SweepResult", "Template", "combinations", "sweep"]
