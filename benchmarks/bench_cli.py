"""How long a ``qmodels`` command takes, from the shell's point of view.

Run from the repository root (not part of the test suite)::

    python -m benchmarks.bench_cli            # each command, median of 7 runs
    python -m benchmarks.bench_cli -n 15      # more runs
    python -m benchmarks.bench_cli --importtime   # the slowest imports of `solve`

Each run is a fresh ``python -m qmodels ...`` process (wall time, start to
exit), so the figure is what a user waits for: interpreter start, imports,
reading the model file, the solve and printing.  The goal of the planner
issue is under 0.3 s for ``qmodels solve`` of a small model on an idle
machine (and no worse than twice that under load); the table gives the
interpreter's bare start and ``import numpy`` for scale (numpy is the
floor: every solver needs it).  The ``cpu`` column is the processor time
the process used (user + system, from ``getrusage`` of the children): on
a loaded machine the wall time counts the time spent waiting for a
processor too, the cpu time is what the command itself costs, and stays
near what an idle machine would show.  The load average is printed with
the table.

Bytecode.  A user's install has its modules compiled to ``__pycache__``
(pip does it for a wheel; Python writes them on the first import of an
editable checkout).  A shell with ``PYTHONDONTWRITEBYTECODE`` set never
writes them, so every run compiles qmodels' sources again: about 0.1 s of
processor time more for ``qmodels solve``.  The runs here drop that
variable, so the first (warming) run writes the cache and the timed runs
use it, as a user's would (the cache lands in the checkout's
``__pycache__`` directories, which git ignores).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

MODEL = os.path.join("qmodels", "examples", "two_tier.yaml")

COMMANDS = {
    "python -c pass (floor)": ["-c", "pass"],
    "python -c 'import numpy'": ["-c", "import numpy"],
    "python -c 'import qmodels'": ["-c", "import qmodels"],
    "qmodels --version": ["-m", "qmodels", "--version"],
    "qmodels methods": ["-m", "qmodels", "methods"],
    f"qmodels solve {MODEL}": ["-m", "qmodels", "solve", MODEL],
    f"qmodels solve {MODEL} --json": ["-m", "qmodels", "solve", MODEL, "--json"],
    f"qmodels check {MODEL}": ["-m", "qmodels", "check", MODEL],
    f"qmodels size {MODEL} --max-population --target R<=2": [
        "-m", "qmodels", "size", MODEL, "--max-population", "--target", "R<=2"],
}
GOAL = 0.3


def _env() -> dict:
    """The children's environment: this one, with bytecode written and read
    from the usual ``__pycache__`` directories, as in a user's install."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPYCACHEPREFIX", None)
    return env


def _time(argv: list[str], n: int, env: dict | None = None) -> tuple[list[float], list[float]]:
    """(wall times, cpu times) of ``n`` fresh runs of ``python argv``."""
    wall, cpu = [], []
    for _ in range(n):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, *argv], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False, env=env)
        wall.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return wall, cpu


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-n", type=int, default=7, help="runs per command (default 7)")
    p.add_argument("--importtime", action="store_true",
                   help="print the 15 slowest imports of `qmodels solve` instead")
    args = p.parse_args(argv)
    env = _env()
    if args.importtime:
        _time(["-m", "qmodels", "solve", MODEL], 1, env)  # write the bytecode cache
        err = subprocess.run([sys.executable, "-X", "importtime", "-m", "qmodels", "solve",
                              MODEL], capture_output=True, text=True, env=env).stderr
        rows = []
        for line in err.splitlines():
            if line.startswith("import time:") and "|" in line:
                _, cum, name = line.split("|")
                if cum.strip().isdigit():
                    rows.append((int(cum), name.rstrip()))
        for cum, name in sorted(rows, reverse=True)[:15]:
            print(f"{cum / 1e6:7.3f} s  {name}")
        return 0
    for cmd in COMMANDS.values():   # warm the file cache and write the bytecode cache
        _time(cmd, 1, env)
    width = max(map(len, COMMANDS))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.2f} on {os.cpu_count()} processors; n={args.n} runs each; "
          f"goal < {GOAL} s for solve on an idle machine; bytecode cached, as in a "
          "user's install")
    print(f"{'command':{width}s}  median    min       cpu median")
    for label, cmd in COMMANDS.items():
        wall, cpu = _time(cmd, args.n, env)
        print(f"{label:{width}s}  {statistics.median(wall):.3f} s  {min(wall):.3f} s  "
              f"{statistics.median(cpu):.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
