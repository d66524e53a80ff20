"""Priorities: class priority levels, the disciplines prio, prio-pr and
lcfs-pr, their closed forms, the simulator, the network approximation
(method='priority'), model files and JMT export.

Reference values come from hand derivations written here, from an
independent function of the package (the FCFS M/G/1 and M/M/c formulas via
Kleinrock's conservation law), or from the simulator against the closed
forms (independent code paths).  Statistical checks compare a simulated
mean with its confidence interval widened by a stated margin.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import qmodels as qm
from qmodels.errors import (
    InvalidValueError,
    ModelFileError,
    UnstableError,
    UnsupportedModelError,
)
from qmodels.io.jmva import to_jmva
from qmodels.io.jsimg import to_jsimg

# ---------------------------------------------------------------------------
# closed forms against hand derivations and the conservation law
# ---------------------------------------------------------------------------


def test_cobham_two_classes_by_hand():
    # lambda = (0.3, 0.3), S = 1, exponential: W0 = sum lambda E[S^2] / 2 =
    # 0.6 * 2 / 2 = 0.6; Wq_1 = 0.6 / (1 * 0.7), Wq_2 = 0.6 / (0.7 * 0.4)
    hi, lo = qm.mg1_prio([0.3, 0.3], [1.0, 1.0])
    assert hi.W == pytest.approx(0.6 / 0.7, rel=1e-12)
    assert lo.W == pytest.approx(0.6 / 0.28, rel=1e-12)
    assert lo.R == pytest.approx(1.0 + 0.6 / 0.28, rel=1e-12)
    assert lo.Q == pytest.approx(0.3 * (1.0 + 0.6 / 0.28), rel=1e-12)


def test_preemptive_resume_by_hand():
    # top class: an M/G/1 of its own (lower levels invisible): P-K with
    # lambda 0.3, S 1, scv 3: R = 1 + 0.3 * 1 * (1 + 3) / (2 * 0.7)
    hi, lo = qm.mg1_prio_pr([0.3, 0.2], [1.0, 2.0], [3.0, 0.0])
    assert hi.R == pytest.approx(1.0 + 0.3 * 4.0 / 1.4, rel=1e-12)
    assert hi.R == pytest.approx(qm.mg1(0.3, 1.0, 3.0).R, rel=1e-12)
    # low class: S_2 / (1 - rho_1) + (l1 E[S1^2] + l2 E[S2^2]) / 2 / ((1-rho_1)(1-rho))
    # rho_1 = 0.3, rho = 0.7, E[S1^2] = 4, E[S2^2] = 4 (deterministic 2)
    r2 = 2.0 / 0.7 + (0.3 * 4.0 + 0.2 * 4.0) / 2.0 / (0.7 * 0.3)
    assert lo.R == pytest.approx(r2, rel=1e-12)


@pytest.mark.parametrize("scv", [0.0, 1.0, 4.0])
@pytest.mark.parametrize("lams", [(0.2, 0.3, 0.1), (0.05, 0.05, 0.6), (0.4, 0.1, 0.3)])
def test_cobham_obeys_the_conservation_law(scv, lams):
    # Kleinrock's conservation law (Queueing Systems vol. 2, sec. 3.4): for a
    # work-conserving non-preemptive discipline and one service shape per
    # class, sum_k rho_k Wq_k = rho Wq(FCFS), with Wq(FCFS) from qm.mg1 of
    # the mixed service time (mean m, second moment M2)
    S = [1.0, 0.6, 1.3]
    out = qm.mg1_prio(list(lams), S, scv)
    lam = sum(lams)
    m = sum(l_ * s for l_, s in zip(lams, S)) / lam
    M2 = sum(l_ * s * s * (1 + scv) for l_, s in zip(lams, S)) / lam
    fcfs = qm.mg1(lam, m, M2 / m**2 - 1.0)
    lhs = sum(l_ * s * o.W for l_, s, o in zip(lams, S, out))
    assert lhs == pytest.approx(lam * m * fcfs.W, rel=1e-10)


def test_mmc_prio_conservation_and_one_server():
    # same rate for every class: the number present is that of FCFS M/M/c,
    # so the lambda-weighted mean wait equals qm.mmc's Wq
    lams, S, c = [0.8, 0.5, 0.9], 1.0, 3
    out = qm.mmc_prio(lams, S, c)
    mean = sum(l_ * o.W for l_, o in zip(lams, out)) / sum(lams)
    assert mean == pytest.approx(qm.mmc(sum(lams), S, c).W, rel=1e-10)
    # c = 1: Cobham's M/G/1 with exponential service
    one = qm.mmc_prio([0.3, 0.4], 0.9, 1)
    ref = qm.mg1_prio([0.3, 0.4], [0.9, 0.9], 1.0)
    for a, b in zip(one, ref):
        assert a.W == pytest.approx(b.W, rel=1e-12)


def test_equal_levels_are_fcfs():
    # two classes at one level: both wait the FCFS M/G/1 time
    out = qm.mg1_prio([0.2, 0.3], [1.0, 1.0], 2.0, priorities=[0, 0])
    ref = qm.mg1(0.5, 1.0, 2.0).W
    assert [o.W for o in out] == pytest.approx([ref, ref], rel=1e-12)


def test_closed_form_errors_name_what_is_wrong():
    with pytest.raises(UnstableError, match="class 1.*sigma = 1.1"):
        qm.mg1_prio([0.5, 0.6], [1.0, 1.0])
    with pytest.raises(UnstableError, match="class 1"):
        qm.mg1_prio_pr([0.5, 0.6], [1.0, 1.0])
    with pytest.raises(UnstableError):
        qm.mmc_prio([1.0, 1.5], 1.0, 2)
    with pytest.raises(InvalidValueError, match="arrival_rates\\[1\\]"):
        qm.mg1_prio([0.1, -0.1], [1.0, 1.0])
    with pytest.raises(InvalidValueError, match="priorities\\[0\\]"):
        qm.mg1_prio([0.1, 0.1], [1.0, 1.0], priorities=[-1, 0])
    with pytest.raises(InvalidValueError, match="2 entries for 3 classes"):
        qm.mg1_prio([0.1, 0.1, 0.1], [1.0, 1.0])
    with pytest.raises(InvalidValueError, match="same service time"):
        qm.mmc_prio([0.1, 0.1], [1.0, 2.0], 2)


# ---------------------------------------------------------------------------
# the model: priority keyword, disciplines
# ---------------------------------------------------------------------------


def test_priority_keyword_is_validated():
    assert qm.Closed("a", 1, visits={"q": 1}).priority == 0
    assert qm.Open("a", 1.0, visits={"q": 1}, priority=3.0).priority == 3
    for bad in (-1, 1.5, True, "high", None):
        with pytest.raises(InvalidValueError, match="priority"):
            qm.Closed("a", 1, visits={"q": 1}, priority=bad)
    with pytest.raises(InvalidValueError, match="discipline"):
        qm.Queue("q", 1.0, discipline="lifo")
    with pytest.raises(InvalidValueError, match="single-server"):
        qm.Queue("q", 1.0, servers=2, discipline="lcfs-pr")


def _two_level_net(disc="prio-pr", dist=None):
    return qm.Network(
        [qm.Queue("cpu", 0.02, discipline=disc, distribution=dist), qm.Queue("disk", 0.03)],
        [qm.Closed("inter", 4, visits={"cpu": 5, "disk": 3}, think_time=1.0, priority=0),
         qm.Closed("batch", 2, visits={"cpu": 10, "disk": 2}, priority=1)])


@pytest.mark.parametrize("ext", ["yaml", "json"])
def test_model_file_round_trip(tmp_path, ext):
    net = qm.Network(
        [qm.Queue("a", 0.1, discipline="prio"), qm.Queue("b", 0.2, discipline="prio-pr"),
         qm.Queue("c", 0.3, discipline="lcfs-pr")],
        [qm.Closed("x", 2, visits={"a": 1, "b": 1, "c": 1}, priority=2),
         qm.Open("y", 0.5, visits={"a": 1}, priority=0)])
    p = tmp_path / f"m.{ext}"
    qm.save(net, p)
    back = qm.load(p)
    assert back == net
    assert [c.priority for c in back.classes] == [2, 0]
    assert [s.discipline for s in back.stations] == ["prio", "prio-pr", "lcfs-pr"]


@pytest.mark.parametrize("edit, where", [
    (("priority: 2", "priority: -1"), "classes[0].priority"),
    (("priority: 2", "priority: 1.5"), "classes[0].priority"),
    (("priority: 2", "priority: high"), "classes[0].priority"),
    (("discipline: lcfs-pr", "discipline: lifo"), "stations[2].discipline"),
    (("servers: 1, discipline: lcfs-pr", "servers: 2, discipline: lcfs-pr"), "stations[2]"),
])
def test_model_file_bad_values_name_the_path(tmp_path, edit, where):
    net = qm.Network(
        [qm.Queue("a", 0.1, discipline="prio"), qm.Queue("b", 0.2, discipline="prio-pr"),
         qm.Queue("c", 0.3, discipline="lcfs-pr")],
        [qm.Closed("x", 2, visits={"a": 1, "b": 1, "c": 1}, priority=2)])
    p = tmp_path / "m.yaml"
    qm.save(net, p)
    text = p.read_text()
    assert edit[0] in text
    p.write_text(text.replace(edit[0], edit[1]))
    with pytest.raises(ModelFileError) as e:
        qm.load(p)
    assert where in str(e.value)


# ---------------------------------------------------------------------------
# JMT export
# ---------------------------------------------------------------------------


def test_jsimg_carries_priorities_and_disciplines():
    net = qm.Network(
        [qm.Queue("np", 0.1, discipline="prio"), qm.Queue("pr", 0.1, discipline="prio-pr"),
         qm.Queue("lifo", 0.1, discipline="lcfs-pr")],
        [qm.Closed("hi", 2, visits={"np": 1, "pr": 1, "lifo": 1}, priority=0),
         qm.Closed("mid", 2, visits={"np": 1, "pr": 1, "lifo": 1}, priority=1),
         qm.Closed("lo", 2, visits={"np": 1, "pr": 1, "lifo": 1}, priority=3)])
    root = ET.fromstring(to_jsimg(net, seed=1))
    prio = {u.get("name"): int(u.get("priority")) for u in root.iter("userClass")}
    # JMT serves the larger number first: 0 (ours, highest) -> 3 - 0
    assert prio == {"hi": 3, "mid": 2, "lo": 0}
    nodes = {n.get("name"): n for n in root.iter("node")}

    def put(node):
        return {sp.get("name") for par in node.iter("parameter")
                if par.get("name") == "QueuePutStrategy" for sp in par.iter("subParameter")}

    def servers(node):
        return {s.get("className") for s in node.iter("section")}

    assert put(nodes["np"]) == {"TailStrategyPriority"} and "Server" in servers(nodes["np"])
    assert put(nodes["pr"]) == {"FCFSPRStrategyPriority"}
    assert "PreemptiveServer" in servers(nodes["pr"])
    assert put(nodes["lifo"]) == {"LCFSPRStrategy"}
    assert "PreemptiveServer" in servers(nodes["lifo"])


def test_jmva_refuses_priority_and_lcfs_pr_by_name():
    with pytest.raises(UnsupportedModelError, match="'cpu'.*'prio-pr'"):
        to_jmva(_two_level_net())
    net = qm.Network([qm.Queue("s", 0.1, discipline="lcfs-pr")],
                     [qm.Closed("c", 2, visits={"s": 1})])
    with pytest.raises(UnsupportedModelError, match="'s'.*'lcfs-pr'"):
        to_jmva(net)


# ---------------------------------------------------------------------------
# product-form solvers
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["exact", "convolution", "schweitzer", "linearizer"])
def test_product_form_solvers_refuse_mixed_levels(method):
    with pytest.raises(UnsupportedModelError, match="station 'cpu'.*method='priority'"):
        qm.solve(_two_level_net(), method=method)


def test_bounds_refuse_multiclass_priority_but_not_one_class():
    with pytest.raises(UnsupportedModelError, match="'cpu'"):
        qm.bounds(_two_level_net(), cls="inter")
    one = qm.Network([qm.Queue("cpu", 0.02, discipline="prio-pr"), qm.Queue("disk", 0.03)],
                     [qm.Closed("inter", 4, visits={"cpu": 5, "disk": 3}, think_time=1.0)])
    fcfs = qm.Network([qm.Queue("cpu", 0.02), qm.Queue("disk", 0.03)], one.classes)
    assert qm.bounds(one).X == qm.bounds(fcfs).X


def test_one_priority_level_is_fcfs_with_a_note():
    # one level present: the discipline's order within a level, FCFS, is
    # all there is; the answer is FCFS's, and says so
    one = qm.Network([qm.Queue("cpu", 0.02, discipline="prio"), qm.Queue("disk", 0.03)],
                     [qm.Closed("a", 4, visits={"cpu": 5, "disk": 3}, think_time=1.0,
                                priority=2),
                      qm.Closed("b", 2, visits={"cpu": 10, "disk": 2}, priority=2)])
    fcfs = qm.Network([qm.Queue("cpu", 0.02), qm.Queue("disk", 0.03)], one.classes)
    r, ref = qm.mva(one), qm.mva(fcfs)
    np.testing.assert_allclose(r.station_response_time, ref.station_response_time, rtol=1e-12)
    assert any("same priority level" in n for n in r.notes)


def test_ctmc_holds_priority_disciplines_and_agrees_with_the_priority_method_where_exact():
    # the CTMC once refused priority queues; it now holds them exactly
    # (the job-level chain), labelled exact for exponential service
    r = qm.ctmc(_two_level_net())
    assert r.exactness == "exact"
    assert all(0 <= float(r.U[s]) <= 1 for s in r.network.station_names)


def test_lcfs_pr_is_product_form_like_ps():
    # BCMP type 4 (single-server LCFS-PR) has PS's product form; insensitive
    # to the service shape
    cls = [qm.Closed("a", 3, visits={"s": 1, "z": 1}, priority=0),
           qm.Closed("b", 2, visits={"s": 2, "z": 1}, service={"s": 0.3})]
    lc = qm.Network([qm.Queue("s", 0.1, discipline="lcfs-pr",
                              distribution=qm.HyperExponential(5.0)), qm.Delay("z", 1.0)], cls)
    ps = qm.Network([qm.Queue("s", 0.1, discipline="ps"), qm.Delay("z", 1.0)], cls)
    for m in ("exact", "convolution"):
        np.testing.assert_allclose(qm.solve(lc, method=m).station_response_time,
                                   qm.solve(ps, method=m).station_response_time, rtol=1e-12)


# ---------------------------------------------------------------------------
# the simulator
# ---------------------------------------------------------------------------


def _close(est, exact, margin):
    """exact lies in the confidence interval widened by ``margin`` (relative)."""
    lo, hi = est.low - margin * abs(exact), est.high + margin * abs(exact)
    assert lo <= exact <= hi, (est, exact)


def _open_station(disc, lams, S, dist, servers=1):
    return qm.Network(
        [qm.Queue("q", S[0], servers=servers, discipline=disc, distribution=dist)],
        [qm.Open(f"c{i}", lam, visits={"q": 1}, service={"q": s}, priority=i)
         for i, (lam, s) in enumerate(zip(lams, S))])


@pytest.mark.parametrize("disc, form", [("prio", qm.mg1_prio), ("prio-pr", qm.mg1_prio_pr)])
def test_sim_agrees_with_the_closed_forms(disc, form):
    lams, S, scv = [0.3, 0.35], [1.0, 0.8], 4.0
    net = _open_station(disc, lams, S, qm.HyperExponential(scv))
    r = qm.simulate(net, seed=7, horizon=3e4, replications=4)
    for i, m in enumerate(form(lams, S, scv)):
        _close(r.R["q", f"c{i}"], m.R, 0.03)


def test_sim_mmc_priority_agrees_with_cobham():
    lams, S = [0.6, 0.5, 0.4], 1.0
    net = _open_station("prio", lams, [S] * 3, None, servers=2)
    r = qm.simulate(net, seed=3, horizon=2e4, replications=4)
    for i, m in enumerate(qm.mmc_prio(lams, S, 2)):
        _close(r.R["q", f"c{i}"], m.R, 0.03)


def _starvation_net(disc):
    # one station, deterministic service 1, Z = 0: one 'hi' job, two 'lo'
    # jobs, every job back at once after service
    return qm.Network([qm.Queue("q", 1.0, discipline=disc, distribution=qm.Deterministic())],
                      [qm.Closed("hi", 1, visits={"q": 1}, priority=0),
                       qm.Closed("lo", 2, visits={"q": 1}, priority=1)])


@pytest.mark.filterwarnings("ignore::qmodels.errors.SimulationWarning")  # lo starves
@pytest.mark.parametrize("disc, x_hi, x_lo", [
    # FCFS: the three jobs take turns, one each per 3 s
    ("fcfs", 1 / 3, 2 / 3),
    # HOL: hi is back before each lo completion and goes next; a lo job
    # goes next after hi: hi, lo, hi, lo, ...
    ("prio", 0.5, 0.5),
    # preemptive: hi, back at once, takes the server at its completion
    # instant from the lo job that just started: lo never completes
    ("prio-pr", 1.0, 0.0),
])
def test_priority_order_in_a_deterministic_scenario(disc, x_hi, x_lo):
    r = qm.simulate(_starvation_net(disc), seed=1, horizon=400.0, replications=2,
                    warmup=10.0)
    assert float(r.X["hi"]) == pytest.approx(x_hi, abs=0.01)
    assert float(r.X["lo"]) == pytest.approx(x_lo, abs=0.01)


def test_sim_lcfs_pr_agrees_with_exact_mva():
    cls = [qm.Closed("a", 3, visits={"s": 1, "z": 1}),
           qm.Closed("b", 2, visits={"s": 2, "z": 1}, service={"s": 0.3})]
    net = qm.Network([qm.Queue("s", 0.1, discipline="lcfs-pr",
                               distribution=qm.HyperExponential(4.0)), qm.Delay("z", 1.0)], cls)
    ex = qm.mva(net)
    r = qm.simulate(net, seed=5, horizon=1e4, replications=4)
    for c in ("a", "b"):
        _close(r.X[c], float(ex.X[c]), 0.02)
        _close(r.R["s", c], float(ex.R["s", c]), 0.03)


def test_sim_refuses_a_pool_at_a_priority_station():
    net = qm.Network([qm.Queue("q", 1.0, discipline="prio"), qm.Queue("r", 1.0)],
                     [qm.Closed("c", 2, routing={"q": {"r": 1}, "r": {"q": 1}})],
                     pools=[qm.TokenPool("t", 1, acquire="q", release="r")])
    with pytest.raises(UnsupportedModelError, match="'t'.*'q'"):
        qm.simulate(net, seed=1, horizon=10.0)


# ---------------------------------------------------------------------------
# the network approximation
# ---------------------------------------------------------------------------


def test_priority_method_open_single_station_is_exact():
    net = _open_station("prio-pr", [0.3, 0.2], [1.0, 2.0], qm.Erlang(2))
    r = qm.solve(net, method="priority")
    for i, m in enumerate(qm.mg1_prio_pr([0.3, 0.2], [1.0, 2.0], 0.5)):
        assert float(r.R["q", f"c{i}"]) == pytest.approx(m.R, rel=1e-12)
    assert any("approximation" in n for n in r.notes)


def test_priority_method_one_class_is_schweitzer():
    # one class: the approximation's equations reduce to Schweitzer's
    # (exponential FCFS: R = S (1 + A)); qm.schweitzer is independent code
    net = qm.Network([qm.Queue("cpu", 0.02, discipline="prio-pr"), qm.Queue("disk", 0.03),
                      qm.Delay("z", 0.5)],
                     [qm.Closed("a", 7, visits={"cpu": 5, "disk": 3, "z": 1})])
    r = qm.solve(net, method="priority")
    s = qm.schweitzer(net)
    np.testing.assert_allclose(r.class_throughput, s.class_throughput, rtol=1e-7)


def test_priority_method_refuses_what_it_cannot_do():
    with pytest.raises(UnsupportedModelError, match="mixes open"):
        qm.solve(qm.Network([qm.Queue("q", 0.1, discipline="prio")],
                            [qm.Closed("a", 2, visits={"q": 1}),
                             qm.Open("b", 1.0, visits={"q": 1}, priority=1)]),
                 method="priority")
    with pytest.raises(UnsupportedModelError, match="'q'.*2 servers"):
        qm.solve(qm.Network([qm.Queue("q", 0.1, servers=2, discipline="prio")],
                            [qm.Closed("a", 2, visits={"q": 1}),
                             qm.Closed("b", 2, visits={"q": 1}, priority=1)]),
                 method="priority")
    with pytest.raises(UnsupportedModelError, match="'q'"):
        qm.solve(_open_station("prio-pr", [0.3, 0.3], [1.0, 1.0], None, servers=2),
                 method="priority")


def test_network_approximation_one_closed_network():
    # the approximation against the simulator on one closed network (the
    # full set is the slow test below); tolerance 10 % on the class
    # response times (Bryant et al. 1984 report errors within 5 % over
    # most of their parameter space)
    net = _two_level_net()
    a = qm.solve(net, method="priority")
    s = qm.simulate(net, seed=2, horizon=4e3, replications=4)
    for c in net.class_names:
        assert float(a.R[c]) == pytest.approx(float(s.R[c]), rel=0.10)


#: the largest |R error| allowed per network, the measured worst
#: (python -m validation.priority_networks, 2026-11-25) rounded up: the
#: scv-4 egress port is where the closed approximation is weakest (its FCFS
#: residual-service form alone is 17 % off there)
TOLERANCE = {"cpu-pr+disk": 0.07, "egress-hol-scv4": 0.21, "three-levels": 0.12,
             "nvme-hol": 0.07, "single-prio-3": 0.05, "nic-irq-bulk": 0.02,
             "tandem-hol": 0.06, "mm2-prio": 0.03}


@pytest.mark.slow
def test_network_approximation_against_simulation():
    # the comparison python -m validation.priority_networks prints
    from validation.priority_networks import closed_networks, compare, open_networks

    for nets in (closed_networks(), open_networks()):
        for name, net in nets.items():
            for c, ra, rs, _xa, _xs in compare(net, 2e4, 8):
                assert abs(ra - rs) / rs < TOLERANCE[name], (name, c, ra, rs)


@pytest.mark.slow
@pytest.mark.parametrize("rho", [0.5, 0.8, 0.9])
@pytest.mark.parametrize("scv", [0.0, 1.0, 4.0])
@pytest.mark.parametrize("disc, form", [("prio", qm.mg1_prio), ("prio-pr", qm.mg1_prio_pr)])
def test_sim_closed_forms_grid(disc, form, rho, scv):
    shares = np.array([0.3, 0.3, 0.4])
    S = [1.0, 0.5, 1.5]
    lams = list(rho * shares / np.array(S))
    dist = qm.Deterministic() if scv == 0 else (None if scv == 1
                                                 else qm.HyperExponential(scv))
    net = _open_station(disc, lams, S, dist)
    r = qm.simulate(net, seed=11, horizon=2e5, replications=8)
    for i, m in enumerate(form(lams, S, scv)):
        _close(r.R["q", f"c{i}"], m.R, 0.03 if rho < 0.85 else 0.06)
    assert math.isfinite(float(r.R["q"]))
