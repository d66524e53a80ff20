"""The exact CTMC of a closed fork-join network: the compiled build of the
chain of queue lengths against the Python builder it replaces for large
chains (:mod:`qmodels.analytic._ctmc_forkjoin`).

Run from the repository root (not part of the test suite)::

    python -m benchmarks.bench_ctmc_forkjoin              # N = 20, 30, 40: 53,361 to
                                                          #   741,321 states
    python -m benchmarks.bench_ctmc_forkjoin -N 20 30     # other populations
    python -m benchmarks.bench_ctmc_forkjoin --after-only -N 50   # the compiled path alone
    python -m benchmarks.bench_ctmc_forkjoin --branches 4 -N 20   # four branches (917,147 states)

The model: N jobs thinking 1 s, then a two-server CPU (S = 0.05 s), then a
fork-join of ``--branches`` single-server FCFS queues (S = 0.10, 0.13,
0.16, ... s), each branch ``--length`` queues long.  Every row runs in a
fresh process (so its memory is its own): ``before`` builds the chain with
the Python builder (``_Chain.build``), ``after`` with the numba kernel
(``_fj_bfs``, compiled or loaded from numba's cache first, untimed); both
then solve it the same way (:func:`qmodels.analytic.ctmc._stationary`).
Columns: states, nonzero rates (triplets), build and solve seconds (wall
and CPU: on a shared machine the wall time is the CPU time stretched by
the load), states per CPU second of the build, the whole ``qm.ctmc`` (count,
build, solve, figures, the result's checks) in wall seconds, the peak
resident memory of the process above what it held before the build
(``peak RSS +``), and the largest relative difference of the throughput,
queue lengths and utilisations of ``after`` from ``before``.

Measured 2026-11-28 on the shared 2-core machine, ``python -m
benchmarks.bench_ctmc_forkjoin -N 20 30 40``, ``-N 28``, ``-N 30`` and
``--after-only -N 20 28 40`` (the ``after`` rows once the triplets were
trimmed; load average 6 to 14, so the wall times, 2 to 7 times the CPU
times, compare only within a run: compare the CPU columns):

====  ======  =======  =========  =========  ============  =========  ==========  ==========
N     path    states   rates      build CPU  states/CPU s  solve CPU  qm.ctmc     peak RSS +
                                                                      wall
====  ======  =======  =========  =========  ============  =========  ==========  ==========
20    before   53,361    238,350    0.63 s        85,363     0.85 s      6.6 s       27 MB
20    after    53,361    238,350    0.04 s     1,416,100     0.74 s      2.5 s       24 MB
28    before  189,225    871,682    3.57 s        52,944     8.02 s     64.0 s       89 MB
28    after   189,225    871,682    0.16 s     1,170,646     5.16 s      7.3 s       88 MB
30    before  246,016  1,139,250    3.13 s        78,514     8.83 s     37.3 s      119 MB
30    after   246,016  1,139,250    0.19 s     1,281,584     7.58 s     19.8 s      109 MB
40    before  741,321  3,497,300   12.28 s        60,373    46.38 s    230.5 s      360 MB
40    after   741,321  3,497,300    0.75 s       988,667    37.81 s     80.1 s      344 MB
====  ======  =======  =========  =========  ============  =========  ==========  ==========

The two builds give the same chain (maxrel 0 in every paired run).  The
build went from 21-43 % of the CPU time of build + solve to 2-5 %: the
stationary solve (Jacobi-preconditioned BiCGSTAB,
:mod:`qmodels.analytic._ctmc_solve`) is now nearly all of it.  N = 28 is
the largest population of this model within ``qm.ctmc``'s default
``max_states`` (200,000); the others pass ``max_states``.  The peak
memory is the solve's (the sparse matrices and the Krylov vectors), not
the build's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def network(N: int, branches: int = 3, length: int = 1):
    """The benchmark model (see the module docstring)."""
    import qmodels as qm

    names = [[f"b{b}_{q}" for q in range(length)] for b in range(branches)]
    st = [qm.Queue("cpu", 0.05, servers=2), qm.ForkJoin("fj", names)]
    st += [qm.Queue(x, 0.10 + 0.03 * b) for b, br in enumerate(names) for x in br]
    return qm.Network(st, [qm.Closed("c", N, think_time=1.0, route=["cpu", "fj"])])


def _rss(field: str = "VmRSS") -> int:
    """The process's resident memory (``VmRSS``) or its peak (``VmHWM``), bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def _reset_peak() -> None:
    """Restart the peak (``VmHWM``) at the current resident memory (Linux)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def child(N: int, branches: int, length: int, compiled: bool) -> dict:
    """One row, in this process."""
    import numpy as np

    import qmodels as qm
    from qmodels.analytic import _ctmc_forkjoin as F
    from qmodels.analytic.ctmc import _stationary

    net = network(N, branches, length)
    ch = F._Chain(net)
    count = F.count_states(net)
    if compiled:  # compile or load the cache, untimed
        F.build(ch, 2, 10**6, 10, compiled=True)
    qm.ctmc(network(2, branches, length))  # every module imported before the baseline
    import gc

    gc.collect()
    base = _rss()
    _reset_peak()
    w, c = time.perf_counter(), time.process_time()
    states, rows, cols, vals, how = F.build(ch, N, 10**9, count, compiled=compiled)
    t_build = (time.perf_counter() - w, time.process_time() - c)
    n, nnz = len(states), len(rows)
    w, c = time.perf_counter(), time.process_time()
    used: list[str] = []
    _, resid = _stationary(n, rows, cols, vals, str, used)
    t_solve = (time.perf_counter() - w, time.process_time() - c)
    del states, rows, cols, vals
    gc.collect()
    # the whole qm.ctmc, its build chosen as asked
    saved = F._fj_bfs.threshold
    F._fj_bfs.threshold = 0 if compiled else 10**18
    try:
        w = time.perf_counter()
        res = qm.ctmc(net, max_states=10**9)
        t_all = time.perf_counter() - w
    finally:
        F._fj_bfs.threshold = saved
    assert res.info["build"] == f"{how}-forkjoin" and res.info["states"] == n
    peak = max(_rss("VmHWM") - base, 0)
    figs = np.concatenate([np.ravel(res.class_throughput), np.ravel(res.station_queue_length),
                           np.ravel(res.station_utilization)])
    return {"how": how, "states": n, "count": count, "nnz": nnz, "build": t_build,
            "solve": t_solve, "solver": used[0], "resid": resid, "all": t_all, "peak": peak,
            "figs": figs.tolist()}


def run(N: int, branches: int, length: int, compiled: bool) -> dict:
    """One row in a fresh process."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p])
    out = subprocess.run([sys.executable, "-m", "benchmarks.bench_ctmc_forkjoin", "--child",
                          str(N), str(branches), str(length), "1" if compiled else "0"],
                         capture_output=True, text=True, env=env, cwd=root)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-N", type=int, nargs="+", default=[20, 30, 40], help="populations")
    p.add_argument("--branches", type=int, default=3)
    p.add_argument("--length", type=int, default=1, help="queues per branch")
    p.add_argument("--after-only", action="store_true", help="the compiled build alone")
    p.add_argument("--child", nargs=4, type=int, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        N, b, L, comp = a.child
        print(json.dumps(child(N, b, L, bool(comp))))
        return
    try:
        load = os.getloadavg()
    except OSError:
        load = (float("nan"),) * 3
    print(f"fork-join CTMC: {a.branches} branches of {a.length} queue(s), two-server CPU, "
          f"Z = 1 s; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
          f"on {os.cpu_count()} CPUs")
    head = (f"{'N':>4} {'path':>8} {'states':>10} {'rates':>11} {'build wall':>11} "
            f"{'build CPU':>10} {'states/CPU s':>13} {'solve wall':>11} {'solve CPU':>10} "
            f"{'solver':>9} {'qm.ctmc wall':>13} {'peak RSS +':>11} {'maxrel':>8}")
    print(head)
    for N in a.N:
        ref = None
        for compiled in ((True,) if a.after_only else (False, True)):
            r = run(N, a.branches, a.length, compiled)
            rel = ""
            if ref is None:
                ref = r
            else:
                x, y = ref["figs"], r["figs"]
                rel = f"{max(abs(u - v) / max(abs(u), 1e-300) for u, v in zip(x, y)):.1e}"
            name = "after" if compiled else "before"
            print(f"{N:>4} {name:>8} {r['states']:>10,} {r['nnz']:>11,} {r['build'][0]:>10.2f}s "
                  f"{r['build'][1]:>9.2f}s {r['states'] / max(r['build'][1], 1e-9):>13,.0f} "
                  f"{r['solve'][0]:>10.2f}s {r['solve'][1]:>9.2f}s {r['solver']:>9} "
                  f"{r['all']:>12.2f}s {r['peak'] / 2**20:>8.0f} MB {rel:>8}", flush=True)


if __name__ == "__main__":
    main()
