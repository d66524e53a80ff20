"""The ``qmodels`` command.

    qmodels solve [MODEL] [--method M] [--json]   solve a model file (YAML/JSON)
    qmodels demo [--out DIR]                      the SPAX case-study report with plots
    qmodels methods                               list solver methods
    qmodels case NAME [--json] [--set K=V] [--hold-fit] [--sim] [--assumptions]
                                                  a source paper's paper-vs-model table
    qmodels schema                                the JSON Schema of model files
    qmodels check MODEL...                        validate model files
    qmodels convert SRC DST                       YAML <-> JSON <-> JMT (JMVA, JSIMg)
    qmodels sweep MODEL --vary P=A:B:N ...        what-if sweep to Parquet/CSV
    qmodels size MODEL --max-population --target 'R<=2'   capacity questions
    qmodels --version

Errors in the model file are reported with their path in the file and exit
status 2; no traceback is ever printed for bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from ._version import __version__
from .errors import ModelFileError, QModelsError

EXIT_OK = 0
EXIT_INPUT = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


class UsageError(QModelsError):
    """An option that does not apply to the command as given."""

BUILTIN = "two_tier.yaml"


def _builtin_path():
    from importlib import resources  # only here: it imports zipfile, tempfile, shutil

    return resources.files("qmodels").joinpath("examples", BUILTIN)


def _load(model: str | None):
    from .io import modelfile

    if model is None:
        from importlib import resources

        with resources.as_file(_builtin_path()) as p:
            return modelfile.load(p), True
    return modelfile.load(model), False


def _jsonable(obj):
    if isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
        return None
    return obj


def _options(items) -> dict:
    """``--option KEY=VALUE`` pairs as keyword arguments of the solver:
    integers, floats, true/false and JSON lists are parsed, anything else is
    a string (``--option cls=tx --option max_population=12``)."""
    out = {}
    for item in items:
        if "=" not in item:
            raise UsageError(f"--option {item!r}: expected KEY=VALUE")
        key, text = (x.strip() for x in item.split("=", 1))
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text
        out[key] = value
    return out


def cmd_solve(args) -> int:
    from .dispatch import solve

    net, builtin = _load(args.model)
    options = _options(args.option or ())
    if args.transient is not None:
        return _solve_transient(net, args, options)
    if args.points is not None:
        raise UsageError("--points applies to --transient only")
    if args.method == "sim":
        options["seed"] = 1 if args.seed is None else args.seed
    elif args.seed is not None:
        raise UsageError(f"--seed applies to --method sim only, not {args.method!r}")
    t0 = time.perf_counter()
    try:
        result = solve(net, method=args.method, **options)
    except TypeError as e:
        if options and "unexpected keyword argument" in str(e):
            raise UsageError(f"method {args.method!r} has no option: {e}") from None
        raise
    elapsed = time.perf_counter() - t0
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, default=str))
        return EXIT_OK
    if builtin:
        print(f"(no MODEL given: solving the built-in example {BUILTIN!r}; "
              "see `qmodels solve --help`)\n")
    print(result.table())
    used = getattr(result, "method", args.method)
    print(f"\nsolved with method {used!r} in {elapsed * 1e3:.1f} ms")
    return EXIT_OK


def _solve_transient(net, args, options) -> int:
    """``qmodels solve MODEL --transient T``: the figures over [0, T]."""
    from .transients import transient

    method = args.method if args.method in ("ctmc", "sim") else "auto"
    if args.method not in ("auto", "ctmc", "sim"):
        raise UsageError(f"--transient takes --method auto, ctmc or sim, not {args.method!r}")
    if args.seed is not None:
        options["seed"] = args.seed
    try:
        res = transient(net, args.transient, points=args.points or 50, method=method,
                        **options)
    except TypeError as e:
        if options and "unexpected keyword argument" in str(e):
            raise UsageError(f"--transient has no option: {e}") from None
        raise
    if args.json:
        print(json.dumps(res.to_dict(), indent=2, default=str))
    else:
        print(res.table(rows=10))
    return EXIT_OK


def _warm_up_simulator() -> None:
    """Start compiling the simulator (in the background, if its machine code
    is not in the cache) while the analytic part runs (not with
    ``QMODELS_WARM_UP=0`` or another ``QMODELS_JIT`` than ``background``)."""
    from ._jit import warm_up_wanted

    if warm_up_wanted():
        from .sim.run import warm_up

        warm_up()


def cmd_demo(args) -> int:
    if args.two_tier:
        return _demo_two_tier()
    from .cases.spax import demo_report

    if not args.no_sim:
        _warm_up_simulator()
    print("qmodels demo: the SPAX parallel transaction system (TPC-C) as a queueing model,\n"
          "solved analytically and simulated; report and plots go to "
          f"{args.out}\n")
    path = demo_report(args.out, sim=not args.no_sim, seed=args.seed)
    print(f"\nreport: {path} (with the plots beside it)")
    return EXIT_OK


def _demo_two_tier() -> int:
    from .analytic.bounds import bounds
    from .analytic.mva import mva

    net, _ = _load(None)
    print("qmodels demo: the built-in two-tier example\n")
    r = mva(net, curve=True)
    print(r.table())
    b = bounds(net)
    print()
    print(b.table())
    cur = r.curve
    print("\nthroughput curve X(n) (exact MVA) against the asymptotic bounds:")
    from ._format import format_table

    rows = []
    N = len(cur.population) - 1
    knee = int(float(b.saturation_population))
    for n in sorted({1, N // 8, N // 4, N // 2, knee, 3 * N // 4, N}):
        if 0 < n <= N:
            bn = b.sweep([n]).iloc[0]
            rows.append([str(n), cur.throughput[n], bn["X_aba_hi"], bn["X_bjb_lo"],
                         bn["X_bjb_hi"], cur.response_time[n]])
    print(format_table(["N", "X exact", "X ABA upper", "X BJB lower", "X BJB upper", "R exact"],
                       rows))
    bn = ", ".join(r.bottleneck)
    print(f"\nThe bottleneck is {bn}: past N* = {b.saturation_population:.1f} users the "
          f"throughput cannot exceed 1/Dmax = {b.max_throughput:.2f} tx/s.")
    return EXIT_OK


def cmd_warm_up(args) -> int:
    """Compile the simulator's event loop and the analytic kernels now (into
    numba's cache), or with ``--ship DIR`` build their machine code for any
    processor of this architecture, as a wheel ships it."""
    if args.ship:
        return _ship(args.ship)
    if args.check:
        return _check_shipped()
    from .analytic._probe import compile_kernels
    from .sim.run import warm_up

    t0 = time.perf_counter()
    state = warm_up(wait=True)
    took = time.perf_counter() - t0
    if state == "python":
        print("QMODELS_JIT=python: the simulator runs as plain Python; nothing to compile")
        return EXIT_OK
    print(f"the simulator's machine code is ready ({took:.1f} s)")
    t0 = time.perf_counter()
    kernels = compile_kernels()
    print(f"the analytic kernels' machine code is ready ({len(kernels)} kernels, "
          f"{time.perf_counter() - t0:.1f} s)")
    return EXIT_OK


def _check_shipped() -> int:
    """``qmodels warm-up --check``: which shipped kernels this process can
    use, and why not; whether numba's cache has the simulator's loop."""
    from ._jit import HAVE_NUMBA, _signature, machine_code_at_hand
    from ._shipped import check, kernels_dir, survey

    if not HAVE_NUMBA:
        print("numba is not installed: every kernel runs as plain Python")
        return EXIT_OK
    from .sim import engine
    from .sim.run import _probe_args

    args = _probe_args()
    sig = _signature(engine.run, args)
    cached = machine_code_at_hand(engine.run, args)
    print(f"simulator's event loop: {'in' if cached else 'not in'} numba's cache; shipped code: "
          f"{check(engine.run, sig) or 'usable'}")
    rows = survey()
    folder = kernels_dir()
    if not rows:
        print(f"no shipped machine code in {folder or '(turned off: QMODELS_KERNELS is empty)'}")
        return EXIT_OK
    usable = sum(why is None for _, _, why in rows)
    print(f"shipped machine code in {folder}: {usable} of {len(rows)} usable here "
          "(a kernel may have several argument types)")
    seen: dict = {}
    for kernel, _, why in rows:
        seen[(kernel, why)] = seen.get((kernel, why), 0) + 1
    for (kernel, why), n in seen.items():
        print(f"  {kernel}{f' (x{n})' if n > 1 else ''}: {why or 'usable'}")
    return EXIT_OK


def _ship(dest: str) -> int:
    """``qmodels warm-up --ship DEST``: compile for the generic CPU in a
    child process (numba reads ``NUMBA_CPU_NAME`` when imported) with a
    cache of its own, so nothing compiled for this machine is reused."""
    import subprocess
    import tempfile

    from ._shipped import SHIPPED_CPU

    if os.environ.get("NUMBA_CPU_NAME", "").lower() == SHIPPED_CPU:
        from .analytic._probe import ship as ship_analytic
        from .sim.run import ship

        t0 = time.perf_counter()
        paths = [ship(dest)] + ship_analytic(dest)
        print(f"machine code for the {SHIPPED_CPU} CPU: {len(paths)} kernel signatures in "
              f"{dest} ({time.perf_counter() - t0:.1f} s)")
        return EXIT_OK
    with tempfile.TemporaryDirectory() as cache:
        # QMODELS_KERNELS empty: compile everything, load nothing shipped
        env = dict(os.environ, NUMBA_CPU_NAME=SHIPPED_CPU, NUMBA_CPU_FEATURES="",
                   NUMBA_CACHE_DIR=cache, QMODELS_JIT="sync", QMODELS_KERNELS="")
        return subprocess.call([sys.executable, "-m", "qmodels", "warm-up", "--ship", dest],
                               env=env)


def cmd_methods(args) -> int:
    """Each method: what its answers are (exact, approximate, bound,
    simulated), what it solves and assumes, and the error measured for it
    (the validation catalogs' envelopes); ``--json`` as data."""
    import textwrap

    from .dispatch import describe

    table = describe()
    if getattr(args, "json", False):
        print(json.dumps(table, indent=2, default=str))
        return EXIT_OK
    for name, d in table.items():
        print(f"{name} [{d['exactness']}]")
        print(textwrap.fill(d["summary"], 96, initial_indent="    ", subsequent_indent="    "))
        for e in d["envelopes"]:
            print(textwrap.fill(
                f"measured: max X {100 * e['X']['max']:.3g} % (mean {100 * e['X']['mean']:.3g} "
                f"%), max R {100 * e['R']['max']:.3g} % (mean {100 * e['R']['mean']:.3g} %) "
                f"against the {e['reference']} over {e['networks']} networks: {e['family']}",
                96, initial_indent="    ", subsequent_indent="      "))
    return EXIT_OK


def cmd_case(args) -> int:
    from .cases import assumption_reach, format_reach, report

    if args.assumptions is not None:
        reach = assumption_reach(args.name, args.set or (), hold_fit=args.hold_fit,
                                 only=tuple(args.assumptions))
        if args.json:
            print(json.dumps(reach, indent=2, default=str))
        else:
            print(format_reach(args.name, reach))
        return EXIT_OK
    if args.sim:
        _warm_up_simulator()
    rep = report(args.name, args.set or (), sim=args.sim, seed=args.seed,
                 hold_fit=args.hold_fit)
    if args.json:
        print(json.dumps(rep.to_dict(), indent=2, default=str))
    else:
        print(rep.table())
    return EXIT_OK


#: the commands defined in this module: running one of them needs no other
#: command's module (see :func:`build_parser`)
OWN_COMMANDS = ("solve", "demo", "methods", "warm-up")


def build_parser(full: bool = True) -> argparse.ArgumentParser:
    """The ``qmodels`` argument parser.  ``full=False`` leaves out the
    commands other modules define (schema, check, convert, sweep, size,
    case), so that running one of :data:`OWN_COMMANDS` does not import them
    (about a tenth of ``qmodels solve``'s start-up)."""
    p = argparse.ArgumentParser(
        prog="qmodels",
        description="Analytic queueing-network models of computer systems.",
    )
    p.add_argument("--version", action="version", version=f"qmodels {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    s = sub.add_parser("solve", help="solve a model file (YAML or JSON)",
                       description="Solve a model file and print a table naming the bottleneck "
                                   "(or the JSON described in the README with --json). With no "
                                   "MODEL, solves the built-in example.")
    s.add_argument("model", nargs="?", metavar="MODEL", help="model file (.yaml, .yml, .json)")
    s.add_argument("--method", default="auto",
                   help="auto (default: the most exact method that can answer), exact, bounds, "
                        "schweitzer, linearizer, convolution, sim, ... "
                        "(`qmodels methods` lists them)")
    s.add_argument("--json", action="store_true", help="print the result as JSON")
    s.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="a keyword argument of the solver, repeatable: --option cls=tx "
                        "(bounds of one class), --option max_population=12 (exact-symbolic), "
                        "--option curve=true, --option tol=1e-10")
    s.add_argument("--seed", type=int, default=None,
                   help="random seed, method sim only (default 1: the same run every time)")
    s.add_argument("--transient", type=float, default=None, metavar="T",
                   help="instead of the steady state: how the figures evolve over [0, T] from "
                        "an empty start (closed jobs at the start of their cycle); --method "
                        "auto (the CTMC if it fits, else sim), ctmc or sim")
    s.add_argument("--points", type=int, default=None, metavar="P",
                   help="grid points of --transient (default 50)")
    s.set_defaults(func=cmd_solve)
    d = sub.add_parser("demo", help="the SPAX case-study report (table and plots)",
                       description="Build the SPAX machine as a queueing model, print its "
                                   "paper-vs-model table, and write a report with plots "
                                   "(analytic and simulated) into --out.")
    d.add_argument("--out", default="build/demo", metavar="DIR",
                   help="folder for README.md and the PNG plots (default build/demo)")
    d.add_argument("--no-sim", action="store_true", help="analytic figures only (faster)")
    d.add_argument("--seed", type=int, default=1, help="simulator seed (default 1)")
    d.add_argument("--two-tier", action="store_true",
                   help="instead: solve and explain the small built-in two-tier example")
    d.set_defaults(func=cmd_demo)
    m = sub.add_parser("methods", help="list solver methods: what each answer is, what it "
                       "assumes, the error measured for it")
    m.add_argument("--json", action="store_true", help="the same as data")
    m.set_defaults(func=cmd_methods)
    w = sub.add_parser("warm-up", help="compile the simulator and the analytic kernels now",
                       description="Compile the simulator's event loop and the analytic "
                                   "kernels into numba's on-disk cache now (once per "
                                   "environment; `make` does it when it installs), so that the "
                                   "first simulation or large solve starts at full speed. "
                                   "Nothing to do when the cache or the wheel has it.")
    w.add_argument("--ship", metavar="DIR",
                   help="instead: write machine code for any processor of this architecture "
                        "into DIR, as `make wheel` ships it in qmodels/_kernels")
    w.add_argument("--check", action="store_true",
                   help="instead: say which shipped machine code this process can use, and "
                        "why not (compiles nothing)")
    w.set_defaults(func=cmd_warm_up)
    if not full:
        return p
    from .io import modelfile, schema

    schema.register_cli(sub)      # qmodels schema
    modelfile.register_cli(sub)   # qmodels check, qmodels convert
    from .whatif import register_cli as register_sweep

    register_sweep(sub)           # qmodels sweep
    from .whatif.size import register_cli as register_size

    register_size(sub)            # qmodels size
    from .cases import CASES

    c = sub.add_parser("case", help="a source paper as a model: the paper-vs-model table",
                       description="Build the case study's model, solve it and print every "
                                   "number the paper reports next to the model's value, its "
                                   "relative error and its role (fitted, derived from inputs and "
                                   "fitted rows, or predicted); --sim adds simulated figures "
                                   "beside the analytic ones where the case has a network.")
    c.add_argument("name", choices=list(CASES), metavar="NAME",
                   help="one of: " + ", ".join(CASES))
    c.add_argument("--json", action="store_true", help="print the report as JSON")
    c.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a field of the case's parameters (repeatable)")
    c.add_argument("--hold-fit", action="store_true",
                   help="keep every fitted value as fitted at the defaults and change only "
                        "what --set sets, so a hardware what-if reaches every row (without "
                        "it a case that refits refits on its named points)")
    c.add_argument("--assumptions", nargs="*", metavar="NAME",
                   help="instead of the table: for each assumption the paper leaves open (or "
                        "those named), the rows that move by more than 5 %% between its "
                        "plausible values (with --set applied first, refitted unless "
                        "--hold-fit)")
    c.add_argument("--sim", action="store_true",
                   help="also simulate, with confidence intervals beside the analytic figures")
    c.add_argument("--seed", type=int, default=1, help="simulator seed (default 1)")
    c.set_defaults(func=cmd_case)
    return p


def main(argv=None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    command = next((w for w in words if not w.startswith("-")), None)
    own = command in OWN_COMMANDS or (command is None and "--version" in words)
    parser = build_parser(full=not own)
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_OK
    try:
        return args.func(args)
    except ModelFileError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_INPUT
    except QModelsError as e:
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # pragma: no cover - `qmodels solve | head`
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
