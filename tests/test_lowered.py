"""The lowered form (qmodels.model.lowered), the requirements each method
checks on it (qmodels.analytic.requires) and ``qm.solve``'s choice of
method."""

from __future__ import annotations

import dataclasses
import math
import pickle
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

import qmodels as qm
from qmodels.errors import ProblemTooLargeError, UnsupportedModelError
from qmodels.model.lowered import DELAY, FIXED, LD, lower


def _net(*stations, N=3, visits=None):
    visits = visits or {s.name: 1 for s in stations}
    return qm.Network(list(stations), [qm.Closed("tx", N, visits=visits, think_time=1.0)])


def test_lowered_is_built_once_and_kept_beside_the_network():
    net = _net(qm.Queue("a", 0.1), qm.Delay("z", 1.0))
    low = net.lowered
    assert net.lowered is low
    # a cache, not part of the model: equality, pickling and replace ignore it
    again = pickle.loads(pickle.dumps(net))
    assert again == net and "_lowered" not in again.__dict__
    assert again.lowered is not low and again.lowered.kind == low.kind
    assert net.with_population(4).lowered is not low


def test_lowered_tables():
    net = qm.Network(
        [qm.Delay("z", 1.0), qm.Queue("q", 0.1, servers=3, discipline="ps"),
         qm.LoadDependent("d", 0.2, rate_multipliers=(1, 1.5)),
         qm.Queue("e", 0.1, distribution=qm.Erlang(4), capacity=9)],
        [qm.Closed("c", 5, visits={"z": 1, "q": 2, "d": 1}, think_time=2.0),
         qm.Open("o", 0.5, visits={"e": 1})])
    low = net.lowered
    assert low.kind == ("delay", "queue", "ld", "queue")
    assert low.discipline == ("delay", "ps", "ps", "fcfs")
    assert math.isinf(low.servers[0]) and list(low.servers[1:]) == [3, 1, 1]
    assert low.multipliers == (None, None, (1.0, 1.5), None)
    assert low.capacity == (None, None, None, 9)
    assert list(low.scv) == [1.0, 1.0, 1.0, 0.25]
    assert list(low.exponential) == [True, True, True, False]
    assert list(low.is_open) == [False, True]
    assert list(low.population) == [5, 0]
    assert list(low.think_time) == [2.0, 0.0] and list(low.arrival_rate) == [0.0, 0.5]
    assert low.demands is net.demands
    assert list(low.used) == [True, True, True, True]
    # a(n) as the stations define it (Station.rate_multiplier)
    for k, s in enumerate(net.stations):
        for n in range(0, 6):
            assert low.rate_multiplier(k, n) == s.rate_multiplier(n)


@pytest.mark.parametrize("station, n, options, expected", [
    # exact reductions always taken
    (qm.Delay("s", 1.0), 5, {}, (DELAY, None)),
    (qm.Queue("s", 1.0), 5, {}, (FIXED, (1.0,))),
    (qm.Queue("s", 1.0, servers=5), 5, {}, (DELAY, None)),       # c >= n never queues
    (qm.Queue("s", 1.0, servers=4), 5, {}, (LD, (1.0, 2.0, 3.0, 4.0))),
    # constant rates
    (qm.LoadDependent("s", 1.0, rate_multipliers=(1, 1)), 5, {}, (FIXED, (1.0,))),
    (qm.LoadDependent("s", 1.0, rate_multipliers=(2, 2)), 5, {}, (LD, (2.0, 2.0))),
    (qm.LoadDependent("s", 1.0, rate_multipliers=(2, 2)), 5, {"constant": "any"},
     (FIXED, (2.0,))),
    (qm.LoadDependent("s", 1.0, rate_multipliers=(1, 1)), 5, {"constant": "never"},
     (LD, (1.0, 1.0))),
    # a(j) = j up to n, and truncation to n
    (qm.LoadDependent("s", 1.0, rate_multipliers=(1, 2, 3)), 3, {"identity_delay": True},
     (DELAY, None)),
    (qm.LoadDependent("s", 1.0, rate_multipliers=(1, 2, 3)), 4, {"identity_delay": True},
     (LD, (1.0, 2.0, 3.0))),
    (qm.LoadDependent("s", 1.0, rate_multipliers=(1, 2, 5)), 2,
     {"identity_delay": True, "truncate": True}, (DELAY, None)),
    (qm.LoadDependent("s", 1.0, rate_multipliers=(3, 3, 5)), 2,
     {"constant": "any", "truncate": True}, (FIXED, (3.0,))),
    # no reduction at all (the cross-check route)
    (qm.Queue("s", 1.0), 5, {"reduce": False}, (LD, (1.0,))),
    (qm.Queue("s", 1.0, servers=9), 5, {"reduce": False}, (LD, (1.0, 2.0, 3.0, 4.0, 5.0))),
])
def test_station_shapes(station, n, options, expected):
    low = _net(station).lowered
    assert low.shape(0, n, **options) == expected
    assert low.shape(0, n, **options) is low.shape(0, n, **options)  # kept


def test_a_huge_server_count_is_not_listed():
    # min(n, c) is never materialised for the whole of c: lowering a queue
    # of 2**62 servers is immediate, and a shape asks only up to n
    net = _net(qm.Queue("farm", 1.0, servers=2**62))
    low = net.lowered
    assert low.multipliers == (None,) and low.servers[0] == 2.0**62
    assert low.shape(0, 10) == (DELAY, None)


def test_unused_station_is_a_delay_only_when_asked():
    net = qm.Network([qm.Queue("a", 0.1), qm.Queue("b", 0.1, servers=2)],
                     [qm.Closed("tx", 4, visits={"a": 1})])
    low = net.lowered
    assert low.shape(1, 5) == (LD, (1.0, 2.0))
    assert low.shape(1, 5, unused_delay=True) == (DELAY, None)


@dataclass(frozen=True)
class _Gadget(qm.Station):
    """A station kind no solver knows (stands for a kind added later)."""

    kind: ClassVar[str] = "gadget"

    def rate_multiplier(self, n):
        return min(n, 1)


def test_a_kind_without_product_form_is_refused_by_name_everywhere():
    net = _net(qm.Queue("cpu", 0.1), _Gadget("widget", 0.2))
    assert net.lowered.kind == ("queue", "gadget")
    for solve in (qm.mva, qm.convolution, qm.schweitzer, qm.linearizer):
        with pytest.raises(UnsupportedModelError, match="station 'widget' is a 'gadget'"):
            solve(net)
    with pytest.raises(UnsupportedModelError, match="no analytic method.*'widget'.*method='sim'"):
        qm.solve(net)


def test_solve_chooses_exact_for_product_form_and_says_so():
    net = _net(qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08))
    r = qm.solve(net)
    assert r.method == "exact"
    assert r.notes[-1] == "method chosen by qm.solve: 'exact'"
    np.testing.assert_array_equal(r.class_throughput, qm.mva(net).class_throughput)


def test_solve_chooses_the_ctmc_then_the_decomposition_for_pools():
    net = qm.Network(
        [qm.Delay("cpu", 0.05), qm.Queue("dma", 0.01), qm.Queue("port", 0.012)],
        [qm.Closed("io", 8, routing={"cpu": {"dma": 1}, "dma": {"port": 1},
                                     "port": {"cpu": 1}})],
        pools=[qm.TokenPool("buf", 2, "dma", "port")])
    # small enough for the Markov chain: qm.solve takes the exact answer first
    r = qm.solve(net)
    assert r.method == "ctmc" and r.exactness == "exact"
    assert "passed over exact: token pool 'buf'" in r.notes[-1]
    assert r.X["io"] == qm.ctmc(net).X["io"]
    # beyond the chain's budget (2000 jobs, 400 tokens: more than 50,000 states): the
    # decomposition, labelled approximate
    big = qm.Network(net.stations, [dataclasses.replace(net.classes[0], population=2000)],
                     pools=[qm.TokenPool("buf", 400, "dma", "port")])
    r = qm.solve(big)
    assert r.method == "decomposition" and r.exactness == "approximate"
    assert "ctmc: the state space has more than" in r.notes[-1]
    assert r.X["io"] == qm.decompose(big).X["io"]


def test_solve_passes_a_lattice_too_large_for_exact_to_linearizer():
    net = qm.Network([qm.Queue("a", 0.01), qm.Queue("b", 0.02)],
                     [qm.Closed(f"c{i}", 400, visits={"a": 1, "b": 1}) for i in range(4)])
    with pytest.raises(ProblemTooLargeError):
        qm.mva(net)
    r = qm.solve(net)
    assert r.method == "linearizer"
    assert "passed over exact: exact multi-class MVA over populations" in r.notes[-1]
    np.testing.assert_array_equal(r.class_throughput, qm.linearizer(net).class_throughput)


def test_solve_refuses_an_unknown_method_with_the_list():
    net = _net(qm.Queue("cpu", 0.05))
    with pytest.raises(UnsupportedModelError, match="unknown method 'fastest'.*auto, bounds"):
        qm.solve(net, method="fastest")
    assert "auto" in qm.methods()


def test_lower_is_what_the_network_caches():
    net = _net(qm.Queue("cpu", 0.05), qm.LoadDependent("d", 0.1, rate_multipliers=(1, 2)))
    a, b = lower(net), net.lowered
    assert a.kind == b.kind and a.multipliers == b.multipliers
    assert a.station_names == b.station_names == net.station_names


def test_solve_chooses_a_method_that_holds_general_fcfs_service():
    # a small closed network: the phase-type chain holds the Erlang-4
    # exactly; past the chain's budget the two-moment method (marie) answers
    closed = _net(qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08, distribution=qm.Erlang(4)))
    r = qm.solve(closed)
    assert (r.method, r.exactness) == ("ctmc", "exact")
    assert any("passed over exact: station 'disk': FCFS with Erlang service" in n
               for n in r.notes)
    # (four queues: Marie's subsystem of two stations is a chain of 20,301
    # states; the two-queue network at N = 400 made it 321,201, 26 s)
    big = _net(qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08, distribution=qm.Erlang(4)),
               qm.Queue("net", 0.03), qm.Queue("d2", 0.06), N=100)
    r = qm.solve(big)
    assert r.method == "marie"
    np.testing.assert_array_equal(r.class_throughput, qm.marie(big).class_throughput)
    opened = qm.Network([qm.Queue("dma", 0.01, distribution=qm.Deterministic()),
                         qm.Queue("disk", 0.02)], [qm.Open("io", 20.0, visits={"dma": 1,
                                                                                 "disk": 1})])
    r = qm.solve(opened)
    # the chain holds the deterministic time as an Erlang fit: approximate, and says so
    assert (r.method, r.exactness) == ("ctmc", "approximate")
    assert any("fit" in a for a in r.assumptions)
    r = qm.solve(opened, method="qna")
    np.testing.assert_array_equal(r.class_response_time, qm.qna(opened).class_response_time)
    # exponential service: the product-form methods answer, not the two-moment ones
    plain = _net(qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08))
    assert qm.solve(plain).method == "exact"
