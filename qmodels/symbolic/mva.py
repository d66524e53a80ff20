"""Exact single-class MVA with sympy: :func:`mva_symbolic` and its result,
:class:`SymbolicResult`.

The recursion of Reiser & Lavenberg runs in the field of rational functions
of the model's symbols (service times, visit ratios, think time, server
rates), for a small integer population N: X(n), R(n), Q_k(n), U_k(n),
n = 1..N.  The result keeps the usual names (``X``, ``R``, ``Q``, ``U``),
gives LaTeX for notebooks (``_repr_latex_``, :meth:`SymbolicResult.latex`),
``lambdify`` back to fast numpy functions, and ``evaluate`` at a point,
which gives the numbers the numeric solvers give.

Exactness: the model layer stores plain numbers as floats (``1`` becomes
``1.0``); the symbolic solvers turn every float back into the rational it
was written as (``0.27`` -> ``27/100``, :func:`~qmodels.symbolic.exact.exact`),
so that results are exact rational expressions.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Callable

import numpy as np
import sympy as sp

from .._format import note_lines
from ..errors import InvalidValueError, UnknownNameError, UnsupportedModelError
from ..model.network import Closed, Delay, FrozenMap, LoadDependent, Network, Queue
from ..results import Curve, Result, label_of
from .bounds import symbolic_bounds
from .exact import (
    _lambdify,
    _latex_name,
    _resolve,
    exact,
    substitute,
    symbols,  # noqa: F401  (the examples in the docstrings use it)
)

__all__ = ["mva_symbolic", "SymbolicResult", "METRICS"]

#: Metric names accepted by ``expr``/``latex``/``lambdify``, alias -> name.
METRICS = {
    "X": "throughput", "throughput": "throughput",
    "R": "response_time", "response_time": "response_time",
    "Q": "queue_length", "queue_length": "queue_length",
    "U": "utilization", "utilization": "utilization",
}
_SYMBOL = {"throughput": "X", "response_time": "R", "queue_length": "Q", "utilization": "U"}

#: Largest population :func:`mva_symbolic` accepts unless told otherwise:
#: the size of the rational functions grows quickly with N.
DEFAULT_MAX_POPULATION = 8


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def _is_sym(x) -> bool:
    return isinstance(x, sp.Basic) and bool(x.free_symbols)


def _metric(name: str) -> str:
    if name not in METRICS:
        raise InvalidValueError(
            f"metric must be one of {', '.join(sorted(METRICS))}, got {name!r}"
        )
    return METRICS[name]


def _simplify(e, how):
    if how is None or how is False:
        return e
    if how == "cancel" or how is True:
        return sp.cancel(e)
    if how == "factor":
        return sp.factor(sp.cancel(e))
    if how == "simplify":
        return sp.simplify(e)
    raise InvalidValueError(
        f"simplify must be None, 'cancel', 'factor' or 'simplify', got {how!r}"
    )



# ---------------------------------------------------------------------------
# exact MVA
# ---------------------------------------------------------------------------

_ARRAYS = (
    "class_throughput",
    "class_response_time",
    "station_throughput",
    "station_queue_length",
    "station_response_time",
    "station_utilization",
)


@dataclass(frozen=True)
class SymbolicResult(Result):
    """An exact, symbolic solution: a :class:`~qmodels.results.Result` whose
    entries are sympy expressions (also for a network of plain numbers,
    whose answers are then exact rationals).

    Everything a :class:`Result` offers works (``X``, ``R``, ``Q``, ``U``
    by station, class or pair; ``to_frame``; ``table``), plus:

    - :meth:`expr` the expression of one figure;
    - :meth:`latex` / ``_repr_latex_`` LaTeX for notebooks, and
      :meth:`latex_lines` one equation per figure (each renders in
      matplotlib mathtext);
    - :meth:`lambdify` a fast numpy function of the parameters;
    - :meth:`evaluate` the numeric :class:`Result` at a point, and
      :meth:`subs` a partial substitution.

    ``parameters`` lists the free symbols, sorted by name: the default
    argument order of :meth:`lambdify`.
    """

    parameters: tuple = ()

    def __post_init__(self):
        for name in _ARRAYS:
            raw = np.asarray(getattr(self, name), dtype=object)
            arr = np.empty(raw.shape, dtype=object)
            for idx in np.ndindex(raw.shape):
                arr[idx] = sp.sympify(raw[idx])
            arr.flags.writeable = False
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "notes", tuple(self.notes))
        if not isinstance(self.info, FrozenMap):
            object.__setattr__(self, "info", FrozenMap(self.info))
        ex, assumed = label_of(self.method, self.exactness, self.assumptions)
        object.__setattr__(self, "exactness", ex)
        object.__setattr__(self, "assumptions", assumed)
        object.__setattr__(self, "warnings", tuple(self.warnings))
        if not self.parameters:
            syms: set = set()
            for name in _ARRAYS:
                for e in getattr(self, name).ravel():
                    syms |= e.free_symbols
            object.__setattr__(self, "parameters", tuple(sorted(syms, key=lambda s: s.name)))

    def _station_totals(self):
        cached = self.__dict__.get("_totals")
        if cached is None:
            cached = self._compute_totals()
            object.__setattr__(self, "_totals", cached)
        return cached

    def _compute_totals(self):
        if len(self.network.classes) == 1:
            return (self.station_throughput[0], self.station_queue_length[0],
                    self.station_utilization[0], self.station_response_time[0])
        X = self.station_throughput.sum(axis=0)
        Q = self.station_queue_length.sum(axis=0)
        U = self.station_utilization.sum(axis=0)
        R = []
        for k in range(len(self.network.stations)):
            x = X[k]
            if x == 0:
                w = self.network.visits[:, k]
                R.append(self.station_response_time[int(np.argmax(w != 0)), k])
            else:
                R.append(sp.cancel(Q[k] / x))
        to = np.empty(len(R), dtype=object)
        to[:] = R
        return X, Q, U, to

    # -- one figure ---------------------------------------------------------
    def _default_key(self, metric: str):
        cn = self.network.class_names
        if metric == "utilization":
            raise InvalidValueError("utilization is per station: name the station")
        if len(cn) != 1:
            raise InvalidValueError(f"{metric}: name the class or station ({', '.join(cn)})")
        return cn[0]

    def expr(self, metric: str, key=None):
        """The sympy expression of ``metric`` (``"X"``, ``"R"``, ``"Q"``,
        ``"U"`` or the long names) for ``key`` (station, class or (station,
        class); default: the only class)."""
        m = _metric(metric)
        if key is None:
            key = self._default_key(m)
        try:
            return sp.sympify(getattr(self, m)[key])
        except KeyError as e:
            raise UnknownNameError(str(e.args[0])) from None

    def latex(self, metric: str | None = None, key=None) -> str:
        """LaTeX of one figure (``r.latex("X", "tx")`` gives
        ``X_{\\mathrm{tx}} = ...``) or, with no arguments, every class X and
        R and every station Q and U in an ``aligned`` block."""
        if metric is not None:
            m = _metric(metric)
            if key is None:
                key = self._default_key(m)
            return self._line(m, key)
        return r"\begin{aligned}" + r" \\ ".join(
            line.replace(" = ", " &= ", 1) for line in self.latex_lines()
        ) + r"\end{aligned}"

    def _line(self, m, key) -> str:
        if isinstance(key, tuple):
            sub = ",".join(_latex_name(k) for k in key)
        else:
            sub = _latex_name(key)
        arg = ""
        c = self.network.classes[0]
        if isinstance(c, Closed) and len(self.network.classes) == 1:
            arg = f"({sp.latex(c.population)})"
        return f"{_SYMBOL[m]}_{{{sub}}}{arg} = {sp.latex(self.expr(m, key))}"

    def latex_lines(self) -> list:
        """One LaTeX equation per figure: class X and R, station Q and U."""
        lines = []
        for c in self.network.class_names:
            lines += [self._line("throughput", c), self._line("response_time", c)]
        for s in self.network.station_names:
            lines += [self._line("queue_length", s), self._line("utilization", s)]
        return lines

    def _repr_latex_(self):
        return "$$" + self.latex() + "$$"

    def __repr__(self):
        """One equation per figure, as :meth:`latex_lines` in plain text:
        class X and R, station Q and U (the numeric table's columns would
        hold whole expressions)."""
        net = self.network
        load = ", ".join(
            f"{c.name!r} N = {c.population}" if isinstance(c, Closed)
            else f"{c.name!r} lambda = {c.arrival_rate}" for c in net.classes)
        params = ", ".join(str(p) for p in self.parameters) or "none (exact rationals)"
        lines = [f"{self.method} solution ({load}; parameters: {params})"]
        for c in net.class_names:
            lines += [f"  X[{c}] = {self.expr('X', c)}", f"  R[{c}] = {self.expr('R', c)}"]
        for s in net.station_names:
            lines += [f"  Q[{s}] = {self.expr('Q', s)}", f"  U[{s}] = {self.expr('U', s)}"]
        lines += note_lines(self.notes, "  note: ")
        return "\n".join(lines)

    # -- numbers back ---------------------------------------------------------
    def lambdify(self, metric: str, key=None, args=None) -> Callable:
        """A numpy function computing ``metric`` for ``key`` from the
        parameters ``args`` (default :attr:`parameters`, sorted by name).

        >>> import qmodels as qm
        >>> S, Z = symbols("S Z")
        >>> net = qm.Network([qm.Queue("cpu", S)],
        ...                  [qm.Closed("tx", 1, think_time=Z, visits={"cpu": 1})])
        >>> f = mva_symbolic(net).lambdify("X", "tx")
        >>> f.args
        (S, Z)
        >>> float(f(1.0, 3.0))
        0.25
        """
        e = self.expr(metric, key)
        if args is None:
            args = self.parameters
        else:
            args = tuple(_resolve({a: 0 for a in args}, self.parameters))
        missing = e.free_symbols - set(args)
        if missing:
            raise InvalidValueError(
                f"lambdify: {metric} depends on {', '.join(sorted(map(str, missing)))}, "
                "which are not among args"
            )
        cache = self.__dict__.setdefault("_lambdified", {})
        ck = (METRICS[metric], key, tuple(args))
        if ck not in cache:
            cache[ck] = _lambdify(tuple(args), e)
        return cache[ck]

    def subs(self, values: Mapping) -> "SymbolicResult":
        """The same result with ``values`` substituted (exactly): still a
        :class:`SymbolicResult`."""
        vals = _resolve(values, self.parameters)
        exact_vals = {k: exact(v) for k, v in vals.items()}
        net = substitute(self.network, vals)
        arrays = {
            n: np.vectorize(lambda e: sp.cancel(e.subs(exact_vals)), otypes=[object])(
                getattr(self, n))
            for n in _ARRAYS
        }
        return SymbolicResult(
            method=self.method, network=net, notes=self.notes, curve=None, info=self.info,
            **arrays,
        )

    def evaluate(self, values: Mapping) -> Result:
        """The numeric :class:`~qmodels.results.Result` at ``values`` (every
        parameter needs a value): what :func:`qmodels.mva.mva` returns for
        the same numbers."""
        vals = _resolve(values, self.parameters)
        missing = set(self.parameters) - set(vals)
        if missing:
            raise InvalidValueError(
                f"evaluate: no value for {', '.join(sorted(map(str, missing)))}"
            )
        net = substitute(self.network, vals)
        cache = self.__dict__.setdefault("_lambdified", {})
        if "_all" not in cache:
            flat = [e for n in _ARRAYS for e in getattr(self, n).ravel()]
            cache["_all"] = sp.lambdify(self.parameters, flat, modules="math")
        flat = iter(cache["_all"](*[float(vals[p]) for p in self.parameters]))
        arrays = {}
        for n in _ARRAYS:
            shape = getattr(self, n).shape
            arrays[n] = np.array([float(next(flat)) for _ in range(int(np.prod(shape)))],
                                 dtype=float).reshape(shape)
        return Result(method=self.method, network=net, notes=self.notes,
                      info=self.info, **arrays)


def _rate_multipliers(s, N: int):
    """a(j), j = 1..N, as exact sympy values, or None for a fixed-rate
    single server; 'delay' for an infinite server."""
    if isinstance(s, Delay):
        return "delay"
    if isinstance(s, Queue):
        c = s.servers
        if _is_sym(c):
            raise UnsupportedModelError(
                f"station {s.name!r}: servers = {c} is a symbol; symbolic MVA needs an "
                "integer server count (bounds and bottleneck regions accept a symbol)"
            )
        if c == 1:
            return None
        return [sp.Integer(min(j, c)) for j in range(1, N + 1)]
    if isinstance(s, LoadDependent):
        rm = [exact(a) for a in s.rate_multipliers]
        if all(a == 1 for a in rm):
            return None
        return [rm[min(j, len(rm)) - 1] for j in range(1, N + 1)]
    raise UnsupportedModelError(f"station {s.name!r}: unknown kind {s.kind!r}")


def _check_mva_input(net, max_population: int):
    """The one closed class of ``net`` and its integer population N, or a
    typed error saying which assumption of symbolic MVA fails."""
    if not isinstance(net, Network):
        raise InvalidValueError(f"expected a qmodels Network, got {type(net).__name__}")
    if len(net.classes) != 1 or not isinstance(net.classes[0], Closed):
        raise UnsupportedModelError(
            "mva_symbolic needs exactly one closed class "
            f"(got {', '.join(f'{c.name}:{c.kind}' for c in net.classes)})"
        )
    cls = net.classes[0]
    if _is_sym(cls.population):
        raise UnsupportedModelError(
            f"class {cls.name!r}: population {cls.population} is a symbol; exact MVA "
            "recurses over n = 1..N and needs an integer (symbolic_bounds accepts a symbol)"
        )
    N = int(cls.population)
    if isinstance(max_population, bool) or not isinstance(max_population, numbers.Integral):
        raise InvalidValueError(f"max_population must be an integer, got {max_population!r}")
    if N > max_population:
        raise UnsupportedModelError(
            f"class {cls.name!r}: population {N} > max_population = {max_population}; "
            "symbolic expressions grow quickly with N: raise max_population (on the "
            "command line --option max_population=N) or use "
            "qmodels.analytic.mva for numbers"
        )
    if net.pools:
        raise UnsupportedModelError(
            f"token pool {net.pools[0].name!r} breaks product form; mva_symbolic cannot "
            "honour it (use qmodels.analytic.decomposition or the simulator)"
        )
    for s in net.stations:
        if s.capacity is not None and s.capacity < N:
            raise UnsupportedModelError(
                f"station {s.name!r}: finite capacity {s.capacity} can bind (population "
                f"{N}); mva_symbolic assumes product form"
            )
    from ..analytic._common import _check_service_shapes

    _check_service_shapes(net, "mva_symbolic")
    return cls, N


@dataclass
class _Field:
    """Where the recursion computes: ``to`` maps a sympy value in, ``back``
    maps a result out; ``D``, ``V``, ``Z`` and ``mult`` are the parameters
    already mapped in."""

    back: Callable
    D: list
    V: list
    Z: object
    mult: list
    zero: object
    one: object
    algorithm: str


def _field(D, V, S, Z, mult) -> _Field:
    """Work in the field of rational functions QQ(parameters): every value is
    kept as one fraction p/q in lowest terms, far faster than cancelling
    sympy expressions.  Parameters that are not rational functions over QQ
    (sqrt(2) S, say) fall back to sympy expressions with cancel()."""
    params: set = set()
    for e in [*D, *V, *S, Z] + [a for m in mult if isinstance(m, list) for a in m]:
        params |= e.free_symbols
    gens = sorted(params, key=lambda x: x.name)
    try:
        dom = sp.QQ.frac_field(*gens) if gens else sp.QQ
        to = dom.from_sympy
        return _Field(
            back=dom.to_sympy, D=[to(d) for d in D], V=[to(v) for v in V], Z=to(Z),
            mult=[[to(a) for a in m] if isinstance(m, list) else m for m in mult],
            zero=dom.zero, one=dom.one, algorithm="MVA recursion in QQ(parameters) (exact)",
        )
    except (ValueError, TypeError, sp.polys.polyerrors.CoercionFailed):
        return _Field(
            back=sp.cancel, D=D, V=V, Z=Z, mult=mult, zero=sp.Integer(0),
            one=sp.Integer(1), algorithm="MVA recursion with sympy.cancel (exact)",
        )


def _finisher(f: _Field, simplify):
    """The function that turns a value of the field into the answer's form."""

    def fin(e):
        e = f.back(e)
        if simplify == "factor":
            return sp.factor(e)
        if simplify == "simplify":
            return sp.simplify(e)
        return e

    return fin


def _mva_rows(f: _Field, N: int) -> list:
    """(X(n), Q_k(n), P_k(0 | n)) for n = 0..N by the exact recursion (see
    the Notes of :func:`mva_symbolic`); P_k(0 | n) is None at a fixed-rate
    station or a delay."""
    K = len(f.D)
    zero, one, md, Dd = f.zero, f.one, f.mult, f.D
    Q = [zero] * K
    P = [[one] if isinstance(m, list) else None for m in md]  # P_k(j | n-1)
    X = zero
    rows = [(X, [zero] * K, [one if p is not None else None for p in P])]
    for n in range(1, N + 1):
        R = []
        for k in range(K):
            m = md[k]
            if m == "delay":
                R.append(Dd[k])
            elif m is None:
                R.append(Dd[k] * (1 + Q[k]))
            else:
                R.append(sum((j * Dd[k] / m[j - 1] * P[k][j - 1] for j in range(1, n + 1)),
                             zero))
        X = n / (f.Z + sum(R, zero))
        Q = [X * r for r in R]
        for k in range(K):
            m = md[k]
            if isinstance(m, list):
                new = [zero] + [Dd[k] / m[j - 1] * X * P[k][j - 1] for j in range(1, n + 1)]
                new[0] = 1 - sum(new[1:], zero)
                P[k] = new
        rows.append((X, list(Q), [p[0] if p is not None else None for p in P]))
    return rows


def _mva_utilization(net, f: _Field, x, p0s) -> list:
    """U_k: 1 - P_k(0) at a load-dependent station, X D_k / c per server
    at a queue, X D_k (the mean number busy) at a delay."""
    U = []
    for k, s in enumerate(net.stations):
        if isinstance(s, LoadDependent) and p0s[k] is not None:
            U.append(1 - p0s[k])
        elif isinstance(s, Queue):
            U.append(x * f.D[k] / s.servers)
        else:
            U.append(x * f.D[k])
    return U


def _mva_curve(net, cls, f: _Field, rows, fin, Dsum) -> Curve:
    """X(n), R(n), Q_k(n), U_k(n) for n = 0..N as object arrays."""
    N = len(rows) - 1
    K = len(net.stations)
    pops = np.arange(N + 1)
    xs = np.empty(N + 1, dtype=object)
    rs = np.empty(N + 1, dtype=object)
    qs = np.empty((N + 1, K), dtype=object)
    us = np.empty((N + 1, K), dtype=object)
    for n, (x, q, p0) in enumerate(rows):
        xs[n] = fin(x)
        rs[n] = fin(n / x - f.Z) if n > 0 else Dsum
        qs[n, :] = [fin(e) for e in q]
        us[n, :] = [fin(e) for e in _mva_utilization(net, f, x, p0)]
    return Curve(population=pops, throughput=xs, response_time=rs, queue_length=qs,
                 utilization=us, station_names=net.station_names, class_name=cls.name,
                 method="exact-symbolic")


def mva_symbolic(
    net: Network,
    *,
    simplify: str | None = "cancel",
    curve: bool = False,
    max_population: int = DEFAULT_MAX_POPULATION,
) -> SymbolicResult:
    """Exact single-class MVA with sympy: X, R, Q_k, U_k as rational
    functions of the network's symbols (method ``"exact-symbolic"``).

    Parameters
    ----------
    net : Network
        One closed class with an integer population N (0 <= N <=
        ``max_population``); service times, visit ratios, think time and
        rate multipliers may be symbols.  Stations: delay, single- or
        multi-server queues (integer servers), load-dependent.
    simplify : {"cancel", "factor", "simplify", None}
        Form of the answers.  The recursion runs in the field of rational
        functions of the parameters, so every figure is one fraction p/q in
        lowest terms (``"cancel"``, the default, and ``None``); ``"factor"``
        factors numerator and denominator; ``"simplify"`` applies
        :func:`sympy.simplify` (slow).
    curve : bool
        Also return X(n), R(n), Q_k(n), U_k(n) for n = 0..N in
        ``result.curve`` (object arrays).
    max_population : int
        Guard against expression blow-up (default 8).

    Returns
    -------
    SymbolicResult

    Raises
    ------
    UnsupportedModelError
        Several or open classes, a symbolic population, a symbolic server
        count, a finite capacity that can bind, token pools, N above
        ``max_population``.
    InvalidValueError
        Every demand and the think time zero (throughput unbounded).

    Notes
    -----
    Fixed-rate stations follow the exact MVA recursion (Reiser &
    Lavenberg 1980; Lazowska et al. 1984, sec. 6.3.2, Algorithm 6.1)::

        R_k(n) = D_k (1 + Q_k(n-1))        (queue)
        R_k(n) = D_k                        (delay)
        X(n)   = n / (Z + sum_k R_k(n))
        Q_k(n) = X(n) R_k(n)

    A station whose rate with j jobs is a_k(j)/S_k (c servers: a(j) =
    min(j, c)) uses the marginal queue-length probabilities (Reiser &
    Lavenberg 1980; Lazowska et al. 1984, ch. 20, load-dependent service
    centres; Bolch et al. 2006, sec. 8.2)::

        R_k(n)   = sum_{j=1..n} j D_k / a_k(j) P_k(j-1 | n-1)
        P_k(j|n) = D_k / a_k(j) X(n) P_k(j-1 | n-1),   j = 1..n
        P_k(0|n) = 1 - sum_{j>=1} P_k(j | n)

    whose subtraction is numerically unstable in floating point but exact
    here.  U_k = X D_k / c_k for queues (per server), X D_k for delays and
    1 - P_k(0 | N) for load-dependent stations, as in :func:`qmodels.mva.mva`.

    References
    ----------
    M. Reiser and S. S. Lavenberg, "Mean-value analysis of closed
    multichain queuing networks", J. ACM 27(2), 313-322, 1980.
    E. D. Lazowska, J. Zahorjan, G. S. Graham, K. C. Sevcik, *Quantitative
    System Performance*, Prentice-Hall 1984, sec. 6.3 and ch. 20.
    G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, *Queueing Networks and
    Markov Chains*, 2nd ed., Wiley 2006, sec. 8.2.

    Examples
    --------
    >>> import qmodels as qm
    >>> D1, D2, Z = symbols("D1 D2 Z")
    >>> net = qm.Network([qm.Queue("a", D1), qm.Queue("b", D2)],
    ...                  [qm.Closed("tx", 1, think_time=Z, visits={"a": 1, "b": 1})])
    >>> mva_symbolic(net).X["tx"]
    1/(D1 + D2 + Z)
    """
    cls, N = _check_mva_input(net, max_population)
    _simplify(0, simplify)  # validate the option early
    K = len(net.stations)
    # inputs made exact first, then multiplied (a float product such as
    # 0.27 * 0.1 would carry its rounding into the rational)
    V = [exact(v) for v in net.visits[0]]
    S = [exact(s) for s in net.service_times[0]]
    D = [v * s for v, s in zip(V, S, strict=True)]
    Z = exact(cls.think_time)
    if N > 0 and all(d == 0 for d in D) and Z == 0:
        raise InvalidValueError(
            f"class {cls.name!r}: all demands and the think time are zero, "
            "so the throughput is unbounded"
        )
    mult = [_rate_multipliers(s, max(N, 1)) for s in net.stations]
    f = _field(D, V, S, Z, mult)
    fin = _finisher(f, simplify)
    rows = _mva_rows(f, N)

    Dsum = sum(D, sp.Integer(0))
    Xn, Qn, P0 = rows[-1]
    Un = _mva_utilization(net, f, Xn, P0)
    Rc = fin(N / Xn - f.Z) if N > 0 else Dsum
    Xk = [Xn * v for v in f.V]
    Rk = [fin(Qn[k] / Xk[k]) if Xk[k] != 0 else S[k] for k in range(K)]
    cur = _mva_curve(net, cls, f, rows, fin, Dsum) if curve else None
    return SymbolicResult(
        method="exact-symbolic",
        network=net,
        class_throughput=[fin(Xn)],
        class_response_time=[Rc],
        station_throughput=[[fin(x) for x in Xk]],
        station_queue_length=[[fin(q) for q in Qn]],
        station_response_time=[Rk],
        station_utilization=[[fin(u) for u in Un]],
        curve=cur,
        info={"algorithm": f.algorithm, "population": N, "simplify": simplify},
    )



def solve_symbolic(net, **options):
    """``solve(net, method="exact-symbolic")``: MVA for symbolic networks;
    symbolic bounds with ``bounds=True``."""
    if options.pop("bounds", False):
        return symbolic_bounds(net, **options)
    return mva_symbolic(net, **options)
