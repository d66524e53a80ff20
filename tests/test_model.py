"""Model validation: every error names what it is about and the value."""

import math

import numpy as np
import pytest
import sympy as sp

import qmodels as qm
from qmodels.errors import (
    DuplicateNameError,
    InvalidValueError,
    ModelError,
    PopulationError,
    RoutingError,
    UnknownNameError,
    UnreachableStationError,
)


def simple(**kw):
    return qm.Network(
        [qm.Queue("cpu", 0.01), qm.Queue("disk", 0.02)],
        [qm.Closed("tx", kw.pop("population", 3), visits={"cpu": 1, "disk": 2}, **kw)],
    )


# -- stations -----------------------------------------------------------------

@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), "fast", None, True])
def test_station_service_time_rejected(bad):
    with pytest.raises(InvalidValueError, match=r"station 'disk': service time must be"):
        qm.Queue("disk", bad)


def test_delay_rejects_negative_time():
    with pytest.raises(InvalidValueError, match=r"station 'users': service time .* got -5"):
        qm.Delay("users", -5)


@pytest.mark.parametrize("bad", [0, -2, 2.5, True, float("nan")])
def test_servers_must_be_positive_integer(bad):
    with pytest.raises(InvalidValueError, match=r"station 'cpu': servers must be an integer >= 1"):
        qm.Queue("cpu", 0.01, servers=bad)


def test_servers_integral_float_is_taken_not_rounded():
    assert qm.Queue("cpu", 0.01, servers=4.0).servers == 4


def test_capacity_smaller_than_servers():
    with pytest.raises(InvalidValueError, match=r"capacity 2 is smaller than servers 4"):
        qm.Queue("cpu", 0.01, servers=4, capacity=2)


def test_capacity_must_be_positive():
    with pytest.raises(InvalidValueError, match=r"station 'buf': capacity must be an integer >= 1"):
        qm.Queue("buf", 0.01, capacity=0)


def test_discipline_checked():
    with pytest.raises(InvalidValueError, match=r"discipline must be one of 'fcfs', 'ps', .*got 'lifo'"):
        qm.Queue("cpu", 0.01, discipline="lifo")


def test_rate_multipliers_checked():
    with pytest.raises(InvalidValueError, match=r"rate_multipliers is empty"):
        qm.LoadDependent("raid", 0.02, rate_multipliers=())
    with pytest.raises(InvalidValueError, match=r"rate_multipliers\[1\] must be a finite positive"):
        qm.LoadDependent("raid", 0.02, rate_multipliers=(1, 0))
    with pytest.raises(InvalidValueError, match=r"rate_multipliers must be a sequence"):
        qm.LoadDependent("raid", 0.02, rate_multipliers="12")


def test_reserved_and_empty_names():
    with pytest.raises(InvalidValueError, match=r"'source' is reserved"):
        qm.Queue("source", 1.0)
    with pytest.raises(InvalidValueError, match=r"station name must be a non-empty string"):
        qm.Queue("", 1.0)
    with pytest.raises(InvalidValueError, match=r"class name must be a non-empty string"):
        qm.Closed(" ", 1, visits={"a": 1})


def test_power_checked():
    with pytest.raises(InvalidValueError, match=r"power.idle must be a finite non-negative"):
        qm.Power(busy=5, idle=-1)
    s = qm.Queue("disk", 0.02, power={"busy": 6.8, "idle": 4.0})
    assert s.power == qm.Power(6.8, 4.0)


def test_distribution_type_checked():
    with pytest.raises(InvalidValueError, match=r"station 'd': distribution must be"):
        qm.Queue("d", 1.0, distribution="exponential")
    with pytest.raises(InvalidValueError, match=r"Erlang: k must be an integer >= 1, got 0"):
        qm.Erlang(0)
    with pytest.raises(InvalidValueError, match=r"HyperExponential: scv must be .* >= 1, got 0.5"):
        qm.HyperExponential(0.5)


def test_stations_are_immutable_and_hashable():
    s = qm.Queue("cpu", 0.01, servers=2)
    with pytest.raises(AttributeError):
        s.service = 1.0
    assert hash(s) == hash(qm.Queue("cpu", 0.01, servers=2))


# -- classes ------------------------------------------------------------------

@pytest.mark.parametrize("bad", [10.3, -1, float("nan"), "ten", True, None])
def test_population_must_be_non_negative_integer(bad):
    with pytest.raises(PopulationError, match=r"class 'tx': population must be a non-negative integer"):
        qm.Closed("tx", bad, visits={"cpu": 1})


def test_population_never_rounded():
    assert qm.Closed("tx", 10.0, visits={"cpu": 1}).population == 10
    assert qm.Closed("tx", np.int64(7), visits={"cpu": 1}).population == 7
    with pytest.raises(PopulationError, match=r"got 10.3"):
        qm.Closed("tx", 10.3, visits={"cpu": 1})


def test_negative_think_time_and_visits():
    with pytest.raises(InvalidValueError, match=r"class 'tx': think time must be"):
        qm.Closed("tx", 1, visits={"cpu": 1}, think_time=-1)
    with pytest.raises(InvalidValueError, match=r"class 'tx': visit ratio at station 'cpu'"):
        qm.Closed("tx", 1, visits={"cpu": -1})
    with pytest.raises(InvalidValueError, match=r"class 'tx': demand at station 'cpu'"):
        qm.Closed("tx", 1, demands={"cpu": float("nan")})
    with pytest.raises(InvalidValueError, match=r"class 'web': arrival rate must be"):
        qm.Open("web", -2.0, visits={"cpu": 1})


def test_exactly_one_workload_description():
    with pytest.raises(InvalidValueError, match=r"give exactly one of visits, route, routing or demands"):
        qm.Closed("tx", 1)
    with pytest.raises(InvalidValueError, match=r"give exactly one of visits, route, routing or demands"):
        qm.Closed("tx", 1, visits={"a": 1}, demands={"a": 1})


# -- network ------------------------------------------------------------------

def test_unknown_station_in_visits():
    with pytest.raises(UnknownNameError, match=r"class 'tx': visits name unknown station 'dsk'"):
        qm.Network([qm.Queue("disk", 1.0)], [qm.Closed("tx", 1, visits={"dsk": 1})])


def test_unknown_station_in_service_and_demands():
    with pytest.raises(UnknownNameError, match=r"service times name unknown station 'x'"):
        qm.Network([qm.Queue("a", 1.0)], [qm.Closed("t", 1, visits={"a": 1}, service={"x": 1})])
    with pytest.raises(UnknownNameError, match=r"demands name unknown station 'x'"):
        qm.Network([qm.Queue("a", 1.0)], [qm.Closed("t", 1, demands={"x": 1})])


def test_duplicate_names():
    with pytest.raises(DuplicateNameError, match=r"duplicate station name 'a'"):
        qm.Network([qm.Queue("a", 1.0), qm.Delay("a", 1.0)], [qm.Closed("t", 1, visits={"a": 1})])
    with pytest.raises(DuplicateNameError, match=r"class name 'a' is already used by a station"):
        qm.Network([qm.Queue("a", 1.0)], [qm.Closed("a", 1, visits={"a": 1})])
    with pytest.raises(DuplicateNameError, match=r"class name 't' is already used by a class"):
        qm.Network([qm.Queue("a", 1.0)],
                   [qm.Closed("t", 1, visits={"a": 1}), qm.Closed("t", 2, visits={"a": 1})])


def test_routing_row_must_sum_to_one():
    with pytest.raises(RoutingError,
                       match=r"routing row 'a' sums to 0.9, not 1 \(tolerance 1e-09\)"):
        qm.Network([qm.Queue("a", 1.0), qm.Queue("b", 1.0)],
                   [qm.Closed("t", 1, routing={"a": {"b": 0.9}, "b": {"a": 1}})])


def test_routing_tolerance_is_as_stated():
    # 1e-10 off is inside the stated tolerance, 1e-8 is not
    qm.Network([qm.Queue("a", 1.0), qm.Queue("b", 1.0)],
               [qm.Closed("t", 1, routing={"a": {"b": 1 + 1e-10}, "b": {"a": 1}})])
    with pytest.raises(RoutingError, match=r"sums to 1.00000001"):
        qm.Network([qm.Queue("a", 1.0), qm.Queue("b", 1.0)],
                   [qm.Closed("t", 1, routing={"a": {"b": 1 + 1e-8}, "b": {"a": 1}})])


def test_unreachable_station():
    st = [qm.Queue("a", 1.0), qm.Queue("b", 1.0), qm.Queue("c", 1.0)]
    with pytest.raises(UnreachableStationError, match=r"station\(s\) 'c' cannot be reached from 'a'"):
        qm.Network(st, [qm.Closed("t", 1, routing={"a": {"b": 1}, "b": {"a": 1},
                                                    "c": {"a": 1}})])


def test_trapped_jobs():
    st = [qm.Queue("a", 1.0), qm.Queue("b", 1.0), qm.Queue("c", 1.0)]
    with pytest.raises(RoutingError, match=r"jobs at station\(s\) 'b', 'c' can never return to 'a'"):
        qm.Network(st, [qm.Closed("t", 1, routing={"a": {"b": 1}, "b": {"c": 1},
                                                    "c": {"b": 1}})])
    with pytest.raises(RoutingError, match=r"station\(s\) 'b', 'c' can never leave the network"):
        qm.Network(st, [qm.Open("o", 1.0, routing={"source": {"a": 1},
                                                    "a": {"b": 0.5, "sink": 0.5},
                                                    "b": {"c": 1}, "c": {"b": 1}})])
    with pytest.raises(RoutingError, match=r"open routing never sends jobs to 'sink'"):
        qm.Network(st[:2], [qm.Open("o", 1.0, routing={"source": {"a": 1}, "a": {"b": 1},
                                                        "b": {"a": 1}})])


def test_routing_unknown_station_and_missing_row():
    st = [qm.Queue("a", 1.0), qm.Queue("b", 1.0)]
    with pytest.raises(UnknownNameError, match=r"routing names unknown station 'z'"):
        qm.Network(st, [qm.Closed("t", 1, routing={"a": {"z": 1}, "b": {"a": 1}})])
    with pytest.raises(RoutingError, match=r"station 'b' has no routing row"):
        qm.Network(st, [qm.Closed("t", 1, routing={"a": {"b": 1}})])
    with pytest.raises(RoutingError, match=r"open routing needs a 'source' row"):
        qm.Network(st, [qm.Open("o", 1.0, routing={"a": {"sink": 1}})])


def test_traffic_equations_closed():
    # central server: cpu -> disk1 (0.3), disk2 (0.6), back to cpu (0.1 "terminal")
    # v_cpu = 1, v_d1 = 0.3, v_d2 = 0.6 (hand solution of v = v P)
    st = [qm.Queue("cpu", 0.01), qm.Queue("d1", 0.02), qm.Queue("d2", 0.03)]
    net = qm.Network(st, [qm.Closed("t", 2, routing={
        "cpu": {"cpu": 0.1, "d1": 0.3, "d2": 0.6}, "d1": {"cpu": 1}, "d2": {"cpu": 1}})])
    np.testing.assert_allclose(net.visits[0], [1.0, 0.3, 0.6], rtol=1e-12)
    np.testing.assert_allclose(net.demands[0], [0.01, 0.006, 0.018], rtol=1e-12)
    g = net.graph()
    assert g.edges["cpu", "d2"]["p"] == {"t": 0.6}


def test_traffic_equations_open():
    # source -> a; a -> b (0.5) or sink (0.5); b -> a.  v_a = 1 + v_b, v_b = v_a / 2
    # => v_a = 2, v_b = 1.
    st = [qm.Queue("a", 0.1), qm.Queue("b", 0.1)]
    net = qm.Network(st, [qm.Open("o", 1.0, routing={
        "source": {"a": 1}, "a": {"b": 0.5, "sink": 0.5}, "b": {"a": 1}})])
    np.testing.assert_allclose(net.visits[0], [2.0, 1.0], rtol=1e-12)


def test_symbolic_traffic_equations():
    p = sp.Symbol("p", positive=True)
    st = [qm.Queue("a", 1), qm.Queue("b", 1)]
    net = qm.Network(st, [qm.Open("o", 1, routing={
        "source": {"a": 1}, "a": {"b": p, "sink": 1 - p}, "b": {"a": 1}})])
    assert net.is_symbolic
    assert sp.simplify(net.visits[0, 0] - 1 / (1 - p)) == 0


def test_symbolic_validation_only_when_provably_false():
    s = sp.Symbol("s", positive=True)
    qm.Queue("disk", s)  # fine
    qm.Queue("disk", sp.Symbol("t"))  # unknown sign: not provably negative
    with pytest.raises(InvalidValueError, match=r"service time must be non-negative, got -s"):
        qm.Queue("disk", -s)


def test_demands_and_per_class_service():
    net = qm.Network(
        [qm.Queue("cpu", 0.01), qm.Queue("disk", 0.02)],
        [qm.Closed("a", 1, visits={"cpu": 1, "disk": 3}, service={"disk": 0.05}),
         qm.Closed("b", 1, demands={"cpu": 0.2})],
    )
    np.testing.assert_allclose(net.demands, [[0.01, 0.15], [0.2, 0.0]])
    assert net.class_names == ("a", "b") and net.station_names == ("cpu", "disk")


def test_token_pool_checked():
    st = [qm.Queue("a", 1.0), qm.Queue("b", 1.0)]
    cl = [qm.Closed("t", 1, routing={"a": {"b": 1}, "b": {"a": 1}})]
    with pytest.raises(InvalidValueError, match=r"token pool 'buf': tokens must be an integer >= 1"):
        qm.TokenPool("buf", 0, "a", "b")
    with pytest.raises(UnknownNameError, match=r"token pool 'buf': unknown station 'c'"):
        qm.Network(st, cl, pools=[qm.TokenPool("buf", 2, "a", "c")])


def test_with_population_and_errors_are_model_errors():
    net = simple(population=3)
    assert net.with_population(7).populations == (7,)
    assert issubclass(PopulationError, ModelError) and issubclass(ModelError, ValueError)
    with pytest.raises(PopulationError):
        net.with_population(-1)


def test_network_repr_and_empty():
    assert "cpu:queue" in repr(simple())
    with pytest.raises(InvalidValueError, match=r"at least one station"):
        qm.Network([], [qm.Closed("t", 1, visits={})])
    assert math.isinf(qm.Delay("d", 1).servers)


def test_a_lone_class_or_a_non_network_is_a_typed_error():
    """``qm.Network([...], qm.Closed(...))`` (the class not in a list)
    raised "'Closed' object is not iterable", and qm.mva / qm.bounds /
    qm.solve given something else than a Network an AttributeError from
    inside; each is an InvalidValueError saying what is expected."""
    with pytest.raises(qm.InvalidValueError, match=r"classes must be a list.*got Closed"):
        qm.Network([qm.Queue("cpu", 0.1)], qm.Closed("t", 1, visits={"cpu": 1}))
    with pytest.raises(qm.InvalidValueError, match=r"stations must be a list.*got Queue"):
        qm.Network(qm.Queue("cpu", 0.1), [qm.Closed("t", 1, visits={"cpu": 1})])
    with pytest.raises(qm.InvalidValueError, match="stations must be a list.*got dict"):
        qm.Network({"cpu": 0.1}, [qm.Closed("t", 1, visits={"cpu": 1})])
    for f in (qm.mva, qm.bounds, qm.solve):
        with pytest.raises(qm.InvalidValueError, match="needs a qmodels Network, got str"):
            f("model.yaml")
