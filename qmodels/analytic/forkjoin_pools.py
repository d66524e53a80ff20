"""A closed fork-join whose tasks hold token pools (``method="forkjoin-pools"``,
approximate): the branch by the decomposition's pool treatment, the
fork-join as a chain of its tasks fed by the flow-equivalent server of the
rest of the network.

The network: one closed class; one fork-join that forks ``k`` tasks down
one branch (a chain of stations, e.g. ``release -> dma -> port -> link``)
and joins them; token pools held by the tasks along that branch (a buffer
slot per packet of a burst, a switch port's place), nowhere else; outside
the fork-join, product-form stations (exponential FCFS, PS, delays,
multi-server, load-dependent).  No other analytic method takes it
(:func:`~qmodels.analytic.decomposition.decompose` refuses fork-joins,
:func:`~qmodels.analytic.forkjoin.forkjoin` refuses pools and several tasks
per branch, the exact chain of :mod:`qmodels.analytic._ctmc_forkjoin`
refuses pools).

The method, in three levels (a hierarchical decomposition):

1. **The branch.**  The branch's stations and pools as a closed network of
   ``m`` circulating tasks (leaving the last station = back to the first),
   solved for m = 0..L by the decomposition
   (:func:`~qmodels.analytic.decomposition.decompose`: each group of pools
   a flow-equivalent server, its sub-network solved by exact MVA or, for
   overlapping pools, the exact CTMC; Lazowska et al. [QSP] ch. 9, Bolch
   et al. [Bolch] sec. 10.1), giving its task throughput mu(m) and the
   figures of its stations and pools with m tasks present.  Past L, where
   mu has converged, the branch is saturated: mu(m) = mu(L) and each
   further task adds what the L-th added (it waits at the bottleneck).

2. **The fork-join.**  The branch is taken to complete tasks one at a time
   at rate mu(m) when m are present, in the order they entered (true of
   single-server FCFS queues and first-come token queues; the
   flow-equivalent view of step 1).  With j transactions at the
   fork-join, the oldest one's r remaining tasks are the first to finish,
   and it leaves at the completion that brings m = (j - 1) k + r down to
   (j - 1) k: the state of the fork-join is the number m of tasks present
   (j = ceil(m / k) transactions).  For one transaction on a branch of rate
   mu(m) = m / S (a delay) its mean drain time sum_{r=1..k} 1 / mu(r) is
   S H_k, the mean maximum of k independent exponential task times (the
   order-statistics argument behind the harmonic numbers of Nelson &
   Tantawi [NT] and of :func:`qmodels.analytic.forkjoin.expected_max`);
   with one token serialising the branch, k S.

3. **The network** (``fork="chain"``, the default).  The rest of the
   network (its stations and think time, product form) is replaced by its
   flow-equivalent server ([CHW]; [Bolch] sec. 8.4): with n = N - j
   transactions outside it sends them to the fork-join at rate

       Lambda(n) = V_f G_-f(n - 1) / G_-f(n)

   (G_-f the normalising constants of the rest, by convolution, [Bolch]
   sec. 8.1), as in Marie's method for one non-product-form station
   ([Marie]; [Bolch] sec. 10.1.4, eq. (1) of
   :mod:`qmodels.analytic.marie`).  The fork-join fed so is a Markov chain
   on m = 0..N k: m -> m - 1 at rate mu(m) (a task done), m -> m + k at
   rate Lambda(N - ceil(m / k)) (a transaction forks).  The chain only
   steps down by one, so the balance of the cut between m and m + 1,

       pi(m + 1) mu(m + 1) = sum_{i = m - k + 1..m} pi(i) Lambda(N - ceil(i / k)),

   gives pi in one pass.  X = sum_m pi(m) Lambda(...) / V_f; a branch
   figure F is sum_m pi(m) F(m); a station of the rest has its figure at
   n = N - j jobs (the convolution's marginals, [Bolch] eq. 8.13) mixed
   over p_f(j) = sum_{ceil(m/k) = j} pi(m); the fork-join's queue length
   is the mean number of transactions forked and not joined, sum_j j p_f(j).
   The chain keeps what a flow-equivalent server of the fork-join loses:
   the drain of k tasks takes a nearly constant time (k exponential steps),
   and transactions queue behind it less than behind an exponential
   server.

   ``fork="fes"``: the fork-join itself as a flow-equivalent server
   instead ([CHW]; [QSP] ch. 8-9): in its closed subsystem of j
   transactions (short-circuited) the leaving one comes back at once with k
   new tasks, so m cycles through (j - 1) k + r, r = k..1, and it
   completes at X_fj(j) = 1 / sum_{r=1..k} 1 / mu((j - 1) k + r); the
   network with this load-dependent station is solved exactly by
   convolution, the branch figures averaged over the cycle (weights
   1 / mu(m)).  It overstates the queue of tasks at light load
   (Accuracy below).

Assumptions
-----------
* One closed class, numeric parameters, exponential service at FCFS
  queues (the decomposition's and the convolution's product form).
* One fork-join, one branch (``tasks`` = k >= 1 tasks down it), every
  token pool held along that branch (its ``path`` inside the branch) and
  used by no station outside it; no finite capacity.
* Tasks leave the branch in the order they entered.  Single-server FCFS
  queues and first-come token queues keep that order; a delay or a
  multi-server queue on the branch can let a task pass another, which the
  method ignores (a lone delay is still exact: the drain time above is
  then the mean maximum of k exponentials).
* Tasks waiting for a token are in no station: their mean number is
  ``info["pools"][name]["waiting"]`` (tasks, ``"counts": "tasks"``), the
  same figure as the simulator's ``pools[name]["Q"]``; the transactions
  they belong to are counted in the fork-join's queue length.

Accuracy
--------
Approximate: the branch's rate depends on more than the number of tasks
present (the decomposition's own approximation where a pool binds, and
the pipeline's fill: the first task of a burst needs the whole branch
before the completions come at mu), and the arrivals from the rest on
more than the number of transactions there (Marie's step).  Exact for
k = 1 where the decomposition is, and for one transaction on a branch
whose completion rate depends only on the tasks present
(``tests/test_forkjoin_pools.py``, with a hand-built exact chain for jobs
that think and fork into one exponential server).  On the SPAX burst
against the simulator (:func:`qmodels.cases.spax.burst_sweep`, 120 s x 5
replications a point, 2026-11-28; 160 transactions, m = 0, unlimited
disks; 32 packets and 4 XNIF slots at p_io 10..70 %, and 16 or 8 packets,
2 or 8 slots at p_io 10, 20, 30, 40, 70 %: 27 points): TPS within 1.6 %
everywhere (the simulator's half-width 1-4 %); the packets waiting for
an XNIF slot within 0.3 % from p_io 40 % (saturated), -9 % to +5 % at
10-20 % (half-width 5-13 %; +28 % on 0.017 packets at k = 8, p_io 10 %,
where the half-width is 34 %), and at 30 %, on the edge of saturation
where the simulated queue swings widely (120 s runs: half-widths up to
40 %), rerun for 600 s x 5: +1.0 % at 4 slots (half-width 4 %), +14 % at 8
slots (half-width 14 %), +9 % at 8 packets (half-width 12 %).
``fork="fes"`` gives the same TPS but overstates the light-load queue by
27 % to 170 %.  On 18 small networks where the branch weighs on X (think
1 s, a CPU of 0.05 s, k = 2, 4, 8 tasks down three queues of 0.1, 0.2,
0.15 s under two overlapping pools of 2 and 1 or 4 and 2 tokens, N = 2, 5,
10; 8000 s x 5 replications, 2026-11-28; one of them is a slow test of
``tests/test_forkjoin_pools.py``): X within 1.1 % of the simulator
(``fork="fes"``: up to -4.8 %, at N = 2), the tasks waiting for the first
pool within 6 % but for -20 % at N = 2, k = 4 with 4 and 2 tokens (0.47
against 0.59 tasks; ``fork="fes"``: up to +31 %).  (SPAX's TPS is a weak
test: it is CPU-bound below saturation and bound by the switch port's
place above, in the burst as packet by packet; these small networks are
the stronger one.)

References
----------
.. [CHW] K. M. Chandy, U. Herzog & L. Woo, "Parametric analysis of queuing
   networks", IBM J. Res. Dev. 19(1), 1975, pp. 36-42 (the flow-equivalent
   server, Norton's theorem for queueing networks).
.. [QSP] E. D. Lazowska, J. Zahorjan, G. S. Graham & K. C. Sevcik,
   *Quantitative System Performance*, Prentice-Hall 1984, ch. 8
   (flow-equivalent service centres) and ch. 9 (memory constraints: a
   subsystem of limited population as a load-dependent centre).
.. [Bolch] G. Bolch, S. Greiner, H. de Meer & K. S. Trivedi, *Queueing
   Networks and Markov Chains*, 2nd ed., Wiley 2006, sec. 8.1 (convolution
   with load-dependent stations, marginals eq. 8.13) and sec. 10.1
   (hierarchical decomposition).
.. [Marie] R. Marie, "An approximate analytical method for general
   queueing networks", IEEE Trans. Software Eng. SE-5(5), 1979,
   pp. 530-538 (a station outside product form fed by the flow-equivalent
   server of the rest).
.. [NT] R. Nelson & A. N. Tantawi, "Approximate analysis of fork/join
   synchronization in parallel queues", IEEE Trans. Computers 37(6), 1988
   (the mean maximum of k exponentials, H_k / mu).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidValueError, ProblemTooLargeError, UnsupportedModelError
from ..model.forkjoin import ForkJoin, branch_owner, forkjoins
from ..model.network import Closed, Network, TokenPool
from ..results import Result
from .contract import answers

__all__ = ["forkjoin_pools", "refusal", "MAX_BRANCH_POPULATION", "MAX_TASKS", "MAX_POPULATION"]

#: the branch network is solved for at most this many tasks (the
#: decomposition's convolution holds L x L matrices); past it the branch
#: must have converged to its saturated rate, else the method refuses
MAX_BRANCH_POPULATION = 2048
#: most tasks the fork-join may hold (N k): the chain of level 3 has N k + 1
#: states, solved in one pass of a Python loop (about 10 us a state)
MAX_TASKS = 10 ** 6
#: most jobs: the convolution of the rest holds (N + 1) x (N + 1) matrices
MAX_POPULATION = 4000
#: first branch population tried (doubled until the rate has converged)
_L0 = 128
#: relative change of mu between L - 1 and L taken as converged
_CONVERGED = 1e-9


# ---------------------------------------------------------------------------
# what the method takes
# ---------------------------------------------------------------------------

def refusal(net: Network) -> str | None:
    """Why :func:`forkjoin_pools` cannot answer ``net`` (a sentence naming
    the station, pool or class), or ``None``: numbers, one closed class,
    exactly one fork-join with one branch, at least one token pool and
    every pool held along that branch, product-form stations outside it
    (exponential FCFS), no finite capacity."""
    if not isinstance(net, Network):
        return f"forkjoin-pools needs a qmodels Network, got {type(net).__name__}"
    if net.is_symbolic:
        return "the network has sympy symbols (forkjoin-pools is numeric)"
    if len(net.classes) != 1 or not isinstance(net.classes[0], Closed):
        return ("forkjoin-pools needs one closed class; the network has "
                + ", ".join(f"{c.name!r} ({c.kind})" for c in net.classes))
    fjs = forkjoins(net.stations)
    if len(fjs) != 1:
        return (f"forkjoin-pools models one fork-join; the network has {len(fjs)}"
                + (f" ({', '.join(repr(f.name) for f in fjs)})" if fjs else ""))
    f = fjs[0]
    if len(f.branches) != 1:
        return (f"fork-join {f.name!r} has {len(f.branches)} branches; forkjoin-pools models "
                "one branch with k tasks down it (the pools' holders)")
    if not net.pools:
        return "the network has no token pool (method='forkjoin' solves fork-joins without)"
    branch = tuple(f.branches[0])
    for p in net.pools:
        path = tuple(p.path or ())
        if not path or any(s not in branch for s in path):
            return (f"token pool {p.name!r} ({p.acquire!r} -> {p.release!r}) is not held "
                    f"along the branch of fork-join {f.name!r} ({' -> '.join(branch)}); "
                    "forkjoin-pools models pools held by the tasks only")
        if p.classes is not None and net.classes[0].name not in p.classes:
            return (f"token pool {p.name!r} is not used by class {net.classes[0].name!r}; "
                    "forkjoin-pools needs every pool used by the tasks")
    from .requires import PRODUCT_FORM_DISCIPLINES, service_shapes

    low = net.lowered
    for k, s in enumerate(net.stations):
        if isinstance(s, ForkJoin):
            continue
        kind = low.kind[k]
        if kind not in ("delay", "queue", "ld"):
            return f"station {s.name!r} is a {kind!r} element: forkjoin-pools needs product form"
        if kind == "queue" and low.discipline[k] not in PRODUCT_FORM_DISCIPLINES \
                and not low.acts_fcfs[k]:
            return (f"station {s.name!r}: discipline {low.discipline[k]!r}; forkjoin-pools "
                    f"needs one of {', '.join(PRODUCT_FORM_DISCIPLINES)}")
        if low.capacity[k] is not None:
            return (f"station {s.name!r}: finite capacity {low.capacity[k]}; forkjoin-pools "
                    "models no blocking")
    return service_shapes(net)


# ---------------------------------------------------------------------------
# level 1: the branch as a closed network of m tasks
# ---------------------------------------------------------------------------

def _branch_network(net: Network, branch: tuple, L: int) -> Network:
    """The branch's stations in a ring (leaving the last = back to the
    first), ``L`` tasks, the network's pools with the same spans."""
    S = np.asarray(net.service_times, dtype=float)[0]
    stations = [net.station(s) for s in branch]
    routing = {a: {b: 1.0} for a, b in zip(branch[:-1], branch[1:])}
    routing[branch[-1]] = {branch[0]: 1.0}
    service = {s: float(S[net.station_index(s)]) for s in branch}
    pools = [TokenPool(p.name, p.tokens, p.acquire, p.release) for p in net.pools]
    return Network(stations, [Closed("task", L, routing=routing, service=service,
                                     reference=branch[0])], pools=pools,
                   name="fork-join branch")


def _branch_figures(net: Network, branch: tuple, total: int):
    """mu(m) and the branch figures for m = 0..total tasks: (mu, Q, U, W)
    with Q, U shaped (total + 1, branch stations) and W (total + 1,
    pools); the population actually solved; and the decomposition's pool
    information (FES rates) at that population."""
    from .decomposition import _decompose

    L = min(total, _L0)
    while True:
        r = _decompose(_branch_network(net, branch, L), curve=True, inner="auto")
        c = r.curve
        X = np.asarray(c.throughput, dtype=float)
        conv = L >= 2 and abs(X[L] - X[L - 1]) <= _CONVERGED * X[L]
        if L >= total or conv:
            break
        if L >= MAX_BRANCH_POPULATION:
            raise ProblemTooLargeError(
                f"fork-join branch {' -> '.join(branch)}: its task throughput has not "
                f"converged at {L} tasks (mu({L - 1}) = {X[L - 1]:.6g}, mu({L}) = "
                f"{X[L]:.6g}) and the fork-join can hold {total} tasks; forkjoin-pools solves "
                f"the branch for at most {MAX_BRANCH_POPULATION} (use method='sim')")
        L = min(total, 2 * L)
    Q = np.asarray(c.queue_length, dtype=float)
    U = np.asarray(c.utilization, dtype=float)
    W = np.array([r.info["pools"][p.name]["waiting_curve"] for p in net.pools],
                 dtype=float).T
    if total > L:
        # saturated: each further task adds what the L-th added (it waits at
        # the bottleneck, a token queue or a queue of the branch)
        extra = np.arange(1, total - L + 1, dtype=float)[:, None]
        X = np.concatenate([X, np.full(total - L, X[L])])
        Q = np.concatenate([Q, Q[L] + extra * (Q[L] - Q[L - 1])])
        U = np.concatenate([U, np.repeat(U[L][None, :], total - L, axis=0)])
        W = np.concatenate([W, W[L] + extra * (W[L] - W[L - 1])])
    return X, Q, U, W, L, r.info["pools"]


# ---------------------------------------------------------------------------
# level 3: the outer network by convolution
# ---------------------------------------------------------------------------

def _complement(items, N: int):
    """The rest of the network (its stations and think time) with n =
    0..N jobs, by convolution ([Bolch] sec. 8.1): (log G(n), per item the
    marginal matrix P[n, j] = f(j) G_-i(n - j) / G(n), eq. 8.13)."""
    from .decomposition import _lconv, _lower

    unit = np.full(N + 1, -np.inf)
    unit[0] = 0.0
    pre = [unit]
    for lf in items:
        pre.append(_lconv(pre[-1], lf))
    suf = [unit]
    for lf in reversed(items):
        suf.append(_lconv(suf[-1], lf))
    suf = suf[::-1]
    lg = pre[-1]
    idx, mask = _lower(N + 1)
    marg = []
    for i, lf in enumerate(items):
        lgc = _lconv(pre[i], suf[i + 1])
        with np.errstate(invalid="ignore", over="ignore"):
            P = np.where(mask, np.exp(lf[None, :] + lgc[idx] - lg[:, None]), 0.0)
        marg.append(np.where(np.isfinite(P), P, 0.0))
    return lg, marg


def _chain(Xr, mu, F, N: int, k: int, Vf: float):
    """The fork-join fed by the flow-equivalent server of the rest: the
    chain of the tasks present m = 0..N k (module docstring, level 3).
    Returns (X per cycle, p_f(j | N) for j = 0..N, the branch figures F
    mixed over the chain)."""
    from scipy.special import logsumexp

    M = N * k
    m = np.arange(M + 1)
    j = -(-m // k)                                   # transactions present
    lam = np.where(j < N, Vf * Xr[np.minimum(N - j, N)], 0.0)
    with np.errstate(divide="ignore"):
        llam = np.log(lam)
        lmu = np.log(mu)
    lp = np.full(M + 1, -np.inf)
    lp[0] = 0.0
    up = lp + llam                                   # log pi(i) Lambda(i), filled as we go
    exp, log, amax, add = np.exp, math.log, np.max, np.add.reduce
    for x in range(M):
        # the cut between {.. x} and {x + 1 ..}: arrivals from i in
        # (x - k, x] (to i + k) balance the one completion from x + 1
        w = up[max(0, x - k + 1):x + 1]
        top = amax(w)
        if top == -np.inf:
            raise InvalidValueError(
                f"forkjoin-pools: no arrival can bring the fork-join past {x} tasks "
                "(the rest of the network has zero throughput)")
        lp[x + 1] = top + log(add(exp(w - top))) - lmu[x + 1]
        up[x + 1] = lp[x + 1] + llam[x + 1]
    pi = np.exp(lp - logsumexp(lp))
    pf = np.bincount(j, weights=pi, minlength=N + 1)
    Xf = float(pi @ lam)
    return Xf / Vf, pf, pi @ F[:M + 1]


def _fes(items, mu, F, N: int, k: int, Vf: float):
    """The fork-join as a load-dependent station of rate X_fj(j) = 1 /
    T(j) (module docstring, level 2), the network by convolution; the
    same returns as :func:`_chain`."""
    m = (np.arange(N)[:, None] * k + np.arange(1, k + 1)[None, :])
    t = 1.0 / mu[m]                              # (N, k) mean sojourn at each m
    T = t.sum(axis=1)                            # drain time T(j)
    wts = t / T[:, None]                         # time fractions in the cycle
    Fj = np.zeros((N + 1, F.shape[1]))
    Fj[1:] = np.einsum("jr,jrs->js", wts, F[m])
    lff = np.full(N + 1, -np.inf)
    lff[0] = 0.0
    lff[1:] = np.cumsum(np.log(Vf * T))          # f(j) = prod_{i<=j} V_f / X_fj(i)
    lg, marg = _complement(list(items) + [lff], N)
    X = float(math.exp(lg[N - 1] - lg[N]))
    pf = marg[-1][N]
    return X, pf, pf @ Fj



def _solve(net: Network, fork: str) -> Result:
    from .decomposition import _station_logf

    why = refusal(net)
    if why:
        raise UnsupportedModelError(f"{why}: use method='sim'")
    cls = net.classes[0]
    N = int(cls.population)
    Z = float(cls.think_time)
    f = forkjoins(net.stations)[0]
    k = int(f.tasks[0])
    branch = tuple(f.branches[0])
    V = np.asarray(net.visits, dtype=float)[0]
    S = np.asarray(net.service_times, dtype=float)[0]
    K = len(net.stations)
    kf = net.station_index(f.name)
    Vf = float(V[kf])
    owner = branch_owner(net.stations)
    bidx = [net.station_index(s) for s in branch]
    P = len(net.pools)
    outer = [i for i in range(K) if i != kf and net.station_names[i] not in owner]
    if Vf <= 0 or N == 0:
        what = f"visits fork-join {f.name!r} 0 times" if Vf <= 0 else "has no job"
        raise UnsupportedModelError(
            f"class {cls.name!r} {what}: nothing for forkjoin-pools to model "
            "(method='decomposition' or 'exact' answer)")
    if N * k > MAX_TASKS or N > MAX_POPULATION:
        raise ProblemTooLargeError(
            f"class {cls.name!r}: {N} transactions x {k} tasks = {N * k:,} tasks; "
            f"forkjoin-pools solves a chain over the tasks present (at most {MAX_TASKS:,}) "
            f"and the rest of the network by convolution (at most {MAX_POPULATION:,} jobs)")
    # level 1
    mu, Qb, Ub, Wb, L, dec_pools = _branch_figures(net, branch, N * k)
    if not np.all(mu[1:] > 0) or not np.all(np.isfinite(mu)):
        raise InvalidValueError(
            f"fork-join {f.name!r}: the branch {' -> '.join(branch)} has task throughput "
            f"{mu[1:4].tolist()}...; it needs a positive, finite demand")
    items, who = [], []
    for i in outer:
        if V[i] > 0:
            items.append(_station_logf(net.stations[i], float(V[i] * S[i]), N))
            who.append(i)
    if Z > 0:
        jz = np.arange(1, N + 1)
        zf = np.full(N + 1, -np.inf)
        zf[0] = 0.0
        zf[1:] = jz * math.log(Z) - np.cumsum(np.log(jz))
        items.append(zf)
        who.append(None)
    # the rest of the network (stations and think time) with n = 0..N jobs
    lg, marg = _complement(items, N)
    Xr = np.zeros(N + 1)
    # a rest without demand or think time sends a job back at once: the
    # fork-join then always holds all N, and its FES cycle is the answer
    timed = Z > 0 or any(V[i] * S[i] > 0 for i in outer)
    if timed:
        with np.errstate(over="ignore"):
            Xr[1:] = np.exp(lg[:-1] - lg[1:])
    if fork == "chain" and timed:
        X, pf, branch_mix = _chain(Xr, mu, np.concatenate([Qb, Ub, Wb], axis=1),
                                        N, k, Vf)
    else:
        X, pf, branch_mix = _fes(items, mu, np.concatenate([Qb, Ub, Wb], axis=1),
                                      N, k, Vf)
    nb = len(bidx)
    Q = np.zeros(K)
    U = np.zeros(K)
    # the rest of the network at n = N - j jobs, mixed over p_f(j | N)
    rest_of = N - np.arange(N + 1)
    n = np.arange(N + 1)
    for i, P in zip(who, marg):
        if i is None:
            continue
        st = net.stations[i]
        Q[i] = float(pf @ (P @ n)[rest_of])
        if st.kind == "delay":
            Ui = Xr * V[i] * S[i]
        elif st.kind == "queue":
            Ui = Xr * V[i] * S[i] / float(st.servers)
        else:
            Ui = 1.0 - P[:, 0]
        U[i] = float(pf @ Ui[rest_of])
    Q[kf] = float(pf @ n)
    for c, i in enumerate(bidx):
        Q[i] = float(branch_mix[c])
        U[i] = float(branch_mix[nb + c])
    waiting = branch_mix[2 * nb:]
    Xk = X * V
    with np.errstate(divide="ignore", invalid="ignore"):
        Rk = np.where(Xk > 0, Q / np.where(Xk > 0, Xk, 1.0), np.where(np.arange(K) == kf,
                                                                      0.0, S))
    R = N / X - Z
    pool_info = {}
    for j, p in enumerate(net.pools):
        span = tuple(p.path)
        held = sum(Q[net.station_index(s)] for s in span)
        # a task that waits for another pool's token at a station of this
        # span (after its service there) still holds this one
        held += sum(float(waiting[q]) for q, o in enumerate(net.pools)
                    if q != j and o.acquire in span and o.acquire != p.acquire)
        x_acq = X * V[net.station_index(p.acquire)]
        pool_info[p.name] = {
            "waiting": float(waiting[j]),
            "counts": "tasks",
            "held": float(held),
            "tokens": int(p.tokens),
            "utilization": float(held) / int(p.tokens),
            "holding_time": float(held / x_acq) if x_acq > 0 else 0.0,
            "span": list(span),
            "fes_throughput": list(dec_pools[p.name].get("fes_throughput", [])),
        }
    how = ("a chain of the tasks present (done one at a time at mu(m), in entry order; a "
           "transaction forks k at the rate of the rest's flow-equivalent server, Marie 1979)"
           if fork == "chain" and timed else
           "a flow-equivalent server of rate 1 / sum_r 1 / mu((j - 1) k + r) at j "
           "transactions (the drain of the oldest's k tasks in entry order), the network by "
           "convolution")
    notes = (
        f"approximate: fork-join {f.name!r} ({k} tasks down {' -> '.join(branch)}) as {how}; "
        "the branch's task rate mu(m) by the decomposition of its pools (flow-equivalent "
        "servers: Chandy, Herzog & Woo 1975; Lazowska et al. 1984 ch. 8-9)",
        f"branch solved for 0..{L} tasks"
        + (f", saturated past that (mu = {mu[L]:.6g} tasks/s)" if L < N * k else ""),
        "pool 'waiting' counts tasks waiting for a token (counts='tasks'); their "
        f"transactions are in the queue length of {f.name!r}",
    )
    return Result(
        method="forkjoin-pools",
        network=net,
        class_throughput=np.array([X]),
        class_response_time=np.array([R]),
        station_throughput=Xk[None, :],
        station_queue_length=Q[None, :],
        station_response_time=Rk[None, :],
        station_utilization=U[None, :],
        notes=notes,
        info={"pools": pool_info, "population": N, "tasks": k, "branch": list(branch),
              "branch_population": L,
              "fork": fork},
    )


@answers()
def forkjoin_pools(net: Network, *, fork: str = "chain") -> Result:
    """Solve a closed single-class network with one fork-join whose ``k``
    tasks go down one branch holding token pools (``method =
    "forkjoin-pools"``, approximate): the branch by the decomposition,
    the fork-join as a chain of its tasks (done one at a time in entry
    order) fed by the flow-equivalent server of the rest (module
    docstring: formulas and their sources).

    ``fork="fes"`` takes the fork-join as a flow-equivalent server instead
    (rate at j transactions the inverse of the oldest's drain time); the
    default ``"chain"`` keeps the drain's low variability and was closer
    to the simulator on the SPAX burst.

    Station figures as :func:`qmodels.analytic.forkjoin.forkjoin`: at the
    fork-join, X the rate of forks, Q the transactions forked and not
    joined, R their time from fork to join, U = 0; at a branch station, per
    task.  ``info["pools"][name]`` gives per pool ``waiting`` (tasks
    waiting for a token, as the simulator's ``pools[name]["Q"]``),
    ``held``, ``tokens``, ``utilization`` = held / tokens,
    ``holding_time``.

    Raises
    ------
    UnsupportedModelError
        Several classes or an open one, no fork-join or several, a
        fork-join with several branches, no pool or a pool not held along
        the branch, a station outside product form (priority, finite
        capacity, non-exponential FCFS service), symbolic parameters.
    ProblemTooLargeError
        A branch whose rate has not converged within
        :data:`MAX_BRANCH_POPULATION` tasks while the fork-join can hold
        more, or more than 10^7 tasks in all.

    Examples
    --------
    One transaction, two tasks, a one-token pool over both queues of the
    branch: the tasks cross one after the other, k (S_a + S_b) = 2 x 0.3 s,
    plus the 1 s think time and the 1 ns release.

    >>> import qmodels as qm
    >>> net = qm.Network(
    ...     [qm.Delay("release", 1e-9), qm.Queue("a", 0.1), qm.Queue("b", 0.2),
    ...      qm.ForkJoin("fj", [["release", "a", "b"]], tasks=2)],
    ...     [qm.Closed("job", 1, visits={"fj": 1}, think_time=1.0)],
    ...     pools=[qm.TokenPool("slot", 1, "a", "b", path=("a", "b"))])
    >>> round(float(forkjoin_pools(net).X["job"]), 6)   # 1 / (1 + 0.6)
    0.625
    """
    if fork not in ("chain", "fes"):
        raise InvalidValueError(f"forkjoin_pools: fork must be 'chain' or 'fes', got {fork!r}")
    return _solve(net, fork)
