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
"""

from __future__ import annotations

import html
import math
import numbers
import operator
from dataclasses import dataclass, fields
from typing import Any

from ..errors import InvalidValueError, UnstableError

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
]


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


# ---------------------------------------------------------------------------
# Result object
# ---------------------------------------------------------------------------

_ALIASES = (
    ("X", "throughput"),
    ("R", "response_time"),
    ("U", "utilization"),
    ("Q", "queue_length"),
    ("W", "waiting_time"),
    ("Lq", "number_waiting"),
)

_LABELS = {
    "arrival_rate": "arrival rate (lambda)",
    "service_time": "service time (S)",
    "servers": "servers (c)",
    "capacity": "capacity (K)",
    "utilization": "utilization (U)",
    "throughput": "throughput (X)",
    "waiting_time": "waiting time (W = Wq)",
    "response_time": "response time (R)",
    "number_waiting": "number waiting (Lq)",
    "queue_length": "queue length (Q = L)",
    "blocking_probability": "blocking probability",
    "wait_probability": "wait probability",
    "empty_probability": "empty probability (P0)",
}


def _fmt(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        v = float(value)
        if math.isinf(v):
            return "inf"
        return f"{v:.6g}"
    return str(value)  # sympy expression


@dataclass(frozen=True)
class QueueMetrics:
    """Steady-state figures of a single queueing station.

    Attributes
    ----------
    model : str
        Kendall notation, e.g. ``"M/M/4"`` or ``"M/M/2/10"``.
    arrival_rate : float
        Offered arrival rate lambda.
    service_time : float
        Mean service time S (= 1/mu).
    servers : int or float
        Number of servers c (``math.inf`` for M/M/inf).
    capacity : int or None
        Maximum number present K (waiting + in service); None if unlimited.
    utilization : float
        Busy fraction of one server, lambda (1 - P_block) S / c.  For M/M/inf
        the mean number of busy servers lambda S.
    throughput : float
        Carried rate lambda (1 - P_block).
    waiting_time : float
        Mean time in queue before service, Wq (admitted jobs).
    response_time : float
        Mean time in the station, R = Wq + S.
    number_waiting : float
        Mean number waiting (not in service), Lq.
    queue_length : float
        Mean number present, L (= Q of the network results).
    blocking_probability : float
        Probability that an arrival is lost (0.0 where no loss).
    wait_probability : float or None
        Probability that an (admitted) arrival has to wait; None where the
        model does not define it (the G/G approximations).
    approximate : bool
        True when the figures come from an approximation (Kingman,
        Allen-Cunneen).
    reference : str
        Where the formulas come from.
    empty_probability : float or None
        P0, the (time-average) probability that the station is empty: 1 - rho
        for every stable single-server queue (M/M/1, M/G/1, M/D/1, G/G/1:
        the server idles exactly when nobody is there), e^{-lambda S} for
        M/M/inf (Poisson), the Erlang formula for M/M/c and the normalised
        stationary distribution for M/M/c/K.  None where the model does not
        give it (the G/G/c approximation).

    The short aliases ``X``, ``R``, ``U``, ``Q``, ``W``, ``L`` and ``Lq`` are
    read-only properties.  Note that ``W`` is the *waiting* time in queue
    (Wq), not the time in system, which is ``R``.
    """

    model: str
    arrival_rate: Any
    service_time: Any
    servers: Any
    capacity: int | None
    utilization: Any
    throughput: Any
    waiting_time: Any
    response_time: Any
    number_waiting: Any
    queue_length: Any
    blocking_probability: Any = 0.0
    wait_probability: Any = None
    approximate: bool = False
    reference: str = ""
    empty_probability: Any = None

    # -- aliases ----------------------------------------------------------
    @property
    def X(self):
        """Throughput (carried rate)."""
        return self.throughput

    @property
    def R(self):
        """Response time Wq + S."""
        return self.response_time

    @property
    def U(self):
        """Per-server utilisation."""
        return self.utilization

    @property
    def Q(self):
        """Mean number present (waiting + in service)."""
        return self.queue_length

    @property
    def L(self):
        """Mean number present (same as ``Q``)."""
        return self.queue_length

    @property
    def W(self):
        """Mean waiting time in queue, Wq."""
        return self.waiting_time

    @property
    def Lq(self):
        """Mean number waiting."""
        return self.number_waiting

    @property
    def P0(self):
        """Probability that the station is empty (``empty_probability``)."""
        return self.empty_probability

    # -- conversions ------------------------------------------------------
    def as_dict(self) -> dict:
        """All fields as a plain dict (in field order)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def to_frame(self):
        """A one-column :class:`pandas.DataFrame`, one row per field; the
        column is named after the model."""
        import pandas as pd

        d = self.as_dict()
        model = d.pop("model")
        return pd.DataFrame({model: pd.Series(d, dtype=object)})

    def _rows(self):
        skip = {"model", "approximate", "reference"}
        if self.empty_probability is None:
            skip.add("empty_probability")
        for f in fields(self):
            if f.name in skip:
                continue
            yield _LABELS.get(f.name, f.name), getattr(self, f.name)

    def _title(self) -> str:
        t = f"QueueMetrics: {self.model}"
        if self.approximate:
            t += "  (APPROXIMATION)"
        return t

    def __repr__(self) -> str:
        rows = list(self._rows())
        width = max(len(k) for k, _ in rows)
        lines = [self._title()]
        lines += [f"  {k:<{width}}  {_fmt(v)}" for k, v in rows]
        if self.reference:
            lines.append(f"  reference: {self.reference}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        esc = html.escape
        out = [
            "<table>",
            f"<caption>{esc(self._title())}</caption>",
        ]
        for k, v in self._rows():
            out.append(f"<tr><th style='text-align:left'>{esc(k)}</th><td>{esc(_fmt(v))}</td></tr>")
        out.append("</table>")
        if self.reference:
            out.append(f"<small>{esc(self.reference)}</small>")
        return "\n".join(out)


# ---------------------------------------------------------------------------
# Validation helpers
# ---------------------------------------------------------------------------


def _is_sym(x) -> bool:
    """A sympy object (expression, symbol or number)."""
    mod = type(x).__module__ or ""
    return mod.startswith("sympy")


def _show(value) -> str:
    """The offending value as the user will recognise it."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return repr(value)
    if _is_sym(value):
        return str(value)
    try:
        return repr(float(value))
    except (TypeError, ValueError, OverflowError):
        return repr(value)


def _check_nonneg(model: str, name: str, value, *, symbolic_ok: bool = False):
    """A finite non-negative real number (a float), or, where allowed, a sympy
    expression that is not provably negative, non-real or infinite."""
    msg = f"{model}: {name} must be a finite non-negative number, got {_show(value)}"
    if isinstance(value, (bool, str)) or value is None:
        raise InvalidValueError(msg)
    if _is_sym(value):
        import sympy

        expr = sympy.sympify(value)
        if not expr.free_symbols:
            # a sympy number: handle as a number unless it is exact and we
            # may keep it symbolic
            if expr.has(sympy.nan, sympy.zoo) or expr.is_finite is False:
                raise InvalidValueError(msg)
            if expr.is_extended_real is False or expr.is_negative is True:
                raise InvalidValueError(msg)
            if not symbolic_ok:
                try:
                    return float(expr)
                except TypeError:
                    raise InvalidValueError(msg) from None
            return expr
        if not symbolic_ok:
            raise InvalidValueError(
                f"{model}: {name} must be a number (this model has no symbolic "
                f"form), got {_show(value)}"
            )
        if expr.has(sympy.nan, sympy.zoo):
            raise InvalidValueError(msg)
        if expr.is_extended_real is False or expr.is_negative is True or expr.is_finite is False:
            raise InvalidValueError(msg)
        return expr
    if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
        raise InvalidValueError(msg)
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidValueError(msg) from None
    if not math.isfinite(v) or v < 0:
        raise InvalidValueError(msg)
    if symbolic_ok and isinstance(value, numbers.Integral):
        # keep integers exact so that mixed sympy/int input stays exact
        return int(value)
    return v


def _check_int(model: str, name: str, value, *, minimum: int, what: str | None = None) -> int:
    """An integer >= minimum.  Python and numpy integers are taken as they
    are, integral floats (4.0) as the integer they equal; 2.5, True, NaN and
    strings are rejected."""
    what = what or ("a positive integer" if minimum == 1 else f"an integer >= {minimum}")
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        shown = str(int(value))
    else:
        shown = _show(value)
    msg = f"{model}: {name} must be {what}, got {shown}"
    if isinstance(value, bool) or value is None or isinstance(value, str):
        raise InvalidValueError(msg)
    if type(value).__name__ == "bool_":  # numpy.bool_
        raise InvalidValueError(msg)
    try:
        v = operator.index(value)
    except TypeError:
        v = None
    if v is None:
        if not (isinstance(value, numbers.Real) or _is_sym(value)):
            raise InvalidValueError(msg)
        try:
            fv = float(value)
        except (TypeError, ValueError):
            raise InvalidValueError(msg) from None
        if not math.isfinite(fv) or not fv.is_integer():
            raise InvalidValueError(msg)
        v = int(fv)
    if v < minimum:
        raise InvalidValueError(msg)
    return int(v)


def _symbolic(*values) -> bool:
    return any(_is_sym(v) for v in values)


def _check_stable(model: str, rho, formula: str, station=None) -> None:
    """Raise UnstableError when rho >= 1 (numbers) or provably so (sympy)."""
    if _is_sym(rho):
        if (rho - 1).is_nonnegative is True:
            raise UnstableError(
                f"{model} is unstable: rho = {formula} = {rho} >= 1", station=station, rho=rho
            )
        return
    if rho >= 1:
        raise UnstableError(
            f"{model} is unstable: rho = {formula} = {rho:.6g} >= 1 "
            f"(no steady state with unlimited room)",
            station=station,
            rho=float(rho),
        )


# ---------------------------------------------------------------------------
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
    lq = lam * wq
    p0 = _mmc_p0(c, a, b)
    return QueueMetrics(
        model=name,
        arrival_rate=lam,
        service_time=s,
        servers=c,
        capacity=None,
        utilization=rho,
        throughput=lam,
        waiting_time=wq,
        response_time=wq + s,
        number_waiting=lq,
        queue_length=lq + a,
        blocking_probability=0.0,
        wait_probability=cw,
        approximate=False,
        reference=_REF_MMC,
        empty_probability=p0,
    )


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
        return QueueMetrics(
            model=name,
            arrival_rate=lam,
            service_time=s,
            servers=c,
            capacity=k,
            utilization=0.0,
            throughput=lam,
            waiting_time=0.0,
            response_time=s,
            number_waiting=0.0,
            queue_length=0.0,
            blocking_probability=0.0,
            wait_probability=0.0,
            approximate=False,
            reference=reference,
            empty_probability=1.0,
        )
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
    return QueueMetrics(
        model=name,
        arrival_rate=lam,
        service_time=s,
        servers=c,
        capacity=k,
        utilization=x * s / c,
        throughput=x,
        waiting_time=wq,
        response_time=wq + s,
        number_waiting=lq,
        queue_length=l_,
        blocking_probability=p_block,
        wait_probability=p_wait,
        approximate=False,
        reference=reference,
        empty_probability=float(p[0]),
    )


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
    return QueueMetrics(
        model="M/M/inf",
        arrival_rate=lam,
        service_time=s,
        servers=math.inf,
        capacity=None,
        utilization=a,
        throughput=lam,
        waiting_time=0.0,
        response_time=s,
        number_waiting=0.0,
        queue_length=a,
        blocking_probability=0.0,
        wait_probability=0.0,
        approximate=False,
        reference=_REF_MMINF,
        empty_probability=p0,
    )


# ---------------------------------------------------------------------------
# M/G/1 and the G/G approximations
# ---------------------------------------------------------------------------


def _single_server(model, lam, s, wq, rho, sym, *, wait_probability, approximate, reference):
    """Figures of a stable single-server queue from its Wq.  P0 = 1 - rho
    is exact for every G/G/1 (the server is busy exactly when the station
    is not empty, and busy a fraction rho of the time: the utilisation law;
    Kleinrock 1975, sec. 5.5 for M/G/1), even where Wq is approximate."""
    lq = lam * wq
    r = wq + s
    l_ = lq + rho
    p0 = 1 - rho
    if not sym:
        lam, s, wq, rho, lq, r, l_, p0 = map(float, (lam, s, wq, rho, lq, r, l_, p0))
        if wait_probability is not None:
            wait_probability = float(wait_probability)
    return QueueMetrics(
        model=model,
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
        wait_probability=wait_probability,
        approximate=approximate,
        reference=reference,
        empty_probability=p0,
    )


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
    lq = lam * wq
    return QueueMetrics(
        model=name,
        arrival_rate=lam,
        service_time=s,
        servers=c,
        capacity=None,
        utilization=rho,
        throughput=lam,
        waiting_time=wq,
        response_time=wq + s,
        number_waiting=lq,
        queue_length=lq + a,
        blocking_probability=0.0,
        wait_probability=None,
        approximate=True,
        reference=_REF_ALLEN_CUNNEEN,
    )
