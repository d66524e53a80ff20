"""Closed fork-join networks by Varki's mean value technique, alone or
averaged with the independence recursion of :func:`~.forkjoin.forkjoin`.

The idea (E. Varki, "Mean value technique for closed fork-join networks",
ACM SIGMETRICS 1999, pp. 103-112; E. Varki, "Response time analysis of
parallel computer and storage systems", IEEE Trans. Parallel and
Distributed Systems 12(11), 2001).  A job forked over K branches leaves
the join when its last task is done.  Its time there passes through
*stages*: first K of its tasks are unfinished, then K - 1, ..., then 1.
For K homogeneous exponential servers of mean S, stage j lasts S / j on
average (the minimum of j exponentials), and the sum is the harmonic
expected maximum E[max] = H_K S (Nelson & Tantawi, IEEE Trans. Computers
37(6), 1988, eq. (1); David & Nagaraja, *Order Statistics*, 2003, sec.
4.6).  Varki's mean value equation makes each stage queue like an MVA
station: a job that arrives sees, in each stage, the jobs that the network
with one job less holds there, and waits for them,

    R_f(n) = sum_{j=1}^{K} m_j (1 + A_j(n - 1)),    A_j(n) = X_f(n) m_j (1 + A_j(n - 1)),

m_j the mean length of stage j of a lone job and A_j(n) the mean number
of jobs in stage j at population n (Little's law per stage).  With Poisson
arrivals at rate lambda the same equation gives sum_j 1 / (j mu - lambda)
= (1/mu) [H_K + sum_j (1/j) rho / (j - rho)], the *optimistic* bound of
Varki, Merchant, Xu & Qiu ("Issues and challenges in the performance
analysis of real disk arrays", IEEE TPDS 25(6), 2014; A. Thomasian,
"Analysis of fork/join and related queueing systems", ACM Computing
Surveys 47(2), 2014, eq. (2)): the mean value equation is a lower bound on
the fork-join time, as Varki (1999) states.  The independence recursion of
:func:`~.forkjoin.forkjoin` (each branch station's time S_k (1 + Q_k(n-1)),
branch times independent, E[max] of them) is at the other end: with
Poisson arrivals it is the *pessimistic* bound H_K / (mu - lambda)
(Nelson & Tantawi 1988, sec. III; Thomasian 2014, eq. (1)).  Varki et al.
(2014; Thomasian 2014, Table I eq. (5)) approximate the fork-join time by
the *mean of the two bounds*.

This module computes, per population step n = 1..N,

* ``variant="mean"`` (the default): R_f(n) = (R_opt(n) + R_pess(n)) / 2,
  Varki et al.'s mean of the optimistic and pessimistic values, each from
  the network with n - 1 jobs;
* ``variant="mve"``: R_f(n) = R_opt(n), Varki's mean value equation alone.

Stations outside fork-joins follow exact MVA, R_k(n) = D_k (1 + Q_k(n-1))
(Reiser & Lavenberg, JACM 27(2), 1980), delays R_k = D_k; X(n) = n / (Z +
sum of residence times), held to the bottleneck law as in
:func:`~.forkjoin.forkjoin`.  Branch stations report the per-station MVA
figures r_k(n) = S_k (1 + Q_k(n-1)) (their queue lengths feed R_pess).

General branches.  For branches of different speeds, or of several queues
in tandem, the stage lengths m_j of a lone job are those of the maximum of
the independent branch service times T_b (each a sum of exponential
stages): m_j = integral_0^inf P(exactly j of the K branches unfinished at
t) dt (a Poisson-binomial probability of the branch survival functions),
so that sum_j m_j = E[max_b T_b]; for K homogeneous exponential branches
m_j = S / j.  A fork-join of one branch is a plain tandem: its stations
follow exact MVA (R_opt = R_pess = sum_k S_k (1 + Q_k(n-1))).

Assumptions: one closed class; exponential service; stations are
single-server queues (FCFS or PS: one class of exponential jobs, so their
queue lengths agree) and delays outside fork-joins; branch stations are
single-server queues (a delay on a branch does not queue, which the stage
equation assumes every branch does); one task per branch; no nested
fork-joins.  Exact at N = 1 (a lone job: sum_j m_j = E[max] of the
service-time sums).  Everything else is refused by name
(:class:`~qmodels.errors.UnsupportedModelError`); open classes are
answered by ``method='forkjoin'`` and any network by ``method='sim'``.

What is and is not Varki's.  The stage equation above is written from
the published descriptions: Varki's (1999) abstract (a mean value equation
relating the fork-join time to the service times and the mean queue
length with one job less, giving lower bounds on the response time, within
5 % of simulation in most cases) and the optimistic formula of Varki et
al. (2014) as quoted by Thomasian (2014, eq. (2)), of which it is the
closed-network form (each stage an MVA queue).  The 1999 paper's own
equations were not at hand; this is that reading of them, not a
transcription.  The general-branch stage lengths m_j and the one-branch
rule are this module's.

Measured (2026-11-27) on the closed fork-joins of
:mod:`validation.forkjoin_varki_accuracy` (k = 2..8 branches of one queue
or two in tandem, balanced or spread, stations outside or not, Z = 0 or
2 s, N = 1..30): against the exact chain of the queue lengths
(:mod:`validation.forkjoin_exact`, 292 networks of at most 30,000 states;
``python -m validation.envelopes --family forkjoin-closed-exact``) the
``mean`` variant is off by at most 10.7 % in X and 12.0 % in R (mean 1.6 %
and 1.9 %), the independence recursion of :func:`~.forkjoin.forkjoin` by
at most 3.6 % and 4.6 % (mean 0.6 % and 0.8 %); against the simulator on
the 70 larger networks of ``python -m validation.forkjoin_varki_accuracy
--sim --quick``, ``mean`` at most 8.7 % in X and 10.6 % in R, the
independence recursion 5.1 % and 6.0 %; ``mve`` is worse than both (X
off by up to 19.5 %).  The stage equation treats a branch of two queues
in tandem as one queue (it cannot pipeline), which is where ``mean`` errs
most (N = 20, two-queue branches: +10 % in R); on one-queue branches it
is low where the independence recursion is high.  So ``qm.solve`` keeps
``method='forkjoin'`` for closed fork-joins; this method is there to be
compared with it.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidValueError, UnsupportedModelError
from ..model.network import Closed, Network, Queue
from ..results import Curve, Result
from .contract import answers
from .forkjoin import (
    _QUAD_STAGE,
    _check_work,
    _hypo_coefficients,
    _read,
    _saturate,
    _stage_survival,
    expected_max,
)

__all__ = ["forkjoin_varki", "stage_means", "VARIANTS"]

#: the fork-join time per population step: the mean of Varki's optimistic
#: value and the independence (pessimistic) value, or Varki's alone
VARIANTS = ("mean", "mve")


def stage_means(branches) -> list[float]:
    """Mean time m_j (j = 1..K, returned in that order) that a lone job's
    fork-join spends with exactly j of its K branches unfinished, the
    branch times independent sums of exponential stages of the given
    means (``branches``: a list of lists of means).

    m_j = int_0^inf P(exactly j unfinished at t) dt, the Poisson-binomial
    probability of the branch survival functions u_b(t) = P(T_b > t)
    (each the hypoexponential survival of :func:`~.forkjoin._stage_survival`;
    Ross, *Introduction to Probability Models*, sec. 5.2.4).  Since
    sum_j P(exactly j unfinished) = P(max_b T_b > t), sum_j m_j = E[max]
    (:func:`~.forkjoin.expected_max`).  For K exponential branches of mean
    S, m_j = S / j (the minimum of j exponentials of rate 1/S; Nelson &
    Tantawi 1988, eq. (1)).
    """
    from scipy.integrate import quad_vec

    br = [[float(x) for x in b if x > 0] for b in branches]
    K = len(br)
    if K == 0 or any(not b for b in br):
        raise InvalidValueError("stage_means: every branch needs a positive service time")
    if all(len(b) == 1 for b in br) and len({b[0] for b in br}) == 1:
        return [br[0][0] / j for j in range(1, K + 1)]
    scale = max(sum(b) for b in br)
    coefs = [_hypo_coefficients(b) if len(b) > 1 else None for b in br]

    def dens(u):
        t = u * scale
        p = np.zeros(K + 1)
        p[0] = 1.0
        for b, cf in zip(br, coefs):
            s = _stage_survival(b, t, cf)
            p[1:] = p[1:] * (1.0 - s) + p[:-1] * s
            p[0] *= 1.0 - s
        return p[1:]

    val, _ = quad_vec(dens, 0.0, np.inf, epsabs=1e-13, epsrel=1e-11, limit=400)
    return [float(v) * scale for v in val]


def _kernel(kind, V, S, forks, is_queue, N: int, Z: float, w: float):
    """The recursion of the module docstring for n = 1..N; ``w`` the weight
    of the pessimistic value (1/2 ``mean``, 0 ``mve``).  Returns (X per n,
    Q per n, residence per cycle at N, fork-join time per fork at N)."""
    K = len(kind)
    D = V * S
    Q = np.zeros(K)
    Xc = np.zeros(N + 1)
    Qc = np.zeros((N + 1, K))
    res = np.zeros(K)
    # stage lengths over the branches that take time (a branch of zero
    # service times finishes at once); one such branch: a tandem, exact MVA
    timed = [[b for b in branches if float(np.sum(S[b])) > 0] for _, branches in forks]
    m = [stage_means([[S[k] for k in b] for b in tb]) if len(tb) > 1 else None
         for tb in timed]
    A = [np.zeros(len(mi)) if mi is not None else None for mi in m]
    for n in range(1, N + 1):
        res = np.zeros(K)
        for k in range(K):
            if kind[k] in (0, 1):
                res[k] = D[k] * (1.0 + Q[k]) if is_queue[k] else D[k]
        Rj = []
        for i, (kf, branches) in enumerate(forks):
            stages = []
            for b in branches:
                st = []
                for k in b:
                    r = S[k] * (1.0 + Q[k])
                    res[k] = V[k] * r
                    st.append(r)
                stages.append(st)
            if m[i] is None:           # one timed branch: a tandem, exact MVA
                Rj.append(None)
                res[kf] = V[kf] * max(sum(st) for st in stages)
                continue
            rj = np.asarray(m[i]) * (1.0 + A[i])
            Rj.append(rj)
            r_opt = float(rj.sum())
            r_pess = expected_max(stages) if w > 0 else 0.0
            res[kf] = V[kf] * (w * r_pess + (1.0 - w) * r_opt)
        cycle = Z + sum(res[k] for k in range(K) if kind[k] != 3)
        X = n / cycle if cycle > 0 else math.inf
        X = _saturate(X, n, Z, cycle, res, D, is_queue, forks)
        Q = X * res
        for i, (kf, _) in enumerate(forks):
            if Rj[i] is not None:
                A[i] = X * V[kf] * Rj[i]
        Xc[n] = X
        Qc[n] = Q
    return Xc, Qc, res


@answers()
def forkjoin_varki(net: Network, *, variant: str = "mean", curve: bool = False) -> Result:
    """Mean values of a closed single-class network with fork-joins by
    Varki's mean value technique (module docstring: the equations, their
    sources and the assumptions).

    Station figures as in :func:`~.forkjoin.forkjoin`: at a fork-join, X is
    the rate of forks, R the time from fork to join per visit, Q the jobs
    forked and not joined, U = 0; at a branch station, per task.

    Parameters
    ----------
    net : Network
    variant : {"mean", "mve"}
        ``"mean"``: the fork-join time is the mean of Varki's optimistic
        value and the independence value (Varki et al. 2014; Thomasian
        2014, Table I eq. (5)); ``"mve"``: Varki's mean value equation
        alone (a lower bound on the fork-join time).
    curve : bool
        Also return X and Q for n = 0..N (``r.curve``).

    Examples
    --------
    Two exponential tasks of rates 1 and 2, one job: E[max] = 1 + 1/2 - 1/3.

    >>> import qmodels as qm
    >>> net = qm.Network([qm.ForkJoin("fj", [["a"], ["b"]]), qm.Queue("a", 1.0),
    ...                   qm.Queue("b", 0.5)], [qm.Closed("job", 1, visits={"fj": 1})])
    >>> round(float(forkjoin_varki(net).R["job"]), 9)
    1.166666667

    Raises
    ------
    UnsupportedModelError
        An open class, several classes, a delay or multi-server queue on a
        branch, a multi-server or load-dependent station, a finite
        capacity, a token pool, non-exponential service, several tasks per
        branch, a symbolic network.
    InvalidValueError
        An unknown ``variant``; all demands and the think time zero.
    ProblemTooLargeError
        A population whose recursion passes the work limit of
        :func:`~.forkjoin.forkjoin`, before any allocation.
    """
    if variant not in VARIANTS:
        raise InvalidValueError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    kind, V, S, forks = _read(net, "forkjoin-varki")
    cls = net.classes[0]
    if not isinstance(cls, Closed):
        raise UnsupportedModelError(
            f"class {cls.name!r} is open; Varki's mean value technique is for closed "
            "networks: use method='forkjoin' (Flatto-Hahn, Nelson-Tantawi) or method='sim'")
    names = net.station_names
    stations = net.stations
    is_queue = np.array([isinstance(s, Queue) for s in stations])
    for _, branches in forks:
        for b in branches:
            for k in b:
                if not is_queue[k]:
                    raise UnsupportedModelError(
                        f"branch station {names[k]!r} is a delay; Varki's stage equation "
                        "takes every branch station to be a queue: use method='forkjoin' "
                        "or method='sim'")
    K = len(stations)
    N = int(cls.population)
    Z = float(cls.think_time)
    if N > 0 and Z + float(np.sum((V * S)[kind != 3])) + sum(
            V[kf] * max(float(np.sum(S[b])) for b in brs) for kf, brs in forks) <= 0:
        raise InvalidValueError(
            f"class {cls.name!r}: all demands and the think time are zero, so the "
            "throughput is unbounded")
    nstages = sum(len(b) for _, brs in forks for b in brs)
    _check_work(cls.name, N, float(N) * (K + _QUAD_STAGE * nstages), float(N + 1) * (K + 1))
    w = 0.5 if variant == "mean" else 0.0
    Xc, Qc, res = _kernel(kind, V, S, forks, is_queue, max(N, 1) if N == 0 else N, Z, w)
    if N == 0:
        # no job: each residence time is what a lone job would see (the n = 1 step)
        X = 0.0
        Xc, Qc = Xc[:1] * 0.0, Qc[:1] * 0.0
    else:
        X = float(Xc[N])
    how = ("the mean of Varki's mean value equation (optimistic) and the independence "
           "recursion (pessimistic), Varki et al. 2014" if variant == "mean"
           else "Varki's mean value equation (1999), a lower bound on the fork-join time")
    single = all(sum(float(np.sum(S[br])) > 0 for br in b) <= 1 for _, b in forks)
    notes = ["exact: every fork-join has one branch (a tandem of queues), solved by exact MVA"
             if single else
             f"approximate: fork-join time per population step by {how}; exact at N = 1"]
    crv = None
    if curve:
        with np.errstate(divide="ignore", invalid="ignore"):
            Rn = np.where(Xc > 0, np.arange(len(Xc)) / np.where(Xc > 0, Xc, 1.0) - Z, 0.0)
        crv = Curve(population=np.arange(len(Xc)), throughput=Xc, response_time=Rn,
                    queue_length=Qc, utilization=Xc[:, None] * np.where(kind == 2, 0.0,
                                                                        V * S)[None, :],
                    station_names=tuple(names), class_name=cls.name, method="forkjoin-varki")
    Xk = X * V
    Qk = X * res
    with np.errstate(divide="ignore", invalid="ignore"):
        Rk = np.where(V > 0, res / np.where(V > 0, V, 1.0), S)
    U = np.where(kind == 2, 0.0, Xk * S)
    Rc = float(sum(res[k] for k in range(K) if kind[k] != 3))
    return Result(
        exactness="exact" if N <= 1 or single else "approximate",
        method="forkjoin-varki",
        network=net,
        class_throughput=np.array([X]),
        class_response_time=np.array([Rc]),
        station_throughput=Xk[None, :],
        station_queue_length=Qk[None, :],
        station_response_time=Rk[None, :],
        station_utilization=U[None, :],
        notes=tuple(notes),
        curve=crv,
        info={"variant": variant},
    )
