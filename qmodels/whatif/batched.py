"""The batched exact route: single-class product-form sweeps solved all at
once by :func:`qmodels.batch.mva_batch` (compiled, parallel over points),
whose rows equal the one-by-one :func:`qmodels.mva` bit for bit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import QModelsError, UnsupportedModelError
from ..model import Closed, Delay, Network, Queue
from .paths import apply
from .points import _Grid
from .spec import _solve_chunk, _Spec

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
    # an FCFS queue with another service shape is not product form: the
    # one-by-one route refuses it with exact MVA's message
    low = net.lowered      # the class's own shape where it gives one
    return all(isinstance(s, (Delay, Queue)) and s.capacity is None
               and (isinstance(s, Delay) or s.discipline in ("ps", "lcfs-pr")
                    or bool(low.exponential[k]))
               for k, s in enumerate(net.stations))


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
            try:
                net = apply(base, {name: v})
            except QModelsError:
                # a value the model rejects: the one-by-one route raises it
                # with its point, or records it (on_error="record")
                return False
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


#: work (population x stations, summed over rows) per call of the compiled
#: kernel: about 0.1 s, so that Ctrl-C (seen by Python between calls) stops a
#: batched sweep within a second
SLICE_WORK = 3e7


def _slices(N, K: int):
    """Row ranges [a, b) whose summed work (N + 1) K stays under SLICE_WORK
    (a single heavier row is a slice of its own)."""
    work = np.cumsum((np.asarray(N, dtype=float) + 1.0) * max(K, 1))
    out, a = [], 0
    while a < len(work):
        base = work[a - 1] if a else 0.0
        b = int(np.searchsorted(work, base + SLICE_WORK, side="right"))
        b = max(b, a + 1)
        out.append((a, b))
        a = b
    return out


def _batch_chunk(D, Z, N, c, delay):
    """Worker task of the batched route: X and Q of the rows, solved in
    slices of SLICE_WORK so that a KeyboardInterrupt is seen between them
    (each row is solved on its own: the slicing changes no number)."""
    from ..analytic.batch import mva_batch

    B = D.shape[0]
    Zs = np.broadcast_to(np.asarray(Z, dtype=float), (B,))
    cs = np.broadcast_to(c, D.shape)
    Xs, Qs = [], []
    for a, b in _slices(N, D.shape[1]):
        n = N[a:b]
        if len(n) and (n == n[0]).all():
            n = int(n[0])   # one population: mva_batch skips its per-row check
        r = mva_batch(D[a:b], Zs[a:b], n, servers=cs[a:b],
                      delay=np.broadcast_to(delay, D[a:b].shape))
        Xs.append(np.array(r.throughput))
        Qs.append(np.array(r.queue_length))
    if not Xs:
        return np.zeros(0), np.zeros((0, D.shape[1]))
    return np.concatenate(Xs), np.concatenate(Qs)


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
    N = plan["N"]
    delay = plan["delay"]
    D = V * S
    B, K = D.shape
    servers = np.where(delay, 1.0, c.astype(float))
    U = X[:, None] * D / servers
    with np.errstate(divide="ignore", invalid="ignore"):
        # sum_k Q_k / X, as mva_single (n/X - Z cancels when Z >> R)
        R = np.where(X > 0, Q.sum(axis=1) / np.where(X > 0, X, 1.0), D.sum(axis=1))
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
    data["exactness"] = categorical(["exact"] * E)   # the exact single-class recursion
    data["scope"] = categorical(["class"] + ["station"] * len(sel))
    data["name"] = categorical([plan["class"], *(plan["stations"][k] for k in sel)])
    data["X"] = interleave(X, Xk)
    data["R"] = interleave(R, Rtot)
    data["Q"] = interleave(Qc, Q)
    data["U"] = interleave(np.full(B, np.nan), U)
    data["D"] = interleave(D.sum(axis=1), D)
    data["bottleneck"] = interleave(np.zeros(B, bool), bottleneck)
    return pd.DataFrame(data)
