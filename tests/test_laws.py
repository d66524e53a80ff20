"""Operational laws, ABA/BJB bounds, N* and the bottleneck."""

import math

import pytest
import sympy as sp

import qmodels as qm
from qmodels.errors import UnstableError, UnsupportedModelError


def central(N=10, Z=5.0):
    return qm.Network(
        [qm.Queue("cpu", 0.05), qm.Queue("d1", 0.04), qm.Queue("d2", 0.02),
         qm.Delay("net", 0.1)],
        [qm.Closed("t", N, visits={"cpu": 4, "d1": 3, "d2": 2, "net": 1}, think_time=Z)])


def test_laws_are_the_textbook_identities():
    # utilisation law U = X S (Lazowska et al. 1984, sec. 3.2.1): 5 jobs/s x 0.1 s
    assert qm.utilization_law(5.0, 0.1) == pytest.approx(0.5)
    assert qm.utilization_law(5.0, 0.1, servers=2) == pytest.approx(0.25)
    assert qm.littles_law(2.0, 3.0) == 6.0
    assert qm.forced_flow_law(2.0, 3.0) == 6.0
    assert qm.service_demand_law(0.6, 2.0) == pytest.approx(0.3)
    assert qm.response_time_law([1, 2], [0.5, 0.25]) == pytest.approx(1.0)
    # interactive response time law R = N/X - Z: 20 users, 2 tx/s, 5 s think
    assert qm.interactive_response_time_law(20, 2.0, 5.0) == pytest.approx(5.0)
    s = sp.symbols("X S", positive=True)
    assert qm.utilization_law(*s) == s[0] * s[1]


def test_aba_hand_values():
    # D = .2 + .12 + .04 = .36 (+ .1 delay), Dmax = .2 (cpu), Z = 5.
    # N* = (D_total + Z)/Dmax = (.46 + 5)/.2 = 27.3 (Lazowska et al. 1984, eq. 5.3)
    net = central(N=10)
    b = qm.bounds(net)
    assert b.saturation_population == pytest.approx(27.3)
    assert b.max_throughput == pytest.approx(5.0)
    assert b.bottleneck == ("cpu",)
    # ABA upper X at N=10: min(1/Dmax, N/(D+Z)) = min(5, 10/5.46)
    assert b.aba[1] == pytest.approx(10 / 5.46)
    # ABA lower R: max(D, N Dmax - Z) = max(.46, -3) = .46
    assert b.aba[2] == pytest.approx(0.46)


def test_bjb_hand_values_batch():
    # Batch (Z = 0), three balanced-ish queues D = (.3, .2, .1): D = .6,
    # Dmax = .3, Davg = .2.  QSP Table 5.3 with Z = 0:
    #   N/(D + (N-1) Dmax) <= X <= N/(D + (N-1) Davg)
    net = qm.Network([qm.Queue("a", 0.3), qm.Queue("b", 0.2), qm.Queue("c", 0.1)],
                     [qm.Closed("t", 4, visits={"a": 1, "b": 1, "c": 1})])
    b = qm.bounds(net)
    assert b.bjb[0] == pytest.approx(4 / (0.6 + 3 * 0.3))
    assert b.bjb[1] == pytest.approx(min(1 / 0.3, 4 / (0.6 + 3 * 0.2)))
    assert b.bjb[3] == pytest.approx(0.6 + 3 * 0.3)
    x = qm.mva(net).X["t"]
    assert b.throughput_lower <= x <= b.throughput_upper


def test_bottleneck_ties_reported_as_ties():
    net = qm.Network([qm.Queue("a", 0.2), qm.Queue("b", 0.1, servers=1), qm.Queue("c", 0.4,
                                                                                 servers=2)],
                     [qm.Closed("t", 3, visits={"a": 1, "b": 2, "c": 1})])
    assert qm.bottleneck(net) == ("a", "b", "c")
    assert qm.mva(net).bottleneck == ("a", "b", "c")


def test_open_bounds_and_saturation():
    net = qm.Network([qm.Queue("cpu", 0.1), qm.Queue("disk", 0.05)],
                     [qm.Open("o", 4.0, visits={"cpu": 2, "disk": 2})])
    b = qm.bounds(net)
    # D = .3, Dmax = .2, Davg = .15, lambda = 4 (QSP Table 5.3, open):
    assert b.response_time_lower == pytest.approx(0.3 / (1 - 4 * 0.15))
    assert b.response_time_upper == pytest.approx(0.3 / (1 - 4 * 0.2))
    r = qm.mva(net)
    assert b.response_time_lower <= r.R["o"] <= b.response_time_upper
    with pytest.raises(UnstableError, match=r"arrival rate 6 >= saturation rate 1/Dmax = 5"):
        qm.bounds(qm.Network(net.stations, [qm.Open("o", 6.0, visits={"cpu": 2, "disk": 2})]))


def test_bounds_multiclass_needs_a_class():
    net = qm.Network([qm.Queue("a", 0.1)], [qm.Closed("x", 1, visits={"a": 1}),
                                            qm.Closed("y", 1, visits={"a": 1})])
    with pytest.raises(UnsupportedModelError, match=r"name the class"):
        qm.bounds(net)
    assert qm.bounds(net, "x").bottleneck == ("a",)


def test_symbolic_bounds():
    D1, D2, Z, N = sp.symbols("D1 D2 Z N", positive=True)
    net = qm.Network([qm.Queue("a", D1), qm.Queue("b", D2)],
                     [qm.Closed("t", N, visits={"a": 1, "b": 1}, think_time=Z)])
    nstar = qm.saturation_population(net)
    assert sp.simplify(nstar - (D1 + D2 + Z) / sp.Max(D1, D2)) == 0
    b = qm.bounds(net)
    val = {D1: 0.3, D2: 0.1, Z: 2.0, N: 7}
    num = qm.bounds(qm.Network([qm.Queue("a", 0.3), qm.Queue("b", 0.1)],
                               [qm.Closed("t", 7, visits={"a": 1, "b": 1}, think_time=2.0)]))
    # the symbolic bounds are ABA and BJB; the numeric ones add GB and PB
    assert float(b.throughput_upper.subs(val)) == pytest.approx(min(num.aba[1], num.bjb[1]))
    assert float(b.throughput_lower.subs(val)) == pytest.approx(max(num.aba[0], num.bjb[0]))
    assert num.throughput_lower >= max(num.aba[0], num.bjb[0])


def test_bounds_table_and_dict():
    b = qm.bounds(central())
    text = b.table()
    assert "N* = 27.3" in text and "bottleneck: cpu" in text
    d = b.to_dict()
    assert d["method"] == "bounds" and d["classes"]["t"]["N*"] == pytest.approx(27.3)
    assert math.isclose(d["classes"]["t"]["X"]["upper"], b.throughput_upper)
