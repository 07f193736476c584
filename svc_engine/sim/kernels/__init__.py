"""The simulation's numba kernels, one concern per module; :mod:`svc_engine.sim.nb` re-exports
them all (``nb.single_sweep_nb``, ``nb.TRADE_DTYPE``, ...) and states the array contract.

Example:
    >>> from svc_engine.sim import nb
    >>> nb.REASONS[nb.R_SIGNAL]
    'signal'
"""
