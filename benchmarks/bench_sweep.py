"""How fast ``qm.sweep`` goes, on one core and with two dask workers.

Run from the repository root (not part of the test suite)::

    python -m benchmarks.bench_sweep            # the full measurement
    python -m benchmarks.bench_sweep --quick    # 10^5 analytic, 40 simulated points

Analytic: 10^6 points of a single-class closed network with K = 20
stations and N = 200 (six stations' service times, ten values each), exact
MVA by the batched route (:func:`qmodels.batch.mva_batch`); the table holds
the class rows (``stations=False``) so that memory stays small, and a
10^5-point run with every station row shows the cost of the full table.
One core: the sweep in this process with numba limited to one thread.
Two workers: a dask ``LocalCluster`` of two single-threaded processes.

One by one (``--one-by-one``): what a point of a sweep costs on the
route that solves point by point (every method but the batched exact
one), against the same sweep over the unchanged network: the difference
is what a point pays for being a new network (building it, lowering it,
the tables of its numbers; the tables of its structure come from the base
network's plan, ``Lowered.family``).

Simulated: 200 points of a three-station closed network, on a
LocalCluster of one worker and of two; the speed-up is the ratio of the
wall times.  Twice: each point a default ``qm.simulate`` (its own horizon,
10 replications, about 2 million events, 0.1 s), what a planner runs; then
each point a short run (2 replications of 400 s, 65,000 events, 10 ms),
where the per-point overhead and dask's scheduling dominate.  The tables are checked equal bit
for bit between the runs (the point of the seed scheme).

The machine the numbers come from is printed with them (cores, load); on
a shared machine they are noisy.
"""

from __future__ import annotations

import os

from benchmarks._util import one_compiled_thread

one_compiled_thread()

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import qmodels as qm  # noqa: E402


def analytic_model(K: int = 20, N: int = 200) -> qm.Network:
    stations = [qm.Delay("think", 1.0)] + [
        qm.Queue(f"s{k}", 0.002 + 0.0005 * k) for k in range(K - 1)]
    visits = {s.name: 1 for s in stations}
    return qm.Network(stations, [qm.Closed("tx", N, visits=visits)])


def analytic_grid(points: int) -> dict:
    axes = int(round(np.log10(points)))
    return {f"s{k}.service": list(np.linspace(0.002, 0.02, 10)) for k in range(axes)}


def sim_model() -> qm.Network:
    return qm.Network([qm.Delay("users", 0.5), qm.Queue("cpu", 0.01, servers=2),
                       qm.Queue("disk", 0.02)],
                      [qm.Closed("tx", 8, visits={"users": 1, "cpu": 1, "disk": 0.7})])


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


#: CPU seconds of each worker in the last ``timed`` call with a client
WORKER_CPU: list = []


def timed(fn, client=None):
    """Wall seconds, CPU seconds (this process, plus the workers' when a
    client is given) and the value of ``fn()``; the workers' own CPU
    seconds go to ``WORKER_CPU``."""
    w0 = client.run(_cpu) if client is not None else {}
    c0 = _cpu()
    t0 = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - t0
    cpu = _cpu() - c0
    if client is not None:
        w1 = client.run(_cpu)
        WORKER_CPU[:] = sorted(w1[w] - w0[w] for w in w1)
        cpu += sum(WORKER_CPU)
    return wall, cpu, out


def split(cpu1: float) -> str:
    """How evenly the last two-worker run split the work: each worker's CPU
    seconds, and the speed-up two idle cores would give (the one-worker CPU
    over the busier worker's), which other users' load cannot distort."""
    busy = max(WORKER_CPU)
    each = " + ".join(f"{c:.2f}" for c in WORKER_CPU)
    return f"workers' CPU {each} s: speed-up on two idle cores {cpu1 / busy:.2f}"


def cluster(n):
    from distributed import Client, LocalCluster

    c = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                     dashboard_address=None)
    return c, Client(c)


def one_by_one(methods=("schweitzer", "mva-residual", "priority", "qna", "bounds"),
               sizes=(10, 50), points: int = 100, rounds: int = 5) -> None:
    """Per point of a one-by-one sweep (no batched route) over one service
    time, against the same sweep whose every point is the unchanged base
    network (the floor: the same solves and table rows, with every table of
    the network kept), in CPU microseconds (this process; the best of
    ``rounds`` sweeps of ``points`` points), with the wall time beside it."""
    print(f"one-by-one sweep over one service time, {points} points, per point "
          f"(CPU us, best of {rounds}; wall us in brackets); load {os.getloadavg()}")
    print(f"  {'method':13s} {'K':>3s} {'sweep/point':>18s} {'solve again':>18s} "
          f"{'difference':>11s}")
    print(f"  {'':13s} {'':>3s} {'':>18s} {'(same network)':>18s}")
    for method in methods:
        for K in sizes:
            net, vary, opts = _one_by_one_model(method, K, points)
            qm.sweep(net, {k: v[:3] for k, v in vary.items()}, method=method, options=opts,
                     progress=False)
            best_c = best_w = again_c = again_w = float("inf")
            for _ in range(rounds):
                w0, c0 = time.perf_counter(), time.process_time()
                qm.sweep(net, vary, method=method, options=opts, progress=False)
                best_c = min(best_c, (time.process_time() - c0) / points)
                best_w = min(best_w, (time.perf_counter() - w0) / points)
                w0, c0 = time.perf_counter(), time.process_time()
                qm.sweep(lambda point, net=net: net, {"point": list(range(points))},
                         method=method, options=opts, progress=False)
                again_c = min(again_c, (time.process_time() - c0) / points)
                again_w = min(again_w, (time.perf_counter() - w0) / points)
            print(f"  {method:13s} {K:3d} {best_c * 1e6:8.0f} ({best_w * 1e6:7.0f}) "
                  f"{again_c * 1e6:8.0f} ({again_w * 1e6:7.0f}) {(best_c - again_c) * 1e6:11.0f}")


def _one_by_one_model(method: str, K: int, points: int):
    """(network, vary, options) of the one-by-one sweep of ``method``."""
    values = list(np.linspace(0.002, 0.02, points))
    if method == "qna":
        st = [qm.Queue(f"s{k}", 0.002 + 0.0005 * k, distribution=qm.Erlang(2))
              for k in range(K)]
        route = [s.name for s in st]
        net = qm.Network(st, [qm.Open("tx", 20.0, route=route,
                                      interarrival=qm.HyperExponential(2.0))])
        return net, {"s1.service": values}, {}
    if method == "priority":
        st = [qm.Delay("think", 1.0), qm.Queue("s1", 0.01, discipline="prio")] + [
            qm.Queue(f"s{k}", 0.002 + 0.0005 * k) for k in range(2, K)]
        v = {s.name: 1 for s in st}
        net = qm.Network(st, [qm.Closed("hi", 6, visits=v, priority=0),
                              qm.Closed("lo", 4, visits=v, priority=1)])
        return net, {"s1.service": values}, {}
    st = [qm.Delay("think", 1.0)] + [
        qm.Queue(f"s{k}", 0.002 + 0.0005 * k,
                 distribution=qm.Erlang(2) if method == "mva-residual" else None)
        for k in range(1, K)]
    net = qm.Network(st, [qm.Closed("tx", 20, visits={s.name: 1 for s in st})])
    return net, {"s1.service": values}, {}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_sweep")
    ap.add_argument("--quick", action="store_true", help="10^5 analytic, 40 simulated points")
    ap.add_argument("--one-by-one", action="store_true",
                    help="only the per-point cost of one-by-one sweeps against a repeated solve")
    args = ap.parse_args(argv)
    if args.one_by_one:
        one_by_one()
        return 0
    P = 10**5 if args.quick else 10**6
    S = 40 if args.quick else 200
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()}, "
          f"NUMBA_NUM_THREADS={os.environ.get('NUMBA_NUM_THREADS', 'unset')}")

    net = analytic_model()
    g = analytic_grid(P)
    # warm-up: numba compiles (or loads its cache) once
    qm.sweep(net, analytic_grid(1000), stations=False, progress=False)
    t1, c1, a1 = timed(lambda: qm.sweep(net, g, stations=False, progress=False))
    print(f"analytic, {P:,} points, K=20, N=200, one core:   {t1:7.2f} s wall "
          f"{c1:7.2f} s CPU  {P / t1:10,.0f} points/s  (route {a1.attrs['route']})")
    g5 = analytic_grid(10**5)
    t5, c5, full = timed(lambda: qm.sweep(net, g5, progress=False))
    print(f"analytic, {10**5:,} points, every station row, one core: {t5:7.2f} s wall "
          f"{c5:7.2f} s CPU  {10**5 / t5:10,.0f} points/s  ({len(full):,} rows)")
    del full

    c, client = cluster(2)
    try:
        qm.sweep(net, analytic_grid(1000), stations=False, client=client, progress=False)
        t2, c2, a2 = timed(lambda: qm.sweep(net, g, stations=False, client=client,
                                            progress=False), client)
    finally:
        client.close()
        c.close()
    same = a1.equals(a2)
    print(f"analytic, {P:,} points, two workers:          {t2:7.2f} s wall "
          f"{c2:7.2f} s CPU  {P / t2:10,.0f} points/s  speed-up {t1 / t2:.2f}  "
          f"(equal bit for bit: {same})")
    print(f"    {split(c1)}")
    del a1, a2

    snet = sim_model()
    svary = {"tx.population": list(range(1, S // 10 + 1)),
             "disk.service": list(np.linspace(0.01, 0.04, 10))}
    qm.simulate(snet, seed=0, horizon=50.0, replications=2)  # compile in this process
    # the planner's call: qm.simulate's defaults (its own horizon, 10
    # replications; about 2 million events a point); then tiny points (two
    # replications of 400 s) where per-point overhead dominates
    for label, opts in (("default qm.simulate", {}),
                        ("short runs", {"horizon": 400.0, "replications": 2})):
        times, cpus, frames = {}, {}, {}
        for n in (1, 2):
            c, client = cluster(n)
            try:
                qm.sweep(snet, {"tx.population": [1, 2]}, method="sim", seed=1, options=opts,
                         client=client, chunksize=1, progress=False)   # workers compile
                times[n], cpus[n], frames[n] = timed(lambda cl=client, o=opts: qm.sweep(
                    snet, svary, method="sim", seed=2024, options=o, client=cl,
                    progress=False), client)
                if n == 1:
                    cpu_one = WORKER_CPU[0]
            finally:
                client.close()
                c.close()
        ev = qm.simulate(snet, seed=3, progress=False, **opts).events
        same = frames[1].equals(frames[2])
        pd.testing.assert_frame_equal(frames[1], frames[2], check_exact=True)
        print(f"simulated, {S} points, {label} ({ev:,} events at N=8), 1 worker: "
              f"{times[1]:7.2f} s wall {cpus[1]:7.2f} s CPU  {S / times[1]:8.1f} points/s")
        print(f"simulated, {S} points, {label}, 2 workers:  {times[2]:7.2f} s wall "
              f"{cpus[2]:7.2f} s CPU  {S / times[2]:8.1f} points/s  speed-up "
              f"{times[1] / times[2]:.2f}  (equal bit for bit: {same})")
        print(f"    {split(cpu_one)}")
    print(f"load average after: {os.getloadavg()} (other users' processes share the cores: "
          "wall-clock speed-ups are only meaningful on an idle machine)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
