"""Accuracy of Schweitzer and Linearizer with multi-server and
load-dependent stations against exact MVA.

``python -m validation.amva_ld_accuracy [--networks 200] [--seed 1]``
``python -m validation.amva_ld_accuracy --convergence 1500``

Draws random closed multi-class product-form networks small enough for
exact MVA (``qmodels.mva``, which solves load-dependent stations exactly)
and prints, per scenario and approximation, the maximum and mean over the
networks of max_c |X_c - X_c(exact)| / X_c(exact), and in how many
networks the approximation loads a station past its capacity (U > 1, which
the result's notes then name):

* ``multi-server``: every network has at least one c-server queue
  (c = 2..6) besides single-server queues and delays; Seidmann's
  transformation (``multiserver="seidmann"``) against the marginal
  treatment (``"marginal"``, qmodels.analytic.amva_ld);
* ``ld-concave``, ``ld-convex``, ``ld-falling``: at least one general
  ``LoadDependent`` station of 2..5 multipliers, a(1) = 1 and increments
  in (0.1, 1) (a disk array), in (1, 2.5) (super-linear), or rising then
  falling to 0.3..1 (thrashing); marginal treatment.

The networks: 1-3 classes of 1-10 jobs, 2-5 stations, service times
0.02..1 s (the same for every class at a station, FCFS product form),
visits 0.2..3 (a class skips a station with probability 0.2), think time 0
or 0.1..5 s.

``--convergence N``: N random single-class networks of K = 20 queues with
1-3 servers (service 1..20 ms, one visit each), N = 200 jobs, think time
0..1 s, too large for a quick exact solve: how many ``qm.schweitzer`` runs
stop at ``max_iter`` without converging, and the time they take.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import qmodels as qm

SCENARIOS = ("multi-server", "ld-concave", "ld-convex", "ld-falling")


def _ld_station(rng, name, S, shape):
    L = int(rng.integers(2, 6))
    if shape == "ld-concave":  # a RAID group, a disk array: increments in (0.1, 1)
        a = np.cumsum(np.r_[1.0, rng.uniform(0.1, 1.0, L - 1)])
    elif shape == "ld-convex":  # super-linear speed-up: increments in (1, 2.5)
        a = np.cumsum(np.r_[1.0, rng.uniform(1.0, 2.5, L - 1)])
    else:  # thrashing: rises, then falls to 0.3..1
        L = max(L, 3)
        a = np.r_[np.cumsum(np.r_[1.0, rng.uniform(0.3, 1.0, L // 2)]),
                  rng.uniform(0.3, 1.0, L - 1 - L // 2)]
    return qm.LoadDependent(name, S, rate_multipliers=tuple(float(x) for x in a))


def random_network(rng, scenario: str) -> qm.Network:
    """One network of a scenario in :data:`SCENARIOS`."""
    K = int(rng.integers(2, 6))
    stations = []
    for k in range(K):
        S = float(rng.uniform(0.02, 1.0))
        kind = ("special" if k == 0 else
                rng.choice(["q", "q", "delay", "special"]))
        if kind == "q":
            stations.append(qm.Queue(f"s{k}", S))
        elif kind == "delay":
            stations.append(qm.Delay(f"s{k}", S))
        elif scenario == "multi-server":
            stations.append(qm.Queue(f"s{k}", S, servers=int(rng.integers(2, 7))))
        else:
            stations.append(_ld_station(rng, f"s{k}", S, scenario))
    classes = []
    for c in range(int(rng.integers(1, 4))):
        vis = {f"s{k}": float(rng.uniform(0.2, 3.0)) for k in range(K)
               if k == 0 or rng.random() < 0.8}
        Z = 0.0 if rng.random() < 0.3 else float(rng.uniform(0.1, 5.0))
        classes.append(qm.Closed(f"c{c}", int(rng.integers(1, 11)), think_time=Z,
                                 visits=vis))
    return qm.Network(stations, classes)


def _err(X, ref):
    return float(np.max(np.abs(X - ref) / ref))


def measure(networks: int = 200, seed: int = 1) -> tuple[dict, dict]:
    """({(scenario, method, treatment): array of per-network errors},
    {same key: number of networks with a utilisation above 1})."""
    rng = np.random.default_rng(seed)
    out: dict = {}
    over: dict = {}
    for scenario in SCENARIOS:
        treatments = ("marginal", "seidmann") if scenario == "multi-server" else ("marginal",)
        for _ in range(networks):
            net = random_network(rng, scenario)
            ref = qm.mva(net).class_throughput
            for method in ("schweitzer", "linearizer"):
                for t in treatments:
                    with warnings.catch_warnings():
                        warnings.simplefilter("error")  # an unconverged answer is a failure
                        r = qm.solve(net, method=method, multiserver=t,
                                     falling_rates=scenario == "ld-falling")
                    key = (scenario, method, t)
                    out.setdefault(key, []).append(_err(r.class_throughput, ref))
                    u = r.station_utilization.sum(axis=0)
                    queues = [not isinstance(st, qm.Delay) for st in net.stations]
                    over[key] = over.get(key, 0) + int((u[queues] > 1 + 1e-9).any())
    return {k: np.array(v) for k, v in out.items()}, over


def convergence(networks: int = 1500, seed: int = 0) -> tuple[int, float]:
    """(runs that stopped at max_iter, seconds) over the ``--convergence``
    networks."""
    import time

    rng = np.random.default_rng(seed)
    bad = 0
    t0 = time.perf_counter()
    for _ in range(networks):
        S = rng.uniform(0.001, 0.02, 20)
        c = rng.integers(1, 4, 20)
        st = [qm.Queue(f"s{k}", float(S[k]), servers=int(c[k])) for k in range(20)]
        net = qm.Network(st, [qm.Closed("t", 200, think_time=float(rng.uniform(0, 1)),
                                        visits={s.name: 1 for s in st})])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bad += not qm.schweitzer(net).info["converged"]
    return bad, time.perf_counter() - t0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation.amva_ld_accuracy",
                                description=__doc__.split("\n")[0])
    p.add_argument("--networks", type=int, default=200, help="networks per scenario")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--convergence", type=int, metavar="N",
                   help="instead: count non-converged Schweitzer runs on N large networks")
    args = p.parse_args(argv)
    if args.convergence:
        bad, secs = convergence(args.convergence)
        print(f"qm.schweitzer on {args.convergence} networks (K = 20, N = 200, 1-3 servers): "
              f"{bad} stopped at max_iter without converging; {secs:.1f} s")
        return 0
    res, over = measure(args.networks, args.seed)
    print(f"relative throughput error vs exact MVA, {args.networks} random networks per "
          f"scenario, seed {args.seed}; 'U>1': networks with a station loaded past capacity")
    print(f"{'scenario':<16}{'method':<12}{'treatment':<10}{'max':>9}{'mean':>9}{'p95':>9}"
          f"{'U>1':>6}")
    for (scenario, method, t), e in res.items():
        print(f"{scenario:<16}{method:<12}{t:<10}{e.max():>9.4f}{e.mean():>9.4f}"
              f"{np.quantile(e, 0.95):>9.4f}{over[(scenario, method, t)]:>6d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
