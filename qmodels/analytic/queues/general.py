"""Single-station queues with general service or arrivals: M/G/1
(Pollaczek-Khinchine), M/D/1, and the G/G/1 (Kingman, Allen-Cunneen) and
G/G/c (Allen-Cunneen) approximations.  Each returns a
:class:`~.metrics.QueueMetrics`; the approximations say so in
``approximate`` and ``reference``.
"""

from __future__ import annotations

from ...errors import InvalidValueError
from .markovian import _erlang_b_unchecked, _erlang_c_from_b
from .metrics import QueueMetrics, _check_int, _check_nonneg, _check_stable, _symbolic

__all__ = ["mg1", "md1", "gg1", "ggc"]


# ---------------------------------------------------------------------------
# References (one string per model, stored in QueueMetrics.reference)
# ---------------------------------------------------------------------------

_REF_MG1 = (
    "Pollaczek-Khinchine mean value formula: Kleinrock, Queueing Systems "
    "Vol. 1 (1975), Sec. 5.5; Gross, Shortle, Thompson & Harris (2008), "
    "Sec. 5.1.1; Bolch et al. (2006), Sec. 6.3"
)
_REF_KINGMAN = (
    "APPROXIMATION. Kingman, 'The single server queue in heavy traffic', "
    "Proc. Cambridge Philos. Soc. 57 (1961) 902-904; Bolch et al. (2006), "
    "Sec. 6.3"
)
_REF_ALLEN_CUNNEEN = (
    "APPROXIMATION. Allen-Cunneen: Allen, Probability, Statistics, and "
    "Queueing Theory with Computer Science Applications, 2nd ed. (1990), "
    "Sec. 6.3; Bolch et al. (2006), Sec. 6.3 (GI/G/1 and GI/G/m approximations)"
)


# M/G/1 and the G/G approximations
# ---------------------------------------------------------------------------


def _single_server(model, lam, s, wq, rho, sym, *, wait_probability, approximate, reference):
    """Figures of a stable single-server queue from its Wq.  P0 = 1 - rho
    is exact for every G/G/1 (the server is busy exactly when the station
    is not empty, and busy a fraction rho of the time: the utilisation law;
    Kleinrock 1975, sec. 5.5 for M/G/1), even where Wq is approximate."""
    p0 = 1 - rho
    if not sym:
        lam, s, wq, p0 = map(float, (lam, s, wq, p0))
        if wait_probability is not None:
            wait_probability = float(wait_probability)
    return QueueMetrics.from_wait(model, lam, s, 1, wq, wait_probability=wait_probability,
                                  approximate=approximate, reference=reference,
                                  empty_probability=p0)


def mg1(arrival_rate, service_time, scv) -> QueueMetrics:
    """M/G/1: Poisson arrivals, general service, one server, FCFS
    (Pollaczek-Khinchine mean value formula; exact).

    Parameters
    ----------
    arrival_rate : float or sympy expression
        lambda >= 0.
    service_time : float or sympy expression
        Mean service time S >= 0.
    scv : float or sympy expression
        Squared coefficient of variation of the service time,
        Var(S)/E(S)^2 >= 0 (0 deterministic, 1 exponential).

    Returns
    -------
    QueueMetrics

    Raises
    ------
    InvalidValueError, UnstableError

    Notes
    -----
    With rho = lambda S and E[S^2] = (1 + scv) S^2:

    .. math::

        W_q = \\frac{\\lambda E[S^2]}{2(1-\\rho)}
            = \\frac{\\rho\\,S\\,(1 + c_s^2)}{2(1-\\rho)},
        \\quad L_q = \\lambda W_q, \\quad R = W_q + S, \\quad L = L_q + \\rho.

    ``wait_probability`` is rho (PASTA).  scv = 1 gives M/M/1, scv = 0 M/D/1.

    References
    ----------
    Kleinrock, Queueing Systems Vol. 1 (1975), Sec. 5.5 (P-K mean value
    formula).
    Gross, Shortle, Thompson & Harris (2008), Sec. 5.1.1.
    Bolch, Greiner, de Meer & Trivedi (2006), Sec. 6.3 (M/G/1).
    """
    return _mg1("M/G/1", arrival_rate, service_time, scv)


def _mg1(model, arrival_rate, service_time, scv):
    sym = _symbolic(arrival_rate, service_time, scv)
    lam = _check_nonneg(model, "arrival_rate", arrival_rate, symbolic_ok=True)
    s = _check_nonneg(model, "service_time", service_time, symbolic_ok=True)
    cs2 = _check_nonneg(model, "scv", scv, symbolic_ok=True)
    rho = lam * s
    _check_stable(model, rho, "arrival_rate * service_time")
    wq = rho * s * (1 + cs2) / (2 * (1 - rho))
    return _single_server(
        model, lam, s, wq, rho, sym, wait_probability=rho, approximate=False, reference=_REF_MG1
    )


def md1(arrival_rate, service_time) -> QueueMetrics:
    """M/D/1: Poisson arrivals, constant service time, one server.

    Parameters
    ----------
    arrival_rate : float or sympy expression
        lambda >= 0.
    service_time : float or sympy expression
        The (constant) service time S >= 0.

    Returns
    -------
    QueueMetrics

    Notes
    -----
    The Pollaczek-Khinchine formula (:func:`mg1`) with scv = 0:

    .. math::

        W_q = \\frac{\\rho\\,S}{2(1-\\rho)}, \\qquad \\rho = \\lambda S,

    half the M/M/1 waiting time.

    References
    ----------
    Kleinrock, Queueing Systems Vol. 1 (1975), Sec. 5.5.
    Gross, Shortle, Thompson & Harris (2008), Sec. 5.1.1.
    """
    return _mg1("M/D/1", arrival_rate, service_time, 0)


_GG_METHODS = {
    "kingman": "kingman",
    "allen-cunneen": "allen-cunneen",
    "allencunneen": "allen-cunneen",
}


def gg1(arrival_rate, service_time, ca2, cs2, method: str = "kingman") -> QueueMetrics:
    """G/G/1 (APPROXIMATION): general renewal arrivals, general service,
    one server, characterised by the first two moments only.

    Parameters
    ----------
    arrival_rate : float or sympy expression
        lambda >= 0.
    service_time : float or sympy expression
        Mean service time S >= 0.
    ca2 : float or sympy expression
        Squared coefficient of variation of the inter-arrival times (>= 0).
    cs2 : float or sympy expression
        Squared coefficient of variation of the service times (>= 0).
    method : {"kingman", "allen-cunneen"}
        The approximation to use (see Notes).

    Returns
    -------
    QueueMetrics
        ``approximate`` is True; ``wait_probability`` is None (for non-Poisson
        arrivals it is not rho and the approximation does not give it).

    Raises
    ------
    InvalidValueError
        Bad input or unknown ``method``.
    UnstableError
        rho = lambda S >= 1.

    Notes
    -----
    Kingman's heavy-traffic approximation:

    .. math::

        W_q \\approx \\frac{\\rho}{1-\\rho}\\,\\frac{c_a^2 + c_s^2}{2}\\,S .

    Allen-Cunneen for c servers,
    W_q ~ C(c, a) / (c mu - lambda) (ca2 + cs2)/2, reduces for c = 1
    (C(1, a) = rho) to the very same expression, so both methods give equal
    figures here; they differ only in the reference.  The approximation is
    exact for M/G/1 (ca2 = 1, the P-K formula), and is asymptotically exact
    as rho -> 1; it can be poor at light load with ca2 != 1.

    References
    ----------
    Kingman, J. F. C., "The single server queue in heavy traffic", Proc.
    Cambridge Philos. Soc. 57 (1961) 902-904.
    Allen, Probability, Statistics, and Queueing Theory with Computer Science
    Applications, 2nd ed. (1990), Sec. 6.3.
    Bolch, Greiner, de Meer & Trivedi (2006), Sec. 6.3 (GI/G/1
    approximations).
    """
    key = (
        method.strip().lower().replace("_", "-").replace(" ", "-")
        if isinstance(method, str)
        else None
    )
    if key not in _GG_METHODS:
        raise InvalidValueError(
            f"G/G/1: method must be 'kingman' or 'allen-cunneen', got {method!r}"
        )
    key = _GG_METHODS[key]
    sym = _symbolic(arrival_rate, service_time, ca2, cs2)
    lam = _check_nonneg("G/G/1", "arrival_rate", arrival_rate, symbolic_ok=True)
    s = _check_nonneg("G/G/1", "service_time", service_time, symbolic_ok=True)
    a2 = _check_nonneg("G/G/1", "ca2", ca2, symbolic_ok=True)
    s2 = _check_nonneg("G/G/1", "cs2", cs2, symbolic_ok=True)
    rho = lam * s
    _check_stable("G/G/1", rho, "arrival_rate * service_time")
    # Kingman and Allen-Cunneen (C(1, a) = rho) coincide for one server.
    wq = rho / (1 - rho) * (a2 + s2) / 2 * s
    ref = _REF_KINGMAN if key == "kingman" else _REF_ALLEN_CUNNEEN
    return _single_server(
        "G/G/1", lam, s, wq, rho, sym, wait_probability=None, approximate=True, reference=ref
    )


def ggc(arrival_rate, service_time, servers, ca2, cs2) -> QueueMetrics:
    """G/G/c (APPROXIMATION): Allen-Cunneen two-moment approximation.

    Parameters
    ----------
    arrival_rate : float
        lambda >= 0.
    service_time : float
        Mean service time S >= 0.
    servers : int
        c >= 1.
    ca2 : float
        Squared coefficient of variation of the inter-arrival times (>= 0).
    cs2 : float
        Squared coefficient of variation of the service times (>= 0).

    Returns
    -------
    QueueMetrics
        ``approximate`` is True; ``wait_probability`` is None (Erlang C is
        used inside the formula only as a proxy).

    Raises
    ------
    InvalidValueError, UnstableError

    Notes
    -----
    With a = lambda S, rho = a / c and C(c, a) the Erlang C formula:

    .. math::

        W_q \\approx \\frac{C(c, a)}{c\\mu - \\lambda}\\,\\frac{c_a^2 + c_s^2}{2}
            = \\frac{C(c, a)\\,S}{c - a}\\,\\frac{c_a^2 + c_s^2}{2}.

    Exact for M/M/c (ca2 = cs2 = 1).

    References
    ----------
    Allen, Probability, Statistics, and Queueing Theory with Computer Science
    Applications, 2nd ed. (1990), Sec. 6.3.
    Bolch, Greiner, de Meer & Trivedi (2006), Sec. 6.3 (GI/G/m
    approximations).
    """
    c = _check_int("G/G/c", "servers", servers, minimum=1)
    name = f"G/G/{c}"
    lam = _check_nonneg(name, "arrival_rate", arrival_rate)
    s = _check_nonneg(name, "service_time", service_time)
    a2 = _check_nonneg(name, "ca2", ca2)
    s2 = _check_nonneg(name, "cs2", cs2)
    a = lam * s
    rho = a / c
    _check_stable(name, rho, "arrival_rate * service_time / servers")
    cw = _erlang_c_from_b(c, a, _erlang_b_unchecked(c, a))
    wq = cw * s / (c - a) * (a2 + s2) / 2
    return QueueMetrics.from_wait(name, lam, s, c, wq, approximate=True,
                                  reference=_REF_ALLEN_CUNNEEN)
