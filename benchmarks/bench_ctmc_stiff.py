"""The exact CTMC on stiff chains: closed networks with a clear bottleneck.

Run from the repository root (not part of the test suite)::

    python -m benchmarks.bench_ctmc_stiff                 # every case, one process each
    python -m benchmarks.bench_ctmc_stiff --case b80x4    # one case
    PYTHONPATH=/path/to/other/checkout python -m benchmarks.bench_ctmc_stiff
                                                          # the same on other code

The stiff cases: one closed class of N jobs over K FCFS queues visited once
each per cycle (random routing, visit ratio 1), the last queue ten times
slower than the others (service 0.01 (1 + 0.1 k) s at queue k, 0.1 s at
the bottleneck).  The jobs pile up at the bottleneck, so a state with n
jobs elsewhere has probability of order 10^-n: the stationary vector spans
80 orders of magnitude at N = 80.  C(N + K - 1, K - 1) states:

=========  ===  ==  =========
case       N    K   states
=========  ===  ==  =========
b80x4      80   4   91,881
b40x5      40   5   135,751
b30x6      30   6   324,632
m8x3       3 classes of 8 over 3 PS queues, class-dependent service, the
           last queue 30 x slower: 91,125
=========  ===  ==  =========

The same three with the bottleneck a hundred times slower (``s80x4``,
``s40x5``, ``s30x6``: service 1 s there), and their balanced counterparts
(``-bal``: no bottleneck, service 0.01 (1 + 0.1 k) s everywhere).  Each
is product form, so exact MVA checks the answer (``maxrel``: the largest
relative difference of the class throughputs and station queue lengths).
``p10x2-e4`` and ``p10x2-e8``: a closed network with a starved low
priority class (:func:`starved_priority`; 33,253 and 102,113 states),
not product form (``maxrel`` None; the residual max |pi Q| is the
check).  Each case runs in a fresh
process (its peak RSS is its own), after one small ``qm.ctmc`` that
compiles or loads the numba kernels (untimed); the time is the wall
time of ``qm.ctmc`` alone.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

CASES = {
    "b80x4": (80, 4, 10.0), "b40x5": (40, 5, 10.0), "b30x6": (30, 6, 10.0),
    "s80x4": (80, 4, 100.0), "s40x5": (40, 5, 100.0), "s30x6": (30, 6, 100.0),
    "b80x4-bal": (80, 4, 1.0), "b40x5-bal": (40, 5, 1.0), "b30x6-bal": (30, 6, 1.0),
    "m8x3": (8, 3, 30.0), "m8x3-bal": (8, 3, 1.0),
    "p10x2-e4": (10, 2, 4), "p10x2-e8": (10, 2, 8),
}


def bottleneck(N: int, K: int, ratio: float):
    """One class of N jobs over K FCFS queues, the last ``ratio`` times
    slower (see the module docstring)."""
    import qmodels as qm

    names = [f"q{k}" for k in range(K)]
    st = [qm.Queue(n, 0.01 * (ratio if k == K - 1 else 1 + 0.1 * k))
          for k, n in enumerate(names)]
    return qm.Network(st, [qm.Closed("c", N, visits=dict.fromkeys(names, 1))])


def multiclass(N: int, ratio: float):
    """Three classes of N jobs over three PS queues, class-dependent
    service, the last queue ``ratio`` times slower for every class."""
    import qmodels as qm

    names = ("q0", "q1", "q2")
    base = {"a": (0.01, 0.02, 0.03), "b": (0.03, 0.01, 0.02), "c": (0.02, 0.03, 0.01)}
    classes = [qm.Closed(c, N, visits=dict.fromkeys(names, 1),
                         service={n: s * (ratio if n == "q2" else 1.0)
                                  for n, s in zip(names, S, strict=True)})
               for c, S in base.items()]
    return qm.Network([qm.Queue(n, 0.01, discipline="ps") for n in names], classes)


def starved_priority(high: int, low: int):
    """Network 25 of ``priority-closed-starved-det``: a preemptive
    priority queue of deterministic service 0.46 s, an FCFS queue (0.137
    s) and a PS queue (0.289 s), ``high`` jobs of the high class (think
    0.11 s) that alone load the priority queue near saturation and
    ``low`` jobs of the starved low class.  Not product form: a 3-D
    lattice of counts and Erlang phases (the deterministic time as an
    Erlang-k, k = 4 or 8 by the case) where the Jacobi BiCGSTAB fails."""
    import qmodels as qm

    st = [qm.Queue("p", 0.46, discipline="prio-pr", distribution=qm.Deterministic()),
          qm.Queue("q", 0.137), qm.Queue("r", 0.289, discipline="ps")]
    every = {s.name: 1 for s in st}
    return qm.Network(st, [qm.Closed("hi", high, visits=every, priority=0, think_time=0.11),
                           qm.Closed("lo", low, visits=every, priority=1)])


def network(case: str):
    N, K, ratio = CASES[case]
    if case.startswith("p"):
        return starved_priority(N, K)
    return multiclass(N, ratio) if case.startswith("m") else bottleneck(N, K, ratio)


def run_case(case: str) -> dict:
    """qm.ctmc on one case in this process: states, seconds, peak MB,
    solver, residual, max rel. difference from exact MVA, or the error."""
    import warnings

    import numpy as np

    import qmodels as qm

    qm.ctmc(bottleneck(3, 3, 2.0))   # compile or load the kernels, untimed
    net = network(case)
    t = time.perf_counter()
    out: dict = {"case": case}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = qm.ctmc(net, max_states=10**7,
                          **({"max_phases": CASES[case][2]} if case.startswith("p") else {}))
        out["seconds"] = time.perf_counter() - t
        if case.startswith("p"):
            # not product form: no MVA to compare with; the residual says
            # how well the chain is solved
            out.update(states=res.info["states"], solver=res.info["linear_solver"],
                       residual=res.info["residual"], maxrel=None)
            out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            return out
        m = qm.mva(net)
        x, y = np.asarray(res.class_throughput), np.asarray(m.class_throughput)
        q, r = np.asarray(res.station_queue_length), np.asarray(m.station_queue_length)
        out.update(states=res.info["states"], solver=res.info["linear_solver"],
                   residual=res.info["residual"],
                   maxrel=max(float(np.max(np.abs(x - y) / y)),
                              float(np.max(np.abs(q - r) / np.maximum(r, 1e-300)))))
    except Exception as e:   # noqa: BLE001 - the benchmark reports any failure
        out["seconds"] = time.perf_counter() - t
        out["error"] = f"{type(e).__name__}: {str(e)[:200]}"
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=sorted(CASES), action="append",
                    help="run only this case (repeatable)")
    ap.add_argument("--here", action="store_true",
                    help="run in this process (default: a fresh process per case)")
    args = ap.parse_args(argv)
    cases = args.case or list(CASES)
    for case in cases:
        if args.here:
            row = run_case(case)
        else:
            proc = subprocess.run(
                [sys.executable, "-m", "benchmarks.bench_ctmc_stiff", "--here", "--case", case],
                capture_output=True, text=True, check=False)
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
            row = json.loads(lines[-1]) if lines else {
                "case": case, "error": f"exit {proc.returncode}: {proc.stderr[-300:]}"}
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
