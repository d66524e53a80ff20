"""The embedded discrete-event simulator.

``simulate(network, seed=...)`` takes the same :class:`~qmodels.model.Network`
as the analytic solvers and returns a :class:`SimResult` whose figures
(``X``, ``R``, ``Q``, ``U`` per station, class and pair) are
:class:`Estimate` objects: a mean, a confidence interval and the number of
observations behind it.  It is also the solver
method ``"sim"`` (``qm.solve(net, method="sim", seed=1)``).

Modules: :mod:`~qmodels.sim.engine` (the compiled event loop),
:mod:`~qmodels.sim.run` (one run's state, driving the loop in chunks),
:mod:`~qmodels.sim.flatten` (model -> arrays, and what the simulator
refuses), :mod:`~qmodels.sim.windows` (the cell grid and the figures of an
observation window), :mod:`~qmodels.sim.checks` (argument checks, default
horizon, self-checks), :mod:`~qmodels.sim.stats` (intervals, MSER-5,
percentiles), :mod:`~qmodels.sim.result` (SimResult),
:mod:`~qmodels.sim.api` (``simulate`` and the replication and batch-means
drivers).
"""

from __future__ import annotations

from .api import simulate
from .result import SimResult
from .run import warm_up
from .stats import Estimate

__all__ = ["simulate", "SimResult", "Estimate", "warm_up"]
