"""Marie's method where several classes follow one cycle of single-server
FCFS queues with no think time (:func:`qmodels.analytic.marie._group_answer`):
no job of such a group overtakes another, so the group's classes complete
their cycles at one rate, and the group is solved as one class of its mixed
service.

References, independent of the solver: the exact CTMC (``qm.ctmc``, which
keeps every queue's order of jobs in its state), exact MVA where the
classes are alike (product form), and the no-overtaking argument, which the
CTMC confirms below.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import qmodels as qm
from qmodels.analytic import marie as M
from qmodels.model.distributions import Erlang


@pytest.fixture(autouse=True)
def _station_by_station(monkeypatch):
    # the class aggregation answers where no subsystem of several queues
    # forms (:mod:`qmodels.analytic._marie_subsystem`); these tests pin it
    # with the subsystems off (their joint chains keep the classes' order
    # themselves: test_subsystems_keep_the_order below)
    monkeypatch.setattr(M, "SUBSYSTEMS", False)


def _quiet(fn, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **k)


CYCLE = {"s0": {"s1": 1.0}, "s1": {"s0": 1.0}}


def _two_queues():
    # network 19 of `python -m validation.envelopes --family
    # fcfs-classdep-closed`: two exponential FCFS queues whose mean service
    # differs by class, 2 + 1 jobs on one cycle.  Marie's method per class
    # had class c0's X 29.2 % high and c1's 14.6 % low: the flow-equivalent
    # source lets the fast class overtake the slow one
    return qm.Network(
        [qm.Queue("s0", 1.0), qm.Queue("s1", 1.0)],
        [qm.Closed("c0", 2, routing=CYCLE, service={"s0": 0.29765, "s1": 0.020406}),
         qm.Closed("c1", 1, routing=CYCLE, service={"s0": 0.865521, "s1": 0.610471})])


def test_no_overtaking_in_the_ctmc():
    # the argument the aggregation rests on, checked on the exact chain:
    # every class of the cycle has the same cycle time, X_c proportional to N_c
    e = qm.ctmc(_two_queues())
    assert float(e.X["c0"]) / 2.0 == pytest.approx(float(e.X["c1"]), rel=1e-9)
    assert float(e.R["c0"]) == pytest.approx(float(e.R["c1"]), rel=1e-9)


def test_one_cycle_against_the_ctmc():
    net = _two_queues()
    r, e = qm.marie(net), qm.ctmc(net)
    assert "aggregated" in r.info
    # the split is the exact one: X_c in proportion to N_c, one cycle time
    assert float(r.X["c0"]) / 2.0 == pytest.approx(float(r.X["c1"]), rel=1e-12)
    assert float(r.R["c0"]) == pytest.approx(float(r.R["c1"]), rel=1e-12)
    for c in net.class_names:
        eX = abs(float(r.X[c]) - float(e.X[c])) / float(e.X[c])
        eR = abs(float(r.R[c]) - float(e.R[c])) / float(e.R[c])
        # measured: X +2.5 %, R -2.5 % (the mixture draws each service's
        # class afresh where the cycle repeats one order)
        assert eX < 0.03 and eR < 0.03, (c, eX, eR)


def test_a_group_beside_a_class_with_think_time():
    # network 2 of the same catalog: classes c1 and c2 on the two-queue
    # cycle with no think time (a group), class c0 thinking between visits
    # (it can pass them; its think stage sits before s1, its reference).
    # Per class: X 16.8 % off before; now 4.1 %
    back = {"s1": {"s0": 1.0}, "s0": {"s1": 1.0}}
    net = qm.Network(
        [qm.Queue("s0", 1.0), qm.Queue("s1", 1.0)],
        [qm.Closed("c0", 2, think_time=2.07, routing=back,
                   service={"s0": 0.042087, "s1": 0.174604}),
         qm.Closed("c1", 1, routing=CYCLE, service={"s0": 0.54608, "s1": 0.864424}),
         qm.Closed("c2", 1, routing=CYCLE, service={"s0": 0.427681, "s1": 0.206419})])
    r, e = qm.marie(net), qm.ctmc(net)
    assert [g["classes"] for g in r.info["aggregated"]] == [["c1", "c2"]]
    assert float(r.X["c1"]) == pytest.approx(float(r.X["c2"]), rel=1e-12)
    assert float(e.X["c1"]) == pytest.approx(float(e.X["c2"]), rel=1e-9)
    for c in net.class_names:
        eX = abs(float(r.X[c]) - float(e.X[c])) / float(e.X[c])
        assert eX < 0.045, (c, eX)


def test_alike_classes_are_exact_mva():
    # classes of one service on one cycle of exponential queues: product
    # form, and the aggregated class is the network's own single class
    net = qm.Network(
        [qm.Queue("a", 0.3), qm.Queue("b", 0.5), qm.Queue("c", 0.2)],
        [qm.Closed("x", 2, routing={"a": {"b": 1.0}, "b": {"c": 1.0}, "c": {"a": 1.0}}),
         qm.Closed("y", 3, routing={"b": {"c": 1.0}, "c": {"a": 1.0}, "a": {"b": 1.0}})])
    r, e = qm.marie(net), qm.mva(net)
    assert "aggregated" in r.info
    np.testing.assert_allclose(np.asarray(r.class_throughput, dtype=float),
                               np.asarray(e.class_throughput, dtype=float), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(r.station_queue_length, dtype=float),
                               np.asarray(e.station_queue_length, dtype=float), rtol=1e-9)


def test_general_service_on_one_cycle_against_the_ctmc():
    # Erlang-2 queues whose means differ by class: the mixture is fitted by
    # its first two moments (named in the notes)
    net = qm.Network(
        [qm.Queue("s0", 1.0, distribution=Erlang(2)), qm.Queue("s1", 1.0)],
        [qm.Closed("c0", 2, routing=CYCLE, service={"s0": 0.2, "s1": 0.1}),
         qm.Closed("c1", 2, routing=CYCLE, service={"s0": 0.6, "s1": 0.5})])
    r, e = _quiet(qm.marie, net), qm.ctmc(net)
    assert any("mixture" in n and "two moments" in n for n in r.notes)
    for c in net.class_names:
        eX = abs(float(r.X[c]) - float(e.X[c])) / float(e.X[c])
        assert eX < 0.05, (c, eX)
    # the laws per class: the jobs add up, one server's load at most
    Q = np.asarray(r.station_queue_length, dtype=float)
    np.testing.assert_allclose(Q.sum(axis=1), [2.0, 2.0], rtol=1e-9)
    assert np.asarray(r.station_utilization, dtype=float).sum(axis=0).max() <= 1.0


def test_random_routing_or_two_servers_are_not_grouped():
    # a class given by visits is routed at random (it can overtake), and a
    # two-server queue lets a job pass another: Marie per class there
    by_visits = qm.Network(
        [qm.Queue("s0", 1.0), qm.Queue("s1", 1.0)],
        [qm.Closed("c0", 2, visits={"s0": 1, "s1": 1}, service={"s0": 0.3, "s1": 0.1}),
         qm.Closed("c1", 1, visits={"s0": 1, "s1": 1}, service={"s0": 0.8, "s1": 0.6})])
    two = qm.Network(
        [qm.Queue("s0", 1.0, servers=2), qm.Queue("s1", 1.0)],
        [qm.Closed("c0", 2, routing=CYCLE, service={"s0": 0.3, "s1": 0.1}),
         qm.Closed("c1", 1, routing=CYCLE, service={"s0": 0.8, "s1": 0.6})])
    for net in (by_visits, two):
        assert "aggregated" not in _quiet(qm.marie, net).info


def test_a_shape_per_class_elsewhere_is_still_refused_by_name():
    # the aggregated network takes a shape per class at a queue (its
    # group's mixture); the public solver still refuses one the user gives
    net = qm.Network(
        [qm.Queue("s0", 1.0), qm.Queue("s1", 1.0), qm.Queue("disk", 0.2)],
        [qm.Closed("c0", 2, routing=CYCLE, service={"s0": 0.3, "s1": 0.1}),
         qm.Closed("c1", 1, routing=CYCLE, service={"s0": 0.8, "s1": 0.6}),
         qm.Closed("r", 1, think_time=1.0, route=["disk"], distribution={"disk": Erlang(2)}),
         qm.Closed("w", 1, think_time=1.0, route=["disk"])])
    with pytest.raises(qm.errors.UnsupportedModelError) as e:
        qm.marie(net)
    assert "'disk'" in str(e.value)


def test_a_class_named_like_the_group():
    net = qm.Network(
        [qm.Queue("s0", 1.0), qm.Queue("s1", 1.0), qm.Queue("disk", 0.2)],
        [qm.Closed("a", 2, routing=CYCLE, service={"s0": 0.3, "s1": 0.1}),
         qm.Closed("b", 1, routing=CYCLE, service={"s0": 0.8, "s1": 0.6}),
         qm.Closed("a+b", 1, think_time=1.0, route=["disk"])])
    r, e = _quiet(qm.marie, net), qm.ctmc(net)
    assert [g["classes"] for g in r.info["aggregated"]] == [["a", "b"]]
    for c in net.class_names:
        assert float(r.X[c]) == pytest.approx(float(e.X[c]), rel=0.05)


def test_subsystems_keep_the_order(monkeypatch):
    # with the subsystems on, the two queues of the cycle are one joint chain
    # that keeps each queue's order of jobs; nothing lies outside it, so the
    # answer is the CTMC's and no class is aggregated
    monkeypatch.setattr(M, "SUBSYSTEMS", True)
    net = _two_queues()
    r, e = qm.marie(net), qm.ctmc(net)
    assert "aggregated" not in r.info
    assert r.info["subsystems"] == [["s0", "s1"]]
    for c in net.class_names:
        assert float(r.X[c]) == pytest.approx(float(e.X[c]), rel=1e-6)
        assert float(r.R[c]) == pytest.approx(float(e.R[c]), rel=1e-6)
