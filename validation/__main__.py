"""``python -m validation --out DIR [--fast] [--seed S] [--case NAME ...] [--workers K]``.

(or ``--scheduler ADDRESS`` of a dask cluster instead of ``--workers``)

Exit status 0 when the exact references sit inside the simulated intervals
as often as chance allows (see validation/report.py), 1 otherwise, 2 on a
usage error.
"""

from __future__ import annotations

import argparse
import sys

from ._spread import add_arguments, check
from .report import run, write_report


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation", description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="folder for report.md and the plots")
    p.add_argument("--fast", action="store_true", help="a small subset with short runs")
    p.add_argument("--seed", type=int, default=1, help="base seed (default 1)")
    p.add_argument("--case", action="append", help="run only this case (repeatable)")
    p.add_argument("--strict", action="store_true",
                   help="non-product-form (CTMC) checks also decide the exit status")
    p.add_argument("--no-sim", action="store_true", help="analytic and CTMC columns only")
    add_arguments(p)
    args = p.parse_args(argv)
    check(p, args)

    def progress(msg):
        print(msg, file=sys.stderr, flush=True)

    try:
        reports = run(args.case, seed=args.seed, fast=args.fast,
                      simulate=None if args.no_sim else "default", progress=progress,
                      workers=args.workers, scheduler=args.scheduler)
    except KeyError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    v = write_report(reports, args.out, seed=args.seed, fast=args.fast, strict=args.strict)
    for kind in ("product-form", "non-product-form"):
        t = v[kind]
        print(f"{kind}: {t['checks']} checks, {t['misses']} misses (allowance "
              f"{t['allowance']}), {t['gross']} gross, clustered: "
              f"{', '.join(t['bad_cases']) or 'none'}: {'PASS' if t['passed'] else 'FAIL'}")
    print(f"{args.out}/report.md: {'PASS' if v['passed'] else 'FAIL'}")
    return 0 if v["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
