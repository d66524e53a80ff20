"""The per-call cost of a repeated solve of one network, against its kernel.

Run from the repository root (not part of the test suite)::

    python -m benchmarks.bench_overhead            # best of 2000 calls each
    python -m benchmarks.bench_overhead -n 10000
    python -m benchmarks.bench_overhead --sweep    # and a sweep's cost per point

A planner's sweep solves the same network again and again.  What the
network needs that does not change between calls (its lowered form, the
product-form checks, the station shapes, the notes) is built once and kept
with the network (``net.lowered``), so a repeated ``qm.mva(net)`` should cost
its compiled kernel plus a little: this prints both and the difference, for
exact single-class MVA on K = 50 single-server queues at N = 1000 (the
performance issue's case; its goal is an overhead of at most 10 us).

A sweep over one parameter builds a new network per point, which is
validated, lowered and checked afresh; ``--sweep`` prints what each point
of a one-by-one ``qm.sweep`` costs and where it goes, on two small closed
networks (K = 10 and K = 50 stations, N = 20) with Schweitzer's method (no
batched route): the new network (``whatif.apply``), its lowering, the
solve of a fresh network against a repeated solve of one network (the
difference is the per-network checks and tables), and the whole sweep per
point (with the table's rows; the best of several sweeps of 100 points).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def _paired(full, kernel, n: int) -> tuple[float, float, float]:
    """Best full call, best kernel call and the median of the paired
    differences, the two timed alternately so that both see the same load
    (on a shared machine a best-of of each alone can catch the kernel in a
    quiet moment and the full call in a busy one)."""
    tf, tk = [], []
    clock = time.perf_counter
    for _ in range(n):
        t0 = clock()
        kernel()
        t1 = clock()
        full()
        t2 = clock()
        tk.append(t1 - t0)
        tf.append(t2 - t1)
    diff = sorted(f - k for f, k in zip(tf, tk))
    return min(tf), min(tk), diff[len(diff) // 2]


def _best_of(fn, n: int) -> float:
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def sweep_costs(n: int = 300) -> None:
    """Per point of a one-by-one sweep over one service time (see the
    module docstring); best of ``n`` each, in microseconds."""
    import qmodels as qm
    from qmodels.whatif.paths import apply

    values = list(np.linspace(0.002, 0.02, 100))
    print(f"one-by-one sweep over one service time, schweitzer, N = 20 (best of {n}; us):")
    print(f"  {'K':>3s} {'new network':>12s} {'+ lowering':>11s} {'solve fresh':>12s} "
          f"{'solve again':>12s} {'sweep/point':>12s}")
    for K in (10, 50):
        stations = [qm.Delay("think", 1.0)] + [qm.Queue(f"s{k}", 0.002 + 0.0005 * k)
                                               for k in range(K - 1)]
        net = qm.Network(stations, [qm.Closed("tx", 20, visits={s.name: 1 for s in stations})])
        qm.solve(net, method="schweitzer")
        t_apply = _best_of(lambda net=net: apply(net, {"s1.service": 0.003}), n)
        t_lower = _best_of(lambda net=net: apply(net, {"s1.service": 0.003}).lowered, n)
        t_fresh = _best_of(lambda net=net: qm.solve(apply(net, {"s1.service": 0.003}),
                                            method="schweitzer"), n)
        t_again = _best_of(lambda net=net: qm.solve(net, method="schweitzer"), n)
        qm.sweep(net, {"s1.service": values[:4]}, method="schweitzer", progress=False)
        t_point = _best_of(lambda net=net: qm.sweep(net, {"s1.service": values},
                                                   method="schweitzer", progress=False),
                           max(3, n // 40)) / len(values)
        print(f"  {K:3d} {t_apply * 1e6:12.1f} {t_lower * 1e6:11.1f} {t_fresh * 1e6:12.1f} "
              f"{(t_again) * 1e6:12.1f} {t_point * 1e6:12.1f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=2000, help="timed calls (best of)")
    ap.add_argument("--sweep", action="store_true",
                    help="also the per-point cost of a one-by-one sweep and where it goes")
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
    total, kernel, med = _paired(lambda: qm.mva(net),
                                 lambda: _mva_fixed_kernel.run(N * K, D, is_delay, 1.0, N, False),
                                 args.n)
    print(f"exact MVA, K = {K}, N = {N}, prebuilt network (best of {args.n}, "
          "timed alternately):")
    print(f"  qm.mva(net)      {total * 1e6:8.1f} us")
    print(f"  kernel alone     {kernel * 1e6:8.1f} us")
    print(f"  overhead         {(total - kernel) * 1e6:8.1f} us   (goal <= 10 us; "
          f"median of the paired differences {med * 1e6:.1f} us)")
    if args.sweep:
        sweep_costs(max(20, min(args.n, 300)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
