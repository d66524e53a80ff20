"""The result of every single-station closed form, :class:`QueueMetrics`,
and the input checks the formulas share (non-negative finite numbers,
integers, the stability condition rho < 1; sympy inputs pass where a
condition is not provably false).
"""

from __future__ import annotations

import html
import math
import numbers
import operator
from dataclasses import dataclass, fields
from typing import Any

from ...errors import InvalidValueError, UnstableError

__all__ = ["QueueMetrics"]


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


def _kendall_words(model: str) -> str:
    """The Kendall notation A/B/c[/K] in words (Kendall 1953; Kleinrock
    1975, sec. 1.2): M Poisson arrivals or exponential service, D
    deterministic, E_k Erlang, G general (independent times), GI renewal."""
    parts = model.split("/")
    word = {"M": "exponential", "D": "deterministic", "G": "general", "GI": "general"}
    out = []
    if parts:
        a = parts[0]
        out.append("Poisson arrivals" if a == "M" else f"{word.get(a, a)} inter-arrival times "
                   "(renewal)")
    if len(parts) > 1:
        out.append(f"{word.get(parts[1], parts[1])} service times")
    if len(parts) > 2:
        out.append(f"{parts[2]} server(s)")
    if len(parts) > 3:
        out.append(f"room for {parts[3]}")
    return f"{model}: " + ", ".join(out)


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

    @classmethod
    def from_wait(cls, model, arrival_rate, service_time, servers, waiting_time, *,
                  throughput=None, capacity=None, blocking_probability=0.0,
                  number_waiting=None, queue_length=None, wait_probability=None,
                  approximate=False, reference="", empty_probability=None):
        """The figures of a station from its mean wait Wq, the rest by the
        operational laws (Little's law and the utilisation law; Lazowska et
        al. 1984, ch. 3; Kleinrock 1975, sec. 2.1): X = ``throughput`` (the
        arrival rate where nothing is lost), R = Wq + S, Lq = X Wq, L = Lq +
        X S (X S busy servers on average), U = X S / c per server (M/M/inf,
        c = inf: the mean number busy, X S).  ``number_waiting`` and
        ``queue_length`` may be given where a distribution gives them
        directly."""
        x = arrival_rate if throughput is None else throughput
        busy = x * service_time
        lq = x * waiting_time if number_waiting is None else number_waiting
        return cls(
            model=model,
            arrival_rate=arrival_rate,
            service_time=service_time,
            servers=servers,
            capacity=capacity,
            utilization=busy if servers == math.inf else busy / servers,
            throughput=x,
            waiting_time=waiting_time,
            response_time=waiting_time + service_time,
            number_waiting=lq,
            queue_length=lq + busy if queue_length is None else queue_length,
            blocking_probability=blocking_probability,
            wait_probability=wait_probability,
            approximate=approximate,
            reference=reference,
            empty_probability=empty_probability,
        )

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

    # -- what the answer is (the result contract of qmodels.results) -------
    @property
    def method(self) -> str:
        """``"closed form <model>"`` (the formula of :attr:`reference`)."""
        return f"closed form {self.model}"

    @property
    def exactness(self) -> str:
        """``"approximate"`` for the G/G approximations, else ``"exact"``."""
        return "approximate" if self.approximate else "exact"

    @property
    def assumptions(self) -> tuple:
        """What the formula assumes: the Kendall notation of :attr:`model`
        in words."""
        return (_kendall_words(self.model),)

    notes: tuple = ()
    warnings: tuple = ()
    error = None

    # -- conversions ------------------------------------------------------
    def to_dict(self) -> dict:
        """All fields as a plain dict (in field order), then the label
        (``method``, ``exactness``, ``assumptions``, ``notes``,
        ``warnings``, ``error``)."""
        from ...results import label_dict

        return {**{f.name: getattr(self, f.name) for f in fields(self)}, **label_dict(self)}

    def to_frame(self):
        """A one-column :class:`pandas.DataFrame`, one row per field; the
        column is named after the model."""
        import pandas as pd

        d = self.to_dict()
        model = d.pop("model")
        return pd.DataFrame({model: pd.Series(d, dtype=object)})

    def _rows(self):
        skip = {"model", "approximate", "reference", "notes", "warnings"}
        if self.empty_probability is None:
            skip.add("empty_probability")
        for f in fields(self):
            if f.name in skip:
                continue
            yield _LABELS.get(f.name, f.name), getattr(self, f.name)

    def _title(self) -> str:
        return f"QueueMetrics: {self.model} [{self.exactness}]"

    def table(self) -> str:
        """The figures as plain text (also the ``repr``)."""
        return repr(self)

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
