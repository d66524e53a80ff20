"""Checks and result assembly shared by the product-form solvers
(:mod:`.mva`, :mod:`.multiclass`, :mod:`.open`, :mod:`.amva`,
:mod:`.convolution`): one place that says what product form requires and
turns a station into its rate shape."""

from __future__ import annotations

import math

import numpy as np

from .._validate import FrozenMap
from ..errors import (
    InvalidValueError,
    ProblemTooLargeError,
    UnstableError,
    UnsupportedModelError,
)
from ..model.lowered import DELAY, FIXED, LD
from ..model.network import Closed, LoadDependent, Network
from ..model.stations import PRIORITY_DISCIPLINES
from ..results import Result
from . import requires

_KIND_DELAY, _KIND_FIXED, _KIND_LD = DELAY, FIXED, LD


def _run(kernel, work, *args):
    """Run a kernel: lazily compiled ones pick Python or numba by ``work``;
    plain numba dispatchers are simply called."""
    if hasattr(kernel, "run"):
        return kernel.run(work, *args)
    return kernel(*args)


def _require_numeric(net: Network, solver: str):
    """Numbers only, and closed classes whose throughput a float can hold:
    a cycle of total demand plus think time T carries at most N/T jobs per
    second, so a T so small that N/T overflows (subnormal times, say) is
    refused here, naming the class and its stations, instead of giving inf."""
    if net.is_symbolic:
        raise UnsupportedModelError(
            f"{solver} is numeric; this network has sympy symbols: use qmodels.symbolic"
        )
    # once per network: the lowered form keeps that it passed
    net.lowered.memo(("require_numeric",), lambda: _check_cycles(net, solver))


def _check_cycles(net: Network, solver: str) -> bool:
    D = np.asarray(net.demands, dtype=float)
    big = np.finfo(float).max
    for c, cls in enumerate(net.classes):
        N = getattr(cls, "population", 0)
        T = float(D[c].sum()) + float(getattr(cls, "think_time", 0.0))
        if N and 0 < T and N / big >= T:
            where = ", ".join(repr(net.stations[k].name) for k in np.flatnonzero(D[c] > 0))
            raise InvalidValueError(
                f"class {cls.name!r}: its cycle takes {T:.3g} s (demands at {where or '-'} plus "
                f"think time), so N / T = {N} / {T:.3g} jobs per second overflows a float; "
                f"{solver} cannot represent it: rescale the time unit")
    return True


def non_exponential_fcfs(net: Network):
    """The first FCFS queue that some class visits with a non-exponential
    service shape (:func:`~qmodels.model.distributions.is_exponential`),
    and its description for a message; (None, None) if there is none.
    Such a station breaks product form (BCMP type 1; Baskett, Chandy,
    Muntz & Palacios 1975)."""
    if requires.service_shapes(net) is None:
        return None, None
    low = net.lowered
    V = net.visits
    for k in range(len(low.kind)):
        if not low.acts_fcfs[k] or low.exponential[k]:
            continue
        if any(V[i][k] != 0 for i in range(len(low.class_names))):
            s = net.stations[k]
            return s, f"station {s.name!r} (FCFS, {low.shape_words(k)})"
    return None, None  # pragma: no cover - service_shapes found one above


def mixed_priority_station(net: Network):
    """The first ``prio``/``prio-pr`` queue visited by classes of more than
    one priority level, or None (:func:`.requires.mixed_priority`).  With
    one level present a priority queue serves FCFS (the order within a
    level), so only a mix breaks product form (BCMP allows no
    class-dependent order; Baskett et al. 1975)."""
    k = requires.mixed_priority(net)
    return None if k is None else net.stations[k]


def _check_service_shapes(net: Network, solver: str):
    """Product form (BCMP type 1; Baskett, Chandy, Muntz & Palacios 1975)
    needs exponential service at an FCFS queue; PS and delay stations are
    insensitive to the shape (types 2 and 3).  An FCFS queue that a class
    visits with another shape is refused, naming the station: the
    product-form answer would be that of the exponential, silently (M/D/1
    waits half as long as M/M/1; Kleinrock 1975, eq. 5.85)."""
    why = requires.service_shapes(net)
    if why is not None:
        raise UnsupportedModelError(
            f"{why}; {solver} would answer as if it were exponential: use method='sim', "
            "discipline='ps' where the server is shared, or drop the distribution")


#: where qm.solve(net) goes for a model product form cannot hold exactly
_WAY_ON = ("qm.solve(net) picks a method that holds (the CTMC where the chain is small, "
           "else an approximation that names itself)")


def _check_capacities(net: Network, population: int | None, solver: str,
                      fcfs_as_ps: bool = False):
    """Refuse what breaks product form (:func:`.requires.product_form`),
    naming the station, class or pool: a kind or discipline without product
    form, token pools, a finite capacity that can bind, a non-Poisson
    arrival stream, a non-exponential FCFS queue, an FCFS queue whose mean
    service time differs by class (unless ``fcfs_as_ps``: the caller asked
    for the processor-sharing substitute, and its answer is labelled
    approximate)."""
    if requires.product_form(net, population, fcfs_as_ps) is None:
        return
    why = requires.station_kinds(net)
    if why is not None:
        raise UnsupportedModelError(f"{why}; {solver} cannot honour it: {requires.way_out(net)}")
    why = requires.pools(net)
    if why is not None:
        raise UnsupportedModelError(
            f"{why}; {solver} cannot honour it: use method='sim', qmodels.analytic.ctmc or "
            "qmodels.analytic.decomposition")
    why = requires.capacities(net, population)
    if why is not None:
        raise UnsupportedModelError(
            f"{why}; {solver} assumes product form: use method='ctmc' (exact, small models) "
            "or method='sim'")
    why = requires.arrival_shapes(net)
    if why is not None:
        raise UnsupportedModelError(
            f"{why}; {solver} would answer as if the stream were Poisson: {_WAY_ON}, "
            "method='qna' (open networks) or method='sim'")
    _check_service_shapes(net, solver)
    if not fcfs_as_ps:
        why = requires.fcfs_class_dependent(net)
        if why is not None:
            raise UnsupportedModelError(
                f"{why}; {solver} would answer for processor sharing: {_WAY_ON}, or pass "
                "fcfs_as_ps=True for the processor-sharing answer (labelled approximate)")


def _refuse_held_or_bounded(net: Network, solver: str, what: str = "does not model") -> None:
    """Refuse a token pool or a finite capacity, naming it, for a method
    whose model has neither (the two-moment, priority and fork-join
    methods): the one refusal they share, from :func:`.requires.pools` and
    :func:`.requires.capacities` (any capacity counts: ``population=None``)."""
    if net.pools:
        p = net.pools[0]
        raise UnsupportedModelError(
            f"token pool {p.name!r} ({p.tokens} tokens): {solver} {what} held resources: "
            "use method='sim' or qmodels.analytic.decomposition")
    why = requires.capacities(net, None)
    if why is not None:
        raise UnsupportedModelError(
            f"{why}; {solver} {what} blocking: use method='sim' or qmodels.analytic.ctmc")


def _open_ld_station(lam_k, S, mult, name):
    """Mean number at an open load-dependent station (birth-death chain).

    pi(j) = pi(0) prod_{i<=j} lam S / a(i) (Kleinrock 1975, sec. 3.1;
    Bolch et al. 2006, eq. 6.6); beyond the L given multipliers the chain is
    geometric with ratio r = lam S / a_L < 1, summed in closed form.
    Returns (Q, P(empty)).
    """
    if lam_k == 0 or S == 0:
        return 0.0, 1.0
    a = np.asarray(mult, dtype=float)
    L = len(a)
    r = lam_k * S / a[-1]
    if r >= 1:
        raise UnstableError(
            f"station {name!r} is unstable: rho = lambda * S / a_L = {r:.6g} >= 1, with a_L = "
            f"{a[-1]:.6g} its limiting rate multiplier (the last one, which holds for every "
            "larger number present)",
            station=name,
            rho=r,
        )
    from scipy.special import logsumexp

    lt = np.concatenate([[0.0], np.cumsum(np.log(lam_k * S / a))])  # log pi(j)/pi(0), j=0..L
    j = np.arange(L + 1, dtype=float)
    # head j = 0..L-1; tail j >= L: pi(L) r^(j-L)
    lhead = lt[:L]
    ltail_mass = lt[L] - math.log1p(-r)
    logZ = logsumexp(np.concatenate([lhead, [ltail_mass]]))
    head_mean = float(np.sum(j[:L] * np.exp(lhead - logZ)))
    tail_mean = math.exp(lt[L] - logZ) * (L / (1 - r) + r / (1 - r) ** 2)
    return head_mean + tail_mean, math.exp(-logZ)


def _ps_notes(net: Network) -> list[str]:
    """One note naming the priority queues that one level visits (solved
    as FCFS, the order within a level).  (FCFS queues with class-dependent
    service solved as processor sharing are not a note but an assumption of
    an approximate answer: :func:`fcfs_as_ps_stations`.)  Computed once per
    network (the lowered form keeps them); a new list each call, which the
    caller may extend."""
    return list(net.lowered.memo(("ps_notes",), lambda: tuple(_notes_of(net))))


def _notes_of(net: Network) -> list[str]:
    V = np.asarray(net.visits, dtype=float)
    used = V > 0
    low = net.lowered
    prio = [low.station_names[k] for k, d in enumerate(low.discipline)
            if d in PRIORITY_DISCIPLINES and used[:, k].any()]
    return ([f"priority station(s) {', '.join(repr(n) for n in prio)}: every class there has "
             "the same priority level, so the discipline serves them FCFS (solved as FCFS)"]
            if prio else [])


def fcfs_as_ps_stations(net: Network) -> list[str]:
    """The FCFS queues (and one-level priority queues) that several classes
    visit with different mean service times: the stations that
    ``fcfs_as_ps=True`` solves as processor sharing (BCMP type 2)."""
    low = net.lowered
    if len(low.class_names) < 2 or low.symbolic:
        return []
    V = np.asarray(net.visits, dtype=float)
    S = np.asarray(net.service_times, dtype=float)
    load = np.where(low.is_open, low.arrival_rate, low.population).astype(float)
    # a class that never has a job, or a visit of zero service time: no matter
    used = (V > 0) & (S > 0) & (load > 0)[:, None]
    big = np.where(used, S, -np.inf).max(axis=0)
    small = np.where(used, S, np.inf).min(axis=0)
    multi = used.sum(axis=0) >= 2
    with np.errstate(invalid="ignore"):
        differs = multi & (big - small > 1e-12 * np.maximum(1.0, np.abs(big)))
    return [low.station_names[k] for k in np.flatnonzero(differs & low.acts_fcfs)]


#: the exact reductions of :meth:`~qmodels.model.lowered.Lowered.shape` that
#: the lattice and approximate-MVA routes take (a station nobody loads, a
#: constant rate of any value, a(j) = j up to the population, multipliers
#: beyond the population dropped)
LATTICE = {"unused_delay": True, "constant": "any", "identity_delay": True, "truncate": True}


def _shape(net: Network, k: int, ntot: int, unused_delay: bool = True):
    """(kind, multipliers) of station ``k`` in a closed network of total
    population ``ntot`` by the lattice rule (:data:`LATTICE`; callers pass
    |N| + 1 where the arrival theorem for a class of population 0 looks at
    one job more than the network holds).  ``unused_delay=False`` keeps the
    shape of a station no class loads."""
    return net.lowered.shape(k, ntot, **{**LATTICE, "unused_delay": unused_delay})


def _check_classes(net: Network, D, Z, N):
    for c, cls in enumerate(net.classes):
        if isinstance(cls, Closed) and N[c] > 0 and D[c].sum() + Z[c] <= 0:
            raise InvalidValueError(
                f"class {cls.name!r}: all demands and the think time are zero, "
                "so the throughput is unbounded"
            )


def _check_options(tol, max_iter):
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.floating)) or not (
        math.isfinite(tol) and tol > 0
    ):
        raise InvalidValueError(f"tol must be a finite positive number, got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise InvalidValueError(f"max_iter must be an integer >= 1, got {max_iter!r}")


def _utilisation(net, X, D, P0row, ld_st):
    """Per class utilisation (classes, stations): X_c D_ck / c for queues,
    X_c D_ck for delays (the mean number busy); for a load-dependent
    station 1 - P(empty), split among classes in proportion to X_c D_ck."""
    U = X[:, None] * D / _divisors(net)[None, :]
    for i, k in enumerate(ld_st):
        if isinstance(net.stations[k], LoadDependent):
            w = U[:, k]
            tot = w.sum()
            U[:, k] = (1.0 - P0row[i]) * w / tot if tot > 0 else 0.0
    return U


def _result(net, method, X, Rres, U, notes, info, curve=None, visit_time=None):
    """Assemble a Result from class throughputs X (C,), residence times per
    cycle Rres (C, K) and utilisations U (C, K).  ``visit_time`` (C, K) is
    the per-visit response time a class would have where it never goes
    (the arrival-theorem value S_ck (1 + Q_k(N - e_c)) at a single server;
    Reiser & Lavenberg 1980); without it, the service time."""
    V = np.asarray(net.visits, dtype=float)
    S = np.asarray(net.service_times, dtype=float)
    Q = X[:, None] * Rres
    Xk = X[:, None] * V
    with np.errstate(divide="ignore", invalid="ignore"):
        Rk = np.where(V > 0, Rres / np.where(V > 0, V, 1.0),
                      S if visit_time is None else visit_time)
    Rc = Rres.sum(axis=1)
    if net.is_symbolic:
        return Result(
            method=method,
            network=net,
            class_throughput=X,
            class_response_time=Rc,
            station_throughput=Xk,
            station_queue_length=Q,
            station_response_time=Rk,
            station_utilization=U,
            notes=tuple(notes),
            curve=curve,
            info=info,
        )
    # Q, Xk, Rk and Rc are fresh here: the Result takes them over; X and U
    # are the caller's (it may keep them), so they are copied
    return Result._owned(method, net, np.array(X, dtype=float), Rc, Xk, Q, Rk,
                         np.array(U, dtype=float), tuple(notes), curve,
                         info if isinstance(info, FrozenMap) else FrozenMap(info or {}))


def _divisors(net) -> np.ndarray:
    """Per station divisor of X D in the utilisation: servers for a queue,
    the constant rate a of a constant-rate load-dependent station, else 1
    (:meth:`~qmodels.model.lowered.Lowered.divisors`)."""
    low = net.lowered
    return low.memo("common.divisors", low.divisors)    # read, never written


def _not_finite(net: Network, what: str = "normalising constant") -> InvalidValueError:
    """The error for a normalising constant that left the floating-point
    range: it names, per class, the stations with the largest and the
    smallest positive demand (their ratio to the power N is what overflowed)."""
    D = np.asarray(net.demands, dtype=float)
    parts = []
    for c, cls in enumerate(net.classes):
        pos = [(D[c, k], s.name) for k, s in enumerate(net.stations) if D[c, k] > 0]
        if pos:
            hi, lo = max(pos), min(pos)
            parts.append(f"class {cls.name!r}: demand {hi[0]:.3g} s at {hi[1]!r} and "
                         f"{lo[0]:.3g} s at {lo[1]!r}")
    return InvalidValueError(
        f"{what} is not finite: " + "; ".join(parts)
        + " (demands that far apart, or subnormal ones, leave the floating-point range)")


def _size_text(nbytes: float) -> str:
    """Bytes in the largest unit that keeps the figure at least 1 (a
    refusal for time alone would otherwise say "0 GiB")."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{nbytes:.0f} bytes"


def _check_size(what: str, steps: float, floats: float, max_steps: float,
                max_floats: float) -> None:
    """Refuse, before any allocation, a solve whose estimated work or memory
    passes the solver's limits: a :class:`ProblemTooLargeError` stating the
    estimate, the limits and the methods that can answer."""
    if steps > max_steps or floats > max_floats:
        raise ProblemTooLargeError(
            f"{what} needs about {steps:.3g} steps and {_size_text(floats * 8)} "
            f"(limits {max_steps:.0e} steps, {max_floats * 8 / 2**30:.3g} GiB): use "
            "method='bounds' (independent of N), 'schweitzer' or 'linearizer' "
            "(approximate MVA) or 'sim'")
