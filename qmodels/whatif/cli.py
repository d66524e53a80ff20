"""The command line: ``qmodels sweep MODEL --vary PATH=SPEC ... --method M
--out FILE`` (:func:`register_cli` adds it to the ``qmodels`` parser).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

from ..errors import InvalidValueError, ProblemTooLargeError, QModelsError, require
from .core import sweep

__all__ = ["register_cli", "parse_values"]


# ---------------------------------------------------------------------------
# command line: qmodels sweep MODEL --vary PATH=SPEC ... --method M --out FILE
# ---------------------------------------------------------------------------

_INTEGER_FIELDS = {"population", "servers", "capacity", "tokens"}
#: Most points one ``--vary START:STOP:NUM`` may ask for.
MAX_POINTS = 10_000_000


def parse_values(path: str, text: str) -> list:
    """The values of ``--vary PATH=TEXT``.

    ``START:STOP:NUM`` is NUM evenly spaced values from START to STOP
    (inclusive, :func:`numpy.linspace`); ``a,b,c`` lists values.  For integer
    parameters (``population``, ``servers``, ``capacity``, ``tokens``) the
    evenly spaced values are rounded to the nearest integers and repeats
    dropped (``tx.population=1:200:50``); listed values must be integers.

    >>> parse_values("disk.service", "0.01:0.03:3")
    [0.01, 0.02, 0.03]
    >>> parse_values("tx.population", "1:10:4")
    [1, 4, 7, 10]
    """
    integer = path.split(".")[-1] in _INTEGER_FIELDS

    def num(s):
        try:
            v = float(s)
        except ValueError:
            raise InvalidValueError(f"--vary {path}={text}: {s!r} is not a number") from None
        if not math.isfinite(v):
            raise InvalidValueError(f"--vary {path}={text}: {s!r} is not finite")
        return v

    if ":" in text:
        bits = text.split(":")
        if len(bits) != 3:
            raise InvalidValueError(f"--vary {path}={text}: use START:STOP:NUM or a,b,c")
        a, b = num(bits[0]), num(bits[1])
        try:
            n = int(bits[2])
        except ValueError:
            raise InvalidValueError(
                f"--vary {path}={text}: NUM must be an integer, got {bits[2]!r}") from None
        if n < 1:
            raise InvalidValueError(f"--vary {path}={text}: NUM must be >= 1, got {n}")
        if n > MAX_POINTS:
            raise ProblemTooLargeError(
                f"--vary {path}={text}: {n} points is more than the {MAX_POINTS} a sweep "
                "takes; use fewer points (or several sweeps)")
        vals = np.linspace(a, b, n).tolist()
        if integer:
            # dict.fromkeys: the repeats dropped in order, in linear time (a
            # list's ``in`` made 200,000 points take minutes)
            return list(dict.fromkeys(int(round(v)) for v in vals))
        return [float(f"{v:.15g}") for v in vals]
    vals = [num(s) for s in text.split(",") if s.strip()]
    if not vals:
        raise InvalidValueError(f"--vary {path}={text}: no values")
    if integer:
        if any(not v.is_integer() for v in vals):
            raise InvalidValueError(f"--vary {path}={text}: {path} takes integers")
        return [int(v) for v in vals]
    return vals


def _check_out(out: Path) -> None:
    """Refuse an output file that cannot be written before the sweep runs
    (a missing directory, a directory in its place), not after it."""
    if out.is_dir():
        raise InvalidValueError(f"--out {out}: is a directory; give a file name")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise InvalidValueError(f"--out {out}: no directory {str(parent)!r}")


def _check_extras(args) -> None:
    """Refuse, before any point is solved, an option whose optional package
    is missing (the sweep used to run to the end and then fail writing)."""
    if args.out and not (args.csv or Path(args.out).suffix == ".csv"):
        require("pyarrow", "dist", f"--out {args.out} (a Parquet file; --csv needs nothing)")
    if args.store:
        require("pyarrow", "dist", "--store (Parquet parts)")
    if args.parallel or args.scheduler:
        require("distributed", "dist",
                "--parallel" if args.parallel else "--scheduler")


def cmd_sweep(args) -> int:
    from ..errors import ModelFileError
    from ..io import modelfile

    try:
        vary: dict = {}
        for item in args.vary:
            if "=" not in item:
                raise InvalidValueError(f"--vary {item}: use PATH=START:STOP:NUM or PATH=a,b,c")
            path, text = item.split("=", 1)
            path = path.strip()
            if path in vary:
                raise InvalidValueError(f"--vary {path} given twice")
            vary[path] = parse_values(path, text.strip())
        if args.out:
            _check_out(Path(args.out))
        _check_extras(args)
        net = modelfile.load(args.model)
        client = None
        if args.scheduler:
            from distributed import Client

            client = Client(args.scheduler)
        try:
            frame = sweep(net, vary, method=args.method, seed=args.seed, client=client,
                          parallel=args.parallel, store=args.store,
                          progress=None if args.progress else False)
        finally:
            if client is not None:
                client.close()
    except (ModelFileError, QModelsError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.out:
        out = Path(args.out)
        try:
            if args.csv or out.suffix == ".csv":
                frame.to_csv(out, index=False)
            else:
                frame.to_parquet(out, index=False)
        except OSError as e:
            print(f"error: --out {out}: {e}", file=sys.stderr)
            return 2
        print(f"{frame.attrs['points']} points x {len(frame) // frame.attrs['points']} rows "
              f"-> {out}")
    elif args.csv:
        frame.to_csv(sys.stdout, index=False)
    else:
        import pandas as pd

        with pd.option_context("display.max_rows", 40, "display.width", 120):
            print(frame.query("scope == 'class'").to_string(index=False))
    return 0


def register_cli(sub) -> None:
    """Add ``qmodels sweep`` to an argparse subparsers object."""
    p = sub.add_parser(
        "sweep", help="solve a model file over a grid of parameter values",
        description="Solve MODEL at every point of the product of the --vary axes and write a "
                    "tidy table (one row per point x class/station). Example: qmodels sweep "
                    "model.yaml --vary disk.service=0.005:0.05:10 --vary "
                    "tx.population=1:200:50 --method exact --out results.parquet")
    p.add_argument("model", metavar="MODEL", help="model file (.yaml, .yml, .json)")
    p.add_argument("--vary", action="append", required=True, metavar="PATH=VALUES",
                   help="parameter path and values: START:STOP:NUM (evenly spaced, inclusive) "
                        "or a,b,c; repeat for more axes")
    p.add_argument("--method", default="exact", help="any `qmodels methods` name")
    p.add_argument("--seed", type=int, default=None, help="random seed (method sim)")
    p.add_argument("--out", default=None, help="output file: .parquet (default) or .csv")
    p.add_argument("--csv", action="store_true", help="write CSV (to --out, or stdout)")
    p.add_argument("--store", default=None, help="resumable store directory (Parquet parts)")
    p.add_argument("--parallel", action="store_true", help="local dask cluster, one per core")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="dask scheduler address, e.g. tcp://host:8786")
    p.add_argument("--progress", action="store_true", help="show a progress bar")
    p.set_defaults(func=cmd_sweep)
