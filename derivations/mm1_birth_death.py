"""M/M/1 from the birth-death balance equations.

Derivation
----------
States n = 0, 1, 2, ... jobs present; arrivals at rate lambda move n -> n+1,
completions at rate mu move n -> n-1.  Balance across the cut between n and
n+1 (Kleinrock, *Queueing Systems* vol. 1, 1975, sec. 3.2, eq. 3.8-3.11;
Gross, Shortle, Thompson & Harris, *Fundamentals of Queueing Theory*, 4th
ed., 2008, sec. 2.2):

    lambda p_n = mu p_{n+1}   =>   p_n = rho^n p_0,  rho = lambda / mu
    sum_n p_n = 1 (rho < 1)    =>   p_0 = 1 - rho
    L = sum_n n p_n = rho / (1 - rho),   R = L / lambda = 1 / (mu - lambda)
                                        (Little's law, Little 1961)

Checks: the same expressions from :func:`qmodels.queues.mm1` (symbolic);
the open-network solver :func:`qmodels.mva.mva` at sampled points; and the
stationary vector of the truncated generator, solved numerically.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import sympy as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _check import Checker, show, stationary  # noqa: E402


def _stable(e):
    """The branch of a sympy series result that holds for |rho| < 1."""
    e = sp.piecewise_fold(e)
    return e.args[0][0] if isinstance(e, sp.Piecewise) else e


def derive():
    lam, mu = sp.symbols("lambda mu", positive=True)
    rho = sp.Symbol("rho", positive=True)
    n = sp.Symbol("n", integer=True, nonnegative=True)
    p = sp.Function("p")
    p0 = sp.Symbol("p_0", positive=True)
    # cut balance lambda p_n = mu p_{n+1}, i.e. p_{n+1} = rho p_n, solved
    # as a first-order recurrence
    pn = sp.rsolve(p(n + 1) - rho * p(n), p(n), {p(0): p0})
    # normalisation: a geometric series, convergent for rho < 1
    p0_val = sp.solve(sp.Eq(_stable(sp.summation(pn, (n, 0, sp.oo))), 1), p0)[0]
    pn = pn.subs(p0, p0_val)
    L = sp.simplify(_stable(sp.summation(n * pn, (n, 0, sp.oo))))
    back = {rho: lam / mu}
    L = sp.simplify(L.subs(back))
    R = sp.simplify(L / lam)  # Little's law
    W = sp.simplify(R - 1 / mu)
    return dict(lam=lam, mu=mu, n=n, rho=lam / mu, p0=sp.simplify(p0_val.subs(back)),
                pn=sp.simplify(pn.subs(back)), L=L, R=R, W=W)


def main() -> int:
    from qmodels.analytic.mva import mva
    from qmodels.analytic.queues import mm1
    from qmodels.model import Network, Open, Queue

    d = derive()
    lam, mu = d["lam"], d["mu"]
    print("M/M/1 from the birth-death balance equations")
    show("cut balance", r"\lambda p_n = \mu p_{n+1}")
    show("p_n", d["pn"])
    show("p_0", d["p0"])
    show("L", d["L"])
    show("R", d["R"])
    show("W_q", d["W"])
    ck = Checker("mm1_birth_death")
    ck.same("p_0 = 1 - rho", d["p0"], 1 - lam / mu)
    ck.same("R = 1/(mu - lambda)", d["R"], 1 / (mu - lam))
    q = mm1(lam, 1 / mu)
    ck.same("L equals qmodels.queues.mm1 (symbolic)", d["L"], q.queue_length)
    ck.same("R equals qmodels.queues.mm1 (symbolic)", d["R"], q.response_time)
    ck.same("W equals qmodels.queues.mm1 (symbolic)", d["W"], q.waiting_time)
    fL = sp.lambdify((lam, mu), d["L"])
    fR = sp.lambdify((lam, mu), d["R"])
    for lv, mv in ((1.0, 2.0), (0.9, 1.0), (3.0, 10.0), (0.05, 0.06)):
        net = Network([Queue("srv", 1 / mv)], [Open("jobs", lv, visits={"srv": 1})])
        r = mva(net)
        ck.close(f"R vs mva at lambda={lv}, mu={mv}", fR(lv, mv), r.R["jobs"], rel=1e-12)
        # truncated chain: K states, solved numerically
        K = 400 if lv / mv < 0.95 else 2000
        Qg = np.zeros((K, K))
        for i in range(K - 1):
            Qg[i, i + 1] = lv
            Qg[i + 1, i] = mv
        np.fill_diagonal(Qg, -Qg.sum(axis=1))
        pi = stationary(Qg)
        ck.close(f"L vs truncated CTMC at rho={lv / mv:.3g}", fL(lv, mv), pi @ np.arange(K),
                 rel=1e-8)
    return ck.done()


if __name__ == "__main__":
    sys.exit(main())
