"""Single-station priority queues in closed form, one :class:`~.metrics.QueueMetrics`
per class: M/G/1 with non-preemptive (head-of-line) priority, M/G/1 with
preemptive-resume priority, and M/M/c with non-preemptive priority and one
service rate for every class.

Classes are given as parallel sequences (arrival rate, mean service time,
service SCV) and a priority level per class: a non-negative integer, 0 the
highest (as ``qm.Closed(priority=...)``); classes of one level are served
FCFS among themselves.  With ``priorities`` omitted, class i has level i.

Notation (Kleinrock, *Queueing Systems* Vol. 2, 1976, sec. 3.6): rho_i =
lambda_i S_i, sigma_<k the load of the levels above class k's,
sigma_<=k that load plus the load of k's own level, and
W0 = sum_i lambda_i E[S_i^2] / 2 the mean residual work found in service by
an arrival (E[S^2] = S^2 (1 + scv)).

Each class's figures are those of a :class:`QueueMetrics` of that class
alone: ``arrival_rate`` its lambda, ``utilization`` its share lambda S / c of
the servers, ``Q`` and ``Lq`` its own jobs (Little's law per class);
``empty_probability`` is the station's (1 - rho for one server, the Erlang
formula for c).  A station whose total load is rho >= 1 raises
:class:`~qmodels.errors.UnstableError` naming the first class whose level
saturates it (sigma_<=k >= 1) and that load.
"""

from __future__ import annotations

from ...errors import InvalidValueError, UnstableError
from .markovian import _erlang_b_unchecked, _erlang_c_from_b, mmc
from .metrics import QueueMetrics, _check_int, _check_nonneg

__all__ = ["mg1_prio", "mg1_prio_pr", "mmc_prio"]

_REF_NP = (
    "Non-preemptive (head-of-line) priority M/G/1: Cobham, 'Priority assignment in waiting "
    "line problems', J. Oper. Res. Soc. America 2 (1954) 70-76; Kleinrock, Queueing Systems "
    "Vol. 2 (1976), Sec. 3.6; Harchol-Balter, Performance Modeling and Design of Computer "
    "Systems (2013), Ch. 31: Wq_k = W0 / ((1 - sigma_<k)(1 - sigma_<=k))"
)
_REF_PR = (
    "Preemptive-resume priority M/G/1: Kleinrock, Queueing Systems Vol. 2 (1976), Sec. 3.7; "
    "Harchol-Balter (2013), Ch. 32: T_k = S_k / (1 - sigma_<k) + "
    "(sum_{i <= k} lambda_i E[S_i^2] / 2) / ((1 - sigma_<k)(1 - sigma_<=k))"
)
_REF_MMC = (
    "Non-preemptive priority M/M/c, one service rate for all classes: Cobham (1954); "
    "Kleinrock, Queueing Systems Vol. 2 (1976), Sec. 3.6; Gross, Shortle, Thompson & Harris, "
    "Fundamentals of Queueing Theory, 4th ed. (2008), Sec. 3.4.1: "
    "Wq_k = C(c, a) S / c / ((1 - sigma_<k)(1 - sigma_<=k)), sigma = sum lambda_i S / c"
)


def _classes(model, arrival_rates, service_times, scvs, priorities):
    """Validated lists (lam, S, scv, level); scalars broadcast."""
    def seq(x, name):
        if isinstance(x, (str, bytes)):
            raise InvalidValueError(f"{model}: {name} must be a number or a sequence, got {x!r}")
        try:
            return list(x)
        except TypeError:
            return None

    lam = seq(arrival_rates, "arrival_rates")
    if lam is None or not lam:
        raise InvalidValueError(f"{model}: arrival_rates must be a non-empty sequence, "
                                f"got {arrival_rates!r}")
    n = len(lam)

    def spread(x, name, default=None):
        v = seq(x, name)
        if v is None:
            v = [x] * n
        if len(v) != n:
            raise InvalidValueError(f"{model}: {name} has {len(v)} entries for {n} classes")
        return v

    S = spread(service_times, "service_times")
    c2 = spread(scvs, "scvs")
    pr = list(range(n)) if priorities is None else spread(priorities, "priorities")
    lam = [float(_check_nonneg(model, f"arrival_rates[{i}]", v)) for i, v in enumerate(lam)]
    S = [float(_check_nonneg(model, f"service_times[{i}]", v)) for i, v in enumerate(S)]
    c2 = [float(_check_nonneg(model, f"scvs[{i}]", v)) for i, v in enumerate(c2)]
    pr = [_check_int(model, f"priorities[{i}]", v, minimum=0) for i, v in enumerate(pr)]
    return lam, S, c2, pr


def _loads(model, lam, S, pr, servers):
    """(sigma_<k, sigma_<=k) per class, in servers' units; UnstableError
    if the station's total load reaches 1, naming the first class whose
    level saturates it."""
    rho = [lam[i] * S[i] / servers for i in range(len(lam))]
    above = [sum(r for r, p in zip(rho, pr) if p < pr[k]) for k in range(len(lam))]
    upto = [sum(r for r, p in zip(rho, pr) if p <= pr[k]) for k in range(len(lam))]
    total = sum(rho)
    if total >= 1.0:
        k = min((i for i in range(len(lam)) if upto[i] >= 1.0), key=lambda i: pr[i])
        raise UnstableError(
            f"{model} is unstable: the load of class {k}'s priority level {pr[k]} and above is "
            f"sigma = {upto[k]:.6g} >= 1 (total rho = {total:.6g}); class {k} and every class "
            "below it have no steady state", station=f"class {k}", rho=upto[k])
    return above, upto, total


def mg1_prio(arrival_rates, service_times, scvs=1.0, priorities=None) -> tuple:
    """M/G/1 with non-preemptive (head-of-line) priority: per class figures.

    A job in service finishes; then the waiting job of the highest level
    (smallest number) starts, FCFS within a level.  Exact (Cobham 1954):

        Wq_k = W0 / ((1 - sigma_<k) (1 - sigma_<=k)),  W0 = sum_i lambda_i S_i^2 (1 + scv_i) / 2

    (Kleinrock, *Queueing Systems* Vol. 2, 1976, sec. 3.6; Harchol-Balter
    2013, ch. 31).

    Parameters
    ----------
    arrival_rates : sequence of float
        lambda_k >= 0 per class (Poisson arrivals).
    service_times : float or sequence of float
        Mean service time S_k per class.
    scvs : float or sequence of float
        Squared coefficient of variation of each class's service time
        (0 deterministic, 1 exponential).
    priorities : sequence of int, optional
        Level of each class, 0 the highest (default: class i has level i).

    Returns
    -------
    tuple of QueueMetrics
        One per class, in the order given.

    Raises
    ------
    InvalidValueError
        A negative, NaN or infinite number; lengths that differ; a level
        that is not a non-negative integer.
    UnstableError
        Total load rho >= 1 (names the first class whose level saturates).

    References
    ----------
    Cobham, "Priority assignment in waiting line problems", J. Oper. Res.
    Soc. America 2 (1954) 70-76; Kleinrock, Queueing Systems Vol. 2 (1976),
    Sec. 3.6; Harchol-Balter (2013), Ch. 31.

    Examples
    --------
    >>> hi, lo = mg1_prio([0.3, 0.3], [1.0, 1.0])
    >>> round(hi.W, 6), round(lo.W, 6)   # W0 = 0.6; 0.6/0.7 and 0.6/(0.7*0.4)
    (0.857143, 2.142857)
    """
    model = "M/G/1 non-preemptive priority"
    lam, S, c2, pr = _classes(model, arrival_rates, service_times, scvs, priorities)
    above, upto, total = _loads(model, lam, S, pr, 1)
    w0 = sum(lam[i] * S[i] * S[i] * (1.0 + c2[i]) for i in range(len(lam))) / 2.0
    out = []
    for k in range(len(lam)):
        wq = w0 / ((1.0 - above[k]) * (1.0 - upto[k]))
        out.append(QueueMetrics.from_wait(
            f"M/G/1 prio (class {k}, level {pr[k]})", lam[k], S[k], 1, wq,
            reference=_REF_NP, empty_probability=1.0 - total))
    return tuple(out)


def mg1_prio_pr(arrival_rates, service_times, scvs=1.0, priorities=None) -> tuple:
    """M/G/1 with preemptive-resume priority: per class figures.

    An arriving job of a higher level takes the server at once; the job
    it displaces resumes later where it stopped (no work lost).  FCFS
    within a level.  Exact:

        R_k = S_k / (1 - sigma_<k) + (sum_{i: level_i <= level_k} lambda_i E[S_i^2] / 2)
                                     / ((1 - sigma_<k) (1 - sigma_<=k))

    (Kleinrock, *Queueing Systems* Vol. 2, 1976, sec. 3.7; Harchol-Balter
    2013, ch. 32).  Lower levels are invisible to a class: its figures are
    those of a queue holding only its own level and the ones above.
    ``W`` is R_k - S_k (the delay beyond its own work, interruptions
    included).

    Parameters, returns and errors as :func:`mg1_prio`.

    References
    ----------
    Kleinrock, Queueing Systems Vol. 2 (1976), Sec. 3.7; Harchol-Balter,
    Performance Modeling and Design of Computer Systems (2013), Ch. 32.

    Examples
    --------
    >>> hi, lo = mg1_prio_pr([0.3, 0.3], [1.0, 1.0])
    >>> round(hi.R, 6)   # an M/M/1 of its own: 1 / (1 - 0.3)
    1.428571
    """
    model = "M/G/1 preemptive-resume priority"
    lam, S, c2, pr = _classes(model, arrival_rates, service_times, scvs, priorities)
    above, upto, total = _loads(model, lam, S, pr, 1)
    out = []
    for k in range(len(lam)):
        r2 = sum(lam[i] * S[i] * S[i] * (1.0 + c2[i])
                 for i in range(len(lam)) if pr[i] <= pr[k]) / 2.0
        R = S[k] / (1.0 - above[k]) + r2 / ((1.0 - above[k]) * (1.0 - upto[k]))
        out.append(QueueMetrics.from_wait(
            f"M/G/1 prio-pr (class {k}, level {pr[k]})", lam[k], S[k], 1, R - S[k],
            reference=_REF_PR, empty_probability=1.0 - total))
    return tuple(out)


def mmc_prio(arrival_rates, service_time, servers, priorities=None) -> tuple:
    """M/M/c with non-preemptive priority and one exponential service rate
    for every class: per class figures.  Exact (Cobham 1954):

        Wq_k = C(c, a) S / c / ((1 - sigma_<k) (1 - sigma_<=k)),
        a = sum_i lambda_i S,  sigma = sum lambda_i S / c over the levels,

    with C(c, a) the Erlang C probability of waiting (Kleinrock, *Queueing
    Systems* Vol. 2, 1976, sec. 3.6; Gross, Shortle, Thompson & Harris
    2008, sec. 3.4.1).  With c = 1 it is :func:`mg1_prio` with scv 1.

    Parameters
    ----------
    arrival_rates : sequence of float
    service_time : float
        The mean service time S of every class (the formula needs one
        rate; a sequence is accepted if all its entries are equal).
    servers : int
    priorities : sequence of int, optional

    Returns
    -------
    tuple of QueueMetrics

    Raises
    ------
    InvalidValueError
        As :func:`mg1_prio`; service times that differ between classes.
    UnstableError
        a >= c.

    References
    ----------
    Cobham (1954); Kleinrock, Queueing Systems Vol. 2 (1976), Sec. 3.6;
    Gross, Shortle, Thompson & Harris, Fundamentals of Queueing Theory,
    4th ed. (2008), Sec. 3.4.1.

    Examples
    --------
    >>> hi, lo = mmc_prio([0.5, 0.5], 1.0, 2)
    >>> round(hi.W, 6), round(lo.W, 6)   # C(2, 1) = 1/3: (1/6)/0.75, (1/6)/(0.75*0.5)
    (0.222222, 0.444444)

    (Their mean, 1/3, is the FCFS M/M/2 wait C(2, 1) S / (c - a): the
    order changes who waits, not how much work waits.)
    """
    model = "M/M/c non-preemptive priority"
    c = _check_int(model, "servers", servers, minimum=1)
    lam, S, _, pr = _classes(model, arrival_rates, service_time, 1.0, priorities)
    if max(S) - min(S) > 1e-12 * max(1.0, max(S)):
        raise InvalidValueError(
            f"{model}: every class must have the same service time (Cobham's multi-server "
            f"formula needs one rate), got {S!r}; use qm.simulate for different ones")
    s = S[0]
    above, upto, total = _loads(model, lam, S, pr, c)
    a = sum(lam) * s
    cw = _erlang_c_from_b(c, a, _erlang_b_unchecked(c, a)) if a > 0 else 0.0
    # the number present is that of the FCFS M/M/c (the order does not
    # change it: every class has the same rate), so P0 is Erlang's
    p0 = mmc(sum(lam), s, c).empty_probability
    out = []
    for k in range(len(lam)):
        wq = cw * s / c / ((1.0 - above[k]) * (1.0 - upto[k]))
        out.append(QueueMetrics.from_wait(
            f"M/M/{c} prio (class {k}, level {pr[k]})", lam[k], s, c, wq,
            reference=_REF_MMC, empty_probability=p0))
    return tuple(out)
