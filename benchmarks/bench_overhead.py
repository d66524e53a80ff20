"""The per-call cost of a repeated solve of one network, against its kernel.

Run from the repository root (not part of the test suite)::

    python -m benchmarks.bench_overhead            # best of 200 calls each
    python -m benchmarks.bench_overhead -n 1000

A planner's sweep solves the same network again and again.  What the
network needs that does not change between calls (its lowered form, the
product-form checks, the station shapes, the notes) is built once and kept
with the network (``net.lowered``), so a repeated ``qm.mva(net)`` should cost
its compiled kernel plus a little: this prints both and the difference, for
exact single-class MVA on K = 50 single-server queues at N = 1000 (the
performance issue's case; its goal is an overhead of at most 10 us).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def _best(fn, n: int) -> float:
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=200, help="timed calls (best of)")
    args = ap.parse_args(argv)

    import qmodels as qm
    from qmodels.analytic.mva import _mva_fixed_kernel

    rng = np.random.default_rng(1)
    K, N = 50, 1000
    stations = [qm.Queue(f"s{k}", float(rng.uniform(0.001, 0.01))) for k in range(K)]
    net = qm.Network(stations, [qm.Closed("tx", N, think_time=1.0,
                                          visits={s.name: 1.0 for s in stations})])
    D = np.asarray(net.demands[0], dtype=float)
    is_delay = np.zeros(K, dtype=bool)
    qm.mva(net)                                       # compile or load, build the tables
    _mva_fixed_kernel.run(N * K, D, is_delay, 1.0, N, False)
    total = _best(lambda: qm.mva(net), args.n)
    kernel = _best(lambda: _mva_fixed_kernel.run(N * K, D, is_delay, 1.0, N, False), args.n)
    print(f"exact MVA, K = {K}, N = {N}, prebuilt network (best of {args.n}):")
    print(f"  qm.mva(net)      {total * 1e6:8.1f} us")
    print(f"  kernel alone     {kernel * 1e6:8.1f} us")
    print(f"  overhead         {(total - kernel) * 1e6:8.1f} us   (goal <= 10 us)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
