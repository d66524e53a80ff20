"""qmodels.testing: the strategies produce the shapes they promise, and the
law assertions pass on exact solutions and fail on wrong ones."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qmodels as qm
from qmodels.errors import UnstableError, UnsupportedModelError
from qmodels.testing import (
    assert_operational_laws,
    assert_within_bounds,
    closed_networks,
    distributions,
    mixed_networks,
    networks,
    open_networks,
)


@settings(deadline=None, max_examples=40)
@given(closed_networks(max_classes=3, max_stations=3))
def test_closed_networks_are_closed(net):
    assert net.is_closed
    assert 1 <= len(net.classes) <= 3 and 1 <= len(net.stations) <= 3
    assert all(0 <= c.population <= 4 for c in net.classes)
    assert not net.pools and not net.is_symbolic


@settings(deadline=None, max_examples=40)
@given(open_networks())
def test_open_networks_are_open_and_stable(net):
    assert net.is_open
    lam = np.array(net.arrival_rates)
    for k, s in enumerate(net.stations):
        if s.kind == "delay":
            continue
        cap = max(s.rate_multipliers) if s.kind == "ld" else s.servers
        assert lam @ net.demands[:, k] / cap < 0.9 + 1e-9


@settings(deadline=None, max_examples=30)
@given(open_networks(stable=True, multi_server=False, load_dependent=False, product_form=True))
def test_stable_open_networks_solve(net):
    assert_operational_laws(qm.mva(net))


@settings(deadline=None, max_examples=30)
@given(networks(max_classes=3, product_form=True))
def test_product_form_networks_have_no_class_dependent_fcfs(net):
    from qmodels.analytic import requires

    assert requires.fcfs_class_dependent(net) is None


@settings(deadline=None, max_examples=30)
@given(mixed_networks(max_classes=3))
def test_mixed_networks_are_mixed(net):
    assert net.is_mixed and 2 <= len(net.classes) <= 3


@settings(deadline=None, max_examples=40)
@given(networks(multi_server=False, load_dependent=False, disciplines=("fcfs",)))
def test_options_exclude_features(net):
    assert all(s.kind in ("delay", "queue") for s in net.stations)
    assert all(s.servers == 1 and s.discipline == "fcfs"
               for s in net.stations if s.kind == "queue")
    assert all(s.distribution is None and s.capacity is None and s.power is None
               for s in net.stations)


@settings(deadline=None, max_examples=40)
@given(networks(pools=True, symbolic=True, distributions=True, capacities=True, power=True,
                unicode_names=True))
def test_options_include_features(net):
    assert len(net.pools) == 1 and net.is_symbolic
    import unicodedata

    for name in net.station_names + net.class_names:
        assert unicodedata.normalize("NFC", name) == name


def test_options_are_reachable():
    """Each feature the options allow does show up."""
    seen = set()

    @settings(deadline=None, max_examples=150)
    @given(networks(distributions=True, capacities=True, power=True, max_classes=3))
    def collect(net):
        for s in net.stations:
            seen.add(s.kind)
            if s.kind == "queue" and s.servers > 1:
                seen.add("multi-server")
            if s.distribution is not None:
                seen.add(type(s.distribution).__name__)
            if s.capacity is not None:
                seen.add("capacity")
        for c in net.classes:
            seen.add(c.kind)
            seen.add(next(k for k in ("visits", "routing", "demands")
                          if getattr(c, k) is not None))
            if c.service is not None:
                seen.add("per-class service")

    collect()
    assert {"delay", "queue", "ld", "multi-server", "capacity", "closed", "open", "visits",
            "routing", "demands", "per-class service", "Erlang"} <= seen, seen


@given(distributions())
def test_distributions_are_valid(d):
    assert isinstance(d, qm.Distribution) and d.scv >= 0


def test_bad_kind():
    with pytest.raises(ValueError, match="kind must be"):
        networks(kind="half-open")
    with pytest.raises(ValueError, match="min_classes"):
        networks(min_classes=3, max_classes=2)
    with pytest.raises(ValueError, match="disciplines"):
        networks(disciplines=("lifo",))


# ---------------------------------------------------------------------------
# the assertions
# ---------------------------------------------------------------------------

def _solve(net):
    try:
        return qm.mva(net)
    except (UnsupportedModelError, UnstableError):
        return None


@settings(deadline=None, max_examples=50)
@given(closed_networks(max_classes=2))
def test_exact_mva_obeys_the_laws(net):
    r = _solve(net)
    if r is not None:
        assert_operational_laws(r)


@settings(deadline=None, max_examples=40)
@given(closed_networks(max_classes=1), st.sampled_from(["station_queue_length",
                                                       "station_throughput",
                                                       "class_throughput"]))
def test_laws_catch_a_wrong_figure(net, field):
    r = _solve(net)
    if r is None or r.class_throughput[0] == 0 or net.populations[0] == 0:
        return
    arr = np.array(getattr(r, field), dtype=float)
    arr *= 1.01
    wrong = dataclasses.replace(r, **{field: arr})
    with pytest.raises(AssertionError, match="violation"):
        assert_operational_laws(wrong)


def test_laws_message_names_law_station_and_class():
    net = qm.Network([qm.Queue("cpu", 0.1), qm.Queue("disk", 0.2)],
                     [qm.Closed("tx", 3, visits={"cpu": 1, "disk": 2})])
    r = qm.mva(net)
    Q = np.array(r.station_queue_length)
    Q[0, 1] += 0.5
    with pytest.raises(AssertionError) as e:
        assert_operational_laws(dataclasses.replace(r, station_queue_length=Q))
    msg = str(e.value)
    assert "Little's law" in msg and "station 'disk', class 'tx'" in msg
    assert "job conservation" in msg


@settings(deadline=None, max_examples=40)
@given(closed_networks(max_classes=1, max_population=8))
def test_exact_mva_within_bounds(net):
    r = _solve(net)
    if r is None or net.populations[0] == 0:
        return
    try:
        b = qm.bounds(net)
    except UnsupportedModelError:  # only delay stations: nothing to bound
        assert all(s.kind == "delay" for s, d in zip(net.stations, net.demands[0]) if d > 0)
        return
    assert_within_bounds(r, b)


def test_bounds_catch_a_result_outside():
    net = qm.Network([qm.Queue("cpu", 0.1), qm.Queue("disk", 0.2)],
                     [qm.Closed("tx", 5, think_time=1.0, visits={"cpu": 1, "disk": 1})])
    r = qm.mva(net)
    b = qm.bounds(net)
    too_fast = dataclasses.replace(r, class_throughput=[b.throughput_upper * 1.05])
    with pytest.raises(AssertionError, match="throughput upper bound at class 'tx'"):
        assert_within_bounds(too_fast, [b])


def test_assertions_refuse_what_they_cannot_check():
    import sympy as sp

    S = sp.Symbol("S", positive=True)
    net = qm.Network([qm.Queue("cpu", S)], [qm.Closed("tx", 2, visits={"cpu": 1})])
    with pytest.raises(TypeError, match="numeric results"):
        assert_operational_laws(qm.mva_symbolic(net))
    with pytest.raises(TypeError, match="analytic Result"):
        assert_operational_laws(object())


def test_laws_hold_for_a_pool_model_counting_the_jobs_waiting_for_a_token():
    """A CTMC or decomposition result of a model with a token pool failed
    assert_operational_laws (R = 8 != 2, sum Q = 1 != N = 4): the jobs
    waiting for a token are at no station.  Counting them (info["pools"]),
    the laws hold; by hand, one token over two 1-second stations with 4
    jobs: X = 1/2, R = N / X = 8, one job at the stations, 3 waiting.  A
    wrong waiting count is still caught."""
    net = qm.Network([qm.Queue("a", 1.0), qm.Queue("b", 1.0)],
                     [qm.Closed("t", 4, routing={"a": {"b": 1}, "b": {"a": 1}})],
                     pools=[qm.TokenPool("tok", 1, "a", "b")])
    for method in ("ctmc", "decomposition"):
        r = qm.solve(net, method=method)
        assert r.R["t"] == pytest.approx(8.0, abs=1e-9)
        assert_operational_laws(r)
    bad = dataclasses.replace(r, info={**r.info, "pools": {"tok": {**r.info["pools"]["tok"],
                                                                   "waiting": 2.0}}})
    with pytest.raises(AssertionError, match="job conservation"):
        assert_operational_laws(bad)
    # two closed classes sharing the pool: conservation summed over them
    two = qm.Network(net.stations,
                     [qm.Closed("t", 2, routing={"a": {"b": 1}, "b": {"a": 1}}),
                      qm.Closed("u", 1, routing={"a": {"b": 1}, "b": {"a": 1}})],
                     pools=[qm.TokenPool("tok", 1, "a", "b")])
    assert_operational_laws(qm.solve(two, method="ctmc"))
