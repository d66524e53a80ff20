"""How far the approximations for non-exponential service are from the
simulator: QNA (``qm.qna``, open networks) and residual MVA
(``qm.mva_residual``, closed networks).

``python -m validation.nonexp [--fast] [--seed S] [--networks N] [--out FILE]``

Draws a seeded catalog of random networks (:func:`open_network`,
:func:`closed_network`: 2-5 stations, one or two classes, FCFS service
shapes from deterministic to hyperexponential SCV 8, Erlang and lognormal,
some 2- or 3-server stations, a PS station or a delay now and then,
non-Poisson arrivals for open classes), solves each by the approximation
and by ``qm.simulate`` (10 replications of 4e4 s, made 4x and then 16x
longer while the relative 95 % half-width of a class R exceeds 2 %: small
next to the errors; the table reports the largest), and prints
per method the max and mean relative error of the class throughput X and
class response time R (per cycle) over the networks, and the worst
network.  ``--out`` writes the table as a markdown snippet
(``validation/nonexp_table.md``).  The full run (``--networks 60``, the
default) takes a few minutes on one core; ``--fast`` draws 6 networks
per method with shorter runs.

The relative error of a figure is |approx - sim| / sim; for open classes X
is the arrival rate in both, so only R carries information.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time

import numpy as np

import qmodels as qm
from qmodels.model.distributions import (
    Deterministic,
    Erlang,
    HyperExponential,
    Lognormal,
)

__all__ = ["open_network", "closed_network", "compare", "run", "table"]


def _shape(rng):
    """A service shape: exponential, deterministic, Erlang 2-4,
    hyperexponential SCV 2-8 or lognormal SCV 0.25-4."""
    u = rng.integers(0, 5)
    if u == 0:
        return None
    if u == 1:
        return Deterministic()
    if u == 2:
        return Erlang(int(rng.integers(2, 5)))
    if u == 3:
        return HyperExponential(float(np.round(rng.uniform(2.0, 8.0), 2)))
    return Lognormal(float(np.round(rng.uniform(0.25, 4.0), 2)))


def _stations(rng, K, allow_delay):
    out = []
    for k in range(K):
        r = rng.random()
        if allow_delay and k > 0 and r < 0.1:
            out.append(qm.Delay(f"s{k}", 1.0))
        elif r < 0.2:
            out.append(qm.Queue(f"s{k}", 1.0, discipline="ps", distribution=_shape(rng)))
        elif r < 0.4:
            out.append(qm.Queue(f"s{k}", 1.0, servers=int(rng.integers(2, 4)),
                                distribution=_shape(rng)))
        else:
            out.append(qm.Queue(f"s{k}", 1.0, distribution=_shape(rng)))
    return out


def _routing(rng, names, open_class: bool):
    """A random routing: a tandem through the stations with a chance of
    going back to the first or of skipping ahead."""
    K = len(names)
    rows = {}
    back = float(np.round(rng.uniform(0.0, 0.4), 2))
    for k, n in enumerate(names):
        nxt = names[k + 1] if k + 1 < K else None
        if nxt is None:
            end = "sink" if open_class else names[0]
            if open_class and back > 0:
                rows[n] = {names[0]: back, "sink": 1.0 - back}
            else:
                rows[n] = {end: 1.0}
        elif rng.random() < 0.3 and k + 2 < K:
            rows[n] = {nxt: 0.6, names[k + 2]: 0.4}
        else:
            rows[n] = {nxt: 1.0}
    if open_class:
        rows["source"] = {names[0]: 1.0}
    return rows


def _service(rng, names):
    return {n: float(np.round(rng.uniform(0.2, 1.0), 3)) for n in names}


def open_network(rng) -> qm.Network:
    """One or two open classes over 2-5 stations; the busiest station
    loaded to rho in [0.3, 0.85]."""
    K = int(rng.integers(2, 6))
    st = _stations(rng, K, allow_delay=True)
    names = [s.name for s in st]
    C = int(rng.integers(1, 3))
    arrivals = [None, Erlang(2), Deterministic(), HyperExponential(2.0)]
    classes = []
    for c in range(C):
        ia = arrivals[int(rng.integers(0, 4))] if rng.random() < 0.5 else None
        if rng.random() < 0.7:
            classes.append(qm.Open(f"c{c}", 1.0, routing=_routing(rng, names, True),
                                   service=_service(rng, names), interarrival=ia))
        else:
            vis = {n: float(np.round(rng.uniform(0.3, 1.5), 2)) for n in names}
            classes.append(qm.Open(f"c{c}", 1.0, visits=vis, service=_service(rng, names),
                                   interarrival=ia))
    net = qm.Network(st, classes)
    # scale the arrival rates so that the busiest station sits at the drawn load
    target = rng.uniform(0.3, 0.85)
    D = np.asarray(net.demands, dtype=float)
    m = np.array([s.servers if isinstance(s, qm.Queue) else np.inf for s in st])
    share = rng.dirichlet(np.ones(C))
    load = (share[:, None] * D).sum(axis=0) / m
    lam = share * target / load.max()
    classes = [qm.Open(c.name, float(np.round(lam[i], 6)), routing=c.routing, visits=c.visits,
                       service=c.service, interarrival=c.interarrival)
               for i, c in enumerate(classes)]
    return qm.Network(st, classes)


def closed_network(rng) -> qm.Network:
    """One or two closed classes of 2-12 jobs over 2-5 stations."""
    K = int(rng.integers(2, 6))
    st = _stations(rng, K, allow_delay=True)
    names = [s.name for s in st]
    C = int(rng.integers(1, 3))
    classes = []
    for c in range(C):
        z = float(np.round(rng.uniform(0.0, 3.0), 2)) if rng.random() < 0.5 else 0.0
        n = int(rng.integers(2, 13))
        if rng.random() < 0.7:
            classes.append(qm.Closed(f"c{c}", n, think_time=z,
                                     routing=_routing(rng, names, False),
                                     service=_service(rng, names)))
        else:
            vis = {nm: float(np.round(rng.uniform(0.3, 1.5), 2)) for nm in names}
            classes.append(qm.Closed(f"c{c}", n, think_time=z, visits=vis,
                                     service=_service(rng, names)))
    return qm.Network(st, classes)


#: relative half-width of the simulated R above which a run is made longer
HALF_WIDTH = 0.02


def shapes_ignored(net) -> qm.Network:
    """The same network with every service shape exponential, every
    arrival stream Poisson and every queue where classes' mean service
    times differ processor sharing (the answer a product-form solver would
    give if it did not refuse): the baseline."""
    from qmodels.analytic.contract import as_ps

    plain = dataclasses.replace(
        net, stations=tuple(dataclasses.replace(s, distribution=None) for s in net.stations),
        classes=tuple(dataclasses.replace(c, interarrival=None)
                      if getattr(c, "interarrival", None) is not None else c
                      for c in net.classes))
    return as_ps(plain)[0]


def _errors(a, s, net):
    eX, eR = 0.0, 0.0
    for c in net.class_names:
        xs, rs = float(s.X[c]), float(s.R[c])
        if xs <= 0:
            continue
        eX = max(eX, abs(float(a.X[c]) - xs) / xs)
        eR = max(eR, abs(float(a.R[c]) - rs) / rs)
    return eX, eR


def compare(net, solve, baseline, seed: int, horizon: float):
    """(errX, errR, rel. half-width of the simulated R, baseline errX,
    baseline errR) over the classes with traffic: the largest relative
    errors of X_c and R_c."""
    for _ in range(3):  # a run 4x (then 16x) longer while the interval is wide
        s = qm.simulate(net, seed=seed, horizon=horizon, replications=10, progress=False)
        hw = max(s.R[c].half_width / float(s.R[c]) for c in net.class_names
                 if float(s.X[c]) > 0)
        if hw <= HALF_WIDTH:
            break
        horizon *= 4
    eX, eR = _errors(solve(net), s, net)
    bX, bR = _errors(baseline(shapes_ignored(net)), s, net)
    return eX, eR, hw, bX, bR


def run(seed: int = 1, networks: int = 60, horizon: float = 4e4, progress=None):
    """{method: list of (index, errX, errR, half-width, network, baseline
    errX, baseline errR)}; the baseline is the product-form answer with the
    shapes ignored (exact MVA for open networks, Schweitzer for closed)."""
    out = {"qna": [], "mva-residual": []}
    plan = (("qna", open_network, qm.qna, qm.mva),
            ("mva-residual", closed_network, qm.mva_residual,
             lambda n: qm.schweitzer(n, multiserver="seidmann")))
    for m, (name, make, solve, base) in enumerate(plan):
        rng = np.random.default_rng([seed, m])
        i = 0
        while len(out[name]) < networks:
            net = make(rng)
            i += 1
            try:
                eX, eR, hw, bX, bR = compare(net, solve, base, seed=1000 * seed + i,
                                             horizon=horizon)
            except qm.UnstableError:  # pragma: no cover - the load is drawn below 1
                continue
            out[name].append((i, eX, eR, hw, net, bX, bR))
            if progress:
                progress(f"{name} #{i}: err X {100 * eX:.2f} %, err R {100 * eR:.2f} % "
                         f"(sim half-width {100 * hw:.2f} %; shapes ignored: "
                         f"{100 * bX:.2f} %, {100 * bR:.2f} %)")
    return out


def table(results, command: str, horizon: float = 4e4) -> str:
    lines = [
        f"Errors against the simulator (`{command}`; 10 replications of {horizon:g} s per network,",
        "4x or 16x longer while a half-width exceeds 2 %; the relative error of each",
        "class's X and R, the largest over the classes of a",
        "network; *sim hw* is the largest relative 95 % half-width of the simulated R;",
        "the *shapes ignored* rows are the product-form answer with every service time",
        "taken as exponential, the baseline each method should beat):",
        "",
        "| method | networks | X max | X mean | R max | R mean | sim hw max |",
        "|---|---|---|---|---|---|---|",
    ]
    base = {"qna": "mva, shapes ignored", "mva-residual": "schweitzer, shapes ignored"}
    for name, rows in results.items():
        if not rows:
            continue
        hw = np.array([r[3] for r in rows])
        for label, ix, iy in ((name, 1, 2), (base[name], 5, 6)):
            eX = np.array([r[ix] for r in rows])
            eR = np.array([r[iy] for r in rows])
            lines.append(f"| {label} | {len(rows)} | {100 * eX.max():.2f} % "
                         f"| {100 * eX.mean():.2f} % | {100 * eR.max():.2f} % "
                         f"| {100 * eR.mean():.2f} % | {100 * hw.max():.2f} % |")
    lines.append("")
    lines.append("For open classes the approximation's X is the arrival rate: its X error is the "
                 "simulator's noise.")
    for name, rows in results.items():
        if rows:
            w = max(rows, key=lambda r: max(r[1], r[2]))
            lines.append(f"Worst {name} network: draw #{w[0]} (err X {100 * w[1]:.2f} %, "
                         f"err R {100 * w[2]:.2f} %).")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m validation.nonexp",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--fast", action="store_true", help="6 networks per method, short runs")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--networks", type=int, default=60, help="networks per method")
    ap.add_argument("--out", help="write the table as markdown here")
    args = ap.parse_args(argv)
    n, h = (6, 1e4) if args.fast else (args.networks, 4e4)
    t0 = time.time()
    res = run(args.seed, n, h, progress=lambda m: print(m, file=sys.stderr, flush=True))
    cmd = "python -m validation.nonexp" + (" --fast" if args.fast else "") + \
        (f" --seed {args.seed}" if args.seed != 1 else "") + \
        (f" --networks {args.networks}" if not args.fast and args.networks != 60 else "")
    text = table(res, cmd, h)
    print(text)
    print(f"({time.time() - t0:.0f} s)", file=sys.stderr)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
