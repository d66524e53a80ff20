"""Simulator speed: events per second of qmodels, Ciw, SimPy and a C++ loop.

An event is an arrival at or a departure from a station.  Three models, the
same in every implementation:

``sim-mm1``
    open M/M/1, lambda = 1, S = 0.8 (rho = 0.8), 10^6 customers.
``sim-closed4``
    closed cycle of 4 exponential FCFS stations (S = 1.0, 1.1, 1.2, 1.3),
    N = 20 jobs, about 2 x 10^6 service completions.
``sim-tandem-block``
    open tandem, lambda = 1, S = 0.5, 0.7, 0.8; stations 2 and 3 hold at
    most 4 jobs each (a buffer of 4, service place included) with blocking
    after service; 10^6 customers.
``sim-prio2``
    open M/M/1 with non-preemptive priority, two classes of lambda = 0.4
    (class 0 first), S = 1 (rho = 0.8); 10^6 customers.  C++ fair only.
``sim-fj3``
    open fork-join, lambda = 1, three single-server FCFS branches of
    S = 0.5, 0.6, 0.7 (8 events per customer); 2.5 x 10^5 customers
    (2 x 10^6 events).  C++ fair only.

qmodels runs one long batch-means run (warm-up, statistics, intervals and
percentiles included in the time); Ciw and SimPy run shorter versions of
the same model inside a time budget (their rate does not depend on the run
length); two C++ loops (g++ -O2, built into ``benchmarks/_build``) are the
references: ``benchmarks/cpp/sim_fair.cpp`` keeps the statistics ours keeps
(time-averaged numbers present and in service per class and station,
completions and sojourn times, cycle times with their histogram, snapshots
for batch means and their analysis) and runs the same horizon;
``benchmarks/cpp/sim.cpp`` keeps no statistics at all: it is the floor.
Ours and the C++ loops run interleaved, round after round (ours, C++ fair,
C++ bare, ours, ...), so that each round's ratio compares runs under the same
load of a shared machine; each round gives a ratio by wall time (ours:
``time.perf_counter`` over the whole ``simulate`` call; C++: its loop and
analysis, ``steady_clock``) and one by CPU time (ours: ``time.process_time``,
every thread of this process; C++: ``CLOCK_THREAD_CPUTIME_ID`` of its single
thread, process start excluded as ours excludes the interpreter's).  The
rows give the median rates; the ratios are reported as the median of the
per-round ratios with their range (min..max), by wall and by CPU time, so
that one undisturbed round cannot hide a slow median and one disturbed
round cannot fake a regression.

Run on its own::

    python -m benchmarks.bench_sim            # all three cases
    python -m benchmarks.bench_sim --quick    # shorter runs
    python -m benchmarks.bench_sim --vocab    # priority and fork-join (ours only)

or through the runner (``python -m benchmarks -k sim``), which calls
:func:`run`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

try:  # run as part of the package (python -m benchmarks / -m benchmarks.bench_sim)
    from . import _util
except ImportError:  # pragma: no cover - run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks import _util

CASES = ["sim-mm1", "sim-closed4", "sim-tandem-block", "sim-prio2", "sim-fj3"]
#: the cases the bare C++ loop and the Ciw / SimPy versions are written for
PEER_CASES = ("sim-mm1", "sim-closed4", "sim-tandem-block")
TITLES = {
    "sim-mm1": "simulator: open M/M/1, rho = 0.8, 10^6 customers",
    "sim-closed4": "simulator: closed cycle of 4 FCFS stations, N = 20",
    "sim-tandem-block": "simulator: open tandem of 3, buffers of 4, blocking after service",
    "sim-prio2": "simulator: open M/M/1, non-preemptive priority, 2 classes, rho = 0.8",
    "sim-fj3": "simulator: open fork-join of 3 FCFS branches, lambda = 1",
}
CPP_MODEL = {"sim-mm1": "mm1", "sim-closed4": "closed4", "sim-tandem-block": "tandem",
             "sim-prio2": "prio2", "sim-fj3": "fj3"}
HERE = Path(__file__).resolve().parent

S_CLOSED = (1.0, 1.1, 1.2, 1.3)
S_TANDEM = (0.5, 0.7, 0.8)
S_FJ = (0.5, 0.6, 0.7)


# ---------------------------------------------------------------------------
# the models in qmodels
# ---------------------------------------------------------------------------

def network(case: str):
    import qmodels as qm

    if case == "sim-mm1":
        return qm.Network([qm.Queue("q", 0.8)], [qm.Open("jobs", arrival_rate=1.0, routing={
            "source": {"q": 1.0}, "q": {"sink": 1.0}})])
    if case == "sim-closed4":
        names = [f"s{i}" for i in range(4)]
        routing = {names[i]: {names[(i + 1) % 4]: 1.0} for i in range(4)}
        return qm.Network([qm.Queue(n, s) for n, s in zip(names, S_CLOSED)],
                          [qm.Closed("jobs", 20, routing=routing)])
    if case == "sim-tandem-block":
        return qm.Network(
            [qm.Queue("s1", S_TANDEM[0]), qm.Queue("s2", S_TANDEM[1], capacity=4),
             qm.Queue("s3", S_TANDEM[2], capacity=4)],
            [qm.Open("jobs", arrival_rate=1.0, routing={
                "source": {"s1": 1.0}, "s1": {"s2": 1.0}, "s2": {"s3": 1.0},
                "s3": {"sink": 1.0}})])
    if case == "sim-prio2":
        return qm.Network([qm.Queue("q", 1.0, discipline="prio")], [
            qm.Open(f"p{i}", 0.4, routing={"source": {"q": 1.0}, "q": {"sink": 1.0}},
                    priority=i) for i in range(2)])
    if case == "sim-fj3":
        return qm.Network(
            [qm.ForkJoin("fj", [[f"b{i}"] for i in range(3)])]
            + [qm.Queue(f"b{i}", s) for i, s in enumerate(S_FJ)],
            [qm.Open("jobs", arrival_rate=1.0, routing={"source": {"fj": 1.0},
                                                        "fj": {"sink": 1.0}})])
    raise KeyError(case)


def horizon(case: str, size: float) -> float:
    """Simulated time for ``size`` customers (open) or about ``size``
    completions (closed: throughput 1/1.3 per station, 4 stations); the
    fork-join: ``size`` / 4 customers (8 events each, not 2)."""
    if case == "sim-closed4":
        return size * 1.3 / 4
    if case == "sim-prio2":
        return size / 0.8
    if case == "sim-fj3":
        return size / 4
    return size


def run_qmodels(case: str, size: float, seed: int = 1, net=None):
    """One batch-means run of ``case`` (``net``: its :func:`network`, built
    before the timer as the analytic cases build theirs; else built here)."""
    from qmodels.sim import simulate

    r = simulate(network(case) if net is None else net, seed=seed, horizon=horizon(case, size),
                 method="batch_means", progress=False)
    return r.events, r


def compile_time() -> float | None:
    """First-call time of simulate in a fresh process with an empty numba
    cache, minus the time of a second identical call (= compile + load)."""
    import tempfile

    code = (
        "import time, qmodels as qm\n"
        "from qmodels.sim import simulate\n"
        "net = qm.Network([qm.Queue('q', 0.8)], [qm.Open('j', arrival_rate=1.0, routing="
        "{'source': {'q': 1.0}, 'q': {'sink': 1.0}})])\n"
        "t = time.perf_counter(); simulate(net, seed=1, horizon=100.0, replications=2)\n"
        "a = time.perf_counter() - t\n"
        "t = time.perf_counter(); simulate(net, seed=1, horizon=100.0, replications=2)\n"
        "b = time.perf_counter() - t\n"
        "print(a - b)\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=tmp)
        try:
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                 text=True, timeout=900, cwd=str(HERE.parent))
            return float(out.stdout.strip().splitlines()[-1])
        except Exception:  # noqa: BLE001
            return None


# ---------------------------------------------------------------------------
# Ciw
# ---------------------------------------------------------------------------

def run_ciw(case: str, size: float, seed: int = 1):
    """Events (2 per service record: arrival + departure) of a Ciw run."""
    import ciw

    E = ciw.dists.Exponential
    if case == "sim-mm1":
        net = ciw.create_network(arrival_distributions=[E(rate=1.0)],
                                 service_distributions=[E(rate=1 / 0.8)],
                                 number_of_servers=[1])
    elif case == "sim-closed4":
        # 20 customers arrive at once at t ~ 0, then none: a closed cycle
        net = ciw.create_network(
            arrival_distributions=[ciw.dists.Sequential([1e-9] * 20 + [1e18]), None, None, None],
            service_distributions=[E(rate=1 / s) for s in S_CLOSED],
            number_of_servers=[1, 1, 1, 1],
            routing=[[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0],
                     [1.0, 0.0, 0.0, 0.0]])
    else:
        # Ciw's queue capacity excludes the service place: room 4 = 1 + 3;
        # Ciw blocks after service (its "type I" blocking)
        net = ciw.create_network(
            arrival_distributions=[E(rate=1.0), None, None],
            service_distributions=[E(rate=1 / s) for s in S_TANDEM],
            number_of_servers=[1, 1, 1], queue_capacities=[float("inf"), 3, 3],
            routing=[[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    ciw.seed(seed)
    Q = ciw.Simulation(net)
    Q.simulate_until_max_time(horizon(case, size))
    recs = Q.get_all_records()
    return 2 * len(recs), recs


# ---------------------------------------------------------------------------
# SimPy, by hand
# ---------------------------------------------------------------------------

def run_simpy(case: str, size: float, seed: int = 1):
    """The same models written by hand in SimPy; returns the event count."""
    import random

    import simpy

    rnd = random.Random(seed)
    env = simpy.Environment()
    count = [0]
    T = horizon(case, size)

    if case == "sim-mm1":
        server = simpy.Resource(env, capacity=1)

        def customer():
            count[0] += 1  # arrival
            with server.request() as req:
                yield req
                yield env.timeout(rnd.expovariate(1 / 0.8))
            count[0] += 1  # departure

        def source():
            while True:
                yield env.timeout(rnd.expovariate(1.0))
                env.process(customer())

        env.process(source())
    elif case == "sim-closed4":
        servers = [simpy.Resource(env, capacity=1) for _ in S_CLOSED]

        def job():
            while True:
                for k, s in enumerate(S_CLOSED):
                    count[0] += 1
                    with servers[k].request() as req:
                        yield req
                        yield env.timeout(rnd.expovariate(1 / s))
                    count[0] += 1

        for _ in range(20):
            env.process(job())
    else:
        servers = [simpy.Resource(env, capacity=1) for _ in S_TANDEM]
        # room of a finite station (jobs present, service place and a job
        # blocked there included): taken while still at the previous station
        room = [None, simpy.Resource(env, capacity=4), simpy.Resource(env, capacity=4)]

        def customer():
            held_room = None
            for k, s in enumerate(S_TANDEM):
                count[0] += 1  # arrival at k
                req = servers[k].request()
                yield req
                yield env.timeout(rnd.expovariate(1 / s))
                nxt = None
                if k + 1 < len(S_TANDEM):
                    # blocking after service: wait for room downstream while
                    # keeping the server of station k
                    nxt = room[k + 1].request()
                    yield nxt
                servers[k].release(req)
                if held_room is not None:
                    room[k].release(held_room)
                held_room = nxt
                count[0] += 1  # departure from k

        def source():
            while True:
                yield env.timeout(rnd.expovariate(1.0))
                env.process(customer())

        env.process(source())
    env.run(until=T)
    return count[0], None


# ---------------------------------------------------------------------------
# C++
# ---------------------------------------------------------------------------

#: the two C++ references: the bare loop (counts only) and the fair one (the
#: statistics our loop keeps: see the head of benchmarks/cpp/sim_fair.cpp)
CPP_SOURCES = {"bare": "sim.cpp", "fair": "sim_fair.cpp"}


def build_cpp(build_dir: Path) -> dict | None:
    """Compile both C++ loops (g++ -O2); {"bare": exe, "fair": exe} or None
    without g++."""
    gxx = _util.have_exe("g++")
    if gxx is None:
        return None
    exes = {}
    for kind, name in CPP_SOURCES.items():
        src = HERE / "cpp" / name
        exe = build_dir / f"sim_cpp_{kind}"
        if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
            subprocess.run([gxx, "-O2", "-std=c++17", "-o", str(exe), str(src)], check=True)
        exes[kind] = str(exe)
    return exes


def run_cpp(exe: str, case: str, size: float, seed: int = 1):
    """The bare loop: ``size`` customers (closed: 2 x size completions).
    Returns (events, wall seconds, CPU seconds of its thread)."""
    n = int(size if case != "sim-closed4" else 2 * size)
    out = subprocess.run([exe, CPP_MODEL[case], str(n), str(seed)], capture_output=True,
                         text=True, check=True)
    ev, dt, cpu = out.stdout.split()[:3]
    return int(ev), float(dt), float(cpu)


def run_cpp_fair(exe: str, case: str, size: float, seed: int = 1):
    """The fair loop over the horizon ours runs (statistics, batch means
    and their analysis included in its time)."""
    out = subprocess.run([exe, CPP_MODEL[case], repr(horizon(case, size)), str(seed)],
                         capture_output=True, text=True, check=True)
    ev, dt, cpu = out.stdout.split()[:3]
    return int(float(ev)), float(dt), float(cpu)


# ---------------------------------------------------------------------------
# the plug-in entry point
# ---------------------------------------------------------------------------

def _rate_rows(case, impl, role, fn, repeat, budget, **fields):
    """Time ``fn() -> events`` ``repeat`` times (within ``budget``)."""
    times, rates = [], []
    spent = 0.0
    for i in range(max(1, repeat)):
        t0 = time.perf_counter()
        ev = fn(i)
        dt = time.perf_counter() - t0
        times.append(dt)
        rates.append(ev / dt)
        spent += dt
        if budget is not None and spent > budget:
            break
    med = float(np.median(times))
    return _util.row(case, impl, role, time_s=med, min_s=min(times), reps=len(times),
                     rate=float(np.median(rates)), rate_unit="events/s", **fields)


def _in_turn(case, size, repeat, exes):
    """Ours and the C++ loops interleaved, ``repeat`` rounds of ours, C++
    fair, C++ bare (so that each round sees the same load of a shared
    machine): {impl: (times, rates, CPU rates)}, the times as each measures
    them (ours: the whole ``simulate`` call; C++: its loop and statistics,
    process start excluded); CPU rates: ours by ``time.process_time`` (every
    thread of this process), C++ by ``CLOCK_THREAD_CPUTIME_ID`` of its one
    thread."""
    got = {"qmodels": ([], [], [])}
    for kind in exes or {}:
        got[kind] = ([], [], [])
    import warnings

    with warnings.catch_warnings():  # untimed: this model's compiled paths (cache load)
        warnings.simplefilter("ignore")  # first; a run this short warns of its bias
        run_qmodels(case, 1e3)
    for i in range(repeat):
        net = network(case)  # the model is built before the timer (the C++ loops hard-code it)
        c0 = time.process_time()
        t0 = time.perf_counter()
        ev = run_qmodels(case, size, seed=1 + i, net=net)[0]
        dt = time.perf_counter() - t0
        cpu = time.process_time() - c0
        for lst, v in zip(got["qmodels"], (dt, ev / dt, ev / cpu)):
            lst.append(v)
        for kind, exe in (exes or {}).items():
            ev, dt, cpu = (run_cpp_fair if kind == "fair" else run_cpp)(exe, case, size,
                                                                        seed=1 + i)
            for lst, v in zip(got[kind], (dt, ev / dt, ev / cpu)):
                lst.append(v)
    return got


#: (case, impl) -> {"wall": (median, min, max), "cpu": (median, min, max)} of
#: the per-round ratios ours/that row (rates), for the standalone table
SPREAD: dict = {}


def paired_ratios(ours, other) -> dict:
    """Median and range of the per-round ratios ours/other of the rates, by
    wall time and by CPU time: ``ours`` and ``other`` are (times, rates, CPU
    rates) of the same interleaved rounds (:func:`_in_turn`)."""
    out = {}
    for key, i in (("wall", 1), ("cpu", 2)):
        r = np.asarray(ours[i]) / np.asarray(other[i])
        out[key] = (float(np.median(r)), float(r.min()), float(r.max()))
    return out


def fmt_spread(sp) -> str:
    """``0.78x [0.70..0.85]`` from (median, min, max)."""
    return f"{sp[0]:.3g}x [{sp[1]:.3g}..{sp[2]:.3g}]"


def _median_row(case, impl, role, times, rates, cpu_rates, note="", ours=None, **fields):
    """A row whose rate is the median of the rounds; for a reference row
    (``ours`` given: our rounds), the note gives the per-round ratios ours /
    this row by wall and by CPU time, median [min..max]."""
    if ours is not None:
        sp = paired_ratios(ours, (times, rates, cpu_rates))
        SPREAD[(case, impl)] = sp
        note = (f"{note}; ours/this per round by wall {fmt_spread(sp['wall'])}, "
                f"by CPU {fmt_spread(sp['cpu'])}")
    return _util.row(case, impl, role, time_s=float(np.median(times)), min_s=min(times),
                     reps=len(times), rate=float(np.median(rates)), rate_unit="events/s",
                     note=note, **fields)


def run(args) -> list[dict]:
    cases = list(getattr(args, "sim_cases", CASES) or [])
    repeat = max(1, int(getattr(args, "repeat", 3)))
    quick = bool(getattr(args, "quick", False))
    peers = getattr(args, "peers", None)
    build = Path(getattr(args, "build_dir", _util.build_dir()))
    budget = float(getattr(args, "peer_budget", 20.0))
    size = 2e5 if quick else 1e6
    peer_size = 2e4 if quick else 5e4
    rows: list[dict] = []

    # warm the compiled loop (cache load) before timing
    run_qmodels("sim-mm1", 1e3)
    ct = None if getattr(args, "no_compile_time", False) else compile_time()
    exes = None
    cpp_error = None
    if peers is None or "c" in peers or "cpp" in peers:
        try:
            exes = build_cpp(build)
        except Exception as e:  # noqa: BLE001
            cpp_error = f"g++ failed: {e}"
        else:
            if exes is None:
                cpp_error = "g++ not found"

    for case in cases:
        case_exes = (None if exes is None else
                     {k: v for k, v in exes.items() if k == "fair" or case in PEER_CASES})
        got = _in_turn(case, size, max(repeat, 3), case_exes)
        rows.append(_median_row(
            case, "qmodels", "ours", *got["qmodels"],
            target_rate=5e6 if case in ("sim-mm1", "sim-closed4") else None,
            note=(f"batch means, {size:.0e} events' worth; rate: median of "
                  f"{len(got['qmodels'][0])} rounds interleaved with the C++ loops, "
                  f"by CPU {np.median(got['qmodels'][2]):.4g} events/s"
                  + (f"; numba first-call compile {ct:.1f} s" if ct is not None else ""))))
        if case not in PEER_CASES:
            if exes is None and (peers is None or "c" in peers or "cpp" in peers):
                rows.append(_util.skipped(case, "C++ fair", "reference", cpp_error))
            elif exes is not None:
                rows.append(_median_row(case, "C++ fair", "reference", *got["fair"],
                                        ours=got["qmodels"], target_ratio=1 / 1.5,
                                        note="g++ -O2, the statistics ours keeps "
                                             "(cpp/sim_fair.cpp)"))
            continue
        if peers is None or "ciw" in peers:
            try:
                rows.append(_rate_rows(case, "ciw", "peer",
                                       lambda i, case=case: run_ciw(case, peer_size, seed=1 + i)[0],
                                       repeat, budget, target_ratio=50.0,
                                       note=f"{peer_size:.0e} customers"))
            except ImportError:
                rows.append(_util.skipped(case, "ciw", "peer", "pip install ciw"))
        if peers is None or "simpy" in peers:
            try:
                rows.append(_rate_rows(case, "simpy", "peer",
                                       lambda i, case=case: run_simpy(case, peer_size,
                                                                      seed=1 + i)[0],
                                       repeat, budget, target_ratio=10.0,
                                       note=f"{peer_size:.0e} customers, hand-written"))
            except ImportError:
                rows.append(_util.skipped(case, "simpy", "peer", "pip install simpy"))
        if peers is None or "c" in peers or "cpp" in peers:
            if exes is None:
                rows.append(_util.skipped(case, "C++ fair", "reference", cpp_error))
                rows.append(_util.skipped(case, "C++ bare", "reference", cpp_error))
            else:
                rows.append(_median_row(case, "C++ fair", "reference", *got["fair"],
                                        ours=got["qmodels"], target_ratio=1 / 1.5,
                                        note="g++ -O2, the statistics ours keeps "
                                             "(cpp/sim_fair.cpp)"))
                rows.append(_median_row(case, "C++ bare", "reference", *got["bare"],
                                        ours=got["qmodels"], target_ratio=1 / 2,
                                        note="g++ -O2, binary heap, no statistics "
                                             "(cpp/sim.cpp)"))
    return rows


# ---------------------------------------------------------------------------
# the newer station kinds (ours only, no peer): priority stations, fork-join
# ---------------------------------------------------------------------------

VOCAB_CASES = ["sim-prio3", "sim-fj4-prio", "sim-fj4"]
VOCAB_TITLES = {
    "sim-prio3": "simulator: open M/M/1 preemptive-resume priority, 3 levels, rho = 0.85",
    "sim-fj4-prio": "simulator: closed N = 200, fork-join of 4 branches, priority CPU",
    "sim-fj4": "simulator: closed N = 200, fork-join of 4 branches, FCFS CPU",
}


def vocab_network(case: str):
    """The models of :data:`VOCAB_CASES`; the closed ones have a job table of
    N (1 + 4) = 1000 rows (a job and the tasks of its fork)."""
    import qmodels as qm

    if case == "sim-prio3":
        return qm.Network([qm.Queue("q", 1.0, discipline="prio-pr")], [
            qm.Open(f"p{i}", lam, routing={"source": {"q": 1.0}, "q": {"sink": 1.0}},
                    priority=i) for i, lam in enumerate((0.3, 0.3, 0.25))])
    if case in ("sim-fj4-prio", "sim-fj4"):
        disc = "prio" if case == "sim-fj4-prio" else "fcfs"
        stations = [qm.ForkJoin("fj", [[f"d{i}"] for i in range(4)]), qm.Queue("cpu", 0.004,
                                                                              discipline=disc)]
        stations += [qm.Queue(f"d{i}", 0.01 * (1 + 0.1 * i)) for i in range(4)]
        return qm.Network(stations, [
            qm.Closed("hi", 50, visits={"cpu": 1.0, "fj": 1.0}, think_time=0.5, priority=0),
            qm.Closed("lo", 150, visits={"cpu": 1.0, "fj": 1.0}, think_time=0.5, priority=1)])
    raise KeyError(case)


def vocab_rates(size: float = 1e6, repeat: int = 3, cases=None) -> dict:
    """{case: (best events/s, events)} of :func:`simulate` on the models of
    :data:`VOCAB_CASES` (batch means; about ``size`` customers for the open
    one, a horizon of ``size / 1e3`` s for the closed ones: about 2.5
    ``size`` events and 1.0 ``size`` events)."""
    import warnings

    from qmodels.sim import simulate

    warnings.simplefilter("ignore")  # the short warm-up run's bias warnings
    simulate(vocab_network("sim-prio3"), seed=1, horizon=100.0, progress=False)  # warm
    out = {}
    for case in cases or VOCAB_CASES:
        T = size if case == "sim-prio3" else size / 1e3
        best, ev = 0.0, 0
        for i in range(repeat):
            t0 = time.perf_counter()
            r = simulate(vocab_network(case), seed=1 + i, horizon=T, method="batch_means",
                         progress=False)
            dt = time.perf_counter() - t0
            best, ev = max(best, r.events / dt), r.events
        out[case] = (best, ev)
    return out


def _main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_sim",
                                description=__doc__.split("\n")[0])
    p.add_argument("-k", "--case", action="append", default=None)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--peers", default=None, help="comma-separated: ciw, simpy, c")
    p.add_argument("--peer-budget", type=float, default=20.0)
    p.add_argument("--no-compile-time", action="store_true")
    p.add_argument("--vocab", action="store_true",
                   help="only the priority and fork-join cases (ours, no peers)")
    args = p.parse_args(argv)
    if args.vocab:
        vc = [c for c in VOCAB_CASES if not args.case or any(w in c for w in args.case)]
        got = vocab_rates(2e5 if args.quick else 1e6, args.repeat, vc)
        for case, (rate, ev) in got.items():
            print(f"{case:14s} {rate:12.4g} events/s  ({ev} events)  {VOCAB_TITLES[case]}")
        return 0
    args.sim_cases = [c for c in CASES if not args.case or any(w in c for w in args.case)]
    args.peers = None if args.peers is None else {s.strip() for s in args.peers.split(",")}
    args.build_dir = _util.build_dir()
    rows = run(args)
    print(f"{'case':17s} {'implementation':14s} {'events/s':>10s} {'median':>8s} "
          f"{'ours/this':>9s} {'target':>21s}  {'per round by wall':>24s}  "
          f"{'per round by CPU':>24s}")
    for case in args.sim_cases:
        cr = [r for r in rows if r["case"] == case]
        ours = next((r for r in cr if r["role"] == "ours"), None)
        for r in cr:
            if r.get("skipped"):
                print(f"{case:17s} {r['impl']:14s} {'skipped':>10s}  {r['skipped']}")
                continue
            ratio = "" if r is ours or not ours else f"{ours['rate'] / r['rate']:.3g}x"
            target = ""
            sp = SPREAD.get((case, r["impl"]))
            if r is not ours and ours and r.get("target_ratio"):
                t = r["target_ratio"]
                target = (f">= {t:g}x" if t >= 1 else f"<= {1 / t:g}x slower") + (
                    " ok" if ours["rate"] / r["rate"] >= t else " MISSED")
                if sp:
                    target += " (CPU ok)" if sp["cpu"][0] >= t else " (CPU MISSED)"
            wall = fmt_spread(sp["wall"]) if sp else ""
            cpu = fmt_spread(sp["cpu"]) if sp else ""
            print(f"{case:17s} {r['impl']:14s} {r['rate']:10.4g} {r['time_s']:7.3g}s "
                  f"{ratio:>9s} {target:>21s}  {wall:>24s}  {cpu:>24s}")
    return 0


if __name__ == "__main__":
    sys.exit(_main())
