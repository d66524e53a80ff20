"""The approach to steady state, exactly: the state probabilities of the
network's CTMC at time t from its initial state.

The chain is the one :func:`qmodels.analytic.ctmc.ctmc` builds (same
states, same rates, same budget); its initial state is the build's first
state: no open job, every closed job in its think stage when the class has
a think time, else at its reference station (:meth:`_Chain.initial`).
With class switching (:mod:`qmodels.model.chains`) a job's class is part
of the state, so the same chain carries the jobs from class to class: the
start puts each class's own population (the user's split of its chain's
population) at the class's reference station, and every state reached
keeps each closed chain's population.

p(t) = p(0) exp(Q t) (Kolmogorov's forward equations; Stewart,
*Introduction to the Numerical Solution of Markov Chains*, 1994, ch. 8),
computed by :func:`scipy.sparse.linalg.expm_multiply` (Al-Mohy & Higham,
"Computing the action of the matrix exponential", SIAM J. Sci. Comput.
33(2), 2011), which never forms exp(Q t) -- the action on one vector, at
every point of a uniform grid.  Time averages over a cell come exactly
from the same action on the augmented system

    d/dt [p, I] = [p Q, p],   I(t) = integral_0^t p(s) ds,

i.e. the exponential of the block matrix [[Q^T, 0], [1, 0]] applied to
[p(0), 0] (Van Loan, "Computing integrals involving the matrix
exponential", IEEE Trans. Automatic Control 23(3), 1978): the cell average
is (I(t_i) - I(t_{i-1})) / h, comparable with a simulated cell.

Every figure reported (queue length, utilisation and completion rate per
station, jobs of a class at the stations) is the expectation of a reward
that is linear in p, so its value at p(t) (or at the averaged p) is the
exact transient value.  Response times are not (R = Q / X holds only on
average over a steady state), and are not reported.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._validate import check_count, check_real
from ..errors import NumericalWarning
from ..model.network import Network

__all__ = ["ctmc_transient"]


def _chain(net: Network, max_states: int, open_limit):
    """(number of states, generator rows/cols/rates, figures of a
    probability vector, description of state 0) of the network's chain."""
    from . import _ctmc_fast
    from ._ctmc_chain import _Chain
    from ._ctmc_spec import _check_size, _Spec
    from .ctmc import _compiled_sums, _describe, _figures, _result, _too_many

    spec = _Spec(net, open_limit)
    _check_size(spec, int(max_states))
    chain = _Chain(spec)
    lay = _ctmc_fast.layout(spec, chain)
    if lay is not None:
        est_states, _, _, upper = _ctmc_fast.check_memory(spec, lay, int(max_states))
        work = est_states * lay.D * (1 if upper else 10)
        states, n, rows, cols, vals, nnz, status = _ctmc_fast.build(lay, int(max_states),
                                                                     work=work)
        if status:
            raise _too_many(max_states)
        states = states[:n]
        rows, cols, vals = rows[:nnz], cols[:nnz], vals[:nnz]

        def figures(p):
            return _result(net, spec, n, 0.0, _compiled_sums(spec, lay, states, n, p))

        first = _describe(spec, chain, lay.decode(states[0]))
    else:
        states, rows, cols, vals = chain.build(int(max_states))
        n = len(states)

        def figures(p):
            return _figures(net, spec, chain, states, p, 0.0)

        first = _describe(spec, chain, states[0])
    return n, np.asarray(rows), np.asarray(cols), np.asarray(vals, float), figures, first


def ctmc_transient(net: Network, t_end: float, *, points: int = 50, average: bool = False,
                   max_states: int = 50_000, open_limit: int | None = None) -> dict:
    """Exact transient figures of ``net`` on the grid t_i = i t_end / points
    (i = 1..points): at each instant, or with ``average=True`` the average
    over each cell (t_{i-1}, t_i] (module docstring).

    Returns a dict: ``edges`` (the t_i), ``Q``, ``U``, ``X`` (points,
    stations), ``Q_class`` (points, classes), ``states``, ``initial`` (the
    initial state, described), ``start`` (the figures at t = 0, of the
    initial state), ``average``.

    Raises what :func:`qmodels.analytic.ctmc.ctmc` raises on a model it
    cannot build (a typed error naming the station or class), and
    :class:`~qmodels.errors.ProblemTooLargeError` above ``max_states``."""
    import scipy.sparse as sp
    from scipy.sparse.linalg import expm_multiply

    t_end = float(check_real(t_end, "t_end (the transient's end)", allow_zero=False))
    points = check_count(points, "points", minimum=1)
    n, rows, cols, vals, figures, first = _chain(net, max_states, open_limit)
    A = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    Qt = (A - sp.diags(np.asarray(A.sum(axis=1)).ravel())).T.tocsr()
    p0 = np.zeros(n)
    p0[0] = 1.0
    if average:
        B = sp.bmat([[Qt, sp.csr_matrix((n, n))], [sp.identity(n), sp.csr_matrix((n, n))]],
                    format="csr")
        x0 = np.concatenate([p0, np.zeros(n)])
        xs = expm_multiply(B, x0, start=0.0, stop=t_end, num=points + 1, endpoint=True)
        ints = xs[:, n:]
        h = t_end / points
        probs = (ints[1:] - ints[:-1]) / h
    else:
        xs = expm_multiply(Qt, p0, start=0.0, stop=t_end, num=points + 1, endpoint=True)
        probs = xs[1:]
    # round-off of the exponential's action: tiny negatives and a sum off 1
    probs = np.clip(probs, 0.0, None)
    drift = float(np.max(np.abs(probs.sum(axis=1) - 1.0)))
    probs /= probs.sum(axis=1, keepdims=True)
    K, C = len(net.stations), len(net.classes)
    out = {name: np.zeros((points, K)) for name in ("Q", "U", "X")}
    out["Q_class"] = np.zeros((points, C))
    branch = _branch_mask(net)
    exactness, assumed, warned = "exact", [], []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = [figures(p) for p in probs]
        at0 = figures(p0)
    for msg in dict.fromkeys(str(w.message) for w in caught):
        warnings.warn(msg, NumericalWarning, stacklevel=2)
    for i, r in enumerate(results):
        # the chain's own label at each instant: a phase-type fit, or a
        # truncation holding probability, makes the figures approximate
        if r.exactness != "exact":
            exactness = "approximate"
        assumed += [a for a in r.assumptions if a not in assumed
                    and not a.startswith("open jobs truncated")]
        warned += [w for w in r.warnings if w not in warned]
        Qs = np.asarray(r.station_queue_length, float)
        out["Q"][i] = Qs.sum(axis=0)
        out["U"][i] = np.asarray(r.station_utilization, float).sum(axis=0)
        out["X"][i] = np.asarray(r.station_throughput, float).sum(axis=0)
        out["Q_class"][i] = Qs[:, ~branch].sum(axis=1)
    Q0 = np.asarray(at0.station_queue_length, float)
    start = {"Q": Q0.sum(axis=0), "U": np.asarray(at0.station_utilization, float).sum(axis=0),
             "X": np.asarray(at0.station_throughput, float).sum(axis=0),
             "Q_class": Q0[:, ~branch].sum(axis=1)}
    trunc = max(float(r.info.get("truncation_mass", 0.0) or 0.0) for r in results)
    if trunc > 0:
        assumed.append(f"open jobs truncated at the chain's bound (largest probability there "
                       f"over the grid {trunc:.3g})")
    out.update(edges=t_end * np.arange(1, points + 1) / points, states=n, initial=first,
               start=start,
               average=bool(average), mass_drift=drift, exactness=exactness,
               assumptions=tuple(assumed), warnings=tuple(warned))
    return out


def _branch_mask(net: Network) -> np.ndarray:
    from ..model.forkjoin import branch_owner

    owner = branch_owner(net.stations)
    return np.array([s.name in owner for s in net.stations], dtype=bool)
