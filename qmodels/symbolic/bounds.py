"""Symbolic bounds: asymptotic and balanced job bounds and the saturation
population N* as formulas (:func:`symbolic_bounds`, :class:`SymbolicBounds`),
the bounds of :func:`qmodels.laws.bounds` computed on the exact network
(Lazowska, Zahorjan, Graham & Sevcik, *Quantitative System Performance*,
Prentice-Hall 1984, ch. 5, Table 5.3).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Callable

import sympy as sp

from ..analytic.bounds import Bounds
from ..errors import InvalidValueError, UnsupportedModelError
from ..model.network import Closed, Network
from .exact import (
    _decimal,
    _lambdify,
    _latex_with_decimal,
    _resolve,
    exact,
    exact_network,
    free_symbols,
    substitute,
    symbols,  # noqa: F401  (the examples in the docstrings use it)
)

__all__ = ["symbolic_bounds", "SymbolicBounds"]


_BOUND_FIELDS = (
    ("throughput_lower", r"X^{-}"),
    ("throughput_upper", r"X^{+}"),
    ("response_time_lower", r"R^{-}"),
    ("response_time_upper", r"R^{+}"),
    ("max_throughput", r"X_{\max}"),
    ("saturation_population", r"N^{*}"),
)


@dataclass(frozen=True, repr=False)
class SymbolicBounds(Bounds):
    """ABA/BJB bounds and N* as sympy expressions (see
    :func:`symbolic_bounds`): a :class:`qmodels.laws.Bounds` whose figures
    are expressions, with ``parameters`` (the free symbols), LaTeX,
    ``lambdify`` and ``evaluate``.
    """

    bottleneck: tuple = ()
    parameters: tuple = field(default=())
    method: str = "bounds-symbolic"

    def _get(self, name: str):
        aliases = {"N*": "saturation_population", "n_star": "saturation_population",
                   "X_max": "max_throughput"}
        name = aliases.get(name, name)
        if name not in dict(_BOUND_FIELDS):
            raise InvalidValueError(
                f"bound must be one of {', '.join(n for n, _ in _BOUND_FIELDS)}, "
                f"'N*' or 'X_max', got {name!r}"
            )
        return getattr(self, name)

    def latex_lines(self) -> list:
        return [f"{sym} = {_latex_with_decimal(getattr(self, n))}" for n, sym in _BOUND_FIELDS]

    def latex(self, name: str | None = None) -> str:
        """LaTeX of one bound (``b.latex("N*")``) or all in an ``aligned``
        block; a long rational gets its decimal beside it
        (``\\approx 0.19627 N``)."""
        if name is not None:
            sym = dict(_BOUND_FIELDS)[self._get_name(name)]
            return f"{sym} = {_latex_with_decimal(self._get(name))}"
        return r"\begin{aligned}" + r" \\ ".join(
            line.replace(" = ", " &= ", 1) for line in self.latex_lines()) + r"\end{aligned}"

    def _get_name(self, name):
        self._get(name)
        return {"N*": "saturation_population", "n_star": "saturation_population",
                "X_max": "max_throughput"}.get(name, name)

    def _repr_latex_(self):
        return "$$" + self.latex() + "$$"

    def __repr__(self):
        lines = [f"symbolic bounds for class {self.class_name!r}, N = {self.population}"]
        for n, _ in _BOUND_FIELDS:
            v = getattr(self, n)
            dec = _decimal(v)
            lines.append(f"  {n} = {v}" + (f"  (~ {dec})" if dec is not None else ""))
        return "\n".join(lines)

    def lambdify(self, name: str, args=None) -> Callable:
        """A numpy function of the parameters for one bound (names as the
        attributes, or ``"N*"``, ``"X_max"``)."""
        e = sp.sympify(self._get(name))
        args = self.parameters if args is None else tuple(
            _resolve({a: 0 for a in args}, self.parameters))
        cache = self.__dict__.setdefault("_lambdified", {})
        if (name, args) not in cache:
            cache[name, args] = _lambdify(tuple(args), e)
        return cache[name, args]

    def evaluate(self, values: Mapping):
        """The numeric :class:`qmodels.laws.Bounds` at ``values``."""
        from ..analytic.bounds import bounds

        vals = _resolve(values, self.parameters)
        missing = set(self.parameters) - set(vals)
        if missing:
            raise InvalidValueError(
                f"evaluate: no value for {', '.join(sorted(map(str, missing)))}"
            )
        return bounds(substitute(self.network, vals), self.class_name)


def symbolic_bounds(net: Network, cls: str | None = None) -> SymbolicBounds:
    """Asymptotic and balanced job bounds and N* as formulas.

    The population, the demands and the think time may be symbols.  The
    bounds are those of :func:`qmodels.laws.bounds` (QSP Table 5.3),
    computed on :func:`exact_network` (every float of the model turned into
    the rational it was written as *before* any arithmetic, so a think time
    of 5 and demands 0.05 and 0.045 give X <= 200 N/1019, not a rational
    approximation of a rounded float) and each expression simplified;
    ``max``/``min`` stay as ``Max``/``Min`` unless the symbols'
    assumptions decide them.

    Notes
    -----
    Closed class, demands D = sum_k D_k, D_max = max_k D_k / c_k, think
    time Z (Lazowska et al. 1984, sec. 5.2-5.3, Table 5.3)::

        N/(N D + Z) <= X(N) <= min(1/D_max, N/(D + Z))
        max(D, N D_max - Z) <= R(N) <= N D
        N* = (D + Z) / D_max

    plus the balanced job bounds of the same table.

    References
    ----------
    Lazowska, Zahorjan, Graham & Sevcik, *Quantitative System Performance*,
    Prentice-Hall 1984, ch. 5, eq. 5.3 and Table 5.3.

    Examples
    --------
    >>> import qmodels as qm
    >>> Da, Db, Z, N = symbols("D_a D_b Z N")
    >>> net = qm.Network([qm.Queue("a", Da), qm.Queue("b", Db)],
    ...                  [qm.Closed("tx", N, think_time=Z, visits={"a": 1, "b": 1})])
    >>> symbolic_bounds(net).saturation_population
    (D_a + D_b + Z)/Max(D_a, D_b)
    """
    from ..analytic.bounds import bounds

    if not isinstance(net, Network):
        raise InvalidValueError(f"expected a qmodels Network, got {type(net).__name__}")
    if not net.is_symbolic:
        raise UnsupportedModelError(
            "symbolic_bounds needs a network with sympy symbols; for numbers use "
            "qmodels.laws.bounds"
        )
    net_exact = exact_network(net)
    b = bounds(net_exact, cls)
    if not isinstance(net.klass(b.class_name), Closed):
        raise UnsupportedModelError(
            f"class {b.class_name!r} is open: symbolic_bounds covers closed classes"
        )

    def ex(v):
        e = exact(v)
        return e if e.has(sp.Max, sp.Min) else sp.cancel(e)

    vals = dict(
        throughput_lower=ex(b.throughput_lower),
        throughput_upper=ex(b.throughput_upper),
        response_time_lower=ex(b.response_time_lower),
        response_time_upper=ex(b.response_time_upper),
        aba=tuple(ex(v) for v in b.aba),
        bjb=None if b.bjb is None else tuple(ex(v) for v in b.bjb),
        max_throughput=ex(b.max_throughput),
        saturation_population=ex(b.saturation_population),
    )
    syms: set = set()
    for v in vals.values():
        for e in (v if isinstance(v, tuple) else (v,) if v is not None else ()):
            syms |= e.free_symbols
    return SymbolicBounds(
        network=net_exact, class_name=b.class_name, population=exact(b.population),
        parameters=tuple(sorted(syms | set(free_symbols(net)), key=lambda s: s.name)),
        notes=b.notes, **vals,
    )
