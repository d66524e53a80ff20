"""Fork-join networks (:class:`~qmodels.model.ForkJoin`): approximate mean
values and operational bounds.

:func:`forkjoin` solves a network with one class (open or closed) whose
stations are exponential single-server queues (FCFS or PS) and delays,
some of them on the branches of fork-joins:

Open class (Poisson arrivals at rate lambda)
    Stations outside fork-joins are M/M/1 (R = S / (1 - rho)) or delays
    (R = S), as in a Jackson network.  A fork-join whose k branches are
    single identical FCFS queues, one task each (homogeneous), gets

    * k = 1: the M/M/1 response time 1 / (mu - lambda_f), exact;
    * k = 2: R_2 = (12 - rho) / 8 * 1 / (mu - lambda_f), exact (Flatto &
      Hahn, SIAM J. Appl. Math. 44(5), 1984; Nelson & Tantawi, IEEE Trans.
      Computers 37(6), 1988, eq. (6));
    * k > 2: Nelson & Tantawi's scaling approximation (1988, eq. (13);
      Thomasian, ACM Computing Surveys 47(2), 2014, Table I eq. (3)):
      R_k = [H_k / H_2 + (1 - H_k / H_2) 4 rho / 11] (12 - rho) / 8
      * 1 / (mu - lambda_f), within 5 % of simulation for k <= 32 by their
      account.

    Any other fork-join (branches of different speeds, several stations on
    a branch, delays) gets the *independence upper bound*: E[max_b T_b]
    with the branch response times T_b taken independent, each the sum
    of exponential sojourns of mean S_k / (1 - rho_k) at its stations
    (the sojourn of an M/M/1 customer is exponential, and successive
    sojourns in a tandem of M/M/1 queues fed by a Poisson stream are
    independent: Reich 1957, Burke 1968).  The branch response times of a
    fork-join are associated random variables, so the true E[max] is at
    most this value (Nelson & Tantawi 1988, sec. III; Esary, Proschan &
    Walkup 1967): the answer is an upper bound on the fork-join time, and
    the note says so.

Closed class (population N, think time Z)
    A mean-value recursion over n = 1..N in the spirit of Varki's mean
    value technique for closed fork-join networks (E. Varki, SIGMETRICS
    1999, "Mean value technique for closed fork-join networks"): stations
    outside fork-joins follow exact MVA, R_k(n) = D_k (1 + Q_k(n-1))
    (Reiser & Lavenberg 1980); a task arriving at branch station k is
    taken to see its mean queue with one job less, r_k(n) = S_k (1 +
    Q_k(n-1)) (a delay: S_k); the fork-join time is E[max_b T_b] with
    T_b independent sums of exponential stages of means r_k(n) over the
    stations of branch b; X(n) = n / (Z + sum of the residence times),
    Q = X x residence time (tasks at a branch station, jobs at the
    fork-join).  At N = 1 this is exact (a lone job's tasks meet empty
    stations: E[max] of independent service-time sums, e.g. H_k S for k
    exponential branches); for N > 1 it is an approximation, not Varki's
    exact equations.  Against the simulator, over the 108 networks of
    ``python -m validation.forkjoin_accuracy --quick`` (k = 2, 4, 8
    branches of one queue or two in tandem, equal or spread service times,
    with and without stations outside, N = 2, 5, 20, Z = 0 or 2 s;
    2026-11-25): throughput error at most 4.9 % (mean 1.2 %), fork-join
    time at most 6.4 % (mean 1.6 %); X is low and R_f high (independence
    overstates the maximum), the error grows with k and is largest at
    moderate N.  Against the exact chain of the queue lengths
    (:mod:`validation.forkjoin_exact`; 292 networks of that grid widened to
    k = 2..8, N = 1..30, at most 30,000 states; 2026-11-27): X at most
    3.6 % (mean 0.6 %), R at most 4.6 % (mean 0.8 %); Varki's mean value
    technique (``method='forkjoin-varki'``,
    :mod:`~qmodels.analytic.forkjoin_varki`) on the same networks is off by
    up to 10.7 % and 12.0 %, so this recursion stays the automatic
    approximation (``qm.solve`` takes the exact chain, ``qm.ctmc``, first
    where its states fit the automatic budget).
    Open homogeneous fork-joins against the simulator: at
    most 3.3 % (k = 8, rho = 0.85; mean 1.2 %); the independence bound
    was never below the simulated value and at most 9.8 % above it.

Assumptions of both: one class; exponential service everywhere (the
branch times are sums of exponential stages); single-server queues and
delays (no multi-server or load-dependent station, no finite capacity, no
token pool); one task per branch (``tasks`` = 1); no nested fork-joins.
Anything else is refused by name (:class:`~qmodels.errors.UnsupportedModelError`);
``method='sim'`` simulates it exactly.

:func:`forkjoin_bounds` gives operational asymptotic bounds that hold for
any service distributions (see its docstring); :func:`qmodels.bounds`
returns them for a network with fork-joins.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidValueError, ProblemTooLargeError, UnstableError, UnsupportedModelError
from ..model.forkjoin import ForkJoin, branch_owner, forkjoins
from ..model.network import Closed, Delay, LoadDependent, Network, Open, Queue
from ..results import Curve, Result
from . import requires
from ._common import _refuse_held_or_bounded
from .contract import answers

__all__ = ["forkjoin", "forkjoin_bounds", "expected_max", "nelson_tantawi"]

_H2 = 1.5

#: Largest work the closed recursion accepts: one unit per station and
#: ``_QUAD_STAGE`` per branch stage per population step (each step
#: integrates E[max] of the branch times numerically).  Measured on the
#: 2-core reference machine: three one-queue branches cost about 1.2 ms a
#: step (N = 10^4 in 13 s), so the limit, about a minute, is N = 5 x 10^4
#: there.  Beyond it the solver refuses before allocating anything.
MAX_WORK = 3e7
_QUAD_STAGE = 200.0
#: Largest number of floats the closed recursion stores (X and Q per n).
MAX_FLOATS = 2e8


# ---------------------------------------------------------------------------
# the adapter: a network as plain arrays (the one place that reads Network)
# ---------------------------------------------------------------------------

def _read(net: Network, solver: str = "forkjoin"):
    """(kind, V, S, forks) of the single class of ``net``: kind[k] 0 delay,
    1 queue, 2 fork-join, 3 branch station; forks = [(k_f, [[k, ...] per
    branch])].  Refuses, by name, what :func:`forkjoin` does not model."""
    if not isinstance(net, Network):
        raise InvalidValueError(f"{solver} needs a qmodels Network, got {type(net).__name__}")
    if net.is_symbolic:
        raise UnsupportedModelError(
            f"{solver} is numeric; this network has sympy symbols: substitute numbers first")
    if len(net.classes) != 1:
        raise UnsupportedModelError(
            f"{solver} solves one class; this network has {len(net.classes)} "
            f"({', '.join(map(repr, net.class_names))}): use method='sim'")
    _refuse_held_or_bounded(net, solver)
    why = requires.arrival_shapes(net)
    if why is not None:
        # Flatto & Hahn and Nelson & Tantawi are for Poisson arrivals
        raise UnsupportedModelError(
            f"{why}; {solver} assumes Poisson arrivals (Flatto & Hahn 1984, Nelson & "
            "Tantawi 1988): use method='ctmc' (small models) or method='sim'")
    own = branch_owner(net.stations)
    index = {s: k for k, s in enumerate(net.station_names)}
    K = len(net.stations)
    kind = np.zeros(K, dtype=np.int64)
    for k, s in enumerate(net.stations):
        if isinstance(s, ForkJoin):
            if any(t != 1 for t in s.tasks):
                raise UnsupportedModelError(
                    f"fork-join {s.name!r}: tasks {list(s.tasks)}; {solver} models one task "
                    "per branch: use method='sim'")
            kind[k] = 2
            continue
        if not isinstance(s, (Delay, Queue)) or (isinstance(s, Queue) and s.servers != 1):
            what = (f"{s.servers} servers" if isinstance(s, Queue)
                    else "load-dependent" if isinstance(s, LoadDependent) else f"a {s.kind!r}")
            raise UnsupportedModelError(
                f"station {s.name!r} ({what}): {solver} models single-server queues and "
                "delays: use method='sim'")
        if not net.lowered.exponential[k]:
            raise UnsupportedModelError(
                f"station {s.name!r}: {net.lowered.shape_words(k)}; {solver} "
                "assumes exponential service (branch times are sums of exponential stages): "
                "use method='sim'")
        kind[k] = 3 if s.name in own else (0 if isinstance(s, Delay) else 1)
    forks = [(index[f.name], [[index[x] for x in br] for br in f.branches])
             for f in forkjoins(net.stations)]
    V = np.asarray(net.visits, dtype=float)[0]
    S = np.asarray(net.service_times, dtype=float)[0]
    return kind, V, S, forks


# ---------------------------------------------------------------------------
# kernels on plain arrays
# ---------------------------------------------------------------------------

def _hypo_coefficients(means):
    """(rates r_i, coefficients c_i) with P(T > t) = sum_i c_i e^{-r_i t} for
    T a sum of exponential stages of distinct rates, c_i = prod_{j != i}
    r_j / (r_j - r_i) (the hypoexponential distribution; Ross,
    *Introduction to Probability Models*, sec. 5.2.4); None when two rates
    are within 1 % of each other (the coefficients would cancel badly)."""
    r = sorted(1.0 / x for x in means)
    if any(b - a <= 1e-2 * b for a, b in zip(r[:-1], r[1:])):
        return None
    c = [math.prod(rj / (rj - ri) for j, rj in enumerate(r) if j != i)
         for i, ri in enumerate(r)]
    return r, c


def _stage_survival(means, t, coef=None):
    """P(sum of independent exponential stages with the given means > t)
    (a hypoexponential / phase-type survival function: alpha e^{T t} 1
    with alpha = e_1 and T the bidiagonal generator; Neuts 1981, ch. 2),
    by the closed form of :func:`_hypo_coefficients` when ``coef`` is
    given, else by the matrix exponential."""
    m = [x for x in means if x > 0]
    if not m:
        return 0.0
    if len(m) == 1:
        return math.exp(-t / m[0])
    if coef is not None:
        r, c = coef
        return min(1.0, max(0.0, sum(ci * math.exp(-ri * t) for ri, ci in zip(r, c))))
    # uniformization (Jensen 1953; Stewart, *Introduction to the Numerical
    # Solution of Markov Chains*, 1994, sec. 8.2): with q the largest rate,
    # P(T > t) = sum_k Poisson(k; q t) s_k, s_k the probability that the
    # jump chain (stage i advances w.p. r_i / q) is not absorbed in k steps;
    # every term is non-negative
    r = [1.0 / x for x in m]
    q = max(r)
    adv = [ri / q for ri in r]
    x = q * t
    v = [1.0] + [0.0] * (len(m) - 1)
    lp = -x
    out = 0.0
    k = 0
    while True:
        w = math.exp(lp)
        sk = sum(v)
        out += w * sk
        if (k > x and w * sk < 1e-17) or sk < 1e-300:
            break
        nv = [v[0] * (1.0 - adv[0])]
        for i in range(1, len(v)):
            nv.append(v[i] * (1.0 - adv[i]) + v[i - 1] * adv[i - 1])
        v = nv
        k += 1
        lp += math.log(x) - math.log(k) if x > 0 else -math.inf
    return min(1.0, out)


def expected_max(branches) -> float:
    """E[max_b T_b] of independent T_b, each a sum of independent
    exponential stages with the given means (``branches``: a list of lists
    of means).

    E[max] = int_0^inf (1 - prod_b P(T_b <= t)) dt (for a non-negative
    variable, E[Y] = int P(Y > t) dt; Ross, *A First Course in Probability*,
    ch. 7).  For k branches of one exponential stage of mean m each it is
    H_k m, H_k = 1 + 1/2 + ... + 1/k (the maximum of k exponentials; David &
    Nagaraja, *Order Statistics*, 2003, sec. 4.6).
    """
    from scipy.integrate import quad

    br = [[float(x) for x in b if x > 0] for b in branches]
    br = [b for b in br if b]
    if not br:
        return 0.0
    if len(br) == 1:
        return float(sum(br[0]))
    scale = max(sum(b) for b in br)
    coefs = [_hypo_coefficients(b) if len(b) > 1 else None for b in br]

    def tail(u):
        t = u * scale
        p = 1.0
        for b, cf in zip(br, coefs):
            p *= 1.0 - _stage_survival(b, t, cf)
        return 1.0 - p

    val, _ = quad(tail, 0.0, np.inf, epsabs=1e-13, epsrel=1e-11, limit=400)
    return float(val * scale)


def nelson_tantawi(k: int, lam: float, S: float) -> float:
    """Mean response time of a homogeneous fork-join of k M/M/1 FCFS queues
    (service time S each, Poisson arrivals at rate lam per fork):
    k = 1 the M/M/1 value 1 / (mu - lam); k = 2 exact (Flatto & Hahn 1984),
    (12 - rho) / 8 / (mu - lam); k > 2 Nelson & Tantawi's approximation
    (IEEE Trans. Computers 37(6), 1988; Thomasian 2014, Table I eq. (3)),
    [H_k / H_2 + (1 - H_k / H_2) 4 rho / 11] (12 - rho) / 8 / (mu - lam),
    with mu = 1 / S and rho = lam S < 1."""
    rho = lam * S
    if rho >= 1.0:
        raise UnstableError(f"fork-join branch queue unstable: rho = {rho:.6g} >= 1", rho=rho)
    base = S / (1.0 - rho)
    if k == 1:
        return base
    r2 = (12.0 - rho) / 8.0 * base
    if k == 2:
        return r2
    hk = sum(1.0 / i for i in range(1, k + 1))
    return (hk / _H2 + (1.0 - hk / _H2) * 4.0 * rho / 11.0) * r2


def _homogeneous(kind, S, branches) -> bool:
    """k single FCFS queues of one service time (checked by the caller for
    FCFS); a homogeneous fork-join of Nelson & Tantawi."""
    if any(len(b) != 1 or kind[b[0]] != 3 for b in branches):
        return False
    s0 = S[branches[0][0]]
    return all(S[b[0]] == s0 for b in branches)


def _check_work(name: str, N: int, work: float, floats: float) -> None:
    """Refuse, before any allocation, a closed recursion past
    :data:`MAX_WORK` or :data:`MAX_FLOATS`, naming the class, N, the
    estimate and the methods that answer at any population."""
    if work > MAX_WORK or floats > MAX_FLOATS:
        raise ProblemTooLargeError(
            f"class {name!r}: the fork-join recursion at N = {N} needs about {work:.3g} work "
            f"units and {floats * 8 / 2**30:.3g} GiB (limits {MAX_WORK:.0e} units, "
            f"{MAX_FLOATS * 8 / 2**30:.3g} GiB; one population step costs one unit per "
            f"station and {_QUAD_STAGE:g} per branch stage): use method='bounds' (any N: "
            "X <= 1/D_max) or method='sim', or a smaller population")


def _closed_kernel(kind, V, S, forks, is_queue, N: int, Z: float):
    """The closed recursion of the module docstring for n = 1..N; returns
    (X per n, Q per n (rows n, stations), residence per cycle at N)."""
    K = len(kind)
    D = V * S
    Q = np.zeros(K)
    Xc = np.zeros(N + 1)
    Qc = np.zeros((N + 1, K))
    res = np.zeros(K)
    for n in range(1, N + 1):
        res = np.zeros(K)
        for k in range(K):
            if kind[k] in (0, 1):
                res[k] = D[k] * (1.0 + Q[k]) if is_queue[k] else D[k]
        for kf, branches in forks:
            stages = []
            for b in branches:
                st = []
                for k in b:
                    r = S[k] * (1.0 + Q[k]) if is_queue[k] else S[k]
                    res[k] = V[k] * r
                    st.append(r)
                stages.append(st)
            res[kf] = V[kf] * expected_max(stages)
        cycle = Z + sum(res[k] for k in range(K) if kind[k] != 3)
        X = n / cycle if cycle > 0 else math.inf
        X = _saturate(X, n, Z, cycle, res, D, is_queue, forks)
        Q = X * res
        Xc[n] = X
        Qc[n] = Q
    return Xc, Qc, res


def _saturate(X, n, Z, cycle, res, D, is_queue, forks) -> float:
    """Hold the recursion to the utilisation law: where X(n) would load a
    queue past one server's capacity (X D_k > 1: the independence of the
    branch times understates the wait at a branch that holds most of the
    tasks, unequal branches with few jobs), the queue is saturated, X is
    its 1/D_k (the bottleneck law; QSP sec. 5.2) and the jobs that the
    cycle no longer accounts for wait at it: its residence time, and that
    of the fork-join whose branch it is (the join waits for its slowest
    branch), grow by n/X - cycle.  Updates ``res``; returns X."""
    queues = [k for k in range(len(D)) if is_queue[k] and D[k] > 0]
    if not queues or not math.isfinite(X):
        return X
    b = max(queues, key=lambda k: D[k])
    if X * D[b] <= 1.0:
        return X
    X = 1.0 / D[b]
    extra = n / X - cycle
    if extra > 0:
        res[b] += extra
        for kf, branches in forks:
            if any(b in br for br in branches):
                res[kf] += extra
    return X


def _open_kernel(kind, V, S, forks, is_queue, fcfs, lam: float, names):
    """Residence times per cycle (open class): Jackson outside fork-joins,
    Nelson-Tantawi or the independence bound inside.  Returns (res, kinds
    of fork-join answer per fork)."""
    K = len(kind)
    res = np.zeros(K)
    r_visit = np.zeros(K)
    for k in range(K):
        if kind[k] == 2:
            continue
        rho = lam * V[k] * S[k]
        if is_queue[k]:
            if rho >= 1.0:
                raise UnstableError(
                    f"station {names[k]!r} is unstable: rho = lambda V S = {rho:.6g} >= 1",
                    station=names[k], rho=rho)
            r_visit[k] = S[k] / (1.0 - rho)
        else:
            r_visit[k] = S[k]
        res[k] = V[k] * r_visit[k]
    how = []
    for kf, branches in forks:
        if _homogeneous(kind, S, branches) and all(is_queue[b[0]] and fcfs[b[0]]
                                                  for b in branches):
            kb = len(branches)
            F = nelson_tantawi(kb, lam * V[kf], S[branches[0][0]])
            how.append("exact" if kb <= 2 else "nelson-tantawi")
        else:
            F = expected_max([[r_visit[k] for k in b] for b in branches])
            how.append("independence-bound")
        res[kf] = V[kf] * F
    return res, how


# ---------------------------------------------------------------------------
# the solver
# ---------------------------------------------------------------------------

@answers()
def forkjoin(net: Network, *, curve: bool = False) -> Result:
    """Mean values of a single-class network with fork-joins.

    Assumptions and methods: see the module docstring (open: Flatto-Hahn
    exact for 2 homogeneous branches, Nelson-Tantawi for more, the
    independence upper bound otherwise; closed: an MVA recursion with the
    fork-join time taken as the mean maximum of independent branch times,
    exact at N = 1).  Station figures: at a fork-join, X is the rate of
    forks, R the time from fork to join per visit, Q the jobs forked and
    not joined, U = 0; at a branch station, X, R, Q and U are per task.
    The class response time counts each fork-join once (fork to join),
    not its branch stations.

    Parameters
    ----------
    net : Network
    curve : bool
        Closed class: also return X and Q for n = 0..N (``r.curve``).

    Examples
    --------
    A lone job's three exponential tasks of mean 1 s: E[max] = H_3 = 11/6.

    >>> import qmodels as qm
    >>> net = qm.Network(
    ...     [qm.ForkJoin("fj", [["a"], ["b"], ["c"]])] + [qm.Queue(n, 1.0) for n in "abc"],
    ...     [qm.Closed("job", 1, visits={"fj": 1})])
    >>> round(float(forkjoin(net).R["job"]), 9)
    1.833333333

    Raises
    ------
    UnsupportedModelError
        Several classes, a multi-server or load-dependent station, a
        finite capacity, a token pool, non-exponential service, several
        tasks per branch, a symbolic network.
    UnstableError
        An open load with rho >= 1 at a station.
    ProblemTooLargeError
        A closed population whose recursion passes :data:`MAX_WORK` (each
        step integrates E[max] numerically: N = 10^5 over three branches
        would take minutes), before any allocation.
    """
    kind, V, S, forks = _read(net)
    names = net.station_names
    stations = net.stations
    is_queue = np.array([isinstance(s, Queue) for s in stations])
    fcfs = np.array([isinstance(s, Queue) and s.discipline == "fcfs" for s in stations])
    cls = net.classes[0]
    K = len(stations)
    notes = []
    info: dict = {}
    crv = None
    if isinstance(cls, Open):
        lam = float(cls.arrival_rate)
        res, how = _open_kernel(kind, V, S, forks, is_queue, fcfs, lam, names)
        X = lam
        for (kf, _), h in zip(forks, how):
            f = names[kf]
            if h == "exact":
                notes.append(f"fork-join {f!r}: homogeneous M/M/1 branches, exact "
                             "(M/M/1, or Flatto & Hahn 1984 for two branches)")
            elif h == "nelson-tantawi":
                notes.append(f"fork-join {f!r}: Nelson & Tantawi (1988) scaling approximation "
                             "for homogeneous M/M/1 branches (within about 5 % for k <= 32)")
            else:
                notes.append(f"fork-join {f!r}: upper bound: E[max] of the branch response "
                             "times taken independent (Nelson & Tantawi 1988: associated "
                             "response times make it an upper bound)")
        info["fork_joins"] = dict(zip((names[kf] for kf, _ in forks), how))
    else:
        assert isinstance(cls, Closed)
        N = int(cls.population)
        Z = float(cls.think_time)
        if N > 0 and Z + float(np.sum((V * S)[kind != 3])) + sum(
                V[kf] * max(float(np.sum(S[b])) for b in brs) for kf, brs in forks) <= 0:
            raise InvalidValueError(
                f"class {cls.name!r}: all demands and the think time are zero, so the "
                "throughput is unbounded")
        stages = sum(len(b) for _, brs in forks for b in brs)
        _check_work(cls.name, N, float(N) * (K + _QUAD_STAGE * stages),
                    float(N + 1) * (K + 1))
        Xc, Qc, res = _closed_kernel(kind, V, S, forks, is_queue, N, Z)
        X = float(Xc[N]) if N > 0 else 0.0
        if N == 0:
            # no job: each residence time is what a lone job would see
            # (empty stations: the n = 1 step), as qm.mva reports at N = 0
            _, _, res = _closed_kernel(kind, V, S, forks, is_queue, 1, Z)
        notes.append(
            "approximate: MVA recursion with each fork-join time the mean maximum of "
            "independent branch times built from arrival-theorem residence times (in the "
            "spirit of Varki 1999); exact at N = 1")
        if curve:
            with np.errstate(divide="ignore", invalid="ignore"):
                Rn = np.where(Xc > 0, np.arange(N + 1) / np.where(Xc > 0, Xc, 1.0) - Z, 0.0)
            crv = Curve(population=np.arange(N + 1), throughput=Xc, response_time=Rn,
                        queue_length=Qc, utilization=Xc[:, None] * np.where(kind == 2, 0.0,
                                                                            V * S)[None, :],
                        station_names=tuple(names), class_name=cls.name,
                        method="forkjoin")
    Xk = X * V
    Qk = X * res
    with np.errstate(divide="ignore", invalid="ignore"):
        Rk = np.where(V > 0, res / np.where(V > 0, V, 1.0), S)
    U = np.where(kind == 2, 0.0, Xk * S)
    Rc = float(sum(res[k] for k in range(K) if kind[k] != 3))
    return Result(
        exactness=_exactness(cls, kind, V, is_queue, info),
        method="forkjoin",
        network=net,
        class_throughput=np.array([X]),
        class_response_time=np.array([Rc]),
        station_throughput=Xk[None, :],
        station_queue_length=Qk[None, :],
        station_response_time=Rk[None, :],
        station_utilization=U[None, :],
        notes=tuple(notes),
        curve=crv,
        info=info,
    )


def _exactness(cls, kind, V, is_queue, info) -> str:
    """``"exact"`` where the answer is: a closed class of at most one job (a
    lone job meets empty stations: E[max] of independent service-time
    sums), or an open class whose every fork-join is exact (homogeneous
    M/M/1 branches, at most two: Flatto & Hahn 1984) and that visits no
    queue outside them (the join's departures are not Poisson, so a queue
    after it is not M/M/1; delays are insensitive); else ``"approximate"``."""
    if isinstance(cls, Closed):
        return "exact" if int(cls.population) <= 1 else "approximate"
    outside = [k for k in range(len(kind)) if kind[k] in (0, 1) and is_queue[k] and V[k] > 0]
    forks = info.get("fork_joins", {})
    if not outside and forks and all(h == "exact" for h in forks.values()):
        return "exact"
    return "approximate"


# ---------------------------------------------------------------------------
# bounds
# ---------------------------------------------------------------------------

def forkjoin_bounds(net: Network, cls: str | None = None):
    """Asymptotic bounds on X and R of one class of a network with
    fork-joins, for any service distributions (operational, QSP ch. 5
    extended to fork-joins):

    * utilisation law at every station with servers (c servers, or the
      largest rate multiplier a_max): X <= c_k / D_k, branch stations
      included (their D_k counts every task): X <= 1 / D_max;
    * no contention: a fork-join section is never faster than its slowest
      branch (E[max_b T_b] >= max_b E[T_b]), so the cycle takes at least
      D_crit = (own service times outside fork-joins) + sum_f V_f max_b
      (sum of the branch's own service times): X <= N / (D_crit + Z),
      R >= D_crit;
    * pessimistic: whenever a job is in the system some station is busy
      (a forked job has a task at a branch station until it joins), and
      the stations are busy at most X D_tot of the time, D_tot the sum of
      every demand (branches summed: a section is no slower than the sum of
      its branches; a station counted at its slowest rate a_min), so
      R <= N D_tot and X >= N / (N D_tot + Z) (QSP sec. 5.2);
    * R >= N / X_max - Z (Little's law with X <= X_max).

    Open class: X = lambda, R >= D_crit, no finite upper bound.
    """
    from .bounds import Bounds
    from .laws import _class_of, job_speed

    ci = _class_of(net, cls)
    c = net.classes[ci]
    if net.is_symbolic:
        raise UnsupportedModelError(
            "fork-join bounds are numeric; this network has sympy symbols")
    _refuse_held_or_bounded(net, "fork-join bounds", "prove no bound with")
    own = branch_owner(net.stations)
    D = np.asarray(net.demands, dtype=float)[ci]
    S = np.asarray(net.service_times, dtype=float)[ci]
    V = np.asarray(net.visits, dtype=float)[ci]
    index = {s: k for k, s in enumerate(net.station_names)}
    xmax = math.inf
    bn = []
    d_tot = 0.0
    d_crit = 0.0
    for k, s in enumerate(net.stations):
        if isinstance(s, ForkJoin) or D[k] <= 0:
            continue
        if not isinstance(s, Delay):
            cap = float(s.max_rate_multiplier)
            if D[k] / cap > 0 and cap / D[k] < xmax * (1 - 1e-12):
                xmax, bn = cap / D[k], [s.name]
            elif D[k] > 0 and abs(cap / D[k] - xmax) <= 1e-12 * xmax:
                bn.append(s.name)
            d_tot += D[k] / float(s.min_rate_multiplier)
        else:
            d_tot += D[k]
        if s.name not in own:
            d_crit += D[k] / float(job_speed(s))
    for f in forkjoins(net.stations):
        kf = index[f.name]
        d_crit += V[kf] * max(sum(S[index[x]] / float(job_speed(net.station(x))) for x in br)
                              for br in f.branches)
    notes = ("fork-join network: operational asymptotic bounds only (a fork-join is no faster "
             "than its slowest branch, no slower than the sum of its branches); BJB, GB and PB "
             "rest on product form and are not given",)
    if isinstance(c, Open):
        lam = float(c.arrival_rate)
        if lam >= xmax:
            k = bn[0] if bn else "?"
            raise UnstableError(
                f"class {c.name!r}: arrival rate {lam:g} >= saturation rate {xmax:.6g} "
                f"(station {k!r})", station=k, rho=lam / xmax)
        aba = (lam, lam, d_crit, math.inf)
        return Bounds(net, c.name, lam, lam, lam, d_crit, math.inf, aba, None, xmax, None,
                      tuple(bn), notes=notes)
    N = c.population
    Z = float(c.think_time)
    if N == 0:
        aba = (0.0, 0.0, d_crit, d_crit)
        return Bounds(net, c.name, N, 0.0, 0.0, d_crit, d_crit, aba, None, xmax, None,
                      tuple(bn), notes=notes)
    x_hi = min(xmax, N / (d_crit + Z)) if d_crit + Z > 0 else xmax
    x_lo = N / (N * d_tot + Z) if N * d_tot + Z > 0 else x_hi
    r_lo = max(d_crit, N / xmax - Z) if xmax < math.inf else d_crit
    r_hi = N * d_tot
    aba = (x_lo, x_hi, r_lo, r_hi)
    nstar = (d_crit + Z) * xmax if xmax < math.inf else math.inf
    return Bounds(net, c.name, N, x_lo, x_hi, r_lo, r_hi, aba, None, xmax, nstar, tuple(bn),
                  notes=notes)
