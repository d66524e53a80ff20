"""Errors of ``method='forkjoin'`` against the simulator.

``python -m validation.forkjoin_accuracy [--quick]``

Closed: a grid of single-class networks with one fork-join of k = 2, 3, 4
or 8 branches, each branch one exponential single-server queue (all of
mean 1 s, or spread from 0.5 to 1.5 s), or two queues in tandem; with or
without a 0.5 s queue and a 1 s delay outside the fork-join; N = 2..20 jobs
and think time 0 or 2 s.  For each, the relative error of the class
throughput X and of the fork-join's time R_f (fork to join) of the
analytic recursion against the simulator's mean (10 replications; the
simulator's own 95 % half-width is printed beside it).  Open: homogeneous
fork-joins of k M/M/1 queues at rho = 0.3, 0.6, 0.85 (Flatto-Hahn exact at
k = 2, Nelson-Tantawi beyond) and heterogeneous ones (the independence
upper bound, which must not fall below the simulated value).

Prints every network and the maximum and mean absolute relative errors;
the closed tolerance in ``tests/test_forkjoin.py`` is the maximum found
here, rounded up.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

import qmodels as qm


def closed_net(k, N, Z, spread, tandem, outside):
    S = np.linspace(0.5, 1.5, k) if spread else np.ones(k)
    st = []
    branches = []
    for i in range(k):
        br = [f"q{i}"]
        st.append(qm.Queue(f"q{i}", float(S[i])))
        if tandem:
            br.append(f"t{i}")
            st.append(qm.Queue(f"t{i}", float(S[i]) / 2))
        branches.append(br)
    vis = {"fj": 1.0}
    if outside:
        st += [qm.Queue("cpu", 0.5), qm.Delay("net", 1.0)]
        vis.update(cpu=1.0, net=1.0)
    return qm.Network([qm.ForkJoin("fj", branches)] + st,
                      [qm.Closed("c", N, think_time=Z, visits=vis)])


def open_net(k, rho, spread):
    S = np.linspace(0.5, 1.0, k) if spread else np.ones(k)
    lam = rho / float(S.max())
    return qm.Network([qm.ForkJoin("fj", [[f"q{i}"] for i in range(k)])]
                      + [qm.Queue(f"q{i}", float(S[i])) for i in range(k)],
                      [qm.Open("o", lam, visits={"fj": 1.0})])


def compare(net, seed, horizon):
    a = qm.forkjoin(net)
    s = qm.simulate(net, seed=seed, horizon=horizon, replications=10)
    c = net.class_names[0]
    out = {}
    for what, av, sv in (("X", float(a.X[c]), s.X[c]), ("R_fj", float(a.R["fj"]), s.R["fj"])):
        out[what] = ((av - sv.mean) / sv.mean, sv.half_width / sv.mean, av, sv.mean)
    return out, a.notes


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a smaller grid")
    a = p.parse_args(argv)
    ks = (2, 4, 8) if a.quick else (2, 3, 4, 8)
    Ns = (2, 5, 20) if a.quick else (2, 3, 5, 10, 20)
    errs = {"X": [], "R_fj": []}
    seed = 0
    print("closed: k N Z spread tandem outside | X err (sim hw) | R_fj err (sim hw)",
          flush=True)
    for k, N, Z, spread, tandem, outside in itertools.product(
            ks, Ns, (0.0, 2.0), (False, True), (False, True), (False, True)):
        if a.quick and (tandem and outside):
            continue
        seed += 1
        net = closed_net(k, N, Z, spread, tandem, outside)
        res, _ = compare(net, seed, 2000.0 * (N + 2))
        for w in errs:
            errs[w].append(res[w][0])
        print(f"  {k} {N:2d} {Z:g} {int(spread)} {int(tandem)} {int(outside)} | "
              f"{res['X'][0]:+.4f} ({res['X'][1]:.4f}) | {res['R_fj'][0]:+.4f} "
              f"({res['R_fj'][1]:.4f})", flush=True)
    for w, e in errs.items():
        e = np.abs(e)
        print(f"closed {w}: max |rel err| {e.max():.4f}, mean {e.mean():.4f} over {e.size} "
              "networks")
    print("open: k rho spread | R_fj err (sim hw) method")
    oe = {"homogeneous": [], "bound": []}
    for k, rho, spread in itertools.product(ks, (0.3, 0.6, 0.85), (False, True)):
        seed += 1
        net = open_net(k, rho, spread)
        res, notes = compare(net, seed, 100000.0)
        e, hw, av, sm = res["R_fj"]
        key = "bound" if spread else "homogeneous"
        oe[key].append(e)
        flag = "" if not spread or av >= sm * (1 - hw) else "  BOUND BELOW SIM"
        print(f"  {k} {rho:.2f} {int(spread)} | {e:+.4f} ({hw:.4f}){flag}", flush=True)
    for w, e in oe.items():
        e = np.asarray(e)
        print(f"open {w}: max |rel err| {np.abs(e).max():.4f}, mean {np.abs(e).mean():.4f}, "
              f"min signed {e.min():+.4f}")


if __name__ == "__main__":
    main()
