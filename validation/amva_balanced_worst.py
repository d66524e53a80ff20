"""The worst errors of Schweitzer and Linearizer over the balanced networks
of ``tests/test_multiclass.py`` (``test_schweitzer_close_to_exact_on_balanced``).

``python -m validation.amva_balanced_worst [--classes 3]``

Enumerates the whole space that test's strategy draws from: K = 2..6
identical single-server queues; every multiset of 1..``--classes`` closed
classes, each with N = 1..8 jobs, think time 0 or 2 s and the same demand
0.2, 0.5 or 1.0 s at every station (class order does not matter: the
methods treat classes alike).  For each network, max_c |X_c - X_c(exact)| /
X_c(exact) against the exact multi-class recursion; prints the worst
network of each method.  With ``--classes 3`` that is 104,120 networks,
about 10 minutes on one core (2026-11-23: Schweitzer 13.30 % at K = 2 with
classes (N, Z, D) = (1, 0, 0.2), (3, 2, 0.2), (6, 2, 0.2); Linearizer
0.60 %).  The test's tolerances are these maxima, rounded up.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

import qmodels as qm
from qmodels.analytic.amva import linearizer, schweitzer
from qmodels.analytic.multiclass import solve_exact

#: one class's choices: (population, think time, demand at every station)
CLASS_CHOICES = [(n, z, d) for n in range(1, 9) for z in (0.0, 2.0) for d in (0.2, 0.5, 1.0)]


def balanced(K: int, classes) -> qm.Network:
    return qm.Network([qm.Queue(f"s{k}") for k in range(K)],
                      [qm.Closed(f"c{i}", n, think_time=z, demands={f"s{k}": d for k in range(K)})
                       for i, (n, z, d) in enumerate(classes)])


def worst(max_classes: int) -> dict:
    """{method: (worst relative error, (K, classes))} over the space."""
    out = {"schweitzer": (0.0, None), "linearizer": (0.0, None)}
    for C in range(1, max_classes + 1):
        for classes in itertools.combinations_with_replacement(CLASS_CHOICES, C):
            for K in range(2, 7):
                net = balanced(K, classes)
                ex = np.asarray(solve_exact(net).class_throughput)
                for name, solve in (("schweitzer", schweitzer), ("linearizer", linearizer)):
                    x = np.asarray(solve(net).class_throughput)
                    err = float(np.max(np.abs(x - ex) / ex))
                    if err > out[name][0]:
                        out[name] = (err, (K, classes))
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--classes", type=int, default=3, help="up to this many classes (1-3)")
    args = ap.parse_args(argv)
    for name, (err, where) in worst(args.classes).items():
        K, classes = where
        print(f"{name}: worst {100 * err:.2f} % at K = {K}, classes (N, Z, D) = {list(classes)}")


if __name__ == "__main__":
    main()
