"""Fork-join: the model element, its solver (method='forkjoin'), its bounds,
the simulator's exact fork and join, model files and JMT export.

Reference values come from closed forms written here (Flatto & Hahn 1984,
Nelson & Tantawi 1988, the maximum of k exponentials H_k / mu, a hand
derivation of E[max] of an Erlang and an exponential), from the simulator
for the approximations (the tolerance is the largest error that
``python -m validation.forkjoin_accuracy`` measured, rounded up), and
from exact invariants of the simulator's state (job conservation).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import yaml

import qmodels as qm
from qmodels.analytic.forkjoin import expected_max, forkjoin, nelson_tantawi
from qmodels.errors import (
    InvalidValueError,
    ModelFileError,
    RoutingError,
    UnknownNameError,
    UnsupportedModelError,
)
from qmodels.io.modelfile import from_dict, to_dict

H = [0.0] + [sum(1.0 / i for i in range(1, k + 1)) for k in range(1, 40)]  # harmonic numbers


def homogeneous(k, S=1.0, N=None, lam=None, Z=0.0):
    st = [qm.ForkJoin("fj", [[f"q{i}"] for i in range(k)])] + [qm.Queue(f"q{i}", S)
                                                              for i in range(k)]
    cls = (qm.Closed("c", N, think_time=Z, visits={"fj": 1}) if N is not None
           else qm.Open("o", lam, visits={"fj": 1}))
    return qm.Network(st, [cls])


def mixed_closed(N=4, Z=1.0):
    """A fork-join of a one-queue branch and a queue+delay branch, after a cpu."""
    return qm.Network(
        [qm.Queue("cpu", 0.2), qm.ForkJoin("fj", [["d1"], ["d2", "lnk"]]),
         qm.Queue("d1", 0.5), qm.Queue("d2", 0.3), qm.Delay("lnk", 0.1)],
        [qm.Closed("c", N, think_time=Z, routing={"cpu": {"fj": 1.0}, "fj": {"cpu": 1.0}})])


# ---------------------------------------------------------------------------
# the model
# ---------------------------------------------------------------------------

def test_branch_visits_follow_the_fork_join_and_tasks():
    net = qm.Network(
        [qm.ForkJoin("fj", [["a"], ["b", "c"]], tasks=[3, 1]), qm.Queue("a", 0.1),
         qm.Queue("b", 0.2), qm.Delay("c", 0.3), qm.Queue("cpu", 0.05)],
        [qm.Closed("x", 2, visits={"fj": 2.0, "cpu": 1.0})])
    # each fork sends 3 tasks down branch 0 (one visit each to a) and 1 down
    # branch 1 (b then c); the class forks twice per cycle
    assert net.visits.tolist() == [[2.0, 6.0, 2.0, 2.0, 1.0]]
    assert net.demands[0].tolist() == pytest.approx([0.0, 0.6, 0.4, 0.6, 0.05])
    f = net.stations[0]
    assert f.n_tasks == 4 and f.servers == math.inf and f.service == 0.0


def test_model_errors_are_typed_and_named():
    st = [qm.ForkJoin("fj", [["a"], ["b"]]), qm.Queue("a", 1.0), qm.Queue("b", 1.0),
          qm.Queue("cpu", 1.0)]
    with pytest.raises(RoutingError, match=r"'a'.*branch 0 of fork-join 'fj'"):
        qm.Network(st, [qm.Closed("c", 1, visits={"a": 1})])
    with pytest.raises(RoutingError, match=r"class 'c'.*routing.*'b'.*fork-join 'fj'"):
        qm.Network(st, [qm.Closed("c", 1, routing={"cpu": {"b": 1}, "b": {"cpu": 1}})])
    with pytest.raises(InvalidValueError, match=r"station 'a'.*already on branch 0"):
        qm.Network([qm.ForkJoin("fj", [["a"], ["a"]]), qm.Queue("a", 1.0)],
                   [qm.Open("o", 1.0, visits={"fj": 1})])
    with pytest.raises(InvalidValueError, match=r"station 'a'.*already on branch 0 of fork-join"):
        qm.Network([qm.ForkJoin("f1", [["a"]]), qm.ForkJoin("f2", [["a"]]), qm.Queue("a", 1.0)],
                   [qm.Open("o", 1.0, visits={"f1": 1})])
    with pytest.raises(UnsupportedModelError, match=r"fork-join 'f1'.*nested"):
        qm.Network([qm.ForkJoin("f1", [["f2"]]), qm.ForkJoin("f2", [["a"]]), qm.Queue("a", 1.0)],
                   [qm.Open("o", 1.0, visits={"f1": 1})])
    with pytest.raises(UnknownNameError, match=r"fork-join 'fj'.*unknown station 'zz'"):
        qm.Network([qm.ForkJoin("fj", [["zz"]]), qm.Queue("a", 1.0)],
                   [qm.Open("o", 1.0, visits={"a": 1})])
    with pytest.raises(InvalidValueError, match=r"branch 1 is empty"):
        qm.ForkJoin("fj", [["a"], []])
    with pytest.raises(InvalidValueError, match=r"tasks\[1\]"):
        qm.ForkJoin("fj", [["a"], ["b"]], tasks=[1, 0])
    with pytest.raises(InvalidValueError, match="does no service"):
        qm.ForkJoin("fj", [["a"]], service=1.0)
    with pytest.raises(InvalidValueError, match=r"service time at fork-join 'fj'"):
        qm.Network(st, [qm.Closed("c", 1, visits={"fj": 1}, service={"fj": 1.0})])
    with pytest.raises(UnsupportedModelError, match=r"token pool 'p' holds station 'a'"):
        qm.Network(st, [qm.Closed("c", 1, visits={"fj": 1, "cpu": 1})],
                   pools=[qm.TokenPool("p", 1, "a", "a")])


def test_solvers_that_cannot_honour_a_fork_join_refuse_it_by_name():
    net = mixed_closed()
    for method in ("exact", "schweitzer", "linearizer", "convolution", "decomposition",
                   "ctmc", "exact-symbolic"):
        with pytest.raises(UnsupportedModelError, match="'fj'"):
            qm.solve(net, method=method)
    with pytest.raises(UnsupportedModelError, match=r"fork-join 'fj'.*method='forkjoin'"):
        qm.mva(net)
    from qmodels.io.jmt import to_jmva

    with pytest.raises(UnsupportedModelError, match=r"fork-join 'fj': JMVA"):
        to_jmva(net)


def test_forkjoin_solver_refuses_what_it_does_not_model():
    st = [qm.ForkJoin("fj", [["a"], ["b"]]), qm.Queue("a", 1.0), qm.Queue("b", 1.0)]
    with pytest.raises(UnsupportedModelError, match="one class"):
        forkjoin(qm.Network(st, [qm.Closed("c", 1, visits={"fj": 1}),
                                 qm.Closed("d", 1, visits={"fj": 1})]))
    with pytest.raises(UnsupportedModelError, match=r"station 'a' \(2 servers\)"):
        forkjoin(qm.Network([st[0], qm.Queue("a", 1.0, servers=2), st[2]],
                            [qm.Closed("c", 1, visits={"fj": 1})]))
    with pytest.raises(UnsupportedModelError, match=r"station 'b'.*Deterministic"):
        forkjoin(qm.Network(st[:2] + [qm.Queue("b", 1.0, distribution=qm.Deterministic())],
                            [qm.Closed("c", 1, visits={"fj": 1})]))
    with pytest.raises(UnsupportedModelError, match=r"fork-join 'fj': tasks \[2, 1\]"):
        forkjoin(qm.Network([qm.ForkJoin("fj", [["a"], ["b"]], tasks=[2, 1])] + st[1:],
                            [qm.Closed("c", 1, visits={"fj": 1})]))
    with pytest.raises(qm.UnstableError):
        forkjoin(homogeneous(2, S=1.0, lam=1.0))


# ---------------------------------------------------------------------------
# closed forms
# ---------------------------------------------------------------------------

def test_two_way_open_fork_join_is_flatto_hahn():
    # Flatto & Hahn (1984): R_2 = (12 - rho) / 8 / (mu - lambda), written out here
    for lam, S in ((0.5, 1.0), (2.0, 0.25), (9.0, 0.1)):
        mu, rho = 1.0 / S, lam * S
        r = forkjoin(homogeneous(2, S=S, lam=lam))
        expected = (12.0 - rho) / 8.0 / (mu - lam)
        assert float(r.R["fj"]) == pytest.approx(expected, rel=1e-12)
        assert float(r.R["o"]) == pytest.approx(expected, rel=1e-12)
        assert "Flatto" in r.notes[0]
        # branch stations are M/M/1 queues: R = S / (1 - rho), U = rho
        assert float(r.R["q0"]) == pytest.approx(S / (1.0 - rho), rel=1e-12)
        assert float(r.U["q1"]) == pytest.approx(rho, rel=1e-12)


def test_nelson_tantawi_beyond_two_branches():
    # Nelson & Tantawi (1988), as tabulated by Thomasian (2014, Table I eq. 3):
    # R_k = [H_k/H_2 + (1 - H_k/H_2) 4 rho/11] (12 - rho)/8 / (mu - lambda)
    lam, S = 0.6, 1.0
    for k in (3, 4, 8, 32):
        rho = lam * S
        hand = (H[k] / 1.5 + (1 - H[k] / 1.5) * 4 * rho / 11) * (12 - rho) / 8 / (1 / S - lam)
        r = forkjoin(homogeneous(k, S=S, lam=lam))
        assert float(r.R["fj"]) == pytest.approx(hand, rel=1e-12)
        assert "Nelson & Tantawi" in r.notes[0]
    assert nelson_tantawi(1, 0.5, 1.0) == pytest.approx(2.0)  # M/M/1: 1 / (1 - 0.5)


def test_expected_max_of_exponential_stages():
    # k exponentials of mean m: H_k m (David & Nagaraja 2003, sec. 4.6)
    for k in (1, 2, 3, 7, 20):
        assert expected_max([[2.0]] * k) == pytest.approx(2.0 * H[k], rel=1e-9)
    # Erlang(2, mean 2) A and exponential B of mean 2: E max = E A + E B - E min,
    # E min = int P(A > t) P(B > t) dt = int (1 + t) e^{-t} e^{-t/2} dt = 1/1.5 + 1/1.5^2
    emin = 1 / 1.5 + 1 / 1.5 ** 2
    assert expected_max([[1.0, 1.0], [2.0]]) == pytest.approx(4.0 - emin, rel=1e-9)


def test_closed_fork_join_at_n1_is_the_maximum_of_exponentials():
    # a lone job forks k tasks onto idle exponential servers: E max = H_k S
    for k in (1, 2, 3, 5):
        r = forkjoin(homogeneous(k, S=0.5, N=1, Z=0.0))
        assert float(r.R["c"]) == pytest.approx(0.5 * H[k], rel=1e-9)
        assert float(r.X["c"]) == pytest.approx(1.0 / (0.5 * H[k]), rel=1e-9)
    # with a think time and a station outside: R = S_cpu + H_k S
    net = qm.Network([qm.Queue("cpu", 0.3), *homogeneous(3, S=0.5, N=1).stations],
                     [qm.Closed("c", 1, think_time=2.0, visits={"cpu": 1, "fj": 1})])
    r = forkjoin(net)
    assert float(r.R["c"]) == pytest.approx(0.3 + 0.5 * H[3], rel=1e-9)
    assert float(r.X["c"]) == pytest.approx(1 / (2.0 + 0.3 + 0.5 * H[3]), rel=1e-9)


def test_analytic_figures_obey_the_operational_laws():
    net = mixed_closed(N=6)
    r = forkjoin(net)
    X = float(r.X["c"])
    V, S = net.visits[0], net.service_times[0]
    for k, s in enumerate(net.station_names):
        assert float(r.X[s]) == pytest.approx(X * V[k])            # forced flow
        assert float(r.U[s]) == pytest.approx(X * V[k] * S[k])     # utilisation law
        assert float(r.Q[s]) == pytest.approx(float(r.X[s]) * float(r.R[s]))  # Little
    # the class response time counts the fork-join once (fork to join), and the
    # jobs present are N - X Z
    assert float(r.R["c"]) == pytest.approx(float(r.R["cpu"]) + float(r.R["fj"]))
    assert float(r.Q["c"]) == pytest.approx(6 - X * 1.0)


# ---------------------------------------------------------------------------
# bounds
# ---------------------------------------------------------------------------

def test_bounds_hold_for_the_fork_join():
    for net in (mixed_closed(N=1, Z=0.0), mixed_closed(N=5), homogeneous(3, N=8)):
        b = qm.bounds(net)
        a = forkjoin(net)
        c = net.class_names[0]
        assert b.X[0] <= float(a.X[c]) <= b.X[1]
        assert b.R[0] <= float(a.R[c]) <= b.R[1]
        assert b.bjb is None and "fork-join" in b.notes[0]
    # hand values for mixed_closed(N=1, Z=0): slowest branch max(0.5, 0.3 + 0.1) = 0.5,
    # R >= 0.2 + 0.5; sum of every demand 0.2 + 0.5 + 0.3 + 0.1 = 1.1 (R <= N x 1.1)
    b = qm.bounds(mixed_closed(N=1, Z=0.0))
    assert b.R == pytest.approx((0.7, 1.1))
    assert b.X == pytest.approx((1 / 1.1, 1 / 0.7))
    assert qm.saturation_population(mixed_closed(N=1, Z=0.0)) == pytest.approx(0.7 / 0.5)
    ob = qm.bounds(homogeneous(2, S=1.0, lam=0.5))
    assert ob.R == (1.0, math.inf)
    with pytest.raises(qm.UnstableError):
        qm.bounds(homogeneous(2, S=1.0, lam=1.5))


def test_simulated_values_lie_within_the_bounds():
    net = mixed_closed(N=5)
    s = qm.simulate(net, seed=11, horizon=3000.0, replications=4)
    b = qm.bounds(net)
    assert b.X[0] <= s.X["c"].mean <= b.X[1]
    assert b.R[0] <= s.R["c"].mean <= b.R[1]


# ---------------------------------------------------------------------------
# the simulator
# ---------------------------------------------------------------------------

def _close(a, est, rel):
    """Analytic ``a`` within the simulator's interval widened by ``rel`` of a."""
    return abs(a - est.mean) <= est.half_width + rel * abs(a)


def test_simulated_lone_job_fork_join_is_the_maximum_of_exponentials():
    net = homogeneous(3, S=1.0, N=1)
    s = qm.simulate(net, seed=1, horizon=20000.0, replications=5)
    assert _close(H[3], s.R["c"], 0.01)       # 11/6 s, fork to join
    assert _close(H[3], s.R["fj"], 0.01)
    assert s.Q["fj"].mean == pytest.approx(1.0)  # the lone job is always forked
    assert s.Q["c"].mean == pytest.approx(1.0)   # jobs, not tasks
    assert s.U["fj"].mean == 0.0


def test_simulated_two_way_open_fork_join_meets_flatto_hahn():
    lam, S = 0.5, 1.0
    net = homogeneous(2, S=S, lam=lam)
    s = qm.simulate(net, seed=4, horizon=40000.0, replications=5)
    fh = (12 - lam * S) / 8 / (1 / S - lam)
    assert _close(fh, s.R["fj"], 0.02)
    assert _close(fh, s.R["o"], 0.02)
    assert _close(lam * S, s.U["q0"], 0.02)


def _invariants(run, net):
    """Job conservation in the simulator's state: every task's parent is
    forked and counts it; no job is past its fork-join while a task of it
    lives; each branch station's task completions equal tasks x joins plus
    the tasks of jobs still forked that are past it (one-station branches)."""
    from qmodels.sim import engine as E

    JI = run.JI
    K = run.f.K
    names = net.station_names
    f_idx = names.index("fj")
    fj = net.stations[f_idx]
    alive = [t for t in range(JI.shape[0])
             if JI[t, E.J_STATE] != E.S_FREE and JI[t, E.J_PAR] >= 0]
    parents = {}
    for t in alive:
        parents.setdefault(int(JI[t, E.J_PAR]), []).append(t)
    for p, ts in parents.items():
        assert JI[p, E.J_STATE] == E.S_FORK and JI[p, E.J_LOC] == f_idx
        assert JI[p, E.J_PEND] == len(ts) > 0
    forked = [j for j in range(JI.shape[0]) if JI[j, E.J_STATE] == E.S_FORK]
    assert sorted(forked) == sorted(parents)         # no job waits at f without tasks
    assert int(run.SS[f_idx, E.K_N]) == len(forked)
    lay = run.lay
    comp = run.ACC[lay["comp"]: lay["comp"] + run.f.C * K].reshape(run.f.C, K).sum(0)
    joins = comp[f_idx]
    for (st,), n in zip(fj.branches, fj.tasks):
        k = names.index(st)
        here = {p: sum(1 for t in ts if JI[t, E.J_LOC] == k) for p, ts in parents.items()}
        past = sum(n - here[p] for p in parents)
        assert comp[k] == n * joins + past, st
    return len(alive), joins


@pytest.mark.parametrize("kind", ["closed", "open"])
def test_job_conservation_in_the_simulator(kind):
    from qmodels.sim.flatten import flatten
    from qmodels.sim.run import _Run

    st = [qm.ForkJoin("fj", [["a"], ["b"], ["c"]], tasks=[1, 3, 2]), qm.Queue("a", 0.4),
          qm.Queue("b", 0.1, discipline="ps"), qm.Delay("c", 0.2), qm.Queue("cpu", 0.3)]
    cls = (qm.Closed("x", 5, think_time=0.5, routing={"cpu": {"fj": 1.0}, "fj": {"cpu": 1.0}})
           if kind == "closed" else qm.Open("x", 1.0, visits={"fj": 1.0, "cpu": 0.5}))
    net = qm.Network(st, [cls])
    run = _Run(flatten(net), np.random.Generator(np.random.PCG64(9)), np.array([1e9]),
               np.zeros(1, dtype=np.int64), 1)
    seen_tasks = 0
    for t in np.linspace(0.37, 400.0, 60):
        assert run.advance(float(t), 1e15) == 0
        n, joins = _invariants(run, net)
        seen_tasks = max(seen_tasks, n)
    assert joins > 200 and seen_tasks > 0


def test_simulated_closed_fork_join_agrees_with_the_mva_recursion():
    # tolerance: the largest |error| found by validation/forkjoin_accuracy.py
    # (closed X), rounded up, plus the simulator's half-width
    net = mixed_closed(N=4)
    a = forkjoin(net)
    s = qm.simulate(net, seed=5, horizon=10000.0, replications=4)
    assert _close(float(a.X["c"]), s.X["c"], CLOSED_X_TOL)
    # utilisation law at branch stations: U = X V S with V = V_fj x tasks
    for k in ("d1", "d2"):
        V = net.visits[0, net.station_index(k)]
        S = net.service_times[0, net.station_index(k)]
        assert _close(s.X["c"].mean * V * S, s.U[k], 0.01)


#: closed-network tolerances (relative) on X and on the fork-join time R_fj: the
#: largest errors over the 108 networks of ``python -m validation.forkjoin_accuracy
#: --quick`` (2026-11-25: X 4.87 %, R_fj 6.35 %, both at k = 8, N = 5), rounded up
CLOSED_X_TOL = 0.05
CLOSED_R_TOL = 0.07


@pytest.mark.slow
@pytest.mark.parametrize("k,N,Z,spread", [(2, 3, 0.0, False), (4, 5, 1.0, True),
                                           (3, 10, 0.0, True), (8, 20, 2.0, False)])
def test_closed_fork_join_mva_vs_simulation(k, N, Z, spread):
    S = np.linspace(0.5, 1.5, k) if spread else np.ones(k)
    net = qm.Network([qm.ForkJoin("fj", [[f"q{i}"] for i in range(k)]), qm.Queue("cpu", 0.5)]
                     + [qm.Queue(f"q{i}", float(S[i])) for i in range(k)],
                     [qm.Closed("c", N, think_time=Z, visits={"fj": 1, "cpu": 1})])
    a = forkjoin(net)
    s = qm.simulate(net, seed=k * 100 + N, horizon=20000.0, replications=8)
    assert _close(float(a.X["c"]), s.X["c"], CLOSED_X_TOL)
    assert _close(float(a.R["fj"]), s.R["fj"], CLOSED_R_TOL)


@pytest.mark.slow
@pytest.mark.parametrize("k,rho", [(2, 0.8), (4, 0.5), (8, 0.7)])
def test_open_homogeneous_fork_join_vs_simulation(k, rho):
    net = homogeneous(k, S=1.0, lam=rho)
    a = forkjoin(net)
    s = qm.simulate(net, seed=k, horizon=100000.0, replications=8)
    # k = 2 exact (Flatto-Hahn); k > 2 Nelson-Tantawi, within 5 % by their account
    assert _close(float(a.R["fj"]), s.R["fj"], 0.01 if k == 2 else 0.05)


@pytest.mark.slow
def test_heterogeneous_open_fork_join_independence_value_is_an_upper_bound():
    net = qm.Network([qm.ForkJoin("fj", [["a"], ["b", "c"]]), qm.Queue("a", 1.0),
                      qm.Queue("b", 0.5), qm.Queue("c", 0.4)],
                     [qm.Open("o", 0.6, visits={"fj": 1})])
    a = forkjoin(net)
    assert "upper bound" in a.notes[0]
    s = qm.simulate(net, seed=3, horizon=100000.0, replications=8)
    assert float(a.R["fj"]) >= s.R["fj"].mean - s.R["fj"].half_width


def test_the_python_twin_runs_fork_joins_as_the_machine_code(monkeypatch):
    from qmodels._jit import python_twin
    from qmodels.sim import engine as E
    from qmodels.sim import run as sim_run

    class Pick:
        def __init__(self, fn, machine):
            self.fn, self.machine = fn, machine

        def pick(self, args):
            return self.fn, self.machine

    net = mixed_closed(N=3)
    out = []
    for eng in (Pick(python_twin(E.run), False), Pick(E.run, True)):
        monkeypatch.setattr(sim_run, "ENGINE", eng)
        r = qm.simulate(net, seed=2, horizon=300.0, replications=2)
        out.append((r.events, r.X["c"].mean, r.R["fj"].mean, r.Q["d2"].mean))
    assert out[0] == out[1]


def test_the_simulator_refuses_capacity_with_fork_joins():
    net = qm.Network([qm.ForkJoin("fj", [["a"]]), qm.Queue("a", 1.0, capacity=2),
                      qm.Queue("b", 1.0)],
                     [qm.Closed("c", 3, routing={"b": {"fj": 1}, "fj": {"b": 1}})])
    with pytest.raises(UnsupportedModelError, match=r"station 'a'.*capacity.*fork-join 'fj'"):
        qm.simulate(net, seed=1, horizon=10.0)


# ---------------------------------------------------------------------------
# model files and JMT
# ---------------------------------------------------------------------------

def _nets():
    yield mixed_closed()
    yield qm.Network(
        [qm.ForkJoin("stripe", [["d1"], ["d2"], ["d3"]], tasks=2), qm.Queue("d1", 0.01),
         qm.Queue("d2", 0.012), qm.Queue("d3", 0.011)],
        [qm.Open("io", 10.0, visits={"stripe": 1})])
    yield qm.Network(
        [qm.ForkJoin("f", [["a"], ["b"]], tasks=[1, 4]), qm.Queue("a", 0.1), qm.Queue("b", 0.2)],
        [qm.Closed("c", 2, demands={"f": 0})])


@pytest.mark.parametrize("i", range(3))
def test_model_file_round_trip(i):
    net = list(_nets())[i]
    d = to_dict(net)
    assert from_dict(d) == net
    assert from_dict(json.loads(json.dumps(d))) == net
    assert from_dict(yaml.safe_load(yaml.safe_dump(d))) == net
    assert from_dict(yaml.safe_load(yaml.safe_dump(d))).visits.tolist() == net.visits.tolist()


def test_model_file_errors_carry_their_paths():
    d = to_dict(mixed_closed())
    bad = json.loads(json.dumps(d))
    bad["stations"][1]["branches"][1][0] = "nope"
    bad["stations"][1]["capacity"] = 3
    with pytest.raises(ModelFileError) as e:
        from_dict(bad)
    paths = [p for p, _ in e.value.errors]
    assert paths == ["stations[1].branches[1][0]", "stations[1].capacity"]
    bad = json.loads(json.dumps(d))
    bad["stations"][1]["tasks"] = "two"
    with pytest.raises(ModelFileError) as e:
        from_dict(bad)
    assert [p for p, _ in e.value.errors] == ["stations[1].tasks"]
    bad = json.loads(json.dumps(d))
    bad["classes"][0]["routing"] = {"cpu": {"d1": 1.0}, "d1": {"cpu": 1.0}}
    with pytest.raises(ModelFileError) as e:
        from_dict(bad)
    (path, msg), = e.value.errors
    assert path == "classes[0].routing" and "fork-join 'fj'" in msg
    bad = json.loads(json.dumps(d))
    bad["stations"][0]["branches"] = [["d1"]]
    with pytest.raises(ModelFileError) as e:
        from_dict(bad)
    assert [p for p, _ in e.value.errors] == ["stations[0].branches"]


def test_jsimg_writes_fork_and_join_nodes():
    import xml.etree.ElementTree as ET

    from qmodels.io.jmt import to_jsimg, validate_jsimg

    net = list(_nets())[1]
    root = ET.fromstring(to_jsimg(net).split("\n", 1)[1])
    assert validate_jsimg(root) == []
    nodes = {n.get("name"): [s.get("className") for s in n.findall("section")]
             for n in root.iter("node")}
    assert nodes["stripe"] == ["Queue", "ServiceTunnel", "Fork"]
    assert nodes["stripe.join"] == ["Join", "ServiceTunnel", "Router"]
    fork = [n for n in root.iter("node") if n.get("name") == "stripe"][0]
    per_link = [p for p in fork.iter("parameter") if p.get("name") == "jobsPerLink"][0]
    assert per_link.find("value").text == "2"
    edges = {(c.get("source"), c.get("target")) for c in root.iter("connection")}
    assert {("stripe", "d1"), ("stripe", "d2"), ("stripe", "d3"), ("d1", "stripe.join"),
            ("source", "stripe"), ("stripe.join", "sink")} <= edges
    assert ("source", "d1") not in edges  # jobs reach branch stations only as tasks
    with pytest.raises(UnsupportedModelError, match=r"fork-join 'f': tasks \[1, 4\]"):
        to_jsimg(list(_nets())[2])


def test_simulator_refuses_a_priority_queue_first_on_a_branch():
    net = qm.Network(
        stations=[qm.ForkJoin("fj", branches=[["a"], ["b"]]),
                  qm.Queue("a", 0.01, discipline="prio"), qm.Queue("b", 0.01)],
        classes=[qm.Closed("io", 2, visits={"fj": 1})])
    with pytest.raises(qm.UnsupportedModelError, match="station 'a'.*'prio'.*fork-join 'fj'"):
        qm.simulate(net, seed=1, horizon=10.0)


def test_closed_recursion_is_held_to_the_utilisation_law():
    # Unequal branches (10 ms and 20 ms) and few jobs: the independent-branch maximum
    # understated the wait at the slow branch and put it at U = 1.004 (N = 5), 1.0009
    # (N = 10), a throughput above 1/D_max.  The recursion now saturates that station:
    # U <= 1, X <= 1/D_max, and every operational law holds
    for N in (2, 5, 10, 20):
        net = qm.Network([qm.ForkJoin("f", branches=[["d0"], ["d1"]]),
                          qm.Queue("d0", 0.01), qm.Queue("d1", 0.02)],
                         [qm.Closed("io", N, visits={"f": 1})])
        r = qm.forkjoin(net)
        assert float(r.U["d1"]) <= 1.0
        assert float(r.X["io"]) <= 1 / 0.02 * (1 + 1e-12)
        qm.testing.assert_operational_laws(r)


def test_branch_stations_are_not_called_randomly_routed():
    # a class given by visits={'f': 1} visits one station itself; the
    # branch stations are its tasks', in the branch's order: no warning that
    # they are routed at random (it used to list them); with a second station
    # of its own the warning names only the class's own stations
    from qmodels.model.lowered import random_routing_warning

    one = qm.Network([qm.Queue("a", 0.3), qm.Queue("b", 0.4), qm.ForkJoin("f", [["a"], ["b"]])],
                     [qm.Open("o", 1.0, visits={"f": 1})])
    assert one.lowered.random_routed == ()
    assert random_routing_warning(one, "the simulator") is None
    two = qm.Network([qm.Queue("cpu", 0.1), qm.Queue("a", 0.3), qm.Queue("b", 0.4),
                      qm.ForkJoin("f", [["a"], ["b"]])],
                     [qm.Closed("o", 3, visits={"f": 1, "cpu": 1})])
    msg = random_routing_warning(two, "the simulator")
    assert "(over 'cpu', 'f')" in msg and "'a'" not in msg


@pytest.mark.parametrize("stream", [qm.HyperExponential(4.0), qm.Erlang(3),
                                    qm.MAP.mmpp2(0.1, 0.2, 2.0, 0.5)])
def test_open_non_poisson_stream_is_refused_by_name(stream):
    # Flatto & Hahn and Nelson & Tantawi hold for Poisson arrivals: a
    # bursty or smooth stream was answered as if it were Poisson
    rate = 0.0 if isinstance(stream, qm.MAP) else 1.0
    net = qm.Network([qm.Queue("q", 0.5)],
                     [qm.Open("o", rate, visits={"q": 1}, interarrival=stream)])
    with pytest.raises(UnsupportedModelError, match="class 'o'.*Poisson"):
        qm.forkjoin(net)
