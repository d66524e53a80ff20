"""Shared helpers of the benchmark runner: timing, rows, comparison, paths.

A plug-in (``benchmarks/bench_sim.py``) may import these; the row format is
described in the docstring of ``benchmarks/__main__.py``.
"""

from __future__ import annotations

import gc
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
BUILD = HERE / "_build"          # git-ignored


def one_compiled_thread() -> None:
    """Ask for one numba thread per process ("one core" means one core) when
    a benchmark module is the program, before numba is imported.

    Once numba is loaded (a test, a notebook, ``python -m benchmarks``), the
    host process owns its thread count: numba re-reads ``NUMBA_NUM_THREADS``
    at every compile and raises ``RuntimeError`` if it differs from the
    count its thread pool was launched with, so setting it then would break
    the host's next compile (it did: a test run that imported
    ``bench_sim_parallel`` after a parallel kernel ran).
    """
    if "numba" not in sys.modules:
        os.environ.setdefault("NUMBA_NUM_THREADS", "1")


def build_dir() -> Path:
    """The git-ignored folder for compiled peers and scratch files."""
    BUILD.mkdir(parents=True, exist_ok=True)
    return BUILD


def have_exe(name: str) -> str | None:
    """Full path of an executable on PATH, or None."""
    return shutil.which(name)


def timeit(fn, repeat: int, *, warmup: int = 1, budget: float | None = None,
           min_time: float = 0.0, max_repeat: int = 1000):
    """Call ``fn()`` ``warmup`` times untimed, then ``repeat`` times timed.

    Returns ``(median, minimum, times, last_value)``.  With ``budget`` (seconds)
    the timed loop stops early once the time spent exceeds it (at least one
    timed call is always made), so slow peers do not hold the run for
    minutes; the row then reports how many repetitions were made.  With
    ``min_time`` a fast call is repeated beyond ``repeat`` until that much
    time is spent (at most ``max_repeat`` calls): on a shared machine a
    median over many millisecond solves is steadier than over seven.
    The garbage collector is off during each timed call.
    """
    value = None
    for _ in range(warmup):
        value = fn()
    times = []
    spent = 0.0
    gc_was = gc.isenabled()
    n = 0
    while n < max(1, repeat) or (spent < min_time and n < max_repeat):
        n += 1
        gc.disable()
        try:
            t0 = time.perf_counter()
            value = fn()
            dt = time.perf_counter() - t0
        finally:
            if gc_was:
                gc.enable()
        times.append(dt)
        spent += dt
        if budget is not None and spent > budget:
            break
    return statistics.median(times), min(times), times, value


def row(case: str, impl: str, role: str, **fields) -> dict:
    """One result row (see ``benchmarks/__main__.py`` for the fields)."""
    r = {
        "case": case,
        "impl": impl,
        "role": role,          # "ours" | "peer" | "reference"
        "time_s": None,        # median seconds per solve
        "min_s": None,
        "reps": 0,
        "rate": None,          # e.g. events per second (higher is better)
        "rate_unit": None,
        "maxrel": None,        # max relative difference from ours
        "skipped": None,       # reason, when not run
        "note": "",
        "target_ratio": None,  # on a peer/reference row: ours must be >= this many x faster
        "target_time": None,   # on our row: median must be below this (s)
        "target_rate": None,   # on our row: rate must be at least this
    }
    unknown = set(fields) - set(r)
    if unknown:
        raise KeyError(f"unknown row fields {sorted(unknown)}")
    r.update(fields)
    return r


def skipped(case: str, impl: str, role: str, reason: str, **fields) -> dict:
    return row(case, impl, role, skipped=reason, **fields)


def max_rel_diff(ours, theirs, *, floor: float = 1e-12) -> float:
    """max |a - b| / max(|a|, |b|, floor) over matching arrays (flattened).

    ``ours`` and ``theirs`` are sequences of arrays in the same order (e.g.
    ``[X, Q]``).  A shape mismatch or a non-finite peer value gives ``inf``.
    """
    worst = 0.0
    for a, b in zip(ours, theirs):
        a = np.asarray(a, dtype=float).ravel()
        b = np.asarray(b, dtype=float).ravel()
        if a.shape != b.shape or not np.all(np.isfinite(b)):
            return float("inf")
        den = np.maximum(np.maximum(np.abs(a), np.abs(b)), floor)
        if a.size:
            worst = max(worst, float(np.max(np.abs(a - b) / den)))
    return worst


def fmt_time(t) -> str:
    if t is None:
        return "-"
    if t >= 1:
        return f"{t:.3g} s"
    if t >= 1e-3:
        return f"{t * 1e3:.3g} ms"
    return f"{t * 1e6:.3g} us"


def fmt_num(x, digits: int = 3) -> str:
    if x is None:
        return "-"
    if x == float("inf"):
        return "inf"
    return f"{x:.{digits}g}"


def env_flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0", "no", "false")
