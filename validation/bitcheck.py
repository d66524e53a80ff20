"""Bit-for-bit check of the analytic solvers across a refactor.

``python -m validation.bitcheck gen NETS``: draw about 750 networks from
``qmodels.testing`` strategies (closed, open, mixed, 1-3 classes,
multi-server and load-dependent stations; derandomised, so every run draws
the same ones) and pickle them to NETS.
``python -m validation.bitcheck run NETS OUT``: solve each with exact MVA
(with and without the curve), convolution, Schweitzer, Linearizer, bounds
and ``qm.solve``; pickle every figure (or the error's type and message).
``python -m validation.bitcheck cmp BEFORE AFTER``: the figures that are not
identical to the bit, per network and solver.

The lowering of a network (``qmodels.model.lowered``) was checked this way:
``gen`` and ``run`` on the commit before it, ``run`` after, ``cmp``: no
figure changed.
"""

from __future__ import annotations

import pickle
import sys
import warnings

import numpy as np

import qmodels as qm

warnings.simplefilter("ignore")


def gen():
    from hypothesis import HealthCheck, given, settings

    from qmodels import testing as qt
    nets = []
    strategies = [
        qt.networks(kind="closed", max_classes=1, max_population=12),
        qt.networks(kind="closed", min_classes=2, max_classes=3, max_population=5),
        qt.networks(kind="open", max_classes=2),
        qt.networks(kind="mixed", max_classes=3, max_population=5),
        qt.networks(kind="any", max_classes=2, max_population=8),
    ]
    for s in strategies:
        @settings(max_examples=150, derandomize=True, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(s)
        def collect(net):
            nets.append(net)
        collect()
    # hand-made: multi-server, ld, large N
    raid = qm.LoadDependent("b", 0.02, rate_multipliers=(1, 1.8, 2.4, 2.8))
    nets.append(qm.Network(
        [qm.Queue("a", 0.01, servers=4), raid, qm.Delay("z", 0.5),
         qm.LoadDependent("c", 0.03, rate_multipliers=(2, 2, 2))],
        [qm.Closed("tx", 500, visits={"a": 1, "b": 2, "c": 1, "z": 1}, think_time=1.0)]))
    nets.append(qm.Network(
        [qm.Queue("a", 0.01, servers=4), raid, qm.Queue("d", 0.005)],
        [qm.Closed("t1", 6, visits={"a": 1, "b": 2}, think_time=1.0),
         qm.Closed("t2", 4, visits={"a": 1, "d": 3})]))
    return nets

SOLVERS = {
    "exact": lambda n: qm.mva(n),
    "exact_curve": lambda n: qm.mva(n, curve=True),
    "convolution": lambda n: qm.convolution(n),
    "schweitzer": lambda n: qm.schweitzer(n),
    "linearizer": lambda n: qm.linearizer(n),
    "bounds": lambda n: qm.bounds(n),
    "solve": lambda n: qm.solve(n),
}

def record(r):
    out = {}
    for a in ("class_throughput", "class_response_time", "station_throughput",
              "station_queue_length", "station_response_time", "station_utilization"):
        if hasattr(r, a):
            out[a] = np.asarray(getattr(r, a), dtype=float).copy()
    if getattr(r, "notes", None) is not None:
        out["notes"] = tuple(r.notes)
    c = getattr(r, "curve", None)
    if c is not None:
        for a in ("throughput", "response_time", "queue_length", "utilization"):
            if hasattr(c, a):
                out["curve_" + a] = np.asarray(getattr(c, a), dtype=float).copy()
    if not out:
        out["repr"] = repr(r)
    return out

def run(nets):
    res = []
    for net in nets:
        row = {}
        for name, f in SOLVERS.items():
            try:
                row[name] = record(f(net))
            except Exception as e:
                row[name] = ("ERR", type(e).__name__, str(e))
        res.append(row)
    return res

if __name__ == "__main__":
    if sys.argv[1] == "gen":
        nets = gen()
        pickle.dump(nets, open(sys.argv[2], "wb"))
        print(len(nets))
    elif sys.argv[1] == "run":
        nets = pickle.load(open(sys.argv[2], "rb"))
        pickle.dump(run(nets), open(sys.argv[3], "wb"))
    else:
        a = pickle.load(open(sys.argv[2], "rb"))
        b = pickle.load(open(sys.argv[3], "rb"))
        bad = 0
        for i, (x, y) in enumerate(zip(a, b)):
            for k in x:
                xa, ya = x[k], y.get(k)
                if isinstance(xa, tuple) or isinstance(ya, tuple):
                    if xa != ya:
                        bad += 1
                        print(i, k, xa if isinstance(xa, tuple) else "ok", "->",
                              ya if isinstance(ya, tuple) else "ok")
                    continue
                for f in xa:
                    u, v = xa[f], ya.get(f)
                    if f == "notes" or isinstance(u, str):
                        same = u == v
                    else:
                        same = (v is not None and u.shape == v.shape
                                and np.array_equal(u, v, equal_nan=True))
                    if not same:
                        bad += 1
                        print(i, k, f, "differs")
        print("differences:", bad, "of", len(a), "networks")
