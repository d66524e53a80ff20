"""Closed MVA of two queues and a delay, N = 1..3, in closed form.

Derivation
----------
Two single-server queues with demands D_1, D_2 and a think time (delay) Z.
The exact MVA recursion (Reiser & Lavenberg 1980; Lazowska et al., *QSP*,
1984, sec. 6.3.2, Algorithm 6.1):

    R_k(n) = D_k (1 + Q_k(n-1)),  X(n) = n / (Z + R_1(n) + R_2(n)),
    Q_k(n) = X(n) R_k(n),         Q_k(0) = 0,

carried out with sympy by :func:`qmodels.symbolic.mva_symbolic`, gives X(N),
R(N) = N/X(N) - Z and Q_k(N) as rational functions.

Checks: (1) the product form: the normalising constant
G(N) = sum over n_0 + n_1 + n_2 = N of Z^n_0/n_0! D_1^n_1 D_2^n_2, built
here by enumerating the states, gives X(N) = G(N-1)/G(N) (Buzen 1973;
Lazowska et al. 1984, sec. 6.2 / ch. 18): identical expressions;
(2) the numeric solver :func:`qmodels.mva.mva` at sampled points;
(3) the asymptotic bounds X(N) <= min(1/D_max, N/(D + Z)).
"""

from __future__ import annotations

import os
import sys

import sympy as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _check import Checker, show  # noqa: E402

D1, D2, Z = sp.symbols("D_1 D_2 Z", positive=True)


def network(N):
    from qmodels.model import Closed, Network, Queue

    return Network([Queue("q1", D1), Queue("q2", D2)],
                   [Closed("tx", N, think_time=Z, visits={"q1": 1, "q2": 1})])


def G(n):
    """Product-form normalising constant by enumeration of the states."""
    total = sp.Integer(0)
    for n1 in range(n + 1):
        for n2 in range(n + 1 - n1):
            n0 = n - n1 - n2
            total += Z**n0 / sp.factorial(n0) * D1**n1 * D2**n2
    return total


def main() -> int:
    from qmodels.analytic.mva import mva
    from qmodels.symbolic import mva_symbolic, substitute

    print("Closed MVA: two queues (D_1, D_2) and think time Z")
    ck = Checker("mva_two_queues_delay")
    points = [(0.1, 0.2, 1.0), (0.5, 0.5, 0.0), (2.0, 0.01, 5.0), (0.3, 0.7, 0.2)]
    for N in (1, 2, 3):
        r = mva_symbolic(network(N), simplify="factor")
        show(f"X({N})", r.X["tx"])
        show(f"R({N})", r.R["tx"])
        show(f"Q_1({N})", r.Q["q1"])
        ck.same(f"X({N}) = G({N - 1})/G({N})", r.X["tx"], G(N - 1) / G(N))
        # Q_1(N) = sum_{i=1..N} D_1^i G(N-i) / G(N)  (Buzen 1973)
        ck.same(f"Q_1({N}) from G", r.Q["q1"],
                sum(D1**i * G(N - i) for i in range(1, N + 1)) / G(N))
        fX = r.lambdify("X", "tx", args=[D1, D2, Z])
        fR = r.lambdify("R", "tx", args=[D1, D2, Z])
        for d1, d2, z in points:
            num = mva(substitute(network(N), {D1: d1, D2: d2, Z: z}))
            ck.close(f"X({N}) vs mva at {d1, d2, z}", fX(d1, d2, z), num.X["tx"], rel=1e-12)
            ck.close(f"R({N}) vs mva at {d1, d2, z}", fR(d1, d2, z), num.R["tx"], rel=1e-12)
            ck.true(f"X({N}) within ABA at {d1, d2, z}",
                    fX(d1, d2, z) <= min(1 / max(d1, d2), N / (d1 + d2 + z)) * (1 + 1e-12))
    return ck.done()


if __name__ == "__main__":
    sys.exit(main())
