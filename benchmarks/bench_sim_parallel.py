"""How ``qm.simulate(workers=k)`` scales: one process, two, every core.

Run from the repository root (not part of the test suite)::

    python -m benchmarks.bench_sim_parallel            # 16 replications of ~1 s each
    python -m benchmarks.bench_sim_parallel --quick    # 8 replications of ~0.25 s

``python -m benchmarks`` prints the same table (case ``sim-parallel-scaling``;
``--quick`` there too).

The model is a closed network of three stations (one deterministic) and an
open class; each replication is a fixed horizon, so the work per
replication is the same at every ``k``.  For each ``k`` the pool is started
once (a warm-up call, timed apart: spawned processes pay the interpreter's
start, qmodels' import and numba's cache load) and the run is then timed
``--rounds`` times, the rounds of the different ``k`` interleaved so that a
change of machine load falls on all of them.  Printed: the median wall
time, its spread (min-max), the speed-up over one process and the
efficiency (speed-up / k).  Every run's table is checked equal, bit for bit,
to the one-process run's (the seed scheme's promise).

The machine's cores and load are printed with the numbers; on a shared
machine they are noisy.
"""

from __future__ import annotations

import os

from benchmarks._util import one_compiled_thread

one_compiled_thread()

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import pandas as pd  # noqa: E402

import qmodels as qm  # noqa: E402


def model() -> qm.Network:
    return qm.Network(
        [qm.Queue("cpu", 0.01, servers=2), qm.Queue("dma", 0.004, distribution=qm.Deterministic()),
         qm.Queue("disk", 0.02), qm.Delay("users", 0.5)],
        [qm.Closed("tx", 12, visits={"cpu": 1, "dma": 1, "disk": 0.7, "users": 1}),
         qm.Open("bg", 5.0, visits={"cpu": 1, "disk": 0.2})])


def run(k: int, reps: int, horizon: float) -> tuple[float, pd.DataFrame]:
    t = time.perf_counter()
    with warnings.catch_warnings():
        # the classes are given by visit ratios on purpose: routed at random
        warnings.simplefilter("ignore", qm.RoutingWarning)
        r = qm.simulate(model(), seed=2026, horizon=horizon, replications=reps,
                        progress=False, workers=k)
    return time.perf_counter() - t, r.to_frame()


def report(quick: bool = False, rounds: int = 3) -> list[str]:
    """The scaling table's lines (module docstring); raises AssertionError
    if a run's table differs from the one-process run's."""
    reps, horizon = (8, 2500.0) if quick else (16, 10000.0)
    cores = os.cpu_count() or 1
    ks = sorted({1, 2, cores})
    lines = [f"machine: {cores} cores, load {os.getloadavg()[0]:.2f}; {reps} replications, "
             f"horizon {horizon:g} each; median of {rounds} interleaved rounds"]
    start = {}
    for k in ks:
        start[k] = run(k, 2, 10.0)[0]
    times = {k: [] for k in ks}
    ref = None
    for _ in range(rounds):
        for k in ks:
            t, frame = run(k, reps, horizon)
            times[k].append(t)
            if ref is None:
                ref = frame
            pd.testing.assert_frame_equal(frame, ref, check_exact=True)
    base = statistics.median(times[1])
    lines.append(f"{'workers':>8} {'median s':>9} {'min-max s':>14} {'speed-up':>9} "
                 f"{'efficiency':>10} {'pool start s':>12}")
    for k in ks:
        med = statistics.median(times[k])
        lines.append(f"{k:>8} {med:>9.3f} {min(times[k]):>6.3f}-{max(times[k]):<7.3f} "
                     f"{base / med:>9.2f} {base / med / k:>10.2f} {start[k]:>12.2f}")
    lines.append("tables equal bit for bit across workers: ok")
    lines.append(f"load after: {os.getloadavg()[0]:.2f}")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    print("\n".join(report(args.quick, args.rounds)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
