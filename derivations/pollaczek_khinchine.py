"""The Pollaczek-Khinchine mean value formula for M/G/1.

Derivation (mean-value argument)
--------------------------------
A Poisson arrival sees the time-average state (PASTA).  Its wait in queue
is the work of the L_q jobs waiting ahead of it, L_q S, plus the residual
service of the job in service, present with probability rho, whose mean is
E[S^2] / (2 E[S]) (the inspection paradox / length-biased sampling):

    W = L_q S + rho E[S^2] / (2 S),    L_q = lambda W   (Little)
    =>  W = lambda E[S^2] / (2 (1 - rho)),   E[S^2] = (1 + c_s^2) S^2
    R = W + S,  L = lambda R.

Sources: Kleinrock, *Queueing Systems* vol. 1, 1975, sec. 5.5 (P-K mean
value formula, eq. 5.72); M. Harchol-Balter, *Performance Modeling and
Design of Computer Systems*, 2013, ch. 23 (the residual-time derivation).

Checks: :func:`qmodels.queues.mg1` gives the same expression; c_s^2 = 1
gives M/M/1 and c_s^2 = 0 M/D/1 (:func:`qmodels.queues.md1`); and for
Erlang-k and two-phase hyperexponential service, whose queue is a
continuous-time Markov chain over (jobs, service phase), L from the
truncated chain solved numerically equals the formula.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import sympy as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _check import Checker, show, stationary  # noqa: E402


def derive():
    lam, S, cs2, W = sp.symbols("lambda S c_s^2 W", positive=True)
    rho = lam * S
    ES2 = (1 + cs2) * S**2
    residual = ES2 / (2 * S)
    Lq = lam * W
    Wsol = sp.solve(sp.Eq(W, Lq * S + rho * residual), W)[0]
    Wsol = sp.factor(Wsol)
    R = sp.simplify(Wsol + S)
    L = sp.simplify(lam * R)
    return dict(lam=lam, S=S, cs2=cs2, W=Wsol, R=R, L=L, ES2=ES2)


def phase_chain_L(lam, rates, probs, K=300):
    """Mean number in an M/PH/1 queue whose service picks phase path i
    with probability probs[i] and then runs through len(rates[i])
    exponential stages of the given rates; truncated at K jobs.  States:
    0 (empty) and (n, path, stage) for n >= 1."""
    paths = [(i, j) for i, r in enumerate(rates) for j in range(len(r))]
    P = len(paths)
    idx = {(n, ph): 1 + (n - 1) * P + k for n in range(1, K + 1) for k, ph in enumerate(paths)}
    M = 1 + K * P
    Q = np.zeros((M, M))
    for i, p in enumerate(probs):  # arrival to an empty system starts a service
        Q[0, idx[1, (i, 0)]] += lam * p
    for n in range(1, K + 1):
        for (i, j) in paths:
            s = idx[n, (i, j)]
            if n < K:
                Q[s, idx[n + 1, (i, j)]] += lam
            mu = rates[i][j]
            if j + 1 < len(rates[i]):
                Q[s, idx[n, (i, j + 1)]] += mu
            elif n == 1:
                Q[s, 0] += mu
            else:
                for i2, p in enumerate(probs):
                    Q[s, idx[n - 1, (i2, 0)]] += mu * p
    np.fill_diagonal(Q, 0.0)
    np.fill_diagonal(Q, -Q.sum(axis=1))
    pi = stationary(Q)
    nvec = np.zeros(M)
    for (n, _), s in idx.items():
        nvec[s] = n
    return float(pi @ nvec)


def main() -> int:
    from qmodels.analytic.queues import md1, mg1, mm1

    d = derive()
    lam, S, cs2 = d["lam"], d["S"], d["cs2"]
    print("Pollaczek-Khinchine mean value formula (M/G/1)")
    show("residual service", r"E[S_{res}] = \frac{E[S^2]}{2 E[S]}")
    show("W_q", d["W"])
    show("R", d["R"])
    show("L", d["L"])
    ck = Checker("pollaczek_khinchine")
    q = mg1(lam, S, cs2)
    ck.same("W equals qmodels.queues.mg1", d["W"], q.waiting_time)
    ck.same("L equals qmodels.queues.mg1", d["L"], q.queue_length)
    ck.same("c_s^2 = 1 gives M/M/1", d["R"].subs(cs2, 1), mm1(lam, S).response_time)
    ck.same("c_s^2 = 0 gives M/D/1", d["R"].subs(cs2, 0), md1(lam, S).response_time)
    fL = sp.lambdify((lam, S, cs2), d["L"])
    # Erlang-k: k stages of rate k/S (scv 1/k); H2: balanced means
    Sv, lv = 1.0, 0.6
    for k in (1, 2, 4):
        Lc = phase_chain_L(lv, [[k / Sv] * k], [1.0], K=150)
        ck.close(f"Erlang-{k} service: L vs CTMC", fL(lv, Sv, 1.0 / k), Lc, rel=1e-8)
    p1 = 0.8  # H2 with balanced means: p1/mu1 = p2/mu2 = S/2
    mu1, mu2 = 2 * p1 / Sv, 2 * (1 - p1) / Sv
    scv = 2 * (p1 / mu1**2 + (1 - p1) / mu2**2) / Sv**2 - 1
    Lc = phase_chain_L(0.5, [[mu1], [mu2]], [p1, 1 - p1], K=400)
    ck.close(f"H2 service (scv {scv:.4g}): L vs CTMC", fL(0.5, Sv, scv), Lc, rel=1e-8)
    for lv2, sv2, c2 in ((0.3, 2.0, 0.5), (9.0, 0.1, 3.0)):
        ck.close(f"L vs mg1 numeric at {lv2}, {sv2}, {c2}", fL(lv2, sv2, c2),
                 mg1(lv2, sv2, c2).queue_length, rel=1e-12)
    return ck.done()


if __name__ == "__main__":
    sys.exit(main())
