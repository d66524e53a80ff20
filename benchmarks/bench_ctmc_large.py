"""The exact CTMC at about a million states: time, memory and accuracy.

Run from the repository root (not part of the test suite)::

    python -m benchmarks.bench_ctmc_large                  # every case, one process each
    python -m benchmarks.bench_ctmc_large --case exp7x26   # one case (repeatable)
    python -m benchmarks.bench_ctmc_large --profile --case exp7x26
                                                           # + cProfile's top functions

Each case runs in a fresh process with ``OPENBLAS_NUM_THREADS=1`` (so one
core), after one small ``qm.ctmc`` that compiles or loads the numba
kernels (untimed).  A row gives the states, the nonzero off-diagonal
rates, the CPU seconds of the build (``build_s``: the breadth-first
enumeration of states and rates), of the stationary solve (``solve_s``:
from the rate triplets to pi, the generator's assembly included), of the
whole ``qm.ctmc`` call (``total_s``; ``cpu_s`` the process's CPU seconds
for it, the figure that a shared machine disturbs least), the process's peak RSS, states per
second of the whole call, the solver used, and, where the network is
product form, ``maxrel``: the largest relative difference of the class
throughputs and the station queue lengths from exact MVA (an independent
method; open classes: the M/M/1 closed forms MVA evaluates).

The cases (product form unless said):

=============  ==========================================================
exp7x26        one class of 26 jobs over 7 FCFS queues, service
               0.01 (1 + 0.1 k): C(32, 6) = 906,192 states
stiff6x40      one class of 40 jobs over 6 FCFS queues, the last 100 x
               slower (1 s against 0.01 (1 + 0.1 k)): C(45, 5) =
               1,221,759 states; the stationary vector spans ~80 orders
mc3x12         three classes of 12 jobs over 3 PS queues, class-dependent
               service: 91^3 = 753,571 states
open4x68       one open class (Poisson, 50 per s) over 4 FCFS queues
               (utilisations 0.5 to 0.35), ``open_limit=68``:
               C(72, 4) = 1,028,790 states; truncation mass < 1e-15
ph5x26         one class of 26 jobs over 5 FCFS queues, Erlang-2 service
               at two, H2 (scv 4) at two, exponential at one: not product
               form (no reference; the residual is the check)
block5x40      one class of 40 jobs cycling through 5 FCFS queues of
               capacity 12 (blocking after service): not product form,
               built by the Python builder (no reference)
=============  ==========================================================
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

CASES = ("exp7x26", "stiff6x40", "mc3x12", "open4x68", "ph5x26", "block5x40")


def closed_fcfs(N: int, K: int, ratio: float = 1.0, shapes=None):
    """One class of N jobs over K FCFS queues (visit ratio 1, random
    routing), service 0.01 (1 + 0.1 k), the last queue's ``ratio`` x
    0.01 when ratio != 1; ``shapes[k]`` a service distribution."""
    import qmodels as qm

    names = [f"q{k}" for k in range(K)]
    st = []
    for k, n in enumerate(names):
        s = 0.01 * (ratio if (ratio != 1.0 and k == K - 1) else 1 + 0.1 * k)
        kw = {"distribution": shapes[k]} if shapes and shapes[k] is not None else {}
        st.append(qm.Queue(n, s, **kw))
    return qm.Network(st, [qm.Closed("c", N, visits=dict.fromkeys(names, 1))])


def multiclass(N: int):
    """Three classes of N jobs over three PS queues, class-dependent
    service."""
    import qmodels as qm

    names = ("q0", "q1", "q2")
    base = {"a": (0.01, 0.02, 0.03), "b": (0.03, 0.01, 0.02), "c": (0.02, 0.03, 0.01)}
    classes = [qm.Closed(c, N, visits=dict.fromkeys(names, 1),
                         service=dict(zip(names, S, strict=True)))
               for c, S in base.items()]
    return qm.Network([qm.Queue(n, 0.01, discipline="ps") for n in names], classes)


def open_tandem(K: int = 4):
    """One open class, 50 jobs/s, over K FCFS queues at utilisations 0.5,
    0.45, 0.4, 0.35 (random routing, visit ratio 1)."""
    import qmodels as qm

    names = [f"q{k}" for k in range(K)]
    st = [qm.Queue(n, (0.5 - 0.05 * k) / 50.0) for k, n in enumerate(names)]
    return qm.Network(st, [qm.Open("o", 50.0, visits=dict.fromkeys(names, 1))])


def blocking_ring(N: int, K: int, cap: int):
    """One class of N jobs cycling q0 -> q1 -> ... -> q0 through K FCFS
    queues of capacity ``cap`` (blocking after service)."""
    import qmodels as qm

    names = [f"q{k}" for k in range(K)]
    st = [qm.Queue(n, 0.01 * (1 + 0.1 * k), capacity=cap) for k, n in enumerate(names)]
    routing = {names[k]: {names[(k + 1) % K]: 1.0} for k in range(K)}
    return qm.Network(st, [qm.Closed("c", N, routing=routing)])


def network(case: str):
    """(network, keyword arguments of qm.ctmc, product form?)."""
    import qmodels as qm

    if case == "exp7x26":
        return closed_fcfs(26, 7), {}, True
    if case == "stiff6x40":
        return closed_fcfs(40, 6, ratio=100.0), {}, True
    if case == "mc3x12":
        return multiclass(12), {}, True
    if case == "open4x68":
        return open_tandem(4), {"open_limit": 68}, True
    if case == "ph5x26":
        shapes = [qm.Erlang(2), qm.HyperExponential(4.0), None, qm.Erlang(2),
                  qm.HyperExponential(4.0)]
        return closed_fcfs(26, 5, shapes=shapes), {}, False
    if case == "block5x40":
        return blocking_ring(40, 5, 12), {}, False
    raise KeyError(case)


def run_case(case: str, profile: bool = False) -> dict:
    """qm.ctmc on one case in this process (see the module docstring)."""
    import importlib
    import warnings

    import numpy as np

    import qmodels as qm
    from qmodels.analytic import _ctmc_chain, _ctmc_fast

    mod = importlib.import_module("qmodels.analytic.ctmc")
    # compile or load the numba kernels, untimed (a chain past lazyjit's
    # threshold, so that the machine code is used)
    qm.ctmc(closed_fcfs(30, 4))
    net, kw, product = network(case)
    phase: dict = {"build_s": 0.0, "solve_s": 0.0, "nnz": 0}

    def timed(fn, key):
        def wrapper(*a, **k):
            t0 = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                phase[key] += time.process_time() - t0
        return wrapper

    build, pybuild, stationary = _ctmc_fast.build, _ctmc_chain._Chain.build, mod._stationary
    _ctmc_fast.build = timed(build, "build_s")
    _ctmc_chain._Chain.build = timed(pybuild, "build_s")

    def counted(n, rows, *a, **k):
        phase["nnz"] = len(rows)
        return stationary(n, rows, *a, **k)

    mod._stationary = timed(counted, "solve_s")
    out: dict = {"case": case}
    prof = None
    if profile:
        import cProfile
        prof = cProfile.Profile()
    t = time.perf_counter()
    c0 = time.process_time()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if prof is not None:
                prof.enable()
            res = qm.ctmc(net, max_states=5 * 10**6, **kw)
            if prof is not None:
                prof.disable()
        total = time.perf_counter() - t
        cpu = time.process_time() - c0
        n = res.info["states"]
        out.update(states=n, nnz=phase["nnz"], build_s=round(phase["build_s"], 3),
                   solve_s=round(phase["solve_s"], 3), total_s=round(total, 3),
                   cpu_s=round(cpu, 3),
                   states_per_s=round(n / total), solver=res.info["linear_solver"],
                   build=res.info["build"], residual=res.info["residual"])
        if product:
            m = qm.mva(net)
            x, y = np.asarray(res.class_throughput), np.asarray(m.class_throughput)
            q, r = np.asarray(res.station_queue_length), np.asarray(m.station_queue_length)
            out["maxrel"] = max(float(np.max(np.abs(x - y) / y)),
                                float(np.max(np.abs(q - r) / np.maximum(r, 1e-300))))
    except Exception as e:   # noqa: BLE001 - the benchmark reports any failure
        out["total_s"] = round(time.perf_counter() - t, 3)
        out["error"] = f"{type(e).__name__}: {str(e)[:300]}"
    out["peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    if prof is not None:
        import io
        import pstats
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(30)
        print(s.getvalue(), file=sys.stderr)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=CASES, action="append",
                    help="run only this case (repeatable)")
    ap.add_argument("--here", action="store_true",
                    help="run in this process (default: a fresh process per case)")
    ap.add_argument("--profile", action="store_true",
                    help="print cProfile's 30 costliest calls (cumulative) to stderr")
    args = ap.parse_args(argv)
    cases = args.case or list(CASES)
    for case in cases:
        if args.here:
            row = run_case(case, args.profile)
        else:
            env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                       MKL_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
            cmd = [sys.executable, "-m", "benchmarks.bench_ctmc_large", "--here",
                   "--case", case] + (["--profile"] if args.profile else [])
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
            if args.profile:
                print(proc.stderr, file=sys.stderr)
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
            row = json.loads(lines[-1]) if lines else {
                "case": case, "error": f"exit {proc.returncode}: {proc.stderr[-300:]}"}
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
