"""Closed fork-join networks: ``method='forkjoin'`` (the independence
recursion) beside ``method='forkjoin-varki'`` (Varki's mean value
technique: the mean of the two bounds, and the stage equation alone)
against the exact chain of the queue lengths.

``python -m validation.forkjoin_varki_accuracy [--quick] [--max-states M] [--sim]``

The catalog: one closed class; one fork-join of k = 2, 3, 4, 6 or 8
branches, each one exponential FCFS queue or two in tandem, all of mean
1 s (balanced) or spread from 0.5 to 1.5 s (unbalanced); with or without a
0.5 s queue and a 1 s delay outside the fork-join; think time 0 or 2 s;
N = 1, 2, 3, 5, 10, 20, 30 jobs (:func:`catalog`, the networks of
:func:`validation.forkjoin_accuracy.closed_net`).  The reference is the
exact chain of :mod:`validation.forkjoin_exact` for every network of at
most ``--max-states`` states (default 30,000, as the ``forkjoin-closed-exact``
catalog of ``python -m validation.envelopes``); larger ones are skipped,
or with ``--sim`` they alone are compared with the simulator (10
replications of 500 (N + 2) s each; the half-width is printed).

Prints, per method, the largest and mean relative error of the class
throughput X, the class response time R (think time excluded) and the
fork-join time R_fj (fork to join), and the networks of the largest
errors.
"""

from __future__ import annotations

import argparse
import itertools
import warnings

import numpy as np

import qmodels as qm
from qmodels.errors import ProblemTooLargeError

from . import forkjoin_exact
from .forkjoin_accuracy import closed_net

__all__ = ["catalog", "METHODS", "measure", "main"]

#: (label, function name, keyword arguments)
METHODS = (("forkjoin", "forkjoin", {}),
           ("forkjoin-varki", "forkjoin_varki", {}),
           ("forkjoin-varki mve", "forkjoin_varki", {"variant": "mve"}))


def catalog(quick: bool = False) -> list:
    """(k, N, Z, spread, tandem, outside) of every network, in order."""
    ks = (2, 4, 8) if quick else (2, 3, 4, 6, 8)
    Ns = (1, 2, 5, 20) if quick else (1, 2, 3, 5, 10, 20, 30)
    return list(itertools.product(ks, Ns, (0.0, 2.0), (False, True), (False, True),
                                  (False, True)))


def states(args) -> int:
    """The number of states of the exact chain of network ``args`` of
    :func:`catalog` (all reachable): sum over m = 0..N jobs in the fork-join
    of the branch configurations with largest branch total m, C(m + L, L)^k
    - C(m - 1 + L, L)^k for branches of L queues, times the placements
    C(N - m + r - 1, r - 1) of the other jobs over the r other places
    (thinking when Z > 0, the outside queue and delay)."""
    from math import comb

    k, N, Z, _, tandem, outside = args
    L = 2 if tandem else 1
    r = (1 if Z > 0 else 0) + (2 if outside else 0)
    total = 0
    for m in range(N + 1):
        fj = comb(m + L, L) ** k - (comb(m - 1 + L, L) ** k if m > 0 else 0)
        rest = N - m
        place = (1 if rest == 0 else 0) if r == 0 else comb(rest + r - 1, r - 1)
        total += fj * place
    return total


def exact_catalog(max_states: int = 30_000) -> list:
    """The networks of :func:`catalog` whose exact chain has at most
    ``max_states`` states."""
    return [a for a in catalog() if states(a) <= max_states]


def _simulated(net, seed: int, horizon: float) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = qm.simulate(net, seed=seed, horizon=horizon, replications=10, progress=False)
    hw = max(s.X["c"].half_width / float(s.X["c"]), s.R["fj"].half_width / float(s.R["fj"]))
    return {"X": float(s.X["c"]), "R": float(s.R["c"]), "R_station": {"fj": float(s.R["fj"])},
            "states": -1, "hw": hw}


def measure(args, max_states: int, sim: bool = False, seed: int = 1):
    """{"args", "states", method label: (eX, eR, eRfj)} of one network
    against the exact chain, or with ``sim`` the simulator (10
    replications of 500 (N + 2) s; "states" -1, "hw" its largest relative
    half-width) when the chain passes ``max_states``; else None."""
    net = closed_net(*args)
    try:
        ref = forkjoin_exact.solve(net, max_states=max_states)
    except ProblemTooLargeError:
        if not sim:
            return None
        ref = _simulated(net, seed, 500.0 * (args[1] + 2))
    out = {"args": args, "states": ref["states"], "hw": ref.get("hw")}
    for label, fn, kw in METHODS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = getattr(qm, fn)(net, **kw)
        X, R, Rf = float(r.X["c"]), float(r.R["c"]), float(r.R["fj"])
        out[label] = ((X - ref["X"]) / ref["X"], (R - ref["R"]) / ref["R"],
                      (Rf - ref["R_station"]["fj"]) / ref["R_station"]["fj"])
    return out


def summary(rows) -> dict:
    """Per method: {"X"|"R"|"R_fj": (max |err|, mean |err|, signed err of the max)}."""
    out = {}
    for label, _, _ in METHODS:
        e = np.array([r[label] for r in rows])
        out[label] = {w: (float(np.abs(e[:, i]).max()), float(np.abs(e[:, i]).mean()),
                          int(np.abs(e[:, i]).argmax()))
                      for i, w in enumerate(("X", "R", "R_fj"))}
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a smaller grid")
    p.add_argument("--max-states", type=int, default=30_000)
    p.add_argument("--sim", action="store_true",
                   help="only the networks over the state budget, against the simulator")
    a = p.parse_args(argv)
    rows, skipped = [], 0
    print("k N Z spread tandem outside states | " + " | ".join(
        f"{lab}: X R R_fj" for lab, _, _ in METHODS), flush=True)
    for i, args in enumerate(catalog(a.quick)):
        small = states(args) <= a.max_states
        if a.sim == small:
            # --sim: the exact comparison has it; else: over the state budget
            skipped += not small
            continue
        r = measure(args, a.max_states, a.sim, seed=1000 + i)
        if r is None:
            skipped += 1
            continue
        rows.append(r)
        k, N, Z, sp, td, out = args
        print(f"{k} {N:2d} {Z:g} {int(sp)} {int(td)} {int(out)} {r['states']:6d} | " + " | ".join(
            " ".join(f"{100 * x:+6.2f}" for x in r[lab]) for lab, _, _ in METHODS)
            + (f" | sim hw {100 * r['hw']:.2f} %" if r["hw"] is not None else ""), flush=True)
    if a.sim:
        print(f"{len(rows)} networks over the state budget, against the simulator (largest "
              f"relative half-width {100 * max(r['hw'] for r in rows):.2f} %)")
    else:
        print(f"{len(rows)} networks against the exact chain ({skipped} over the state "
              "budget skipped)")
    def where(args):
        return " ".join(f"{x:g}" if isinstance(x, float) else str(int(x)) for x in args)

    for label, s in summary(rows).items():
        print(f"{label}: " + "; ".join(
            f"{w} max {100 * mx:.2f} % (k N Z spread tandem outside = {where(rows[i]['args'])})"
            f", mean {100 * mn:.2f} %" for w, (mx, mn, i) in s.items()))


if __name__ == "__main__":
    main()
