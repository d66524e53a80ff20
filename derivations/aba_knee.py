"""The knee of the asymptotic bounds: the saturation population N*.

Derivation
----------
Asymptotic bound analysis (Lazowska et al., *QSP*, 1984, sec. 5.2, Table
5.3; Denning & Buzen 1978): for a closed class with total demand D,
largest demand D_max and think time Z,

    X(N) <= min(N / (D + Z), 1 / D_max),   R(N) >= max(D, N D_max - Z).

The two throughput lines cross where N / (D + Z) = 1 / D_max:

    N* = (D + Z) / D_max                                 (QSP eq. 5.3)

and the two response-time lines cross at the same N (D = N D_max - Z).

Checks: N* from :func:`qmodels.symbolic.symbolic_bounds` on a two-station
network and from :func:`qmodels.laws.saturation_population` at sampled
points; the switch point of :func:`qmodels.shifts.response_time_asymptote`
in N; and exact MVA (:func:`qmodels.mva.mva`) stays below both lines, on
either side of the knee.
"""

from __future__ import annotations

import math
import os
import sys

import sympy as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _check import Checker, show  # noqa: E402


def derive():
    N, D, Dmax, Z = sp.symbols("N D D_max Z", positive=True)
    n_star = sp.solve(sp.Eq(N / (D + Z), 1 / Dmax), N)[0]
    n_star_r = sp.solve(sp.Eq(D, N * Dmax - Z), N)[0]
    return dict(N=N, D=D, Dmax=Dmax, Z=Z, n_star=n_star, n_star_r=n_star_r)


def main() -> int:
    from qmodels.analytic.laws import saturation_population
    from qmodels.analytic.mva import mva
    from qmodels.model import Closed, Network, Queue
    from qmodels.symbolic import symbolic_bounds
    from qmodels.symbolic.shifts import response_time_asymptote

    d = derive()
    print("ABA knee N*")
    show("throughput lines cross at", sp.Eq(sp.Symbol("N^*"), d["n_star"]))
    show("response-time lines cross at", sp.Eq(sp.Symbol("N^*"), d["n_star_r"]))
    ck = Checker("aba_knee")
    ck.same("both crossings coincide", d["n_star"], d["n_star_r"])
    Da, Db, Z = sp.symbols("D_a D_b Z", positive=True)
    N = sp.Symbol("N", positive=True, integer=True)
    net = Network([Queue("a", Da), Queue("b", Db)],
                  [Closed("tx", N, think_time=Z, visits={"a": 1, "b": 1})])
    b = symbolic_bounds(net)
    show("N* of the two-queue network", b.n_star)
    ck.same("symbolic_bounds N* = (D + Z)/Dmax", b.n_star,
            d["n_star"].subs({d["D"]: Da + Db, d["Dmax"]: sp.Max(Da, Db), d["Z"]: Z}))
    fN = sp.lambdify((d["D"], d["Dmax"], d["Z"]), d["n_star"])
    for da, db, z in ((0.2, 0.3, 1.0), (0.05, 0.01, 0.0), (1.0, 1.0, 10.0)):
        numnet = Network([Queue("a", da), Queue("b", db)],
                         [Closed("tx", 5, think_time=z, visits={"a": 1, "b": 1})])
        ns = fN(da + db, max(da, db), z)
        ck.close(f"N* vs laws.saturation_population at {da, db, z}", ns,
                 saturation_population(numnet), rel=1e-12)
        # the R asymptote switches from 'no contention' to the bottleneck at N*
        n = sp.Symbol("n", positive=True)
        a = response_time_asymptote(numnet.with_population(n), n)
        ck.close(f"R asymptote switch at N* ({da, db, z})", a.switch_points[0].value, ns,
                 rel=1e-12)
        for pop in (1, max(1, math.floor(ns)), math.ceil(ns) + 1, 4 * math.ceil(ns)):
            r = mva(numnet.with_population(pop))
            x_hi = min(pop / (da + db + z), 1 / max(da, db))
            ck.true(f"X({pop}) <= ABA at {da, db, z}", r.X["tx"] <= x_hi * (1 + 1e-12),
                    f"X = {r.X['tx']}, bound {x_hi}")
            ck.true(f"R({pop}) >= ABA at {da, db, z}",
                    r.R["tx"] >= max(da + db, pop * max(da, db) - z) * (1 - 1e-12))
    return ck.done()


if __name__ == "__main__":
    sys.exit(main())
