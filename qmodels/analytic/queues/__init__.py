"""Single-station queues in closed form.

Every function returns a :class:`QueueMetrics` with the same vocabulary as the
network results: throughput ``X``, response time ``R`` (waiting + service),
utilisation ``U`` (busy fraction of one server) and queue length ``Q`` (mean
number present, waiting + in service), plus the waiting time ``W`` (time in
queue, before service), ``Lq`` (mean number waiting) and, where they exist,
the blocking and waiting probabilities.

=====================  ==========================================  =========
function               model                                       exact?
=====================  ==========================================  =========
:func:`mm1`            M/M/1                                       exact
:func:`mmc`            M/M/c (Erlang C)                            exact
:func:`mm1k`           M/M/1/K (finite room K, jobs in service     exact
                       included)
:func:`mmck`           M/M/c/K                                     exact
:func:`mminf`          M/M/inf (pure delay)                        exact
:func:`mg1`            M/G/1 (Pollaczek-Khinchine mean value)      exact
:func:`md1`            M/D/1                                       exact
:func:`gg1`            G/G/1 (Kingman or Allen-Cunneen)            approx.
:func:`ggc`            G/G/c (Allen-Cunneen)                       approx.
:func:`erlang_b`       loss probability of M/M/c/c                 exact
:func:`erlang_c`       waiting probability of M/M/c                exact
:func:`mg1_prio`       M/G/1 non-preemptive priority, per class    exact
:func:`mg1_prio_pr`    M/G/1 preemptive-resume priority, per class exact
:func:`mmc_prio`       M/M/c non-preemptive priority, one rate     exact
=====================  ==========================================  =========

Rates are per unit of time, times in that unit.  Inputs are validated:
negative, NaN or infinite numbers raise :class:`~qmodels.errors.InvalidValueError`
naming the parameter and the value; an infinite-room queue with rho >= 1
raises :class:`~qmodels.errors.UnstableError`.

:func:`mm1`, :func:`mg1`, :func:`md1`, :func:`mminf` and :func:`gg1` also
accept sympy expressions and then return sympy expressions.  Symbolic inputs
are rejected only when a condition is provably false (e.g. ``expr.is_negative
is True``); the stability condition rho < 1 is checked only when sympy can
decide it.

The formulas live in three modules: :mod:`.metrics` (the
:class:`QueueMetrics` result and the input checks), :mod:`.markovian`
(Erlang B and C, M/M/1, M/M/c, M/M/1/K, M/M/c/K, M/M/inf) and
:mod:`.general` (M/G/1, M/D/1 and the G/G/1, G/G/c approximations), and
:mod:`.priority` (priority queues, one result per class); this
package re-exports every public name.
"""

from __future__ import annotations

from .general import gg1, ggc, md1, mg1
from .markovian import erlang_b, erlang_c, mm1, mm1k, mmc, mmck, mminf
from .metrics import QueueMetrics
from .priority import mg1_prio, mg1_prio_pr, mmc_prio

__all__ = [
    "QueueMetrics",
    "erlang_b",
    "erlang_c",
    "mm1",
    "mmc",
    "mm1k",
    "mmck",
    "mminf",
    "mg1",
    "md1",
    "gg1",
    "ggc",
    "mg1_prio",
    "mg1_prio_pr",
    "mmc_prio",
]
