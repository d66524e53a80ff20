"""How long a ``qmodels`` command takes, from the shell's point of view.

Run from the repository root (not part of the test suite)::

    python -m benchmarks.bench_cli            # each command, median of 7 runs
    python -m benchmarks.bench_cli -n 15      # more runs
    python -m benchmarks.bench_cli --importtime   # the slowest imports of `solve`

Each run is a fresh ``python -m qmodels ...`` process (wall time, start to
exit), so the figure is what a user waits for: interpreter start, imports,
reading the model file, the solve and printing.  The goal of the planner
issue is under 0.3 s for ``qmodels solve`` of a small model; the table gives
the interpreter's bare start and ``import numpy`` for scale (numpy is the
floor: every solver needs it).
"""

from __future__ import annotations

import argparse
import os
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


def _time(argv: list[str], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, *argv], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        out.append(time.perf_counter() - t0)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-n", type=int, default=7, help="runs per command (default 7)")
    p.add_argument("--importtime", action="store_true",
                   help="print the 15 slowest imports of `qmodels solve` instead")
    args = p.parse_args(argv)
    if args.importtime:
        err = subprocess.run([sys.executable, "-X", "importtime", "-m", "qmodels", "solve",
                              MODEL], capture_output=True, text=True).stderr
        rows = []
        for line in err.splitlines():
            if line.startswith("import time:") and "|" in line:
                _, cum, name = line.split("|")
                if cum.strip().isdigit():
                    rows.append((int(cum), name.rstrip()))
        for cum, name in sorted(rows, reverse=True)[:15]:
            print(f"{cum / 1e6:7.3f} s  {name}")
        return 0
    _time(["-c", "import qmodels"], 1)  # warm the file cache
    width = max(map(len, COMMANDS))
    print(f"{'command':{width}s}  median    min      (n={args.n}, goal < {GOAL} s for solve)")
    for label, cmd in COMMANDS.items():
        t = _time(cmd, args.n)
        print(f"{label:{width}s}  {statistics.median(t):.3f} s  {min(t):.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
