"""Markovian single-station queues in closed form: the Erlang B and C
formulas, M/M/1, M/M/c, M/M/1/K, M/M/c/K and M/M/inf.  Each returns a
:class:`~.metrics.QueueMetrics` whose ``reference`` names its source.
"""

from __future__ import annotations

import math

from ...errors import UnstableError
from .metrics import QueueMetrics, _check_int, _check_nonneg, _check_stable, _symbolic

__all__ = ["erlang_b", "erlang_c", "mm1", "mmc", "mm1k", "mmck", "mminf"]


# ---------------------------------------------------------------------------
# References (one string per model, stored in QueueMetrics.reference)
# ---------------------------------------------------------------------------

_REF_MM1 = (
    "Kleinrock, Queueing Systems Vol. 1 (1975), Sec. 3.2; "
    "Gross, Shortle, Thompson & Harris, Fundamentals of Queueing Theory, "
    "4th ed. (2008), Sec. 2.2; Jain, The Art of Computer Systems Performance "
    "Analysis (1991), Sec. 31.2"
)
_REF_MMC = (
    "Kleinrock, Queueing Systems Vol. 1 (1975), Sec. 3.5 (Erlang C formula); "
    "Gross, Shortle, Thompson & Harris (2008), Sec. 2.3; "
    "Bolch, Greiner, de Meer & Trivedi, Queueing Networks and Markov Chains, "
    "2nd ed. (2006), Sec. 6.2; Erlang C evaluated by the Erlang B recursion "
    "(Jagerman, Bell Syst. Tech. J. 53 (1974) 525-551)"
)
_REF_MM1K = (
    "Kleinrock, Queueing Systems Vol. 1 (1975), Sec. 3.6 (M/M/1/K); "
    "Gross, Shortle, Thompson & Harris (2008), Sec. 2.5"
)
_REF_MMCK = (
    "Gross, Shortle, Thompson & Harris, Fundamentals of Queueing Theory, "
    "4th ed. (2008), Sec. 2.5 (M/M/c/K); Bolch et al. (2006), Sec. 6.2; "
    "Kleinrock (1975), Sec. 3.6-3.7"
)
_REF_MMINF = (
    "Kleinrock, Queueing Systems Vol. 1 (1975), Sec. 3.4 (M/M/inf); "
    "Gross, Shortle, Thompson & Harris (2008), Sec. 2.7"
)


# Erlang formulas
# ---------------------------------------------------------------------------


def _erlang_b_unchecked(c: int, a: float) -> float:
    # B(0) = 1, B(k) = a B(k-1) / (k + a B(k-1)).  Every step maps [0, 1]
    # into [0, 1]; no factorial, no power, no overflow.
    b = 1.0
    for k in range(1, c + 1):
        ab = a * b
        b = ab / (k + ab)
    return b


def erlang_b(servers, offered_load) -> float:
    """Erlang B (loss) formula: blocking probability of M/M/c/c.

    Parameters
    ----------
    servers : int
        Number of servers c, a positive integer (Python or numpy integer).
    offered_load : float
        Offered traffic a = lambda S in erlangs, finite and >= 0.

    Returns
    -------
    float
        B(c, a), the probability that all c servers are busy, which by PASTA
        is the probability that an arrival is lost.

    Raises
    ------
    InvalidValueError
        ``servers`` not a positive integer, ``offered_load`` negative, NaN
        or infinite.

    Notes
    -----
    .. math::

        B(c, a) = \\frac{a^c / c!}{\\sum_{k=0}^{c} a^k / k!}

    is evaluated with the recursion

    .. math::

        B(0, a) = 1, \\qquad
        B(k, a) = \\frac{a\\,B(k-1, a)}{k + a\\,B(k-1, a)},

    which needs no factorial or power, stays in [0, 1] and is numerically
    stable for any number of servers (O(c) operations; c = 10^4 takes about
    a millisecond).

    References
    ----------
    Jagerman, D. L., "Some properties of the Erlang loss function", Bell
    System Technical Journal 53 (1974) 525-551.
    Kleinrock, Queueing Systems Vol. 1 (1975), Sec. 3.7 (M/M/m/m, Erlang's
    loss formula).
    Bolch, Greiner, de Meer & Trivedi, Queueing Networks and Markov Chains,
    2nd ed. (2006), Sec. 6.2.
    """
    c = _check_int("erlang_b", "servers", servers, minimum=1)
    a = _check_nonneg("erlang_b", "offered_load", offered_load)
    return _erlang_b_unchecked(c, a)


def _erlang_c_from_b(c: int, a: float, b: float) -> float:
    rho = a / c
    return b / (1.0 - rho * (1.0 - b))


def erlang_c(servers, offered_load) -> float:
    """Erlang C (delay) formula: probability that an arrival waits in M/M/c.

    Parameters
    ----------
    servers : int
        Number of servers c, a positive integer.
    offered_load : float
        Offered traffic a = lambda S in erlangs, 0 <= a < c.

    Returns
    -------
    float
        C(c, a) = P(all c servers busy) = P(an arrival waits).

    Raises
    ------
    InvalidValueError
        Bad ``servers`` or ``offered_load``.
    UnstableError
        ``offered_load >= servers`` (rho = a/c >= 1).

    Notes
    -----
    .. math::

        C(c, a) = \\frac{\\frac{a^c}{c!}\\frac{1}{1-\\rho}}
                       {\\sum_{k=0}^{c-1}\\frac{a^k}{k!}
                        + \\frac{a^c}{c!}\\frac{1}{1-\\rho}}
                = \\frac{B(c, a)}{1 - \\rho\\,(1 - B(c, a))},
        \\qquad \\rho = a / c,

    with B evaluated by the stable recursion of :func:`erlang_b`.

    References
    ----------
    Kleinrock, Queueing Systems Vol. 1 (1975), Sec. 3.5 (Erlang's C formula).
    Bolch, Greiner, de Meer & Trivedi (2006), Sec. 6.2 (M/M/m).
    Jagerman (1974), Bell Syst. Tech. J. 53, 525-551 (recursion for B).
    """
    c = _check_int("erlang_c", "servers", servers, minimum=1)
    a = _check_nonneg("erlang_c", "offered_load", offered_load)
    rho = a / c
    if rho >= 1:
        raise UnstableError(
            f"erlang_c: offered_load = {a:.6g} >= servers = {c}: rho = offered_load / "
            f"servers = {rho:.6g} >= 1, the M/M/c queue has no steady state",
            rho=rho,
        )
    return _erlang_c_from_b(c, a, _erlang_b_unchecked(c, a))


# ---------------------------------------------------------------------------
# Markovian queues
# ---------------------------------------------------------------------------


def mm1(arrival_rate, service_time) -> QueueMetrics:
    """M/M/1: Poisson arrivals, exponential service, one server, FCFS.

    Parameters
    ----------
    arrival_rate : float or sympy expression
        lambda >= 0.
    service_time : float or sympy expression
        Mean service time S = 1/mu >= 0.

    Returns
    -------
    QueueMetrics

    Raises
    ------
    InvalidValueError
        Negative, NaN or infinite input (for sympy: provably negative,
        non-real or infinite).
    UnstableError
        rho = lambda S >= 1 (for sympy: only when provable).

    Notes
    -----
    With rho = lambda S:

    .. math::

        P_0 = 1 - \\rho, \\quad
        L = \\frac{\\rho}{1-\\rho}, \\quad
        R = \\frac{S}{1-\\rho}, \\quad
        W_q = \\frac{\\rho S}{1-\\rho}, \\quad
        L_q = \\frac{\\rho^2}{1-\\rho}, \\quad
        U = \\rho, \\quad P(\\text{wait}) = \\rho.

    References
    ----------
    Kleinrock, Queueing Systems Vol. 1 (1975), Sec. 3.2.
    Gross, Shortle, Thompson & Harris, Fundamentals of Queueing Theory,
    4th ed. (2008), Sec. 2.2.
    Jain, The Art of Computer Systems Performance Analysis (1991), Sec. 31.2.
    """
    sym = _symbolic(arrival_rate, service_time)
    lam = _check_nonneg("M/M/1", "arrival_rate", arrival_rate, symbolic_ok=True)
    s = _check_nonneg("M/M/1", "service_time", service_time, symbolic_ok=True)
    rho = lam * s
    _check_stable("M/M/1", rho, "arrival_rate * service_time")
    wq = rho * s / (1 - rho)
    r = s / (1 - rho)
    lq = rho * rho / (1 - rho)
    l_ = rho / (1 - rho)
    if not sym:
        lam, s, rho, wq, r, lq, l_ = map(float, (lam, s, rho, wq, r, lq, l_))
    return QueueMetrics(
        model="M/M/1",
        arrival_rate=lam,
        service_time=s,
        servers=1,
        capacity=None,
        utilization=rho,
        throughput=lam,
        waiting_time=wq,
        response_time=r,
        number_waiting=lq,
        queue_length=l_,
        blocking_probability=0.0,
        wait_probability=rho,
        approximate=False,
        reference=_REF_MM1,
        empty_probability=1 - rho,
    )


def mmc(arrival_rate, service_time, servers) -> QueueMetrics:
    """M/M/c: Poisson arrivals, exponential service, c identical servers, FCFS.

    Parameters
    ----------
    arrival_rate : float
        lambda >= 0.
    service_time : float
        Mean service time S = 1/mu >= 0.
    servers : int
        c, a positive integer.

    Returns
    -------
    QueueMetrics
        ``wait_probability`` is Erlang C.

    Raises
    ------
    InvalidValueError
        Bad input.
    UnstableError
        rho = lambda S / c >= 1.

    Notes
    -----
    With a = lambda S (offered load), rho = a/c and C = C(c, a) the Erlang C
    formula (:func:`erlang_c`):

    .. math::

        W_q = \\frac{C(c, a)}{c\\mu - \\lambda} = \\frac{C(c, a)\\,S}{c - a},
        \\quad L_q = \\lambda W_q, \\quad R = W_q + S,
        \\quad L = L_q + a, \\quad U = \\rho.

    C is computed from the Erlang B recursion, so c = 10^4 and beyond are
    fine.  The probability that the station is empty (Kleinrock 1975,
    eq. 3.37; Gross et al. 2008, eq. 2.34)

    .. math::

        P_0 = \\Big[\\sum_{n=0}^{c-1} \\frac{a^n}{n!}
              + \\frac{a^c}{c!\\,(1-\\rho)}\\Big]^{-1}

    is evaluated as e^{-a} / (Q(c+1, a) ((1 - B) + B/(1 - rho))), with
    Q the regularised upper incomplete gamma function (sum_{n<=c} a^n/n! =
    e^a Q(c+1, a)) and B = B(c, a) Erlang B, so no factorial is formed.

    References
    ----------
    Kleinrock, Queueing Systems Vol. 1 (1975), Sec. 3.5.
    Gross, Shortle, Thompson & Harris (2008), Sec. 2.3.
    Bolch, Greiner, de Meer & Trivedi (2006), Sec. 6.2 (M/M/m).
    Jain (1991), Sec. 31.3.
    """
    c = _check_int("M/M/c", "servers", servers, minimum=1)
    name = f"M/M/{c}"
    lam = _check_nonneg(name, "arrival_rate", arrival_rate)
    s = _check_nonneg(name, "service_time", service_time)
    a = lam * s
    rho = a / c
    _check_stable(name, rho, "arrival_rate * service_time / servers")
    b = _erlang_b_unchecked(c, a)
    cw = _erlang_c_from_b(c, a, b)
    wq = cw * s / (c - a)
    return QueueMetrics.from_wait(name, lam, s, c, wq, wait_probability=cw, reference=_REF_MMC,
                                  empty_probability=_mmc_p0(c, a, b))


def _mmc_p0(c: int, a: float, b: float) -> float:
    """P0 of M/M/c from Erlang B (see :func:`mmc`)."""
    from scipy.special import gammaincc

    if a == 0.0:
        return 1.0
    rho = a / c
    q = float(gammaincc(c + 1, a))
    return math.exp(-a - math.log(q) - math.log((1 - b) + b / (1 - rho)))


def _finite_room(name, lam, s, c, k, reference) -> QueueMetrics:
    """M/M/c/K from its stationary distribution, computed in log space.

    Unnormalised log-weights: log w_n = n log a - log n!           (n <= c)
                               log w_n = log w_c + (n - c) log rho  (c < n <= K)
    """
    import numpy as np
    from scipy.special import gammaln, logsumexp

    a = lam * s
    if a == 0.0:
        # empty station: p_0 = 1 (K >= c >= 1, so nobody is ever blocked)
        return QueueMetrics.from_wait(name, lam, s, c, 0.0, capacity=k, wait_probability=0.0,
                                      reference=reference, empty_probability=1.0)
    rho = a / c
    n_low = np.arange(c + 1, dtype=float)
    logw_low = n_low * math.log(a) - gammaln(n_low + 1.0)
    j = np.arange(1, k - c + 1, dtype=float)
    logw_high = logw_low[-1] + j * math.log(rho)
    logw = np.concatenate([logw_low, logw_high])
    log_z = logsumexp(logw)
    p = np.exp(logw - log_z)
    n = np.arange(k + 1, dtype=float)
    p_block = float(p[k])
    # 1 - p_K summed directly: accurate also when p_K is close to 1
    p_admit = float(np.exp(logsumexp(logw[:k]) - log_z))
    l_ = float(np.dot(n, p))
    lq = float(np.dot(np.maximum(n - c, 0.0), p))
    x = lam * p_admit
    p_wait = float(np.sum(p[c:k])) / p_admit
    wq = lq / x
    return QueueMetrics.from_wait(name, lam, s, c, wq, throughput=x, capacity=k,
                                  blocking_probability=p_block, number_waiting=lq,
                                  queue_length=l_, wait_probability=p_wait,
                                  reference=reference, empty_probability=float(p[0]))


def mm1k(arrival_rate, service_time, capacity) -> QueueMetrics:
    """M/M/1/K: one exponential server and room for K jobs in all
    (the one in service included); arrivals that find K jobs are lost.

    Parameters
    ----------
    arrival_rate : float
        lambda >= 0 (any value: rho >= 1 is fine, the room is finite).
    service_time : float
        Mean service time S >= 0.
    capacity : int
        K >= 1.

    Returns
    -------
    QueueMetrics
        ``blocking_probability`` = p_K; ``throughput`` = lambda (1 - p_K);
        ``waiting_time`` and ``response_time`` are those of admitted jobs;
        ``wait_probability`` = P(an admitted arrival finds the server busy).

    Notes
    -----
    With rho = lambda S,

    .. math::

        p_n = \\frac{(1-\\rho)\\,\\rho^n}{1-\\rho^{K+1}}
        \\;(\\rho \\ne 1), \\qquad p_n = \\frac{1}{K+1} \\;(\\rho = 1),

    X = lambda (1 - p_K), L = sum n p_n, Lq = L - (1 - p_0),
    R = L / X, Wq = Lq / X.  The distribution is evaluated in log space
    (:func:`scipy.special.logsumexp`), so large K and rho > 1 are safe.

    References
    ----------
    Kleinrock, Queueing Systems Vol. 1 (1975), Sec. 3.6.
    Gross, Shortle, Thompson & Harris (2008), Sec. 2.5.
    Bolch et al. (2006), Sec. 6.2.
    """
    k = _check_int("M/M/1/K", "capacity", capacity, minimum=1)
    name = f"M/M/1/{k}"
    lam = _check_nonneg(name, "arrival_rate", arrival_rate)
    s = _check_nonneg(name, "service_time", service_time)
    return _finite_room(name, lam, s, 1, k, _REF_MM1K)


def mmck(arrival_rate, service_time, servers, capacity) -> QueueMetrics:
    """M/M/c/K: c exponential servers and room for K >= c jobs in all
    (those in service included); arrivals that find K jobs are lost.

    Parameters
    ----------
    arrival_rate : float
        lambda >= 0 (any value: the room is finite).
    service_time : float
        Mean service time S >= 0.
    servers : int
        c >= 1.
    capacity : int
        K >= c.  K = c is the Erlang loss system M/M/c/c.

    Returns
    -------
    QueueMetrics
        ``blocking_probability`` = p_K; ``throughput`` = lambda (1 - p_K);
        ``utilization`` = X S / c; ``waiting_time``/``response_time`` of
        admitted jobs; ``wait_probability`` = P(an admitted arrival finds
        all servers busy) = sum_{c <= n < K} p_n / (1 - p_K).

    Notes
    -----
    With a = lambda S and rho = a / c,

    .. math::

        p_n = p_0 \\frac{a^n}{n!} \\; (0 \\le n \\le c), \\qquad
        p_n = p_0 \\frac{a^c}{c!} \\rho^{\\,n-c} \\; (c < n \\le K),

    normalised to 1; L = sum n p_n, Lq = sum (n-c)^+ p_n, X = lambda (1 - p_K),
    Wq = Lq / X, R = Wq + S (Little's law).  The weights are formed as
    logarithms (``gammaln``) and normalised with ``logsumexp``: no raw power
    or factorial, so c and K in the tens of thousands are safe.

    References
    ----------
    Gross, Shortle, Thompson & Harris, Fundamentals of Queueing Theory,
    4th ed. (2008), Sec. 2.5.
    Bolch, Greiner, de Meer & Trivedi (2006), Sec. 6.2.
    Kleinrock, Queueing Systems Vol. 1 (1975), Sec. 3.6-3.7.
    """
    c = _check_int("M/M/c/K", "servers", servers, minimum=1)
    k = _check_int(
        f"M/M/{c}/K",
        "capacity",
        capacity,
        minimum=c,
        what=f"an integer >= servers = {c} (it counts the jobs in service too)",
    )
    name = f"M/M/{c}/{k}"
    lam = _check_nonneg(name, "arrival_rate", arrival_rate)
    s = _check_nonneg(name, "service_time", service_time)
    return _finite_room(name, lam, s, c, k, _REF_MMCK)


def mminf(arrival_rate, service_time) -> QueueMetrics:
    """M/M/inf (also M/G/inf): a pure delay, every job has its own server.

    Parameters
    ----------
    arrival_rate : float or sympy expression
        lambda >= 0.
    service_time : float or sympy expression
        Mean service time S >= 0.

    Returns
    -------
    QueueMetrics
        ``servers`` is ``math.inf``; ``utilization`` is the mean number of
        busy servers lambda S (there is no per-server fraction).

    Notes
    -----
    The number present is Poisson with mean a = lambda S:

    .. math::

        L = \\lambda S, \\quad R = S, \\quad W_q = L_q = 0,
        \\quad P_0 = e^{-\\lambda S}.

    The means hold for any service-time distribution (insensitivity).

    References
    ----------
    Kleinrock, Queueing Systems Vol. 1 (1975), Sec. 3.4.
    Gross, Shortle, Thompson & Harris (2008), Sec. 2.7.
    """
    sym = _symbolic(arrival_rate, service_time)
    lam = _check_nonneg("M/M/inf", "arrival_rate", arrival_rate, symbolic_ok=True)
    s = _check_nonneg("M/M/inf", "service_time", service_time, symbolic_ok=True)
    a = lam * s
    if sym:
        import sympy as sp

        p0 = sp.exp(-a)
    else:
        lam, s, a = float(lam), float(s), float(a)
        p0 = math.exp(-a)
    return QueueMetrics.from_wait("M/M/inf", lam, s, math.inf, 0.0, wait_probability=0.0,
                                  reference=_REF_MMINF, empty_probability=p0)


# ---------------------------------------------------------------------------
