"""qmodels against the peers, on the same models, in one run.

Run from the repository root::

    python -m benchmarks                  # every case, default repetitions
    python -m benchmarks --list           # case ids
    python -m benchmarks -k mva1 -k sweep # cases whose id contains a word
    python -m benchmarks --repeat 11 --json bench.json
    python -m benchmarks --peers line,c   # only some peers (line, octave, c, numpy)

For each case the runner times our solver (after a warm-up call; numba's
first-call compile time is measured separately in a fresh process with an
empty numba cache) and each peer on the same model, and prints the median
and minimum of the repetitions, the ratio peer/ours (how many times faster
ours is), the max relative difference between the peer's answer and ours,
and the targets of issue 3 next to the measured ratios.

Plug-in: the simulator benchmark (``benchmarks/bench_sim.py``)
---------------------------------------------------------------
If ``benchmarks/bench_sim.py`` exists, the runner imports it and expects:

``CASES : list[str]``
    The ids of its cases, e.g. ``["sim-mm1", "sim-closed4", "sim-tandem-block"]``.
    ``-k WORD`` selects among them as among ours (substring match).

``TITLES : dict[str, str]`` (optional)
    A one-line title per case id, printed as the table heading and by ``--list``.

``run(args) -> list[dict]``
    Runs the selected cases and returns rows.  ``args`` is the parsed
    command line (an ``argparse.Namespace``) plus:

    - ``args.sim_cases``: the ids from ``CASES`` selected by ``-k`` (run only these);
    - ``args.repeat``: repetitions wanted (int); ``args.quick``: bool (short runs);
    - ``args.peers``: set of peer names the user allowed (``None``: all);
    - ``args.build_dir``: ``pathlib.Path`` of the git-ignored build folder
      (``benchmarks/_build``), for the compiled C++ reference loop.

    Each row is a dict; build it with ``benchmarks._util.row(case, impl,
    role, **fields)`` (which checks the field names) or write it by hand:

    ==================  =====================================================
    ``case``            case id (the same on every row of a case)
    ``impl``            "qmodels", "ciw", "simpy", "C++ loop", ...
    ``role``            "ours" (exactly one per case), "peer" or "reference"
    ``time_s``          median wall seconds of the timed section, or None
    ``min_s``           minimum over repetitions, or None
    ``reps``            repetitions behind the median
    ``rate``            optional: throughput of the work, e.g. events per
                        second (higher is better); when both our row and a
                        peer row give a rate, the ratio is ours/peer of the
                        rates, otherwise peer/ours of ``time_s``
    ``rate_unit``       e.g. "events/s"
    ``maxrel``          optional: max relative difference of the peer's
                        answer from ours (a correctness check)
    ``skipped``         None, or the reason the row was not run (printed)
    ``note``            free text (e.g. "first call 2.1 s incl. compile")
    ``target_ratio``    peer/reference row: ours must be at least this many
                        times faster than that row (e.g. 50 for Ciw, 10 for
                        SimPy, 1/3 for "within 3x of the C++ loop")
    ``target_time``     our row: the median must be below this (seconds)
    ``target_rate``     our row: the rate must be at least this
    ==================  =====================================================

    The runner prints the rows in the same table as ours, checks the targets
    and saves them with ``--json``.  An exception inside ``run`` is reported
    and the rest of the benchmark goes on.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import sys
import time
import traceback

from . import _util
from ._util import fmt_num, fmt_time


def _parse(argv):
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    p.add_argument("-k", "--case", action="append", default=None, metavar="WORD",
                   help="run only cases whose id contains WORD (repeatable)")
    p.add_argument("--list", action="store_true", help="list the case ids and exit")
    p.add_argument("--repeat", type=int, default=7,
                   help="timed repetitions of our solver and fast peers (default 7)")
    p.add_argument("--min-time", type=float, default=0.5,
                   help="fast solvers (ours, the C and numpy loops) repeat beyond --repeat until "
                        "this many seconds are spent, for a steadier median (default 0.5)")
    p.add_argument("--peer-budget", type=float, default=20.0,
                   help="seconds a slow peer may spend on timed repetitions of one case "
                        "(at least one is always made; default 20)")
    p.add_argument("--peers", default=None,
                   help="comma-separated peers to run: line, octave, c, numpy (default all)")
    p.add_argument("--quick", action="store_true",
                   help="3 repetitions, shorter peer budget: a smoke run")
    p.add_argument("--no-compile-time", action="store_true",
                   help="skip measuring numba's cold first-call time (a subprocess per solver)")
    p.add_argument("--json", metavar="FILE", help="save every row and the environment as JSON")
    args = p.parse_args(argv)
    if args.quick:
        args.repeat = min(args.repeat, 3)
        args.peer_budget = min(args.peer_budget, 5.0)
        args.min_time = min(args.min_time, 0.1)
    if args.peers is not None:
        args.peers = {s.strip() for s in args.peers.split(",") if s.strip()}
        unknown = args.peers - {"line", "octave", "c", "numpy"}
        if unknown:
            p.error(f"unknown peer(s) {', '.join(sorted(unknown))}; known: line, octave, c, numpy")
    args.build_dir = _util.build_dir()
    return args


def _selected(ids, words):
    if not words:
        return list(ids)
    return [i for i in ids if any(w in i for w in words)]


def _ratio(ours, other, key="time_s"):
    """How many times faster ours is than ``other``: ours/other of the rates
    when both give one, else other/ours of ``key`` ("time_s" or "min_s")."""
    if ours is None or other is None or ours.get("skipped") or other.get("skipped"):
        return None
    if ours.get("rate") and other.get("rate"):
        return ours["rate"] / other["rate"]
    if ours.get(key) and other.get(key):
        return other[key] / ours[key]
    return None


def _print_case(title, rows, out):
    ours = next((r for r in rows if r["role"] == "ours"), None)
    head = ["implementation", "median", "min", "reps", "rate", "peer/ours", "(of mins)",
            "max rel diff", "target", "note"]
    table = []
    verdicts = []
    for r in rows:
        ratio = None if r is ours else _ratio(ours, r)
        ratio_min = None if r is ours else _ratio(ours, r, "min_s")
        r["ratio"], r["ratio_of_mins"] = ratio, ratio_min
        target = ""
        if r.get("target_ratio") is not None:
            t = r["target_ratio"]
            target = f">= {t:g}x" if t >= 1 else f"<= {1 / t:g}x slower"
            if ratio is not None:
                ok = ratio >= t
                target += " ok" if ok else " MISSED"
                mins = ("" if ratio_min is None or ratio_min == ratio
                        else f", of mins {ratio_min:.3g}x")
                verdicts.append((r["case"], f"vs {r['impl']}",
                                 f"{target}  (measured {ratio:.3g}x{mins})", ok))
        if r is ours and r.get("target_time") is not None:
            target = f"< {fmt_time(r['target_time'])}"
            if r.get("time_s") is not None and not r.get("skipped"):
                ok = r["time_s"] < r["target_time"]
                target += " ok" if ok else " MISSED"
                verdicts.append((r["case"], "time", f"{target}  (measured {fmt_time(r['time_s'])})",
                                 ok))
        if r is ours and r.get("target_rate") is not None:
            target = f">= {fmt_num(r['target_rate'])} {r.get('rate_unit') or ''}".rstrip()
            if r.get("rate") is not None and not r.get("skipped"):
                ok = r["rate"] >= r["target_rate"]
                target += " ok" if ok else " MISSED"
                verdicts.append((r["case"], "rate", f"{target}  (measured {fmt_num(r['rate'])})",
                                 ok))
        if r.get("skipped"):
            why = " ".join(str(r["skipped"]).split())   # one line; the JSON keeps it whole
            table.append([r["impl"], "skipped", "", "", "", "", "", "", target, why])
            continue
        rate = "" if r.get("rate") is None else f"{fmt_num(r['rate'])} {r.get('rate_unit') or ''}"
        table.append([
            r["impl"] + (" (ours)" if r is ours else ""),
            fmt_time(r.get("time_s")), fmt_time(r.get("min_s")), str(r.get("reps") or ""),
            rate.strip(), "" if ratio is None else f"{ratio:.3g}x",
            "" if ratio_min is None or (r.get("rate") and ours.get("rate"))
            else f"{ratio_min:.3g}x",
            "" if r is ours or r.get("maxrel") is None else f"{r['maxrel']:.2g}",
            target, r.get("note") or "",
        ])
    widths = [max(len(head[i]), *(len(row[i]) for row in table)) for i in range(len(head) - 1)]
    print(f"\n== {title}", file=out)
    print("  " + "  ".join(h.ljust(w) for h, w in zip(head, widths)) + "  " + head[-1], file=out)
    for row in table:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[-1], file=out)
    return verdicts


def _load_sim():
    """The simulator plug-in (``benchmarks/bench_sim.py``) or None, and the
    reason it failed to import (None when it is absent or fine)."""
    try:
        return importlib.import_module("benchmarks.bench_sim"), None
    except ModuleNotFoundError as e:
        if e.name not in ("benchmarks.bench_sim",):
            return None, f"benchmarks/bench_sim.py failed to import: {e!r}"
        return None, None
    except Exception as e:  # noqa: BLE001 - a broken plug-in must not stop the run
        return None, f"benchmarks/bench_sim.py failed to import: {e!r}"


def _print_list(ours_cases, sim) -> int:
    """``--list``: one line per case id with its title."""
    for cid in ours_cases.CASE_IDS:
        print(f"{cid:24s} {ours_cases.TITLES[cid]}")
    sim_titles = getattr(sim, "TITLES", {}) if sim else {}
    for cid in (getattr(sim, "CASES", []) if sim else []):
        title = sim_titles.get(cid, "(simulator benchmark, benchmarks/bench_sim.py)")
        print(f"{cid:24s} {title}")
    return 0


def _run_all(args, env, mine, sim, sim_error, ours_cases, out):
    """Run our selected cases and the simulator plug-in's, printing each
    case's table as soon as it is measured; return (rows, verdicts)."""
    titles = dict(ours_cases.TITLES)
    if sim is not None:
        titles.update(getattr(sim, "TITLES", {}) or {})
    rows, verdicts = [], []

    def show(new_rows):
        # print each case's table as soon as it is measured
        seen = []
        for r in new_rows:
            if r["case"] not in seen:
                seen.append(r["case"])
        found = []
        for cid in seen:
            case_rows = [r for r in new_rows if r["case"] == cid]
            found += _print_case(f"{cid}: {titles.get(cid, '')}".rstrip(": "), case_rows, out)
        rows.extend(new_rows)
        verdicts.extend(found)

    for cid in mine:
        try:
            show(ours_cases.run_case(cid, args, env))
        except Exception:  # noqa: BLE001 - report, go on, and fail the run at the end
            show([_util.skipped(cid, "qmodels", "ours",
                                ERROR + traceback.format_exc(limit=3))])
    if sim is not None and args.sim_cases:
        try:
            sim_rows = sim.run(args)
        except Exception:  # noqa: BLE001
            sim_rows = [_util.skipped("sim", "qmodels", "ours",
                                      ERROR + "bench_sim.run: " + traceback.format_exc(limit=3))]
        show(sim_rows)
    elif sim_error:
        print(f"\n{sim_error}", file=out)
        rows.append(_util.skipped("sim", "qmodels", "ours", ERROR + sim_error))
    return rows, verdicts


#: the reason of a row whose implementation is ours and failed: an error of
#: the run (exit status 1), never a quiet skip
ERROR = "ERROR: "


def errors(rows) -> list[dict]:
    """Our rows that failed (a peer that is not installed is UNAVAILABLE,
    not an error)."""
    return [r for r in rows if r["role"] == "ours" and str(r.get("skipped") or "")
            .startswith(ERROR)]


def _save_json(args, env, rows, verdicts, extra, out) -> None:
    """``--json FILE``: the machine, the environment, every row and target."""
    payload = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "platform": platform.platform(),
        "repeat": args.repeat,
        "environment": {k: v for k, v in env.items() if k != "lines" and not k.startswith("_")},
        "environment_lines": env["lines"],
        "rows": rows,
        "targets": [{"case": c, "what": w, "target": t, "met": ok} for c, w, t, ok in verdicts],
        "extras": extra,
    }
    with open(args.json, "w") as f:
        json.dump(payload, f, indent=1, default=str)
    print(f"saved {args.json}", file=out)


def main(argv=None) -> int:
    """Run the selected benchmark cases; 0, 1 when one of our implementations
    failed to import or run (an ERROR row), or 2 when ``-k`` selects none."""
    args = _parse(sys.argv[1:] if argv is None else argv)
    out = sys.stdout
    try:
        out.reconfigure(line_buffering=True)   # progress visible through a pipe
    except AttributeError:
        pass
    from . import cases as ours_cases

    sim, sim_error = _load_sim()
    all_ids = list(ours_cases.CASE_IDS) + (list(getattr(sim, "CASES", [])) if sim else [])
    if args.list:
        return _print_list(ours_cases, sim)

    mine = _selected(ours_cases.CASE_IDS, args.case)
    args.sim_cases = _selected(getattr(sim, "CASES", []), args.case) if sim else []
    if args.case and not mine and not args.sim_cases:
        print(f"no case id contains any of {args.case}; ids: {', '.join(all_ids)}", file=sys.stderr)
        return 2

    print(f"qmodels benchmarks  python {platform.python_version()}  {platform.machine()}  "
          f"repeat={args.repeat}  peer budget={args.peer_budget:g} s/case", file=out)
    print("times are medians of repeated solves (model already built; our solvers warmed up); "
          "peer/ours = how many times faster ours is", file=out)
    started = time.time()
    env = ours_cases.environment(args, peers_needed=bool(mine))
    for line in env["lines"]:
        print("  " + line, file=out)

    rows, verdicts = _run_all(args, env, mine, sim, sim_error, ours_cases, out)

    extra = ours_cases.extras(args, env, mine)
    for block in extra:
        print("\n" + block, file=out)

    if verdicts:
        print("\n== targets (issue 3; simulator targets from issue 4)", file=out)
        for cid, what, target, ok in verdicts:
            print(f"  {'ok    ' if ok else 'MISSED'}  {cid:22s} {what:24s} {target}", file=out)
    print(f"\ntotal wall time {time.time() - started:.0f} s (machine shared: timings are noisy)",
          file=out)

    if args.json:
        _save_json(args, env, rows, verdicts, extra, out)
    failed = errors(rows) + [b for b in extra if "ERROR:" in b]
    if failed:
        print(f"\n{len(failed)} of our cases FAILED (see ERROR above): the run is an error",
              file=out)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
