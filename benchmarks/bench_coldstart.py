"""Cold start: how long the *first* call takes, with and without numba's cache.

Run from the repository root (not part of the test suite)::

    python -m benchmarks.bench_coldstart              # every case, cold then warm
    python -m benchmarks.bench_coldstart -k simulate  # cases whose id contains a word
    python -m benchmarks.bench_coldstart --wheel      # also from a wheel, in a new venv

numba compiles the kernels on their first call and caches the machine code
on disk (``njit(cache=True)``, in ``NUMBA_CACHE_DIR`` when set).  A user's
first call in a fresh environment pays the compilation; later processes load
the cache.  For each case this script starts a fresh Python process twice
with ``NUMBA_CACHE_DIR`` set to a new, empty temporary directory:

* **cold**: the first run, the cache directory empty;
* **warm**: a second process with the same directory, now filled;
* **sync**: (simulator cases) a third process with a new empty directory and
  ``QMODELS_JIT=sync``, the old behaviour: the first call compiles the event
  loop in the process before running it.

By default (``QMODELS_JIT=background``) a cold first ``qm.simulate`` runs the
event loop's Python twin while a child process compiles the machine code into
the cache, and switches to it when it is ready (the numbers are the same bit
for bit).  The table's "background" column is how long after the call the
child finished; the process waits for it, so the warm row finds a full cache.

How a user meets these rows:

* **from a wheel** (``--wheel``): ``make wheel`` builds a wheel that ships the
  event loop's machine code (``qmodels/_kernels``, compiled for the generic
  CPU); this script installs it into a new virtual environment and runs each
  case there with an empty numba cache: the **wheel** row.
* **a fresh clone and ``make demo``**: ``make`` fills numba's cache when it
  installs (``qmodels warm-up``), so the first call is the **warm** row.
* **a fresh clone installed by hand** (``pip install -e .``, no ``make``):
  the **cold** row (the Python twin while a child compiles).

Each process imports qmodels, builds a small model and times the one call.
The table gives the import time, the first call's time and the whole
process's wall time, and the goal of the "what-if at scale" issue next to
the first call (``qm.simulate`` <= 5 s, an exact multi-class solve <= 2 s).

Cases:

``simulate``
    ``qm.simulate`` of a three-station closed network (a delay, a
    two-server queue, a queue; N = 8), 3 replications of 200 s.
``simulate-long``
    the same network, 5 replications of 20,000 s (about 8 million events):
    a run that outlasts the compile, so it switches to the machine code.
``simulate-default``
    the same network with ``qm.simulate``'s defaults (its own run length,
    about 2 million events here): longer than the twin runs in 5 s, so
    in a script it waits for the compile.
``simulate-notebook``
    the default run again, as a notebook meets it: ``import qmodels``
    starts the compile (in Jupyter it calls ``qm.warm_up()``; the script
    calls it), and the simulate cell runs 30 s later.
``multiclass``
    ``qm.mva`` of two closed classes (N = 10 and 5) over three queues: the
    exact multi-class recursion, small enough to run as plain Python.
``multiclass-big``
    two classes of 60 jobs and a two-server station: 3,721 lattice points
    times 2 complement networks, above the threshold, so it compiles.
``multiserver``, ``multiserver-big``
    ``qm.mva`` of one closed class with a three-server station (the exact
    single-class solve by log-space convolution), N = 20 and N = 10000.
    Small problems run the kernels as plain Python (below
    ``lazyjit``'s threshold of 20,000 loop trips), so only the big one
    compiles.
``sweep``
    ``qm.sweep`` of a 21-station network (N = 200) over 2,000 values of one
    service time, exact: the batched solver's parallel kernel.
``mix``
    one script doing the ``simulate-default``, ``multiclass-big`` and
    ``sweep`` calls in turn: a planner's first session.

The machine is printed with the numbers (cores, load average): on a shared
machine they are noisy, the cold/warm difference is the figure to read.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

#: the small closed network both simulator cases run
_SIM_NET = """
net = qm.Network([qm.Delay("users", 0.5), qm.Queue("cpu", 0.01, servers=2),
                  qm.Queue("disk", 0.02)],
                 [qm.Closed("tx", 8, visits={"users": 1, "cpu": 1, "disk": 0.7})])
"""

#: a planner's first what-if: 2,000 points through the batched exact solver
_SWEEP = """
net = qm.Network([qm.Delay("users", 1.0)] + [qm.Queue(f"q{i}", 0.01 * (i + 1)) for i in range(20)],
                 [qm.Closed("tx", 200, visits={"users": 1, **{f"q{i}": 1 for i in range(20)}})])
grid = {"q0.service": [0.01 + 0.001 * i for i in range(2000)]}
call = lambda: qm.sweep(net, grid, method="exact", progress=False)
"""

#: one class, a three-server station, N jobs
_MS_NET = """
net = qm.Network([qm.Delay("users", 1.0), qm.Queue("cpu", 0.05, servers=3),
                  qm.Queue("disk", 0.02)],
                 [qm.Closed("tx", {N}, visits={{"users": 1, "cpu": 1, "disk": 1}})])
call = lambda: qm.mva(net)
"""

#: two closed classes over three queues, populations NA and NB, cpu with C servers
_MC_NET = """
net = qm.Network([qm.Queue("cpu", 0.01, servers={C}), qm.Queue("disk", 0.03),
                  qm.Queue("net", 0.02)],
                 [qm.Closed("a", {NA}, think_time=1.0, visits={{"cpu": 1, "disk": 1, "net": 1}}),
                  qm.Closed("b", {NB}, think_time=0.5, visits={{"cpu": 2, "disk": 0.5}})])
call = lambda: qm.mva(net)
"""

#: seconds between ``import qmodels`` and the first simulate in the notebook
#: case: a reader's pause between a notebook's first cells
NOTEBOOK_PAUSE = 30.0

#: case id -> (title, goal in seconds for the first call or None, the code
#: that builds ``net`` and the call to time as ``call()``)
CASES = {
    "simulate": (
        "first qm.simulate, small closed network", 5.0,
        _SIM_NET + "call = lambda: qm.simulate(net, seed=1, horizon=200.0, replications=3)\n"),
    "simulate-long": (
        "first qm.simulate, the same network, 8 million events", None,
        _SIM_NET + "call = lambda: qm.simulate(net, seed=1, horizon=20000.0, replications=5, "
        "progress=False)\n"),
    "simulate-default": (
        "first qm.simulate, the same network, default run length (about 2 million events)",
        5.0, _SIM_NET + "call = lambda: qm.simulate(net, seed=1, progress=False)\n"),
    "simulate-notebook": (
        f"first default qm.simulate {NOTEBOOK_PAUSE:g} s after import in a notebook "
        "(import qmodels starts the compile there: qm.warm_up())", 5.0,
        "qm.warm_up()\n" + f"time.sleep({NOTEBOOK_PAUSE})\n" + _SIM_NET
        + "call = lambda: qm.simulate(net, seed=1, progress=False)\n"),
    "multiclass": (
        "first exact multi-class solve, 2 classes", 2.0, _MC_NET.format(C=1, NA=10, NB=5)),
    "multiclass-big": (
        "first exact multi-class solve, 2 classes of 60, a 2-server station", 2.0,
        _MC_NET.format(C=2, NA=60, NB=60)),
    "multiserver": (
        "first exact single-class solve, a 3-server station, N = 20", None,
        _MS_NET.format(N=20)),
    "multiserver-big": (
        "first exact single-class solve, a 3-server station, N = 10000", None,
        _MS_NET.format(N=10000)),
    "sweep": (
        "first qm.sweep, exact, 2,000 points of a 21-station network (N = 200)", None,
        _SWEEP),
    "mix": (
        "simulate-default, multiclass-big and sweep in one script", None,
        # each case's set-up names its network ``net``: keep each one's own
        _SIM_NET + "sim = lambda n=net: qm.simulate(n, seed=1, progress=False)\n"
        + _MC_NET.format(C=2, NA=60, NB=60) + "mc = lambda n=net: qm.mva(n)\n" + _SWEEP
        + "sweep = call\ncall = lambda: (sim(), mc(), sweep())\n"),
}

#: what the child process runs: prints one JSON line of timings
_CHILD = """
import json, time
t0 = time.perf_counter()
import qmodels as qm
t1 = time.perf_counter()
{setup}
t2 = time.perf_counter()
call()
t3 = time.perf_counter()
out = {{"import": t1 - t0, "call": t3 - t2, "background": None}}
import sys
run = sys.modules.get("qmodels.sim.run")
if run is not None and run.ENGINE._child is not None:  # still compiling: wait
    run.ENGINE._child.wait()
    out["background"] = time.perf_counter() - t3
print(json.dumps(out))
"""


def run_case(case: str, cache_dir: str, mode: str = "background", python: str | None = None,
             shipped: bool = False) -> dict:
    """Run one case in a fresh interpreter with ``NUMBA_CACHE_DIR=cache_dir``
    and ``QMODELS_JIT=mode``; its import and first-call seconds, how long
    after the call a background compile finished, the process's wall
    seconds.  ``python``: another interpreter (a wheel's environment), run
    outside the source tree; ``shipped``: let it use machine code shipped
    with the package (the source tree has none unless built into it)."""
    _, _, setup = CASES[case]
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, QMODELS_JIT=mode)
    if not shipped:
        env["QMODELS_KERNELS"] = ""
    code = _CHILD.format(setup=setup)
    t0 = time.perf_counter()
    out = subprocess.run([python or sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=False, cwd=cache_dir if python else None)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"case {case!r} failed:\n{out.stderr}")
    times = json.loads(out.stdout.strip().splitlines()[-1])
    return {"import": times["import"], "call": times["call"],
            "background": times["background"], "process": wall}


def wheel_python(build: str) -> str:
    """Build the wheel as ``make wheel`` does (machine code shipped), install
    it into a new virtual environment under ``build`` (its dependencies from
    the package index) and return that environment's interpreter."""
    import shutil
    import venv

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dist = os.path.join(build, "dist")
    env_dir = os.path.join(build, "wheel-venv")
    shutil.rmtree(dist, ignore_errors=True)
    shutil.rmtree(env_dir, ignore_errors=True)
    shutil.rmtree(os.path.join(root, "build", "lib"), ignore_errors=True)
    env = dict(os.environ, QMODELS_AOT="require")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-build-isolation",
                    "--no-deps", "-w", dist, root], env=env, check=True, cwd=root)
    (whl,) = [os.path.join(dist, f) for f in os.listdir(dist) if f.endswith(".whl")]
    venv.create(env_dir, with_pip=True)
    python = os.path.join(env_dir, "bin", "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", whl], check=True, cwd=build)
    return python


def _machine() -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return (f"python {platform.python_version()}, {platform.machine()}, "
            f"{os.cpu_count()} cores, load average {load}")


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", action="append", default=[],
                    help="run only the cases whose id contains this word (repeatable)")
    ap.add_argument("--json", help="also write the rows to this file")
    ap.add_argument("--wheel", action="store_true",
                    help="also build the wheel, install it into a new virtual environment "
                         "(benchmarks/_build/wheel-venv) and run every case there cold")
    args = ap.parse_args(argv)
    cases = [c for c in CASES if not args.k or any(k in c for k in args.k)]
    print(f"cold start ({_machine()})")
    rows = []
    wheel = None
    if args.wheel:
        build = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_build")
        os.makedirs(build, exist_ok=True)
        wheel = wheel_python(build)
    for case in cases:
        if wheel is not None:
            with tempfile.TemporaryDirectory(prefix="qmodels-numba-") as cache:
                r = run_case(case, cache, python=wheel, shipped=True)
                rows.append({"case": case, "cache": "wheel", **r, "goal": CASES[case][1]})
        with tempfile.TemporaryDirectory(prefix="qmodels-numba-") as cache:
            for state in ("cold", "warm"):
                r = run_case(case, cache)
                rows.append({"case": case, "cache": state, **r, "goal": CASES[case][1]})
        if case.startswith("simulate") and case != "simulate-notebook":
            with tempfile.TemporaryDirectory(prefix="qmodels-numba-") as cache:
                r = run_case(case, cache, mode="sync")
                rows.append({"case": case, "cache": "sync", **r, "goal": CASES[case][1]})
    head = f"{'case':<16} {'cache':<5} {'import [s]':>10} {'first call [s]':>14} " \
           f"{'background [s]':>14} {'process [s]':>11}  goal (first call)"
    print()
    print(head)
    print("-" * len(head))
    for r in rows:
        goal = r["goal"]
        verdict = "-" if goal is None else \
            f"<= {goal:g} s: {'met' if r['call'] <= goal else 'MISSED'}"
        bg = "-" if r["background"] is None else f"{r['background']:.3f}"
        print(f"{r['case']:<16} {r['cache']:<5} {r['import']:>10.3f} {r['call']:>14.3f} "
              f"{bg:>14} {r['process']:>11.3f}  {verdict}")
    print()
    for case in cases:
        print(f"{case}: {CASES[case][0]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": _machine(), "rows": rows}, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
