"""The error of ``method='priority'`` against the simulator on a few
networks with priority queues (closed and open).

``python -m validation.priority_networks [--horizon 20000] [--replications 8]``

For each network: per class, the relative error of the approximation's
response time per cycle R_c (closed: excluding think time; open: time in
the network) and of its throughput X_c against the simulated mean (seed 1,
replications with MSER-5 warm-up); prints one line per class, then the
maximum and mean of |R error| over all classes, closed and open apart.
``tests/test_priority.py::test_network_approximation_against_simulation``
(slow) checks the same networks with the tolerances stated there.

These networks are also the first of the ``priority-closed`` and
``priority-open`` catalogs of :mod:`validation.envelopes`, whose measured
maxima and means (the README's error table) are the current figures; the
ones printed here in 2026-11-25 (closed max 19.8 %, open 4.6 %) predate the
whole-chain answer of small closed networks and the merge of a class's
immediate returns.
"""

from __future__ import annotations

import argparse

import numpy as np

import qmodels as qm


def closed_networks() -> dict:
    """Closed networks with priority queues (single-server queues, delays)."""
    nets = {}
    # interactive work over batch work on a preemptive CPU, FCFS disk
    nets["cpu-pr+disk"] = qm.Network(
        [qm.Queue("cpu", 0.02, discipline="prio-pr"), qm.Queue("disk", 0.03)],
        [qm.Closed("inter", 6, visits={"cpu": 5, "disk": 3}, think_time=1.0, priority=0),
         qm.Closed("batch", 3, visits={"cpu": 10, "disk": 2}, priority=1)])
    # a head-of-line switch egress port with bursty frames, two flows
    nets["egress-hol-scv4"] = qm.Network(
        [qm.Queue("port", 0.010, discipline="prio", distribution=qm.HyperExponential(4.0)),
         qm.Delay("hosts", 0.05)],
        [qm.Closed("ctrl", 4, visits={"port": 1, "hosts": 1}, priority=0),
         qm.Closed("bulk", 8, visits={"port": 1, "hosts": 1}, service={"port": 0.006},
                   priority=1)])
    # three levels on a preemptive CPU with two disks
    nets["three-levels"] = qm.Network(
        [qm.Queue("cpu", 0.01, discipline="prio-pr"), qm.Queue("d1", 0.04),
         qm.Queue("d2", 0.05, discipline="ps")],
        [qm.Closed("a", 3, visits={"cpu": 4, "d1": 1, "d2": 1}, think_time=0.5, priority=0),
         qm.Closed("b", 4, visits={"cpu": 6, "d1": 2, "d2": 1}, think_time=0.5, priority=1),
         qm.Closed("c", 2, visits={"cpu": 8, "d1": 1, "d2": 2}, priority=2)])
    # NVMe submission arbitration: urgent reads over writes (non-preemptive)
    nets["nvme-hol"] = qm.Network(
        [qm.Queue("ctrl", 0.004, discipline="prio", distribution=qm.Deterministic()),
         qm.Queue("flash", 0.006)],
        [qm.Closed("read", 6, visits={"ctrl": 1, "flash": 1}, think_time=0.02, priority=0),
         qm.Closed("write", 6, visits={"ctrl": 1, "flash": 1}, think_time=0.02,
                   service={"flash": 0.012}, priority=1)])
    return nets


def open_networks() -> dict:
    """Open networks with priority queues."""
    nets = {}
    nets["single-prio-3"] = qm.Network(
        [qm.Queue("q", 1.0, discipline="prio", distribution=qm.HyperExponential(2.0))],
        [qm.Open("a", 0.2, visits={"q": 1}, priority=0),
         qm.Open("b", 0.2, visits={"q": 1}, service={"q": 1.5}, priority=1),
         qm.Open("c", 0.15, visits={"q": 1}, service={"q": 0.8}, priority=2)])
    # interrupts over bulk DMA: a preemptive PCIe link, then memory (PS)
    nets["nic-irq-bulk"] = qm.Network(
        [qm.Queue("pcie", 0.002, discipline="prio-pr"), qm.Queue("mem", 0.002, discipline="ps")],
        [qm.Open("irq", 100.0, visits={"pcie": 1, "mem": 1}, service={"pcie": 0.0005},
                 priority=0),
         qm.Open("bulk", 250.0, visits={"pcie": 1, "mem": 1}, priority=1)])
    # tandem: a HOL egress port feeding an FCFS server
    nets["tandem-hol"] = qm.Network(
        [qm.Queue("port", 0.5, discipline="prio"), qm.Queue("next", 0.4)],
        [qm.Open("hi", 0.6, routing={"source": {"port": 1}, "port": {"next": 1},
                                     "next": {"sink": 1}}, priority=0),
         qm.Open("lo", 0.8, routing={"source": {"port": 1}, "port": {"next": 1},
                                     "next": {"sink": 1}}, priority=1)])
    # M/M/2 priority with one rate, then a delay
    nets["mm2-prio"] = qm.Network(
        [qm.Queue("q", 1.0, servers=2, discipline="prio"), qm.Delay("z", 1.0)],
        [qm.Open("hi", 0.7, visits={"q": 1, "z": 1}, priority=0),
         qm.Open("lo", 0.9, visits={"q": 1, "z": 1}, priority=1)])
    return nets


def compare(net, horizon: float, replications: int, seed: int = 1) -> list:
    """[(class, R approx, R sim, X approx, X sim)] per class."""
    a = qm.solve(net, method="priority")
    s = qm.simulate(net, seed=seed, horizon=horizon, replications=replications)
    out = []
    for c in net.class_names:
        out.append((c, float(a.R[c]), float(s.R[c]), float(a.X[c]), float(s.X[c])))
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--horizon", type=float, default=20000.0)
    p.add_argument("--replications", type=int, default=8)
    args = p.parse_args(argv)
    for label, nets in (("closed", closed_networks()), ("open", open_networks())):
        errs = []
        for name, net in nets.items():
            for c, ra, rs, xa, xs in compare(net, args.horizon, args.replications):
                er, ex = (ra - rs) / rs, (xa - xs) / xs
                errs.append(abs(er))
                print(f"{label:6s} {name:16s} {c:6s} R {ra:10.5g} sim {rs:10.5g} ({er:+7.2%})  "
                      f"X {xa:10.5g} sim {xs:10.5g} ({ex:+7.2%})")
        e = np.array(errs)
        print(f"{label}: |R error| max {e.max():.2%}, mean {e.mean():.2%} over {len(e)} classes")


if __name__ == "__main__":
    main()
