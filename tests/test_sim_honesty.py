"""The simulator must never be confidently wrong.

Every case below once gave an interval that excluded the truth without a
word (an audit of the simulator).  The references are exact (``qm.mva``)
or a law: X_c <= 1 / D_max (the asymptotic bound, Lazowska et al. 1984,
sec. 5.2) and, at equal visit ratios, equal station throughputs (the
forced-flow law X_k = V_k X).  A run may still be wrong when it is too
short for its model, but then it says so with a
:class:`~qmodels.errors.SimulationWarning`.
"""

from __future__ import annotations

import _thread
import math
import threading
import time
import warnings

import pytest

import qmodels as qm
from qmodels.errors import InvalidValueError, SimulationWarning, UnstableError
from qmodels.sim import api as sim_api
from qmodels.sim import run as sim_run
from qmodels.sim import simulate
from qmodels.sim.flatten import flatten


def _big_closed(N):
    return qm.Network([qm.Queue("cpu", 0.01), qm.Queue("disk", 0.02), qm.Delay("z", 0.1)],
                      [qm.Closed("tx", N, visits={"cpu": 1, "disk": 1, "z": 1})])


def _quiet(net, **kw):
    """simulate, asserting that it raises no SimulationWarning."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        r = simulate(net, progress=False, **kw)
    sim_warnings = [str(w.message) for w in rec if issubclass(w.category, SimulationWarning)]
    assert not sim_warnings, sim_warnings
    return r


def _check_closed(net, r):
    """Seven intervals against exact MVA and two laws.  The runs use 99 %
    intervals: with seven 95 % intervals an honest run misses one a third
    of the time (the nominal coverage itself is checked by the slow test
    in test_sim_coverage.py)."""
    ref = qm.mva(net)
    dmax = max(d for d, s in zip(net.demands[0], net.stations) if s.kind != "delay")
    assert r.X["tx"].contains(ref.X["tx"]), (r.X["tx"], ref.X["tx"])
    assert r.R["tx"].contains(ref.R["tx"]), (r.R["tx"], ref.R["tx"])
    assert r.U["cpu"].contains(ref.U["cpu"]), (r.U["cpu"], ref.U["cpu"])
    # law: X <= 1 / D_max (here 50/s), up to the interval
    assert r.X["tx"].low <= 1.0 / dmax
    # law: visit ratios all 1, so every station has the class throughput
    for s in net.station_names:
        assert r.X[s].contains(ref.X["tx"]), (s, r.X[s], ref.X["tx"])


# ---------------------------------------------------------------------------
# 1. closed networks with large populations
# ---------------------------------------------------------------------------

def test_closed_network_n50000_default_run_is_right():
    # was X = 74.97 +- 0.39 (bound 50), R = 330 (exact 1000), U[cpu] = 1 (exact 0.5)
    net = _big_closed(50_000)
    r = _quiet(net, seed=1, replications=5, level=0.99)  # 5 x 6e6 events
    _check_closed(net, r)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_closed_network_n3000_covers_exact_r(seed):
    # the R interval excluded the exact 60 for 3 of 3 seeds
    net = _big_closed(3000)
    _check_closed(net, _quiet(net, seed=seed, level=0.99))


def test_closed_network_n10000_covers_exact_r():
    # was R = 157 against 200
    net = _big_closed(10_000)
    _check_closed(net, _quiet(net, seed=1, level=0.99))


def test_too_short_horizon_at_n50000_is_flagged_not_trusted():
    # the old default horizon (667 s, 0.7 cycle per job): the old wrong figures
    # come back, but with warnings naming the cause
    with pytest.warns(SimulationWarning) as rec:
        r = simulate(_big_closed(50_000), seed=1, horizon=667.0, progress=False)
    msgs = " | ".join(str(w.message) for w in rec)
    assert "asymptotic bound 50" in msgs and "cycles in the observation window" in msgs
    assert r.X["tx"].low > 50  # indeed wrong: the warning is what keeps it honest
    assert any("asymptotic bound" in n for n in r.warnings)


def test_near_saturation_mixed_network_is_flagged():
    # rho = 0.9995: exact Q = 7999; a run of 2e4 s gave Q = 153 +- 36 silently
    S = 0.1
    net = qm.Network([qm.Queue("cpu", S)],
                     [qm.Open("o", arrival_rate=0.9995 / S, visits={"cpu": 1}),
                      qm.Closed("c", 3, visits={"cpu": 1})])
    exact = qm.mva(net).Q["cpu"]
    assert exact == pytest.approx(7999, rel=1e-6)
    with pytest.warns(SimulationWarning, match="relaxation times"):
        r = simulate(net, seed=1, horizon=2e4, progress=False)
    assert not r.Q["cpu"].contains(exact)  # wrong, and said so
    # the default horizon would need ~8e7 s (50 relaxation times): capped, with a note
    h, note = sim_api._default_horizon(net, flatten(net))
    assert note is not None and "relaxation times of station 'cpu'" in note
    # tau = S / (1 - sqrt(rho))^2 = 1.6e6 s (M/M/1 relaxation time, Whitt 1989)
    assert h < 50 * 1.6e6 and "shorter than the 7.99" in note


# ---------------------------------------------------------------------------
# 2. open load-dependent instability, growth during a run
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("horizon", [None, 1000.0])
def test_open_load_dependent_unstable_is_refused_like_mva(horizon):
    # rates (2, 0.5): the limiting rate 0.5 < lambda S = 1 (max 2 would say stable)
    net = qm.Network([qm.LoadDependent("ld", 1.0, rate_multipliers=(2, 0.5))],
                     [qm.Open("o", arrival_rate=1.0, visits={"ld": 1})])
    with pytest.raises(UnstableError):
        qm.mva(net)
    with pytest.raises(UnstableError, match="limiting rate multiplier 0.5"):
        simulate(net, seed=1, horizon=horizon, progress=False)


def test_open_load_dependent_stable_at_limiting_rate_runs():
    # rates (0.5, 2): limiting rate 2 > lambda S = 1: stable, and right (exact mva)
    net = qm.Network([qm.LoadDependent("ld", 1.0, rate_multipliers=(0.5, 2))],
                     [qm.Open("o", arrival_rate=1.0, visits={"ld": 1})])
    r = _quiet(net, seed=3)
    assert r.Q["ld"].contains(qm.mva(net).Q["ld"])


@pytest.mark.parametrize("method", ["replications", "batch_means"])
def test_growing_number_present_is_flagged(method):
    # s1 is loaded to 1.5 but the finite room downstream keeps the analytic
    # check out (load could be shed); the run must notice the growth itself
    net = qm.Network([qm.Queue("s1", 1.5), qm.Queue("s2", 0.5, capacity=3)],
                     [qm.Open("o", arrival_rate=1.0, routing={
                         "source": {"s1": 1.0}, "s1": {"s2": 1.0}, "s2": {"sink": 1.0}})])
    with pytest.warns(SimulationWarning, match="keeps growing"):
        simulate(net, seed=1, horizon=5000.0, method=method, progress=False)


def test_stable_open_run_raises_no_warning():
    net = qm.Network([qm.Queue("q", 0.8)], [qm.Open("j", arrival_rate=1.0, routing={
        "source": {"q": 1.0}, "q": {"sink": 1.0}})])
    r = _quiet(net, seed=5)
    assert r.Q["q"].contains(qm.mva(net).Q["q"])


# ---------------------------------------------------------------------------
# 3. zero total demand; 4. a horizon too short to see a completion
# ---------------------------------------------------------------------------

def test_zero_total_demand_raises_the_error_mva_raises():
    net = qm.Network([qm.Queue("a", 0.0), qm.Queue("b", 0.0)],
                     [qm.Closed("c", 3, visits={"a": 1, "b": 1})])
    with pytest.raises(InvalidValueError) as ref:
        qm.mva(net)
    with pytest.raises(type(ref.value), match="all demands and the think time are zero"):
        simulate(net, seed=1, progress=False)


def test_horizon_without_completions_warns():
    # was X = 0 +- 0 and U = 1 +- 0 with n = 10, silently
    net = qm.Network([qm.Queue("a", 1.0)], [qm.Closed("c", 2, visits={"a": 1}, think_time=1.0)])
    with pytest.warns(SimulationWarning) as rec:
        r = simulate(net, seed=1, horizon=0.05, progress=False)
    msgs = " | ".join(str(w.message) for w in rec)
    assert "completed no cycle" in msgs and "events" in msgs
    assert r.X["c"].mean == 0


# ---------------------------------------------------------------------------
# 5. Ctrl-C
# ---------------------------------------------------------------------------

def test_simulate_is_interruptible(monkeypatch):
    # a long run (about 2e8 events) interrupted after 0.5 s must stop within a
    # few chunks of the compiled loop with a plain KeyboardInterrupt
    monkeypatch.setattr(sim_run, "CHUNK_EVENTS", 200_000)
    net = qm.Network([qm.Queue("q", 0.8)], [qm.Open("j", arrival_rate=1.0, routing={
        "source": {"q": 1.0}, "q": {"sink": 1.0}})])
    simulate(net, seed=1, horizon=1000.0, progress=False)  # compile first
    timer = threading.Timer(0.5, _thread.interrupt_main)
    t0 = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            simulate(net, seed=1, horizon=1e8, progress=False)
    finally:
        timer.cancel()
        timer.join()
    assert time.perf_counter() - t0 < 10.0


def test_default_horizon_is_extended_when_jobs_complete_too_few_cycles():
    # one token held over five stations serialises the 5000 jobs: a cycle
    # takes N sum(D) = 250 s, five times the bound N D_max the default
    # horizon is sized from; the run sees too few cycles per job and is made
    # 4x longer.  Exact: X = 1 / sum(D) = 20/s (the token is never idle),
    # R = N / X = 250 s (Little's law, Z = 0).
    names = list("abcde")
    net = qm.Network([qm.Queue(n, 0.01) for n in names],
                     [qm.Closed("tx", 5000, routing={
                         n: {names[(i + 1) % 5]: 1.0} for i, n in enumerate(names)})],
                     pools=[qm.TokenPool("lock", 1, acquire="a", release="e")])
    r = _quiet(net, seed=1, level=0.99)
    assert any("made 4x longer" in n and "cycles" in n for n in r.notes)
    assert r.X["tx"].contains(20.0) and r.R["tx"].contains(250.0)


def test_batch_means_reports_the_horizon_it_reached():
    # To reach a precision, batch means doubles the run; the result must say
    # how long the run was (the horizon asked for is not what was simulated),
    # and a note says it was extended.
    net = qm.Network([qm.Queue("q", 0.5)], [qm.Open("j", arrival_rate=1.0, routing={
        "source": {"q": 1.0}, "q": {"sink": 1.0}})])
    h, w = 400.0, 20.0
    r = qm.simulate(net, seed=4, horizon=h, method="batch_means", warmup=w, precision=0.1,
                    progress=False)
    k = round(math.log2((r.horizon - w) / (h - w)))
    assert k >= 1 and r.horizon == pytest.approx(w + 2 ** k * (h - w), rel=1e-12)
    assert any(f"extended {2 ** k}x" in n for n in r.notes)
    # about one arrival per second: the events match the horizon reached
    assert r.events > 1.5 * r.horizon
    plain = qm.simulate(net, seed=4, horizon=h, method="batch_means", warmup=w, progress=False)
    assert plain.horizon == h and not any("extended" in n for n in plain.notes)
