"""Exact values and the symbolic network helpers.

:func:`symbols` makes positive sympy symbols; :func:`exact` turns a float
back into the rational it was written as (``0.27`` -> ``27/100``,
:func:`sympy.nsimplify` with ``rational=True``) and :func:`exact_network`
does so for every field of a network, so that symbolic results are exact
rational expressions.  :func:`free_symbols` lists a network's parameters,
:func:`substitute` puts numbers into it.  Also the helpers the symbolic
results share: symbol lookup by name, numpy functions of expressions
(``lambdify``), and LaTeX with a decimal beside long rationals.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping
from typing import Callable

import numpy as np
import sympy as sp

from ..errors import InvalidValueError, UnknownNameError
from ..model.network import Network, Power

__all__ = ["symbols", "exact", "exact_network", "free_symbols", "substitute"]


def symbols(names: str, **assumptions):
    """Sympy symbols, positive unless told otherwise.

    ``symbols("S_cpu S_disk Z")`` is ``sympy.symbols("S_cpu S_disk Z",
    positive=True)``: the model layer accepts positive symbols as times
    (it raises only when a condition is provably false).

    >>> S, Z = symbols("S Z")
    >>> S.is_positive
    True
    """
    assumptions.setdefault("positive", True)
    return sp.symbols(names, **assumptions)


def exact(value):
    """``value`` as an exact sympy expression: floats become the rational
    they print as (``0.1`` -> ``1/10``), infinities ``oo``.

    >>> exact(0.27)
    27/100
    """
    if isinstance(value, bool) or value is None:
        raise InvalidValueError(f"not a number: {value!r}")
    e = sp.sympify(value)
    if e.has(sp.Float):
        e = sp.nsimplify(e, rational=True)
    return e


def _exact_value(v):
    """One model value with every float made exact (see :func:`exact`)."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, float):
        return exact(v) if np.isfinite(v) else v
    if isinstance(v, sp.Basic):
        return exact(v) if v.has(sp.Float) else v
    if isinstance(v, Power):
        return Power(**{f.name: _exact_value(getattr(v, f.name))
                        for f in dataclasses.fields(v)})
    if isinstance(v, Mapping):
        return {k: _exact_value(x) for k, x in v.items()}
    if isinstance(v, tuple):
        return tuple(_exact_value(x) for x in v)
    return v


def _exact_obj(obj):
    changes = {}
    for f in dataclasses.fields(obj):
        if not f.init:
            continue
        v = getattr(obj, f.name)
        nv = _exact_value(v)
        if nv is not v:
            changes[f.name] = nv
    return dataclasses.replace(obj, **changes) if changes else obj


def exact_network(net: Network) -> Network:
    """A copy of ``net`` whose floats are the exact rationals they were
    written as (:func:`exact`: ``0.045`` -> ``9/200``), in every station,
    class and power field, so that symbolic results are exact.  (A network
    without symbols stores these as exact sympy numbers too; the numeric
    solvers want floats, so use this only for the symbolic ones.)

    >>> import qmodels as qm
    >>> S = symbols("S")
    >>> net = qm.Network([qm.Queue("cpu", S), qm.Queue("disk", 0.045)],
    ...                  [qm.Closed("tx", 2, visits={"cpu": 1, "disk": 0.5})])
    >>> exact_network(net).demands.tolist()
    [[S, 9/400]]
    """
    if not isinstance(net, Network):
        raise InvalidValueError(f"expected a qmodels Network, got {type(net).__name__}")
    return Network(tuple(_exact_obj(s) for s in net.stations),
                   tuple(_exact_obj(c) for c in net.classes), name=net.name, pools=net.pools)


def _decimal(e, digits: int = 6):
    """A decimal of ``e`` when it holds a long rational (numerator or
    denominator of more than 4 digits), else None."""
    try:
        e = sp.sympify(e)
    except (sp.SympifyError, TypeError):
        return None
    long = any(len(str(abs(r.p))) > 4 or len(str(r.q)) > 4 for r in e.atoms(sp.Rational))
    return sp.N(e, digits) if long else None


def _latex_with_decimal(e) -> str:
    dec = _decimal(e)
    out = sp.latex(e)
    return out if dec is None else out + r" \approx " + sp.latex(dec)


def _station_values(s):
    vals = [s.service, getattr(s, "servers", 1)]
    vals += list(getattr(s, "rate_multipliers", ()))
    if s.power is not None:
        vals += [s.power.busy, s.power.idle, s.power.read, s.power.write]
    return vals


def _class_values(c):
    vals = [getattr(c, a, 0) for a in ("population", "think_time", "arrival_rate")]
    for attr in ("visits", "demands", "service"):
        m = getattr(c, attr)
        if m is not None:
            vals += list(m.values())
    if c.routing is not None:
        vals += [p for row in c.routing.values() for p in row.values()]
    return vals


def free_symbols(net: Network) -> tuple:
    """Every sympy symbol in ``net`` (stations, classes, power), sorted by
    name.

    >>> import qmodels as qm
    >>> S, Z = symbols("S Z")
    >>> net = qm.Network([qm.Queue("cpu", S)],
    ...                  [qm.Closed("tx", 2, think_time=Z, visits={"cpu": 1})])
    >>> free_symbols(net)
    (S, Z)
    """
    if not isinstance(net, Network):
        raise InvalidValueError(f"expected a qmodels Network, got {type(net).__name__}")
    out: set = set()
    vals = [v for s in net.stations for v in _station_values(s)]
    vals += [v for c in net.classes for v in _class_values(c)]
    for v in vals:
        if isinstance(v, sp.Basic):
            out |= v.free_symbols
    return tuple(sorted(out, key=lambda s: s.name))


def _resolve(values: Mapping, known) -> dict:
    """Map symbol-or-name keys to the symbols in ``known``."""
    if not isinstance(values, Mapping):
        raise InvalidValueError(
            f"values must be a mapping symbol -> value, got {type(values).__name__}"
        )
    by_name = {s.name: s for s in known}
    out = {}
    for k, v in values.items():
        if isinstance(k, str):
            if k not in by_name:
                raise UnknownNameError(
                    f"values name unknown symbol {k!r}; parameters are "
                    f"{', '.join(sorted(by_name)) or 'none'}"
                )
            k = by_name[k]
        elif not isinstance(k, sp.Symbol):
            raise InvalidValueError(f"values keys must be sympy symbols or names, got {k!r}")
        if isinstance(v, bool) or not (isinstance(v, (numbers.Number, sp.Basic))):
            raise InvalidValueError(f"value of {k} must be a number or expression, got {v!r}")
        out[k] = v
    return out


def _sub_value(v, values):
    """Substitute into one model value; fully numeric results become
    Python numbers (int when integral and exact)."""
    if isinstance(v, sp.Basic):
        e = v.subs(values)
        if e.free_symbols:
            return e
        if e.is_Integer:
            return int(e)
        try:
            return float(e)
        except TypeError:
            raise InvalidValueError(f"{v} evaluates to {e}, which is not a real number") from None
    if isinstance(v, Power):
        return Power(**{f.name: _sub_value(getattr(v, f.name), values)
                        for f in dataclasses.fields(v)})
    if isinstance(v, Mapping):
        return {k: _sub_value(x, values) for k, x in v.items()}
    if isinstance(v, tuple):
        return tuple(_sub_value(x, values) for x in v)
    return v


def _replace(obj, values):
    changes = {}
    for f in dataclasses.fields(obj):
        if not f.init:
            continue
        v = getattr(obj, f.name)
        nv = _sub_value(v, values)
        if nv is not v:
            changes[f.name] = nv
    return dataclasses.replace(obj, **changes) if changes else obj


def substitute(net: Network, values: Mapping) -> Network:
    """A copy of ``net`` with ``values`` ({symbol or name: value}) put in.

    Values are validated again by the model constructors (a negative
    service time raises :class:`~qmodels.errors.InvalidValueError`).
    Symbols left out stay symbols.

    >>> import qmodels as qm
    >>> S = symbols("S")
    >>> net = qm.Network([qm.Queue("cpu", S)], [qm.Closed("tx", 2, visits={"cpu": 1})])
    >>> substitute(net, {"S": 0.5}).demands.tolist()
    [[0.5]]
    """
    vals = _resolve(values, free_symbols(net))
    stations = tuple(_replace(s, vals) for s in net.stations)
    classes = tuple(_replace(c, vals) for c in net.classes)
    return Network(stations, classes, name=net.name, pools=net.pools)


def _latex_name(name: str) -> str:
    return r"\mathrm{" + name.replace("_", r"\_") + "}"


def _lambdify(args, expr) -> Callable:
    """A numpy function of ``args``; constants broadcast to the arguments'
    shape."""
    f = sp.lambdify(args, expr, modules="numpy")

    def func(*xs):
        if len(xs) != len(args):
            raise InvalidValueError(
                f"expected {len(args)} argument(s) ({', '.join(map(str, args))}), got {len(xs)}"
            )
        out = f(*xs)
        shape = np.broadcast_shapes(*[np.shape(x) for x in xs]) if xs else ()
        return np.broadcast_to(np.asarray(out, dtype=float), shape).copy() if shape else float(out)

    func.__doc__ = f"{expr} as a function of ({', '.join(map(str, args))})"
    func.args = tuple(args)  # type: ignore[attr-defined]
    func.expr = expr  # type: ignore[attr-defined]
    return func
