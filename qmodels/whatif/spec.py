"""The sweep specification shipped to workers (model, parameter names,
method, options, per-point seeds) and how one point becomes rows of the
tidy table: solve with :func:`qmodels.solve`, then one row per class and per
station.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import InvalidValueError, QModelsError, UnsupportedModelError
from ..model import FrozenMap, Network
from .paths import _split, apply

#: figure columns of analytic and simulated results, in table order
FIGURES = ("X", "R", "Q", "U")


# ---------------------------------------------------------------------------
# the model specification shipped to workers
# ---------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class _Spec:
    model: Any               # Network or callable(**kwargs) -> Network
    names: tuple             # parameter names, table order
    fn_args: tuple           # names passed to the callable
    method: str
    options: Mapping
    seed: Any                # (entropy, spawn_key) or None
    report: Any = None       # station names to tabulate (None: all)
    on_error: str = "raise"  # or "record"
    symbols: tuple = ()      # names of the model's sympy symbols to substitute

    def network(self, params: Mapping) -> Network:
        if callable(self.model) and not isinstance(self.model, Network):
            net = self.model(**{k: params[k] for k in self.fn_args})
            if not isinstance(net, Network):
                raise InvalidValueError(
                    f"the model function returned {type(net).__name__}, not a qmodels Network"
                )
        else:
            net = self.model
        if self.symbols:
            from ..symbolic.exact import substitute

            net = substitute(net, {k: params[k] for k in self.symbols})
        paths = {k: params[k] for k in self.names
                 if k not in self.fn_args and k not in self.symbols}
        return apply(net, paths)

    def seed_of(self, index: int):
        if self.seed is None:
            return None
        entropy, key = self.seed
        return np.random.SeedSequence(entropy, spawn_key=tuple(key) + (int(index),))


def _fn_params(fn) -> tuple[set, bool]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return set(), True
    names = {p.name for p in sig.parameters.values()
             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    var_kw = any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())
    return names, var_kw


def _make_spec(model, names, method, options, seed) -> _Spec:
    sym_args: tuple = ()
    if isinstance(model, Network):
        fn_args: tuple = ()
        if model.is_symbolic:
            # a symbol of the model is swept by its name: {"B": [1, 2, 4]}
            from ..symbolic.exact import free_symbols

            have = {str(x) for x in free_symbols(model)}
            sym_args = tuple(n for n in names if n in have)
        for n in names:
            if n not in sym_args:
                _split(n)
    elif callable(model):
        params, var_kw = _fn_params(model)
        fn_args = tuple(n for n in names if n in params or (var_kw and "." not in n))
        for n in names:
            if n not in fn_args:
                _split(n)
    else:
        raise InvalidValueError(
            f"model must be a qmodels Network or a function returning one, got "
            f"{type(model).__name__}"
        )
    if not isinstance(method, str):
        raise InvalidValueError(f"method must be a method name (qm.methods()), got {method!r}")
    from ..dispatch import check_options

    # before any point: the batched route takes no options and would drop
    # a misspelt one silently
    check_options(method, dict(options or {}))
    ss = None
    if method == "sim":
        if seed is None:
            raise InvalidValueError(
                "method 'sim' needs seed= (an int or numpy.random.SeedSequence): every "
                "point's seed is derived from it")
        if isinstance(seed, np.random.SeedSequence):
            ss = (seed.entropy, tuple(seed.spawn_key))
        elif isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0:
            ss = (int(seed), ())
        else:
            raise InvalidValueError(
                f"seed must be a non-negative integer or a numpy SeedSequence, got {seed!r}")
    elif seed is not None:
        raise InvalidValueError(f"seed is for method 'sim'; method {method!r} is deterministic")
    return _Spec(model, tuple(names), fn_args, method, FrozenMap(options or {}), ss,
                 symbols=sym_args)


# ---------------------------------------------------------------------------
# one point -> rows
# ---------------------------------------------------------------------------

def _solve_point(spec: _Spec, index: int, params: Mapping):
    from ..dispatch import solve

    net = spec.network(params)
    if net.is_symbolic:
        from ..symbolic.exact import free_symbols

        left = ", ".join(str(x) for x in free_symbols(net))
        raise UnsupportedModelError(
            f"a sweep tabulates numbers, and the network still has the sympy symbol(s) "
            f"{left}: sweep them by name (vary={{{left.split(', ')[0]!r}: [...]}}) or put "
            "values in with qmodels.substitute")
    opts = dict(spec.options)
    if spec.method == "sim":
        opts.setdefault("progress", False)
        opts["seed"] = spec.seed_of(index)
    return net, solve(net, method=spec.method, **opts)


def _result_rows(net: Network, res) -> list[dict]:
    """Tidy rows (class rows then station rows) of one solved point."""
    rows: list[dict] = []
    D = np.asarray(net.demands, dtype=float)
    if hasattr(res, "throughput_lower"):  # Bounds
        def num(v, same):
            # N* of an open class is None (it has no population): NaN
            return float(v) if same and v is not None else math.nan

        for i, c in enumerate(net.classes):
            same = c.name == res.class_name
            rows.append({
                "scope": "class", "name": c.name,
                "X_lower": num(res.throughput_lower, same),
                "X_upper": num(res.throughput_upper, same),
                "R_lower": num(res.response_time_lower, same),
                "R_upper": num(res.response_time_upper, same),
                "N_star": num(res.saturation_population, same),
                "X_max": num(res.max_throughput, same),
                "D": float(D[i].sum()), "bottleneck": False,
            })
        bn = set(res.bottleneck)
        for k, s in enumerate(net.stations):
            rows.append({"scope": "station", "name": s.name, "D": float(D[:, k].sum()),
                         "bottleneck": s.name in bn})
        # a pool can be the bottleneck of the bounds (it competes as a station)
        rows += [{"scope": "pool", "name": p.name, "D": math.nan, "bottleneck": p.name in bn}
                 for p in net.pools]
        return rows
    if not hasattr(res, "throughput") or not hasattr(res, "bottleneck"):
        raise UnsupportedModelError(
            f"method result {type(res).__name__} has no throughput/response-time figures "
            "to tabulate")
    simulated = res.__class__.__name__ == "SimResult"

    def put(row, key, v):
        if simulated:
            row[key] = float(v.mean)
            row[key + "_hw"] = float(v.half_width)
        else:
            row[key] = float(v)

    bn = set(res.bottleneck)
    # each metric's figures once per point (building them is O(stations);
    # read per row they were rebuilt 4 K + 3 C times, most of a small solve)
    fig = {m: getattr(res, m) for m in FIGURES}
    for i, c in enumerate(net.classes):
        row: dict = {"scope": "class", "name": c.name}
        put(row, "X", fig["X"][c.name])
        put(row, "R", fig["R"][c.name])
        put(row, "Q", fig["Q"][c.name])
        row["U"] = math.nan
        if simulated:
            row["U_hw"] = math.nan
        row["D"] = float(D[i].sum())
        row["bottleneck"] = False
        rows.append(row)
    for k, s in enumerate(net.stations):
        row = {"scope": "station", "name": s.name}
        for m in FIGURES:
            put(row, m, fig[m][s.name])
        row["D"] = float(D[:, k].sum())
        row["bottleneck"] = s.name in bn
        rows.append(row)
    rows += _pool_rows(net, res, simulated, bn)
    return rows


def _pool_rows(net: Network, res, simulated: bool, bn: set) -> list[dict]:
    """One row per token pool (``scope == "pool"``), as in the result's
    ``to_frame()``: ``U`` the pool's utilisation (tokens held / tokens),
    ``Q`` the mean number of jobs waiting for a token, ``bottleneck`` whether
    the pool is the result's bottleneck; X, R and D are NaN (a pool is no
    station).  A result that reports no pool figures leaves U and Q NaN."""
    rows: list[dict] = []
    for p in net.pools:
        row: dict = {"scope": "pool", "name": p.name, "X": math.nan, "R": math.nan}
        if simulated:
            d = getattr(res, "pools", {}).get(p.name)
            row.update({"X_hw": math.nan, "R_hw": math.nan})
            for m in ("Q", "U"):
                est = d.get(m) if d is not None else None
                row[m] = float(est.mean) if est is not None else math.nan
                row[m + "_hw"] = float(est.half_width) if est is not None else math.nan
        else:
            info = res.info.get("pools", {}) if isinstance(res.info, Mapping) else {}
            d = info.get(p.name, {}) if isinstance(info, Mapping) else {}
            row["Q"] = float(d.get("waiting", math.nan))
            row["U"] = float(res.pool_utilization.get(p.name, math.nan))
        row["D"] = math.nan
        row["bottleneck"] = p.name in bn
        rows.append(row)
    return rows


def _point_rows(spec: _Spec, index: int, params: Mapping) -> list[dict]:
    net, res = _solve_point(spec, index, params)
    # the method that answered (the one qm.solve chose, for method "auto")
    # and what its answer is: exact, approximate, bound or simulated
    base = {"point": index, **{k: params[k] for k in spec.names},
            "method": getattr(res, "method", spec.method),
            "exactness": getattr(res, "exactness", None)}
    keep = spec.report
    return [{**base, **r} for r in _result_rows(net, res)
            if keep is None or r["scope"] == "class" or r["name"] in keep]


def _solve_chunk(spec: _Spec, indices: Sequence[int], points: Sequence[Mapping]):
    """Worker task: solve the points one by one; a DataFrame of their rows."""
    import pandas as pd

    rows: list[dict] = []
    for i, p in zip(indices, points):
        try:
            rows.extend(_point_rows(spec, int(i), p))
        except QModelsError as e:
            if spec.on_error != "record":
                raise _at_point(e, int(i), p) from e
            rows.append({"point": int(i), **{k: p[k] for k in spec.names},
                         "method": spec.method, "exactness": None, "scope": "error",
                         "name": type(e).__name__, "error": str(e)})
    return pd.DataFrame(rows)


def _at_point(e: Exception, index: int, params: Mapping) -> Exception:
    """The same error, its message prefixed with the point it happened at."""
    try:
        new = type(e)(f"sweep point {index} {dict(params)}: {e}")
    except TypeError:  # an error class with another signature: keep it as is
        return e
    new.__dict__.update(e.__dict__)
    return new
