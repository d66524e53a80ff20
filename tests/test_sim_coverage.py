"""Coverage of the simulator's confidence intervals (slow, opt-in: -m slow).

Over many independent runs of a product-form network, a 95 % interval must
contain the exact value (exact MVA, an independent method) in about 95 % of
the runs.  With R runs the observed coverage has a standard error of
sqrt(0.95 x 0.05 / R); at R = 1000 that is 0.69 %, so the band 93-97 % is
+-2.9 standard errors: an honest simulator passes it with probability
about 0.996 per figure.
"""

from __future__ import annotations

import pytest

import qmodels as qm
from qmodels.analytic.mva import mva
from qmodels.sim import simulate

RUNS = 1000


def _coverage(net, figures, runs, **kw):
    ref = mva(net)
    hits = {f: 0 for f in figures}
    for i in range(runs):
        r = simulate(net, seed=10_000 + i, progress=False, **kw)
        for f in figures:
            metric, key = f
            hits[f] += getattr(r, metric)[key].contains(getattr(ref, metric)[key])
    return {f: h / runs for f, h in hits.items()}


@pytest.mark.slow
def test_replication_intervals_cover_exact_mva_95_percent():
    net = qm.Network(
        [qm.Queue("a", 1.0), qm.Queue("b", 0.8), qm.Queue("c", 0.5, servers=2)],
        [qm.Closed("jobs", 5, routing={"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}})],
    )
    figures = [("X", "jobs"), ("R", "jobs"), ("Q", "a"), ("U", "b"), ("R", "c")]
    cov = _coverage(net, figures, RUNS, horizon=200.0, replications=10)
    print("\nreplications, 95 % intervals, coverage over", RUNS, "runs:",
          {f"{m}[{k}]": round(100 * v, 1) for (m, k), v in cov.items()})
    for f, v in cov.items():
        assert 0.93 <= v <= 0.97, f"coverage of {f}: {v:.3f}"


@pytest.mark.slow
def test_batch_means_intervals_cover_exact_value_95_percent():
    # open Jackson network: each station is an M/M/1 with its own rate
    net = qm.Network(
        [qm.Queue("web", 0.1), qm.Queue("db", 0.2)],
        [qm.Open("req", arrival_rate=2.0, routing={
            "source": {"web": 1.0}, "web": {"db": 0.5, "sink": 0.5}, "db": {"web": 1.0}})],
    )
    figures = [("X", "req"), ("R", "req"), ("Q", "web"), ("U", "db")]
    runs = 400
    cov = _coverage(net, figures, runs, horizon=4000.0, method="batch_means")
    print("\nbatch means, 95 % intervals, coverage over", runs, "runs:",
          {f"{m}[{k}]": round(100 * v, 1) for (m, k), v in cov.items()})
    # 400 runs: standard error 1.1 %; batch means may under-cover a little
    for f, v in cov.items():
        assert 0.91 <= v <= 0.98, f"coverage of {f}: {v:.3f}"


@pytest.mark.slow
def test_blocking_network_intervals_cover_the_ctmc(capsys):
    # Non-product form: closed tandem with room for 2 at s1 and s2 (blocking
    # after service), judged by the exact CTMC.  400 runs at a short horizon
    # (2000 time units, the validation fast subset's): the band 92.5-97.5 %
    # is +-2.3 standard errors of the observed coverage.
    from qmodels.analytic.ctmc import ctmc

    net = qm.Network(
        [qm.Queue("s0", 1.0), qm.Queue("s1", 0.8, capacity=2), qm.Queue("s2", 0.9, capacity=2)],
        [qm.Closed("c", 6, routing={"s0": {"s1": 1}, "s1": {"s2": 1}, "s2": {"s0": 1}})])
    ref = ctmc(net)
    figs = [("X", "c"), ("Q", "s0"), ("Q", "s2"), ("U", "s2")]
    runs = 400
    hits = {f: 0 for f in figs}
    for i in range(runs):
        r = simulate(net, seed=20_000 + i, horizon=2000.0, replications=10, progress=False)
        for m, k in figs:
            hits[(m, k)] += getattr(r, m)[k].contains(getattr(ref, m)[k])
    cov = {f"{m}[{k}]": h / runs for (m, k), h in hits.items()}
    with capsys.disabled():
        print("\nblocking-network coverage:", cov)
    assert all(0.925 <= c <= 0.975 for c in cov.values()), cov


@pytest.mark.slow
@pytest.mark.parametrize("N, runs", [(1_000, 100), (10_000, 40)])
def test_large_population_closed_network_default_runs_cover_mva(N, runs, capsys):
    """A closed network with a large population (cycle time N D_max): the
    default horizon (CYCLES_PER_JOB cycles per job) and MSER-5 warm-up must
    give intervals that cover exact MVA at about the nominal 95 %.  With
    R = 100 (40) runs the standard error of a coverage is 2.2 % (3.4 %); the
    band is nominal - 3.5 standard errors."""
    net = qm.Network([qm.Queue("cpu", 0.01), qm.Queue("disk", 0.02), qm.Delay("z", 0.1)],
                     [qm.Closed("tx", N, visits={"cpu": 1, "disk": 1, "z": 1})])
    figures = [("X", "tx"), ("R", "tx"), ("Q", "cpu"), ("U", "cpu"), ("X", "cpu"),
               ("X", "disk"), ("X", "z"), ("R", "disk")]
    cov = _coverage(net, figures, runs)
    with capsys.disabled():
        print(f"\nN = {N}, {runs} runs: " + ", ".join(
            f"{m}[{k}] {c:.3f}" for (m, k), c in cov.items()))
    floor = 0.95 - 3.5 * (0.95 * 0.05 / runs) ** 0.5
    for f, c in cov.items():
        assert c >= floor, (f, c)
