"""The working-set switch point and the super-linear speed-up below it.

A data set of ``data`` bytes is split evenly over n nodes with M bytes of
memory each (the KOSMOS Graph Analytics observation: the speed-up is
super-linear until each node's share fits in memory).

Model (:class:`qmodels.WorkingSet`, ``access="random"``)
--------------------------------------------------------
Each node touches its share d = data / n uniformly at random (the
independent reference model with uniform popularity).  Whatever the
demand-paging policy (LRU, FIFO, RANDOM), by symmetry every page is
resident with probability M / d once d > M, so the fraction of touches
that miss is (d - M) / d, and the bytes fetched from the slow tier per
pass are d (d - M) / d = d - M.  With t seconds per byte in memory and s
extra seconds per byte spilled::

    D(n) = d t + max(d - M, 0) s,        d = data / n

Derived here with sympy:

- the switch point, d = M:  n* = data / M;
- D is continuous there: both sides equal M t;
- below n* the speed-up over one node S(n) = D(1) / D(n) satisfies
  S(n) / n = (data (t + s) - M s) / (data (t + s) - n M s) > 1 for n > 1
  (super-linear), and S(n*) = n* (1 + (s / t)(1 - M / data));
- above n*, D = data t / n: linear.

Checks: the formulas against :class:`qmodels.WorkingSet` (symbolic and
numeric), the symmetry argument against the item-by-item cache simulator
(uniform popularity: miss ratio (d - M)/d for LRU, FIFO and RANDOM) and
against Che's approximation, which is exact for uniform popularity.

Sources: H. Che, Y. Tung & Z. Wang, IEEE JSAC 20(7), 2002 (characteristic
time); the model is a planner's rule stated in :class:`qmodels.WorkingSet`
with what it ignores (cold start, skew, overlap of I/O with compute,
communication, imbalance).
"""

from __future__ import annotations

import os
import sys

import sympy as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _check import Checker, show  # noqa: E402


def main() -> int:
    import qmodels as qm

    print("Working-set switch point and super-linear speed-up")
    ck = Checker("working_set_switch")
    data, M, t, s, n = sp.symbols("data M t s n", positive=True)
    d = data / n
    spilling = d * t + (d - M) * s          # d > M
    fitting = d * t                         # d <= M
    (n_star,) = sp.solve(sp.Eq(d, M), n)
    show("switch point", sp.Eq(sp.Symbol("n^*"), n_star))
    ws = qm.WorkingSet(data=data, nodes=n, memory=M, time_per_byte=t, spill_time_per_byte=s)
    ck.same("n* = data / M (WorkingSet.switch_nodes)", ws.switch_nodes, data / M)
    ck.same("n* solves d = M", n_star, data / M)
    ck.same("WorkingSet piece below n*", ws.piecewise().args[0][0], spilling)
    ck.same("WorkingSet piece above n*", ws.piecewise().args[1][0], fitting)

    left, right = spilling.subs(n, n_star), fitting.subs(n, n_star)
    show("D(n*), from both sides", "D(n^*) = " + sp.latex(sp.simplify(right)))
    ck.same("continuous at n*", left, right)
    ck.same("D(n*) = M t", right, M * t)

    D1 = spilling.subs(n, 1)  # one node spills (data > M)
    ratio = sp.simplify(D1 / spilling / n)
    show("S(n)/n below n*", r"\frac{S(n)}{n} = " + sp.latex(ratio))
    want = (data * (t + s) - M * s) / (data * (t + s) - n * M * s)
    ck.same("S(n)/n = (data(t+s) - M s)/(data(t+s) - n M s)", ratio, want)
    # > 1 for n > 1: numerator - denominator = (n - 1) M s > 0
    ck.same("numerator - denominator = (n - 1) M s",
            sp.numer(sp.together(want)) - sp.denom(sp.together(want)), (n - 1) * M * s)
    s_star = sp.simplify(D1 / right)
    show("S(n*)", "S(n^*) = " + sp.latex(s_star))
    ck.same("S(n*) = n* (1 + (s/t)(1 - M/data))", s_star, n_star * (1 + s / t * (1 - M / data)))

    # numbers: 64 GB over 8 GB nodes, 1 ns/B in memory, 10 ns/B spilled
    num = dict(data=64 * 10**9, memory=8 * 10**9, time_per_byte=sp.Rational(1, 10**9),
               spill_time_per_byte=sp.Rational(1, 10**8))
    base = qm.WorkingSet(nodes=1, **num).demand
    print("  nodes  demand [s]  speed-up  speed-up / nodes")
    for k in (1, 2, 4, 6, 8, 16, 32):
        w = qm.WorkingSet(nodes=k, **num)
        print(f"  {k:5d}  {float(w.demand):10.3f}  {float(w.speedup):8.3f}  "
              f"{float(w.speedup) / k:8.3f}")
        ck.same(f"speed-up at {k} nodes", w.speedup, base / w.demand)
        if 1 < k <= 8:
            ck.true(f"super-linear at {k} nodes", w.speedup > k, str(w.speedup))
        if k >= 8:
            at_star = qm.WorkingSet(nodes=8, **num).speedup
            ck.same(f"linear from n* on: S({k}) / S(8) = {k}/8", w.speedup / at_star,
                    sp.Rational(k, 8))
            ck.same(f"D = data t / n at {k} nodes", w.demand, sp.Rational(64, k))

    # the symmetry argument against simulation and Che (uniform popularity)
    pages, resident = 400, 100
    for policy in ("lru", "fifo", "random"):
        cache = qm.Cache(resident, qm.Zipf(0.0, pages), policy)
        ck.close(f"Che miss ratio, uniform, {policy}", cache.miss_ratio,
                 (pages - resident) / pages, rel=1e-12)
        sim = cache.simulate(300_000, seed=4)
        ck.close(f"simulated miss ratio, uniform, {policy}", 1 - sim.hit_ratio,
                 (pages - resident) / pages, abs_=3 * sim.half_width)
    return ck.done()


if __name__ == "__main__":
    sys.exit(main())
