"""One convention for R at a station a class never visits.

Every analytic solver reports the arrival-theorem value: the mean time a
class-c job would spend there if it arrived, S_ck sum_j j/a(j) P(n_k = j-1)
in the network with one class-c job less, S_ck (1 + Q_k(N - e_c)) at a
single server (Reiser & Lavenberg, "Mean-value analysis of closed
multichain queuing networks", JACM 27(2), 1980).  Convolution computes it
from normalising constants (H_k/G, Bruell & Balbo 1980), exact MVA from its
lattice, the CTMC from the chain with one job less; the references below
are each other plus a hand derivation.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qmodels as qm


def two_class():
    return qm.Network(
        [qm.Queue("a", 0.5), qm.Queue("b", 0.3), qm.Delay("z", 1.0),
         qm.Queue("m", 0.4, servers=2), qm.LoadDependent("l", 0.2, rate_multipliers=(2, 1, 3))],
        [qm.Closed("x", 1, routing={"a": {"z": 1}, "z": {"a": 1}}),
         qm.Closed("y", 2, routing={"a": {"b": 1}, "b": {"m": 1}, "m": {"l": 1},
                                    "l": {"a": 1}})])


def test_hand_derivation_single_server():
    # x (N_x = 1) never visits b.  With one x job less the network holds
    # y alone: R_xb = S_b (1 + Q_b^y(2)), Q_b from y's own single-class MVA.
    net = two_class()
    alone = qm.Network(net.stations, [net.classes[1]])
    qb = qm.mva(alone).Q["b"]
    want = 0.3 * (1 + qb)
    for method in ("exact", "convolution", "ctmc"):
        r = qm.solve(net, method=method)
        assert r.station_response_time[0, 1] == pytest.approx(want, rel=1e-9), method


def test_exact_convolution_ctmc_agree_everywhere():
    net = two_class()
    ex = qm.solve(net, method="exact").station_response_time
    for method in ("convolution", "ctmc"):
        np.testing.assert_allclose(qm.solve(net, method=method).station_response_time, ex,
                                   rtol=1e-9)
    lat = qm.mva(net, curve=True).curve
    np.testing.assert_allclose(lat.at((1, 2)).station_response_time, ex, rtol=1e-12)


def test_approximations_use_their_own_estimate():
    # Schweitzer's estimate of Q_k(N - e_c) for a class absent from k is
    # Q_k(N): R = S (1 + Q_k) at a single server, from the result itself;
    # and both approximations stay near the exact value.
    net = qm.Network(
        [qm.Queue("a", 0.5), qm.Queue("b", 0.3), qm.Delay("z", 1.0)],
        [qm.Closed("x", 3, routing={"a": {"z": 1}, "z": {"a": 1}}),
         qm.Closed("y", 2, routing={"a": {"b": 1}, "b": {"a": 1}})])
    sw = qm.solve(net, method="schweitzer")
    qb = sw.station_queue_length[:, 1].sum()
    assert sw.station_response_time[0, 1] == pytest.approx(0.3 * (1 + qb), rel=1e-12)
    ex = qm.solve(net, method="exact").station_response_time[0, 1]
    assert ex > 0.3  # not the bare service time
    for method in ("schweitzer", "linearizer"):
        got = qm.solve(net, method=method).station_response_time[0, 1]
        assert got == pytest.approx(ex, rel=0.1), method


KINDS = st.sampled_from(["delay", "q1", "q2", "ld"])


def _station(name, kind, S):
    if kind == "delay":
        return qm.Delay(name, S)
    if kind == "q1":
        return qm.Queue(name, S)
    if kind == "q2":
        return qm.Queue(name, S, servers=2)
    return qm.LoadDependent(name, S, rate_multipliers=(1.5, 1.0, 2.0))


@st.composite
def networks(draw):
    K = draw(st.integers(2, 4))
    stations = [_station(f"s{k}", draw(KINDS), draw(st.sampled_from([0.1, 0.5, 1.0])))
                for k in range(K)]
    classes = []
    for c in range(draw(st.integers(2, 3))):
        vis = {f"s{k}": draw(st.sampled_from([0.0, 0.0, 1.0, 2.0])) for k in range(K)}
        if sum(vis.values()) == 0:
            vis["s0"] = 1.0
        classes.append(qm.Closed(f"c{c}", draw(st.integers(0, 3)), visits=vis,
                                 think_time=draw(st.sampled_from([0.0, 1.0]))))
    return qm.Network(stations, classes)


@settings(deadline=None, max_examples=40, derandomize=True)
@given(networks())
def test_exact_equals_convolution_at_unvisited_stations(net):
    ex = qm.solve(net, method="exact").station_response_time
    cv = qm.solve(net, method="convolution").station_response_time
    np.testing.assert_allclose(ex, cv, rtol=1e-8, atol=1e-12)


def test_simulator_reports_nan_with_a_note():
    import math

    net = qm.Network(
        [qm.Queue("a", 0.5), qm.Queue("b", 0.3), qm.Delay("z", 1.0)],
        [qm.Closed("x", 3, routing={"a": {"z": 1}, "z": {"a": 1}}),
         qm.Closed("y", 2, routing={"a": {"b": 1}, "b": {"a": 1}})])
    s = qm.simulate(net, seed=1, horizon=100.0, replications=3)
    assert math.isnan(s.R["b", "x"].mean)
    assert not math.isnan(s.R["b", "y"].mean)
    assert any("never visits is NaN" in n and "'x' at 'b'" in n for n in s.notes)
