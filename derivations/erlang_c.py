"""Erlang C: the probability of waiting in M/M/c.

Derivation
----------
Birth-death chain with birth rate lambda and death rate min(n, c) mu
(Kleinrock, *Queueing Systems* vol. 1, 1975, sec. 3.5; Gross et al.,
*Fundamentals of Queueing Theory*, 4th ed., 2008, sec. 2.3).  With offered
load a = lambda / mu and rho = a / c < 1, cut balance gives

    p_n = p_0 a^n / n!                  n <= c
    p_n = p_0 a^c / c! rho^(n - c)      n >= c
    1/p_0 = sum_{n<c} a^n/n! + a^c / (c! (1 - rho))
    C(c, a) = P(N >= c) = p_0 a^c / (c! (1 - rho))          (Erlang C)
    W_q = C(c, a) / (c mu - lambda),   R = W_q + 1/mu.

Checks: c = 1 gives P(wait) = rho (M/M/1); C(c, a) from
:func:`qmodels.queues.erlang_c` and R from :func:`qmodels.queues.mmc` and
from the open-network solver :func:`qmodels.mva.mva` (a c-server station)
at sampled points; and P(N >= c) from the truncated chain solved
numerically.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import sympy as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _check import Checker, show, stationary  # noqa: E402


def _stable(e):
    e = sp.piecewise_fold(e)
    return e.args[0][0] if isinstance(e, sp.Piecewise) else e


def derive(c: int):
    """Erlang C for a given integer c, with the load a a symbol."""
    a, mu = sp.symbols("a mu", positive=True)
    rho = a / c
    m = sp.Symbol("m", integer=True, nonnegative=True)
    head = sum(a**n / sp.factorial(n) for n in range(c))
    # the tail sum_{n>=c} a^c/c! rho^(n-c), a geometric series in rho < 1
    tail = _stable(sp.summation(a**c / sp.factorial(c) * rho**m, (m, 0, sp.oo)))
    p0 = 1 / (head + tail)
    C = sp.factor(sp.simplify(tail * p0))
    lam = a * mu
    Wq = sp.simplify(C / (c * mu - lam))
    R = sp.simplify(Wq + 1 / mu)
    return dict(a=a, mu=mu, c=c, p0=sp.simplify(p0), C=C, Wq=Wq, R=R)


def general_form():
    a, c = sp.symbols("a c", positive=True)
    n = sp.Symbol("n", integer=True)
    rho = a / c
    tail = a**c / (sp.factorial(c) * (1 - rho))
    return sp.Eq(sp.Symbol("C(c, a)"), tail / (sp.Sum(a**n / sp.factorial(n), (n, 0, c - 1)) + tail))


def main() -> int:
    from qmodels.analytic.mva import mva
    from qmodels.analytic.queues import erlang_c, mmc
    from qmodels.model import Network, Open, Queue

    print("Erlang C (M/M/c)")
    show("general form", general_form())
    ck = Checker("erlang_c")
    for c in (1, 2, 3, 4):
        d = derive(c)
        show(f"C({c}, a)", d["C"])
        a, mu = d["a"], d["mu"]
        if c == 1:
            ck.same("c = 1: P(wait) = rho", d["C"], a)
        fC = sp.lambdify(a, d["C"])
        fR = sp.lambdify((a, mu), d["R"])
        for rho in (0.2, 0.7, 0.95):
            av, muv = rho * c, 2.0
            ck.close(f"C({c}, {av:.3g}) vs erlang_c", fC(av), erlang_c(c, av), rel=1e-10)
            lam = av * muv
            ck.close(f"R vs mmc, c={c}, rho={rho}", fR(av, muv),
                     mmc(lam, 1 / muv, c).response_time, rel=1e-10)
            net = Network([Queue("srv", 1 / muv, servers=c)], [Open("j", lam, visits={"srv": 1})])
            ck.close(f"R vs mva, c={c}, rho={rho}", fR(av, muv), mva(net).R["j"], rel=1e-9)
            K = 1500 if rho > 0.9 else 400
            Q = np.zeros((K, K))
            for i in range(K - 1):
                Q[i, i + 1] = lam
                Q[i + 1, i] = min(i + 1, c) * muv
            np.fill_diagonal(Q, -Q.sum(axis=1))
            pi = stationary(Q)
            ck.close(f"C({c}, {av:.3g}) vs truncated CTMC", fC(av), pi[c:].sum(), rel=1e-8)
    return ck.done()


if __name__ == "__main__":
    sys.exit(main())
