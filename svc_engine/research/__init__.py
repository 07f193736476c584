"""Research at scale: parameter sweeps, walk-forward analysis, and how far their results can be
trusted (deflated Sharpe, PBO by CSCV, bootstrap intervals, purged splits).

Example:
    >>> from svc_engine import research
    >>> sorted(research.__all__)[:4]
    ['Confidence', 'PBOResult', 'SweepResult', 'Template']
"""

from svc_engine.research.bootstrap import Confidence, bootstrap
from svc_engine.research.deflated import deflated_sharpe, expected_max_sharpe, probabilistic_sharpe
from svc_engine.research.overfitting import PBOResult, pbo
from svc_engine.research.params import Template, combinations
from svc_engine.research.purged import purged_kfold
from svc_engine.research.results import SweepResult
from svc_engine.research.sweeper import sweep
from svc_engine.research.walkforward import WalkForwardResult, walk_forward

__all__ = [
    "Confidence",
    "PBOResult",
    "SweepResult",
    "Template",
    "WalkForwardResult",
    "bootstrap",
    "combinations",
    "deflated_sharpe",
    "expected_max_sharpe",
    "pbo",
    "probabilistic_sharpe",
    "purged_kfold",
    "sweep",
    "walk_forward",
]
