"""Which phase-type form of a high-variance lognormal service the exact CTMC
should use: the closed networks behind the choice in
:func:`qmodels.analytic.phase_type.lognormal_hyper`.

Each network is two single-server FCFS queues in a cycle, the first of
lognormal service (mean 1, SCV 1.5 to 8), the second exponential (mean 0.5
to 1), 2 to 6 jobs, think time 0 to 3.  For each: the simulator on the
lognormal itself (10 replications of 3e5 time units), and ``qm.ctmc`` with
three forms of the same mean and SCV in its place, given as explicit
hyperexponential branches: the H2 of the lognormal's first three moments
(Whitt 1982), the balanced-means H2 (Whitt 1982), and the H3 closest in
Kullback-Leibler divergence; and the CTMC's own fit of the lognormal (the
closest in that divergence among that H3 and, up to SCV 1.5, the mixtures
of two Erlang-2, :func:`qmodels.analytic.phase_type.lognormal_ph`: a
mixture of two Erlang-2 up to SCV 1.5, the H3 above).  Prints X of each
and its difference from the simulator.

    python -m validation.lognormal_fit          # about 3 minutes
"""

from __future__ import annotations

import warnings

import qmodels as qm
from qmodels.analytic.phase_type import h2_three_moments, lognormal_hyper

#: (SCV, jobs, think time, mean service of the exponential queue)
CASES = ((1.5, 3, 0.5, 0.8), (2.5, 3, 0.0, 0.8), (2.5, 6, 2.0, 0.5), (4.0, 5, 0.0, 1.0),
         (8.0, 2, 3.0, 0.5), (6.7, 3, 1.0, 0.6), (4.0, 2, 0.5, 0.6), (6.7, 4, 0.0, 0.6),
         (1.1, 4, 0.0, 0.8), (1.25, 3, 0.5, 1.0), (2.0, 3, 1.0, 0.7))


#: the column of the CTMC's own fit of the lognormal
OWN = "the CTMC's fit"


def _network(dist, jobs, think, other):
    return qm.Network([qm.Queue("a", 1.0, distribution=dist), qm.Queue("b", other)],
                      [qm.Closed("c", jobs, think_time=think,
                                 routing={"a": {"b": 1.0}, "b": {"a": 1.0}})])


def rows(seed: int = 3):
    """One dict per case: the simulated X (value, half-width) and each
    form's X."""
    out = []
    for c2, jobs, think, other in CASES:
        sim = qm.simulate(_network(qm.Lognormal(c2), jobs, think, other), seed=seed,
                          horizon=3e5, replications=10, progress=False)
        x = sim.X["c"]
        forms = {
            "three-moment H2": h2_three_moments(1.0, 1.0 + c2, (1.0 + c2) ** 3),
            "balanced H2": qm.HyperExponential(c2).branches(),
            "Kullback-Leibler H3": lognormal_hyper(c2),
        }
        row = {"scv": c2, "jobs": jobs, "think": think, "other": other,
               "sim": float(x.mean), "sim_hw": float(x.half_width)}
        for name, (probs, rates) in forms.items():
            net = _network(qm.HyperExponential(probs=list(probs), rates=list(rates)),
                           jobs, think, other)
            row[name] = float(qm.ctmc(net).X["c"])
        row[OWN] = float(qm.ctmc(_network(qm.Lognormal(c2), jobs, think, other)).X["c"])
        out.append(row)
    return out


def main() -> int:
    warnings.simplefilter("ignore")
    names = ("three-moment H2", "balanced H2", "Kullback-Leibler H3", OWN)
    print("| SCV | jobs | think | S_b | simulator X | " + " | ".join(names) + " |")
    print("|---|---|---|---|---|" + "---|" * len(names))
    for r in rows():
        diffs = " | ".join(f"{r[n]:.4f} ({100 * (r[n] / r['sim'] - 1):+.2f} %)" for n in names)
        print(f"| {r['scv']:g} | {r['jobs']} | {r['think']:g} | {r['other']:g} | "
              f"{r['sim']:.4f} +- {r['sim_hw']:.4f} | {diffs} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
