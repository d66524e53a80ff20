"""Accuracy of Che's approximation (``qm.Cache``) for LRU, FIFO and RANDOM.

``python -m validation.cache_che_accuracy [--items 1000] [--requests 2000000] [--seed 1]``

Two tables:

* against the exact stationary laws on a catalog of 7 items (every content
  state enumerated): King's for LRU (ordered contents, prod_k q_{i_k} /
  (1 - q_{i_1} - ... - q_{i_{k-1}})) and Gelenbe's product form for FIFO
  and RANDOM (P(S) proportional to prod_{i in S} q_i); the error of Che's
  approximation where it is at its worst, tiny catalogs;
* against the item-by-item simulator (``Cache.simulate``, batch means, 95 %
  interval) on a Zipf catalog of ``--items`` items, for alpha in 0.6, 0.8,
  1.0, 1.2 and capacities 1 %, 5 % and 20 % of the catalog.

Each row prints Che's hit ratio, the reference, their difference and (for
simulation) the interval's half-width; the last line per table gives the
worst absolute difference per policy.
"""

from __future__ import annotations

import argparse
import itertools

import qmodels as qm
from qmodels.physical.cache import exact_hit_ratio

ALPHAS = (0.6, 0.8, 1.0, 1.2)
POLICIES = ("lru", "fifo", "random")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--requests", type=int, default=2_000_000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)

    print("Che vs exact, 7 items")
    print(f"{'policy':7} {'alpha':>5} {'C':>3} {'che':>8} {'exact':>8} {'diff':>8}")
    worst = dict.fromkeys(POLICIES, 0.0)
    for policy, alpha, C in itertools.product(POLICIES, ALPHAS, (1, 2, 3, 5)):
        z = qm.Zipf(alpha, 7)
        ref = exact_hit_ratio(z.probabilities.tolist(), C, policy)
        che = qm.Cache(C, z, policy).hit_ratio
        worst[policy] = max(worst[policy], abs(che - ref))
        print(f"{policy:7} {alpha:5.1f} {C:3d} {che:8.4f} {ref:8.4f} {che - ref:+8.4f}")
    print("worst |che - exact|:", {k: round(v, 4) for k, v in worst.items()})

    n = a.items
    print(f"\nChe vs simulation, Zipf catalog of {n} items, {a.requests} requests, "
          f"seed {a.seed}")
    print(f"{'policy':7} {'alpha':>5} {'C':>5} {'che':>8} {'sim':>8} {'+-95%':>7} {'diff':>8}")
    worst = dict.fromkeys(POLICIES, 0.0)
    for policy, alpha, frac in itertools.product(POLICIES, ALPHAS, (0.01, 0.05, 0.2)):
        C = max(1, round(frac * n))
        c = qm.Cache(C, qm.Zipf(alpha, n), policy)
        s = c.simulate(a.requests, seed=a.seed)
        d = c.hit_ratio - s.hit_ratio
        worst[policy] = max(worst[policy], abs(d))
        print(f"{policy:7} {alpha:5.1f} {C:5d} {c.hit_ratio:8.4f} {s.hit_ratio:8.4f} "
              f"{s.half_width:7.4f} {d:+8.4f}")
    print("worst |che - sim|:", {k: round(v, 4) for k, v in worst.items()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
