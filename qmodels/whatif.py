"""What-if sweeps: one model, a grid of parameter values, a tidy table out.

:func:`sweep` varies any parameter of a model over a grid (the product of
axes, or explicit rows), solves every point with any method of
:func:`qmodels.solve` and returns a tidy :class:`pandas.DataFrame`: one row
per point x class and per point x station, the figures as columns, ready for
seaborn or matplotlib (``frame.pipe(qm.plot.sweep, x=..., y=...)``).

>>> import qmodels as qm
>>> net = qm.Network([qm.Queue("cpu", 0.010), qm.Queue("disk", 0.025)],
...                  [qm.Closed("tx", 10, visits={"cpu": 1, "disk": 1})])
>>> df = qm.sweep(net, {"disk.service": [0.01, 0.02], "tx.population": [1, 5]},
...               progress=False)
>>> df.query("scope == 'class'")[["disk.service", "tx.population", "X"]].round(3)
   disk.service  tx.population       X
0          0.01              1  50.000
3          0.01              5  83.333
6          0.02              1  33.333
9          0.02              5  49.206

(By hand: one job sees no queue, X = 1/(D_cpu + D_disk); two balanced
stations of demand D give X(N) = N / (D (N + 1)) = 5/0.06.)

Parameter paths
---------------
A path names a model object, then an attribute, then (for mappings) a key:

================================  ==========================================
``"disk.service"``                station ``disk``: mean service time
``"disk.servers"``                servers (also ``capacity``, ``discipline``)
``"disk.power.busy"``             a field of a nested object
``"tx.population"``               class ``tx``: population (``think_time``,
                                  ``arrival_rate``)
``"tx.visits.disk"``              class ``tx``: visit ratio at ``disk``
                                  (``tx.demands.disk``, ``tx.service.disk``,
                                  ``tx.routing.cpu.disk``)
``"buf.tokens"``                  token pool ``buf``: tokens
================================  ==========================================

Every change goes through :func:`dataclasses.replace` on the frozen model
objects, so it is validated exactly as the model itself (a population of
10.3 is a :class:`~qmodels.errors.PopulationError` naming the class).  The
model may instead be a function that builds a :class:`~qmodels.model.Network`
from keyword arguments; axes that name its arguments are passed to it and
dotted paths are applied to the network it returns.  This is how a routing
probability is swept (the function keeps each routing row summing to 1).

The table
---------
Columns: ``point`` (0..P-1, grid order), one column per parameter, ``method``,
``scope`` (``"class"`` or ``"station"``), ``name`` (class or station name)
and the figures, in the vocabulary of :mod:`qmodels.results`:

* analytic methods: ``X``, ``R``, ``Q``, ``U`` (``U`` per station only),
  ``D`` (total demand) and ``bottleneck`` (station rows);
* ``sim``: the same means plus their confidence half-widths ``X_hw``,
  ``R_hw``, ``Q_hw``, ``U_hw`` (level in ``frame.attrs["level"]``);
* ``bounds``: ``X_lower``, ``X_upper``, ``R_lower``, ``R_upper``, ``N_star``,
  ``X_max`` per class; ``D`` and ``bottleneck`` per station;
* with ``on_error="record"``, a point that failed has one row, ``scope ==
  "error"``, with the error's class in ``name`` and its message in ``error``.

``stations=False`` keeps the class rows only (the compact table of a very
large sweep); ``stations=["disk"]`` keeps the stations named.

Single-class product-form sweeps with ``method="exact"`` are solved all at
once by :func:`qmodels.batch.mva_batch` (compiled, parallel over points);
its rows equal the one-by-one :func:`qmodels.mva` bit for bit, so the table
is the same whichever route was taken (``frame.attrs["route"]`` says which).

Simulation
----------
``method="sim"`` needs ``seed`` (an int or a :class:`numpy.random.SeedSequence`
``root``).  Point ``i`` is simulated with
``SeedSequence(root.entropy, spawn_key=root.spawn_key + (i,))``, the same
sequence as ``root.spawn(P)[i]``: every point's numbers depend only on the
seed and its index, never on chunking, the number of workers or a resume.

Scaling out with dask.distributed
---------------------------------
``parallel=True`` starts a local cluster (one single-threaded worker process
per core) for the call; ``client=`` uses an existing
:class:`distributed.Client`.  To run on a real cluster, start a scheduler
and workers there (``dask scheduler`` on one host, ``dask worker
tcp://HOST:8786`` on each node, each with qmodels installed) and pass
``client=Client("tcp://HOST:8786")``; the model and the grid are shipped to
the workers, the figures come back.  Points travel in chunks (``chunksize``;
by default a few chunks per worker, at most 64 points per chunk for
one-by-one solves and 20,000 for the batched route) so the scheduler's
overhead per task (about a millisecond) stays small.  The numbers are the same bit for
bit whatever the number of workers: each point is solved on its own.
A script that starts worker processes (``parallel=True``) must do so under
``if __name__ == "__main__":``, as any program using multiprocessing.

Resumable sweeps
----------------
``store="sweep.parquet"`` keeps completed points on disk as they finish: a
directory of Parquet parts (``pandas.read_parquet("sweep.parquet")`` reads
it whole) plus ``_sweep.json`` naming the sweep.  Each part is written to a
temporary file and moved into place with :func:`os.replace`, so a sweep
killed at any moment (even by SIGKILL) leaves only complete parts.  Running
the same sweep again loads what is stored, solves only the missing points
and returns the whole table; ``frame.attrs["computed"]`` and
``frame.attrs["stored"]`` count the points of each kind.  A store that
holds a different sweep (another model, grid, method, options or seed) is
refused with an error rather than mixed in.  One sweep writes to a store
at a time (the process that runs :func:`sweep`; workers never touch it).

Progress
--------
A :mod:`tqdm.auto` bar (a widget in Jupyter, text in a terminal) counts the
points; ``progress=False`` or the environment variable ``CI`` silences it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import math
import numbers
import os
import sys
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .errors import InvalidValueError, QModelsError, UnknownNameError, UnsupportedModelError
from .model import Closed, Delay, FrozenMap, Network, Queue

__all__ = ["sweep", "grid", "apply", "register_cli"]

#: figure columns of analytic and simulated results, in table order
FIGURES = ("X", "R", "Q", "U")
#: default points per chunk for the batched exact route
BATCH_CHUNK = 20_000
STORE_META = "_sweep.json"


# ---------------------------------------------------------------------------
# parameter paths
# ---------------------------------------------------------------------------

def _set_in(obj, parts: Sequence[str], value, path: str):
    """``obj`` with the attribute/key chain ``parts`` set to ``value``
    (frozen dataclasses through :func:`dataclasses.replace`, mappings
    copied with the key set)."""
    head, rest = parts[0], parts[1:]
    if isinstance(obj, Mapping):
        if not rest:
            new = dict(obj)
            new[head] = value
            return new
        if head not in obj:
            raise UnknownNameError(f"parameter {path!r}: no key {head!r} in {dict(obj)!r}")
        new = dict(obj)
        new[head] = _set_in(obj[head], rest, value, path)
        return new
    if dataclasses.is_dataclass(obj):
        names = [f.name for f in dataclasses.fields(obj) if f.init]
        if head not in names:
            raise UnknownNameError(
                f"parameter {path!r}: {type(obj).__name__} has no parameter {head!r} "
                f"(it has {', '.join(names)})"
            )
        if not rest:
            return dataclasses.replace(obj, **{head: value})
        cur = getattr(obj, head)
        if cur is None:
            # an unset mapping or nested object (a class's own service
            # times, a station's power) starts empty; the model validates it
            cur = {}
        return dataclasses.replace(obj, **{head: _set_in(cur, rest, value, path)})
    raise UnknownNameError(f"parameter {path!r}: cannot look up {head!r} in {obj!r}")


def _split(path: str) -> list[str]:
    if not isinstance(path, str) or "." not in path:
        raise InvalidValueError(
            f"parameter path must look like 'station.attribute' (e.g. 'disk.service', "
            f"'tx.population', 'buf.tokens', 'tx.visits.disk'), got {path!r}"
        )
    parts = path.split(".")
    if any(not p for p in parts):
        raise InvalidValueError(f"parameter path {path!r} has an empty part")
    return parts


def apply(net: Network, changes: Mapping[str, Any]) -> Network:
    """The network ``net`` with each parameter path in ``changes`` set.

    Parameters
    ----------
    net : Network
    changes : mapping path -> value
        Paths as in the module docstring (``"disk.service"``,
        ``"tx.visits.disk"``, ``"buf.tokens"``).

    Returns
    -------
    Network
        A new, validated network (the model objects are frozen).

    Raises
    ------
    UnknownNameError
        A path naming no station, class or pool, or no attribute of it.
    ModelError
        A value the model rejects (the model's own message).

    Examples
    --------
    >>> import qmodels as qm
    >>> net = qm.Network([qm.Queue("disk", 0.02)], [qm.Closed("tx", 3, visits={"disk": 1})])
    >>> apply(net, {"disk.service": 0.03, "tx.population": 5}).demands.tolist()
    [[0.03]]
    """
    if not changes:
        return net
    stations = list(net.stations)
    classes = list(net.classes)
    pools = list(net.pools)
    where = {s.name: (stations, i) for i, s in enumerate(stations)}
    where.update({c.name: (classes, i) for i, c in enumerate(classes)})
    where.update({p.name: (pools, i) for i, p in enumerate(pools)})
    for path, value in changes.items():
        parts = _split(path)
        if parts[0] not in where:
            raise UnknownNameError(
                f"parameter {path!r}: the network has no station, class or pool "
                f"{parts[0]!r} (it has {', '.join(where)})"
            )
        seq, i = where[parts[0]]
        seq[i] = _set_in(seq[i], parts[1:], _plain(value), path)
    return Network(stations, classes, name=net.name, pools=pools)


def _plain(v):
    """numpy scalars as Python numbers (the model keeps ints exact)."""
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    if isinstance(v, np.bool_):
        return bool(v)
    return v


# ---------------------------------------------------------------------------
# the grid
# ---------------------------------------------------------------------------

def _column(values) -> np.ndarray:
    """Values as an array: int64 or float64 for plain numbers, else objects
    (kept as given, never broadcast: tuples of rate multipliers stay
    tuples)."""
    if values and all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                      and not hasattr(v, "free_symbols") for v in values):
        if all(isinstance(v, numbers.Integral) for v in values):
            return np.array(values, dtype=np.int64)
        return np.array(values, dtype=float)
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


class _Grid:
    """The points of a sweep held as columns (a million points are a
    million-row array per parameter, not a million dicts)."""

    def __init__(self, vary=None, rows=None):
        if (vary is None) == (rows is None):
            raise InvalidValueError(
                "give the grid as vary={param: values} or rows=[{...}, ...]")
        if vary is not None:
            if not isinstance(vary, Mapping) or not vary:
                raise InvalidValueError(
                    f"vary must be a non-empty mapping parameter -> values, got {vary!r}")
            axes = {}
            for name, values in vary.items():
                if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
                    raise InvalidValueError(
                        f"vary[{name!r}] must be a sequence of values, got {values!r}")
                vals = [_plain(v) for v in values]
                if not vals:
                    raise InvalidValueError(f"vary[{name!r}] has no values")
                axes[name] = vals
            self.names = list(axes)
            sizes = [len(v) for v in axes.values()]
            self.P = int(np.prod(sizes, dtype=np.int64))
            self.cols = {}
            stride = self.P
            at = np.arange(self.P, dtype=np.int64)
            for name, size in zip(self.names, sizes):
                stride //= size
                self.cols[name] = _column(axes[name])[(at // stride) % size]
            self.desc = ("product", [(n, axes[n]) for n in self.names])
            return
        if hasattr(rows, "to_dict") and hasattr(rows, "columns"):
            rows = rows.to_dict("records")
        rows = [{k: _plain(v) for k, v in dict(r).items()} for r in rows]
        if not rows:
            raise InvalidValueError("rows is empty: nothing to sweep")
        keys = list(rows[0])
        for i, r in enumerate(rows):
            if list(r) != keys:
                raise InvalidValueError(
                    f"rows[{i}] has parameters {list(r)}, rows[0] has {keys}: every row must "
                    "name the same parameters")
        self.names = keys
        self.P = len(rows)
        self.cols = {k: _column([r[k] for r in rows]) for k in keys}
        self.desc = ("rows", rows)

    @classmethod
    def of_columns(cls, names, cols):
        g = cls.__new__(cls)
        g.names, g.cols = list(names), dict(cols)
        g.P = len(next(iter(cols.values()))) if cols else 0
        g.desc = None
        return g

    def columns(self, lo: int, hi: int) -> dict:
        """The parameter columns of points lo..hi-1."""
        return {n: self.cols[n][lo:hi] for n in self.names}

    def __len__(self):
        return self.P

    def __getitem__(self, i) -> dict:
        return {n: _plain(self.cols[n][i]) for n in self.names}

    def __iter__(self):
        return (self[i] for i in range(self.P))


def grid(vary: Mapping[str, Iterable] | None = None, rows=None) -> list[dict]:
    """The points of a sweep, in order.

    ``vary`` maps parameter -> values; the points are their product, the
    first axis varying slowest (as :func:`itertools.product`).  ``rows`` is
    an explicit list of points (mappings, or a DataFrame whose columns are
    parameters).  Give one or the other.

    >>> grid({"a": [1, 2], "b": [0.1, 0.2]})
    [{'a': 1, 'b': 0.1}, {'a': 1, 'b': 0.2}, {'a': 2, 'b': 0.1}, {'a': 2, 'b': 0.2}]
    """
    return list(_Grid(vary, rows))


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

    def network(self, params: Mapping) -> Network:
        if callable(self.model) and not isinstance(self.model, Network):
            net = self.model(**{k: params[k] for k in self.fn_args})
            if not isinstance(net, Network):
                raise InvalidValueError(
                    f"the model function returned {type(net).__name__}, not a qmodels Network"
                )
        else:
            net = self.model
        paths = {k: params[k] for k in self.names if k not in self.fn_args}
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
    if isinstance(model, Network):
        fn_args: tuple = ()
        for n in names:
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
    return _Spec(model, tuple(names), fn_args, method, FrozenMap(options or {}), ss)


# ---------------------------------------------------------------------------
# one point -> rows
# ---------------------------------------------------------------------------

def _solve_point(spec: _Spec, index: int, params: Mapping):
    from .dispatch import solve

    net = spec.network(params)
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
        for i, c in enumerate(net.classes):
            same = c.name == res.class_name
            rows.append({
                "scope": "class", "name": c.name,
                "X_lower": float(res.throughput_lower) if same else math.nan,
                "X_upper": float(res.throughput_upper) if same else math.nan,
                "R_lower": float(res.response_time_lower) if same else math.nan,
                "R_upper": float(res.response_time_upper) if same else math.nan,
                "N_star": float(res.saturation_population) if same else math.nan,
                "X_max": float(res.max_throughput) if same else math.nan,
                "D": float(D[i].sum()), "bottleneck": False,
            })
        bn = set(res.bottleneck)
        for k, s in enumerate(net.stations):
            rows.append({"scope": "station", "name": s.name, "D": float(D[:, k].sum()),
                         "bottleneck": s.name in bn})
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
    for i, c in enumerate(net.classes):
        row: dict = {"scope": "class", "name": c.name}
        put(row, "X", res.X[c.name])
        put(row, "R", res.R[c.name])
        put(row, "Q", res.Q[c.name])
        row["U"] = math.nan
        if simulated:
            row["U_hw"] = math.nan
        row["D"] = float(D[i].sum())
        row["bottleneck"] = False
        rows.append(row)
    for k, s in enumerate(net.stations):
        row = {"scope": "station", "name": s.name}
        for m in FIGURES:
            put(row, m, getattr(res, m)[s.name])
        row["D"] = float(D[:, k].sum())
        row["bottleneck"] = s.name in bn
        rows.append(row)
    return rows


def _point_rows(spec: _Spec, index: int, params: Mapping) -> list[dict]:
    net, res = _solve_point(spec, index, params)
    base = {"point": index, **{k: params[k] for k in spec.names}, "method": spec.method}
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
                         "method": spec.method, "scope": "error", "name": type(e).__name__,
                         "error": str(e)})
    return pd.DataFrame(rows)


def _at_point(e: Exception, index: int, params: Mapping) -> Exception:
    """The same error, its message prefixed with the point it happened at."""
    try:
        new = type(e)(f"sweep point {index} {dict(params)}: {e}")
    except TypeError:  # an error class with another signature: keep it as is
        return e
    new.__dict__.update(e.__dict__)
    return new


# ---------------------------------------------------------------------------
# the batched route (single closed class, product form, method exact)
# ---------------------------------------------------------------------------

_BATCH_FIELDS = {
    ("station", "service"), ("station", "servers"),
    ("class", "population"), ("class", "think_time"),
    ("class", "visits"), ("class", "service"), ("class", "demands"),
}


def _batchable_net(net: Network) -> bool:
    if net.is_symbolic or net.pools or len(net.classes) != 1:
        return False
    if not isinstance(net.classes[0], Closed):
        return False
    return all(isinstance(s, (Delay, Queue)) and s.capacity is None for s in net.stations)


def _arrays(net: Network):
    """(V, S, c, N, Z) of a single-class network, as the batched kernel takes them."""
    s = net.stations
    return (np.asarray(net.visits[0], dtype=float), np.asarray(net.service_times[0], dtype=float),
            np.array([1 if isinstance(x, Delay) else x.servers for x in s], dtype=np.int64),
            int(net.classes[0].population), float(net.classes[0].think_time))


def _batch_base(spec: _Spec):
    """The base network when the sweep's method, model and paths fit the
    batched route, else None."""
    if spec.method != "exact" or not isinstance(spec.model, Network) or spec.fn_args:
        return None
    base = spec.model
    if not _batchable_net(base):
        return None
    kinds = {s.name: "station" for s in base.stations}
    kinds.update({c.name: "class" for c in base.classes})
    for n in spec.names:
        parts = n.split(".")
        what = kinds.get(parts[0])
        if what is None or (what, parts[1]) not in _BATCH_FIELDS:
            return None
    return base


def _batch_ok(spec: _Spec, points: _Grid) -> bool:
    """Whether the batched route applies to the whole grid: every axis value
    keeps the network single-class product form, and no two axes change the
    same entry of V, S, c, N or Z (checked over each axis's distinct values,
    so the cost does not grow with the number of points)."""
    base = _batch_base(spec)
    if base is None:
        return False
    V0, S0, c0, N0, Z0 = _arrays(base)
    seen = [np.zeros(len(V0), bool) for _ in range(3)] + [False, False]
    for name in spec.names:
        col = points.cols[name]
        if col.dtype == object:
            return False
        mine = [np.zeros(len(V0), bool) for _ in range(3)] + [False, False]
        for v in np.unique(col):
            net = apply(base, {name: v})
            if not _batchable_net(net) or net.classes[0].name != base.classes[0].name:
                return False
            Vj, Sj, cj, Nj, Zj = _arrays(net)
            for t, new, old in zip(mine, (Vj, Sj, cj), (V0, S0, c0)):
                t |= new != old
            mine[3] = mine[3] or Nj != N0
            mine[4] = mine[4] or Zj != Z0
        for i in range(3):
            if (seen[i] & mine[i]).any():
                return False
            seen[i] |= mine[i]
        for i in (3, 4):
            if seen[i] and mine[i]:
                return False
            seen[i] = seen[i] or mine[i]
    return True


def _batch_plan(spec: _Spec, points: _Grid):
    """Arrays (V, S, c, N, Z per point) when the batched route applies, else
    None.  Each axis value is applied to the base network once (so it is
    validated by the model) and its effect on the arrays recorded; a point
    combines the effects of its axis values."""
    base = _batch_base(spec)
    if base is None:
        return None
    P, K = len(points), len(base.stations)
    cls = base.classes[0]
    arrays = _arrays
    V0, S0, c0, N0, Z0 = arrays(base)
    V = np.broadcast_to(V0, (P, K)).copy()
    S = np.broadcast_to(S0, (P, K)).copy()
    c = np.broadcast_to(c0, (P, K)).copy()
    N = np.full(P, N0, dtype=np.int64)
    Z = np.full(P, Z0)
    touched = [np.zeros((P, K), bool) for _ in range(3)]
    tN = np.zeros(P, bool)
    tZ = np.zeros(P, bool)
    for name in spec.names:
        col = points.cols[name]
        if col.dtype == object:
            return None
        uniq, idx = np.unique(col, return_inverse=True)
        idx = idx.reshape(P)
        effect: dict = {}
        for j, v in enumerate(uniq):
            net = apply(base, {name: v})
            if not _batchable_net(net) or net.classes[0].name != cls.name:
                return None
            effect[j] = arrays(net)
        for j, (Vj, Sj, cj, Nj, Zj) in effect.items():
            rows = idx == j
            for arr, new, old, t in ((V, Vj, V0, touched[0]), (S, Sj, S0, touched[1]),
                                     (c, cj, c0, touched[2])):
                diff = new != old
                if diff.any():
                    if (t[rows] & diff).any():
                        return None  # two axes change the same entry
                    arr[np.ix_(rows, diff)] = new[diff]
            if Nj != N0:
                if tN[rows].any():
                    return None
                N[rows] = Nj
            if Zj != Z0:
                if tZ[rows].any():
                    return None
                Z[rows] = Zj
        for j, (Vj, Sj, cj, Nj, Zj) in effect.items():
            rows = idx == j
            touched[0][np.ix_(rows, Vj != V0)] = True
            touched[1][np.ix_(rows, Sj != S0)] = True
            touched[2][np.ix_(rows, cj != c0)] = True
            tN[rows] |= Nj != N0
            tZ[rows] |= Zj != Z0
    delay = np.array([isinstance(s, Delay) for s in base.stations])
    return {"V": V, "S": S, "c": c, "N": N, "Z": Z, "delay": delay,
            "stations": base.station_names, "class": cls.name}


def _batch_chunk(D, Z, N, c, delay):
    """Worker task of the batched route: X and Q of the rows."""
    from .analytic.batch import mva_batch

    if len(N) and (N == N[0]).all():
        N = int(N[0])   # one population: mva_batch skips its per-row check
    r = mva_batch(D, Z, N, servers=c, delay=np.broadcast_to(delay, D.shape))
    return np.array(r.throughput), np.array(r.queue_length)


def _batch_task(spec: _Spec, cols: Mapping, first: int):
    """Worker task of the batched route: the points whose parameters are
    ``cols`` (numbered from ``first``) solved by :func:`mva_batch` and
    tabulated."""
    sub = _Grid.of_columns(spec.names, cols)
    plan = _batch_plan(spec, sub)
    if plan is None:  # pragma: no cover - the caller checked the whole grid
        raise UnsupportedModelError("internal: a chunk of a batched sweep is not batchable")
    try:
        X, Q = _batch_chunk(plan["V"] * plan["S"], plan["Z"], plan["N"], plan["c"],
                            plan["delay"])
    except QModelsError:
        # a row the kernel refuses: solve the chunk point by point, which
        # names the point (or records it with on_error="record")
        return _solve_chunk(spec, range(first, first + len(sub)), list(sub))
    return _batch_frame(plan, X, Q, sub, spec.method, spec.report, first)


def _batch_frame(plan, X, Q, points, method, report, first):
    """Tidy rows of the plan's points from batched X, Q, with the formulas of
    :func:`qmodels.mva.mva_single` and :class:`qmodels.results.Result` so the
    numbers equal the one-by-one solve bit for bit."""
    import pandas as pd

    V, S, c = plan["V"], plan["S"], plan["c"]
    N, Z = plan["N"], plan["Z"]
    delay = plan["delay"]
    D = V * S
    B, K = D.shape
    servers = np.where(delay, 1.0, c.astype(float))
    U = X[:, None] * D / servers
    with np.errstate(divide="ignore", invalid="ignore"):
        R = np.where(X > 0, N / np.where(X > 0, X, 1.0) - Z, D.sum(axis=1))
    R = np.where(N > 0, np.maximum(R, 0.0), R)
    Xk = X[:, None] * V
    flow = Xk > 0
    # S / rate_multiplier(1): a queue's multiplier at n = 1 is min(1, c) = 1, a delay's 1
    lone = S / 1
    with np.errstate(divide="ignore", invalid="ignore"):
        Rk = np.where(flow, Q / np.where(flow, Xk, 1.0), lone)
        Rtot = np.where(Xk > 0, Q / np.where(Xk > 0, Xk, 1.0),
                        np.where(V > 0, (V * Rk) / np.where(V > 0, V, 1.0), 0.0))
    Qc = Q.sum(axis=1)
    queue = ~delay
    Uq = np.where(queue[None, :], U, -np.inf)
    top = Uq.max(axis=1) if K else np.zeros(B)
    bottleneck = (Uq >= (top * (1 - 1e-9))[:, None]) & (top > 0)[:, None] & queue[None, :]

    sel = np.arange(K) if report is None else np.array(
        [plan["stations"].index(s) for s in report], dtype=np.int64)
    E = 1 + len(sel)
    n = B * E

    def interleave(cls_col, st_cols):
        out = np.empty((B, E), dtype=np.result_type(cls_col, st_cols))
        out[:, 0] = cls_col
        out[:, 1:] = st_cols[:, sel]
        return out.reshape(n)

    def categorical(values):
        cats = list(dict.fromkeys(values))
        codes = np.array([cats.index(v) for v in values], dtype=np.int8 if len(cats) < 127
                         else np.int32)
        return pd.Categorical.from_codes(np.tile(codes, B), categories=cats)

    data: dict[str, Any] = {"point": np.repeat(np.arange(first, first + B, dtype=np.int64), E)}
    for name in points.names:
        data[name] = np.repeat(points.cols[name], E)
    data["method"] = categorical([method] * E)
    data["scope"] = categorical(["class"] + ["station"] * len(sel))
    data["name"] = categorical([plan["class"], *(plan["stations"][k] for k in sel)])
    data["X"] = interleave(X, Xk)
    data["R"] = interleave(R, Rtot)
    data["Q"] = interleave(Qc, Q)
    data["U"] = interleave(np.full(B, np.nan), U)
    data["D"] = interleave(D.sum(axis=1), D)
    data["bottleneck"] = interleave(np.zeros(B, bool), bottleneck)
    return pd.DataFrame(data)


# ---------------------------------------------------------------------------
# storage
# ---------------------------------------------------------------------------

def _fingerprint(spec: _Spec, points: _Grid) -> str:
    h = hashlib.sha256()
    m = spec.model
    if isinstance(m, Network):
        h.update(repr((m.name, m.stations, m.classes, m.pools)).encode())
    else:
        h.update(f"{getattr(m, '__module__', '')}.{getattr(m, '__qualname__', repr(m))}".encode())
        try:
            h.update(inspect.getsource(m).encode())
        except (OSError, TypeError):
            pass
    h.update(repr((spec.names, spec.method, sorted(spec.options.items(), key=str),
                   spec.seed, spec.report)).encode())
    h.update(repr(points.desc).encode())
    return h.hexdigest()


class _Store:
    """A directory of Parquet parts, each written atomically."""

    def __init__(self, path, fingerprint: str, npoints: int):
        self.dir = Path(path)
        self.dir.mkdir(parents=True, exist_ok=True)
        meta = self.dir / STORE_META
        for tmp in self.dir.glob(".tmp-*"):
            tmp.unlink(missing_ok=True)   # a part whose writer was killed
        if meta.exists():
            old = json.loads(meta.read_text())
            if old.get("fingerprint") != fingerprint:
                raise InvalidValueError(
                    f"store {str(self.dir)!r} holds a different sweep (model, grid, method, "
                    "options or seed changed): give another store or delete it")
        else:
            if self.parts():
                raise InvalidValueError(
                    f"store {str(self.dir)!r} holds Parquet parts but no {STORE_META}: not a "
                    "sweep store; give another directory")
            _atomic_write(meta, json.dumps({"fingerprint": fingerprint, "points": npoints,
                                            "format": 1}).encode())

    def parts(self):
        return sorted(self.dir.glob("part-*.parquet"))

    def load(self):
        import pandas as pd

        parts = self.parts()
        if not parts:
            return None
        return pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)

    def write(self, frame):
        first = int(frame["point"].iloc[0])
        name = f"part-{first:012d}-{uuid.uuid4().hex[:8]}.parquet"
        tmp = self.dir / f".tmp-{name}"
        frame.to_parquet(tmp, index=False)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, self.dir / name)


def _atomic_write(path: Path, data: bytes):
    tmp = path.with_name(f".tmp-{uuid.uuid4().hex}-{path.name}")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


# ---------------------------------------------------------------------------
# progress
# ---------------------------------------------------------------------------

def _in_notebook() -> bool:
    ip = sys.modules.get("IPython")
    if ip is None:
        return False
    try:
        shell = ip.get_ipython()
    except Exception:  # pragma: no cover - IPython internals
        return False
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def _progress_bar(progress, total: int, desc: str):
    """A :mod:`tqdm.auto` bar, or None when silenced.

    ``progress=False`` or the environment variable ``CI`` (any non-empty
    value): no bar.  ``True``: a bar.  ``None`` (default): a bar in a
    terminal or a Jupyter kernel."""
    if os.environ.get("CI") or progress is False:
        return None
    if progress is None and not (_in_notebook() or sys.stderr.isatty()):
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # tqdm is optional (extras "sim"/"dist"): no bar without it
        return None
    return tqdm(total=total, desc=desc, unit="pt", leave=False)


# ---------------------------------------------------------------------------
# execution
# ---------------------------------------------------------------------------

def _chunks(todo: np.ndarray, size: int):
    for a in range(0, len(todo), size):
        yield todo[a:a + size]


def _runs(idx: np.ndarray):
    """Split sorted indices into contiguous runs (the batched route slices)."""
    if len(idx) == 0:
        return []
    cut = np.flatnonzero(np.diff(idx) != 1) + 1
    return np.split(idx, cut)


def _workers(client) -> int:
    try:
        return max(1, len(client.scheduler_info().get("workers", {})))
    except Exception:  # pragma: no cover - scheduler without the call
        return 1


def sweep(model: Network | Callable[..., Network], vary: Mapping[str, Iterable] | None = None,
          *, rows=None, method: str = "exact", options: Mapping | None = None, seed=None,
          stations: bool | Sequence[str] = True, client=None, parallel: bool = False,
          chunksize: int | None = None, store=None, progress: bool | None = None,
          on_error: str = "raise"):
    """Solve ``model`` at every point of a parameter grid; a tidy DataFrame.

    Parameters
    ----------
    model : Network or callable
        The base network, or a function ``f(**kwargs) -> Network``.
    vary : mapping parameter -> values
        The grid is the product of the axes (first axis slowest).  A
        parameter is a path (``"disk.service"``, ``"tx.population"``,
        ``"buf.tokens"``, ``"tx.visits.disk"``) or, for a function model, one
        of its argument names.
    rows : sequence of mappings or DataFrame
        Explicit points instead of ``vary``.
    method : str
        Any :func:`qmodels.methods` name: ``exact``, ``schweitzer``,
        ``linearizer``, ``bounds``, ``decomposition``, ``ctmc``, ``sim``, ...
    options : mapping
        Keyword options of the method (``{"replications": 5}`` for sim).
    seed : int or numpy.random.SeedSequence
        Required for ``sim``: point i uses ``SeedSequence(seed).spawn(P)[i]``.
    stations : bool or sequence of str
        Station rows to include: all (default), none (``False``: class rows
        only, the smallest table for a large sweep) or the ones named.
    client : distributed.Client, optional
        Run the chunks on this dask cluster.
    parallel : bool
        Start a local dask cluster for this call (one process per core).
    chunksize : int, optional
        Points per task (and per stored part).
    store : path, optional
        Directory of Parquet parts that makes the sweep resumable.
    progress : bool, optional
        tqdm.auto bar; default on in a terminal or Jupyter; off with
        ``False`` or when the environment variable ``CI`` is set.
    on_error : "raise" or "record"
        A point the method cannot solve (an open station pushed past
        saturation, a value the model rejects): ``"raise"`` its error, the
        message prefixed with the point; ``"record"`` one row for it with
        ``scope == "error"``, the error's class in ``name`` and its message
        in an ``error`` column, and go on (``attrs["failed"]`` counts them).

    Returns
    -------
    pandas.DataFrame
        One row per point x class and point x station (see the module
        docstring for the columns), sorted by ``point``.  ``attrs`` holds
        ``method``, ``points``, ``computed``, ``stored``, ``failed``,
        ``route`` (``"batch"``, ``"one-by-one"``, or ``"stored"`` when
        nothing was left to compute) and for sim ``level``.

    Raises
    ------
    InvalidValueError, UnknownNameError
        A bad grid, path, seed or store; a value the model rejects names
        the station/class (the point is named too).
    UnsupportedModelError
        The method cannot solve the model at some point (the error names
        the point and its parameters).

    Notes
    -----
    Each point is an independent solve, so the table does not depend on
    how the points were chunked or where they ran.  The batched exact
    route is :func:`qmodels.batch.mva_batch` (Reiser & Lavenberg 1980;
    Lazowska et al., QSP 1984, Algorithm 6.1), equal to :func:`qmodels.mva`
    row for row.
    """

    points = _Grid(vary, rows)
    spec = _options(_make_spec(model, points.names, method, options, seed), stations,
                    on_error, chunksize)
    P = len(points)
    st = None
    done: Any = None
    if store is not None:
        st = _Store(store, _fingerprint(spec, points), P)
        done = st.load()
    have = np.zeros(P, dtype=bool)
    if done is not None:
        have[np.unique(done["point"].to_numpy())] = True
    todo = np.flatnonzero(~have)

    route = ("stored" if not len(todo) else
             "batch" if _batch_ok(spec, points) else "one-by-one")
    if len(todo) and (route != "batch" or spec.report) and (
            isinstance(spec.model, Network) or spec.report):
        _check_first(spec, points, int(todo[0]))

    own_cluster = None
    if parallel and client is None and len(todo):
        from distributed import Client, LocalCluster

        own_cluster = LocalCluster(n_workers=os.cpu_count() or 1, threads_per_worker=1,
                                   processes=True, dashboard_address=None)
        client = Client(own_cluster)
    try:
        parts = _execute(spec, points, route, todo, client, chunksize, st,
                         _progress_bar(progress, len(todo), f"sweep ({method})"))
    finally:
        if own_cluster is not None:
            client.close()
            own_cluster.close()
    out = _assemble(([done] if done is not None else []) + parts)
    out.attrs.update({"method": method, "points": P, "computed": int(len(todo)),
                      "stored": int(P - len(todo)), "route": route,
                      "parameters": points.names,
                      "failed": int((out["scope"] == "error").sum())})
    if method == "sim":
        out.attrs["level"] = float(dict(spec.options).get("level", 0.95))
    return out


def _options(spec: _Spec, stations, on_error, chunksize) -> _Spec:
    """The spec with the station rows to keep and the error policy, checked."""
    if stations is not True:
        if stations is False:
            report: tuple = ()
        elif isinstance(stations, str) or not isinstance(stations, Iterable):
            raise InvalidValueError(
                f"stations must be True, False or a list of station names, got {stations!r}")
        else:
            report = tuple(stations)
        spec = dataclasses.replace(spec, report=report)
    if on_error not in ("raise", "record"):
        raise InvalidValueError(f"on_error must be 'raise' or 'record', got {on_error!r}")
    if chunksize is not None and (isinstance(chunksize, bool)
                                  or not isinstance(chunksize, numbers.Integral)
                                  or chunksize < 1):
        raise InvalidValueError(f"chunksize must be an integer >= 1, got {chunksize!r}")
    return dataclasses.replace(spec, on_error=on_error)


def _check_first(spec: _Spec, points: _Grid, i0: int) -> None:
    """Build the first point's network once, so that a bad path or a bad
    station name fails before any work is sent anywhere."""
    try:
        first = spec.network(points[i0])
    except UnknownNameError:
        raise
    except QModelsError as e:
        if spec.on_error == "raise":
            raise _at_point(e, i0, points[i0]) from e
        return   # recorded with its point later
    unknown = [s for s in spec.report or () if s not in first.station_names]
    if unknown:
        raise UnknownNameError(
            f"stations: no station {unknown[0]!r} (the network has "
            f"{', '.join(first.station_names)})")


def _execute(spec, points, route, todo, client, chunksize, st, bar) -> list:
    """Solve the points ``todo`` in chunks, here or on the dask cluster;
    each chunk's table is stored (if a store is given) as it arrives."""
    workers = _workers(client) if client is not None else 1
    if chunksize is None:
        if route == "batch":
            chunksize = min(BATCH_CHUNK, max(1, math.ceil(len(todo) / (4 * workers))))
        else:
            chunksize = max(1, min(64, math.ceil(len(todo) / (8 * workers))))
    if route == "batch":
        # contiguous runs: each task builds the plan of its own points
        tasks = [c for run in _runs(todo) for c in _chunks(run, chunksize)]
    else:
        tasks = list(_chunks(todo, chunksize))
    parts: list = []

    def finish(chunk, frame):
        if st is not None:
            st.write(frame)
        parts.append(frame)
        if bar is not None:
            bar.update(len(chunk))

    try:
        if client is None:
            for chunk in tasks:
                finish(chunk, _run_task(spec, route, chunk, points))
            return parts
        from distributed import as_completed

        [spec_f] = client.scatter([spec], broadcast=True)
        futs = {}
        for chunk in tasks:
            if route == "batch":
                lo, hi = int(chunk[0]), int(chunk[-1]) + 1
                f = client.submit(_batch_task, spec_f, points.columns(lo, hi), lo, pure=False)
            else:
                f = client.submit(_solve_chunk, spec_f, chunk.tolist(),
                                  [points[i] for i in chunk], pure=False)
            futs[f] = chunk
        for f in as_completed(futs):
            finish(futs[f], f.result())
        return parts
    finally:
        if bar is not None:
            bar.close()


def _assemble(frames: list):
    """One table from the stored and the new parts, sorted by point, with
    the same categories whichever route or store the rows came from."""
    import pandas as pd

    if not frames:
        raise InvalidValueError("nothing to sweep")
    out = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if not out["point"].is_monotonic_increasing:
        out = out.sort_values("point", kind="stable", ignore_index=True)
    for col in ("method", "scope", "name"):
        first = [str(v) for v in pd.unique(out[col])]
        if isinstance(out[col].dtype, pd.CategoricalDtype):
            out[col] = out[col].cat.set_categories(first)
        else:
            out[col] = pd.Categorical(out[col], categories=first)
    return out


def _run_task(spec, route, chunk, points):
    if route == "batch":
        lo, hi = int(chunk[0]), int(chunk[-1]) + 1
        return _batch_task(spec, points.columns(lo, hi), lo)
    return _solve_chunk(spec, chunk.tolist(), [points[i] for i in chunk])


# ---------------------------------------------------------------------------
# command line: qmodels sweep MODEL --vary PATH=SPEC ... --method M --out FILE
# ---------------------------------------------------------------------------

_INTEGER_FIELDS = {"population", "servers", "capacity", "tokens"}


def parse_values(path: str, text: str) -> list:
    """The values of ``--vary PATH=TEXT``.

    ``START:STOP:NUM`` is NUM evenly spaced values from START to STOP
    (inclusive, :func:`numpy.linspace`); ``a,b,c`` lists values.  For integer
    parameters (``population``, ``servers``, ``capacity``, ``tokens``) the
    evenly spaced values are rounded to the nearest integers and repeats
    dropped (``tx.population=1:200:50``); listed values must be integers.

    >>> parse_values("disk.service", "0.01:0.03:3")
    [0.01, 0.02, 0.03]
    >>> parse_values("tx.population", "1:10:4")
    [1, 4, 7, 10]
    """
    integer = path.split(".")[-1] in _INTEGER_FIELDS

    def num(s):
        try:
            v = float(s)
        except ValueError:
            raise InvalidValueError(f"--vary {path}={text}: {s!r} is not a number") from None
        if not math.isfinite(v):
            raise InvalidValueError(f"--vary {path}={text}: {s!r} is not finite")
        return v

    if ":" in text:
        bits = text.split(":")
        if len(bits) != 3:
            raise InvalidValueError(f"--vary {path}={text}: use START:STOP:NUM or a,b,c")
        a, b = num(bits[0]), num(bits[1])
        try:
            n = int(bits[2])
        except ValueError:
            raise InvalidValueError(
                f"--vary {path}={text}: NUM must be an integer, got {bits[2]!r}") from None
        if n < 1:
            raise InvalidValueError(f"--vary {path}={text}: NUM must be >= 1, got {n}")
        vals = np.linspace(a, b, n).tolist()
        if integer:
            out: list = []
            for v in vals:
                iv = int(round(v))
                if iv not in out:
                    out.append(iv)
            return out
        return [float(f"{v:.15g}") for v in vals]
    vals = [num(s) for s in text.split(",") if s.strip()]
    if not vals:
        raise InvalidValueError(f"--vary {path}={text}: no values")
    if integer:
        if any(not v.is_integer() for v in vals):
            raise InvalidValueError(f"--vary {path}={text}: {path} takes integers")
        return [int(v) for v in vals]
    return vals


def cmd_sweep(args) -> int:
    from .errors import ModelFileError
    from .io import modelfile

    try:
        vary: dict = {}
        for item in args.vary:
            if "=" not in item:
                raise InvalidValueError(f"--vary {item}: use PATH=START:STOP:NUM or PATH=a,b,c")
            path, text = item.split("=", 1)
            path = path.strip()
            if path in vary:
                raise InvalidValueError(f"--vary {path} given twice")
            vary[path] = parse_values(path, text.strip())
        net = modelfile.load(args.model)
        client = None
        if args.scheduler:
            from distributed import Client

            client = Client(args.scheduler)
        try:
            frame = sweep(net, vary, method=args.method, seed=args.seed, client=client,
                          parallel=args.parallel, store=args.store,
                          progress=None if args.progress else False)
        finally:
            if client is not None:
                client.close()
    except (ModelFileError, QModelsError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.out:
        out = Path(args.out)
        if args.csv or out.suffix == ".csv":
            frame.to_csv(out, index=False)
        else:
            frame.to_parquet(out, index=False)
        print(f"{frame.attrs['points']} points x {len(frame) // frame.attrs['points']} rows "
              f"-> {out}")
    elif args.csv:
        frame.to_csv(sys.stdout, index=False)
    else:
        import pandas as pd

        with pd.option_context("display.max_rows", 40, "display.width", 120):
            print(frame.query("scope == 'class'").to_string(index=False))
    return 0


def register_cli(sub) -> None:
    """Add ``qmodels sweep`` to an argparse subparsers object."""
    p = sub.add_parser(
        "sweep", help="solve a model file over a grid of parameter values",
        description="Solve MODEL at every point of the product of the --vary axes and write a "
                    "tidy table (one row per point x class/station). Example: qmodels sweep "
                    "model.yaml --vary disk.service=0.005:0.05:10 --vary "
                    "tx.population=1:200:50 --method exact --out results.parquet")
    p.add_argument("model", metavar="MODEL", help="model file (.yaml, .yml, .json)")
    p.add_argument("--vary", action="append", required=True, metavar="PATH=VALUES",
                   help="parameter path and values: START:STOP:NUM (evenly spaced, inclusive) "
                        "or a,b,c; repeat for more axes")
    p.add_argument("--method", default="exact", help="any `qmodels methods` name")
    p.add_argument("--seed", type=int, default=None, help="random seed (method sim)")
    p.add_argument("--out", default=None, help="output file: .parquet (default) or .csv")
    p.add_argument("--csv", action="store_true", help="write CSV (to --out, or stdout)")
    p.add_argument("--store", default=None, help="resumable store directory (Parquet parts)")
    p.add_argument("--parallel", action="store_true", help="local dask cluster, one per core")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="dask scheduler address, e.g. tcp://host:8786")
    p.add_argument("--progress", action="store_true", help="show a progress bar")
    p.set_defaults(func=cmd_sweep)
