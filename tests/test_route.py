"""A class given by ``route=[...]`` follows that path in order.

``route`` is a one-line way to give the routing table of a fixed path, so
the references are the same model written out as a routing matrix (the
simulator must give the same numbers under the same seed), the visit ratios
the path implies (one visit per station per pass), and Jackson's tandem
(exponential stations in series with Poisson arrivals: each station an
M/M/1 queue with the arrival rate; Jackson 1957, Burke 1956).  A class
given by ``visits`` has no order: routing it at random is the simulator's
and QNA's assumption, and they must warn about it.
"""

from __future__ import annotations

import warnings

import pytest

import qmodels as qm
from qmodels.errors import InvalidValueError, ModelFileError, RoutingError, RoutingWarning


def _stations(k=3):
    return [qm.Queue(f"q{i + 1}", 0.6 + 0.1 * i) for i in range(k)]


def _bursty(k, **how):
    """H2 arrivals (SCV 4) at rate 1 into k FCFS exponential queues."""
    return qm.Network(_stations(k), [qm.Open("j", 1.0, interarrival=qm.HyperExponential(4.0),
                                             **how)])


def _path_matrix(k):
    names = [f"q{i + 1}" for i in range(k)]
    rows = {"source": {names[0]: 1.0}}
    for a, b in zip(names, names[1:]):
        rows[a] = {b: 1.0}
    rows[names[-1]] = {"sink": 1.0}
    return rows


@pytest.mark.filterwarnings("ignore::qmodels.errors.SimulationWarning")
@pytest.mark.parametrize("k", [2, 3])
def test_bursty_tandem_by_route_simulates_as_the_routing_matrix(k):
    names = [f"q{i + 1}" for i in range(k)]
    by_route = _bursty(k, route=names)
    by_matrix = _bursty(k, routing=_path_matrix(k))
    kw = dict(seed=7, horizon=4000.0, replications=3, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RoutingWarning)  # a path: nothing routed at random
        a = qm.simulate(by_route, **kw)
        b = qm.simulate(by_matrix, **kw)
    for s in names:
        assert a.R[s].mean == b.R[s].mean and a.R[s].half_width == b.R[s].half_width
        assert a.Q[s].mean == b.Q[s].mean
    assert a.R["j"].mean == b.R["j"].mean
    assert not any("at random" in w for w in a.warnings)


@pytest.mark.filterwarnings("ignore::qmodels.errors.SimulationWarning")
def test_visits_given_tandem_warns_in_simulator_and_qna():
    net = _bursty(3, visits={"q1": 1, "q2": 1, "q3": 1})
    with pytest.warns(RoutingWarning, match=r"route=\['q1', 'q2', 'q3'\]"):
        s = qm.simulate(net, seed=7, horizon=2000.0, replications=2, progress=False)
    assert any("route=" in w for w in s.warnings)  # a result warning, not only a note
    q = qm.qna(net)
    assert any("route=" in w and "QNA" in w for w in q.warnings)
    # the same tandem given as a path: no such warning
    q_path = qm.qna(_bursty(3, route=["q1", "q2", "q3"]))
    assert not any("route=" in w for w in q_path.warnings)


def test_qna_follows_the_path_where_random_routing_differs():
    # In a tandem fed by bursty arrivals, the first queue sees the H2 stream
    # itself (a GI/M/1 queue, which QNA solves exactly: the 3.34 s);
    # routed at random, jobs return to q1 and it sees a smoother merged
    # stream (the 1.23 s wait).  The path must give the GI/M/1 wait.
    tandem = qm.qna(_bursty(3, route=["q1", "q2", "q3"]))
    random = qm.qna(_bursty(3, visits={"q1": 1, "q2": 1, "q3": 1}))
    gm1 = qm.qna(qm.Network([qm.Queue("q1", 0.6)], [
        qm.Open("j", 1.0, interarrival=qm.HyperExponential(4.0), visits={"q1": 1})]))
    assert tandem.R["q1"] == pytest.approx(gm1.R["q1"], rel=1e-12)
    assert abs(random.R["q1"] - tandem.R["q1"]) > 0.1 * tandem.R["q1"]


def test_poisson_tandem_by_route_is_jackson():
    # Jackson/Burke: Poisson arrivals at rate lam into exponential stations
    # in series: station i is M/M/1 with R_i = S_i / (1 - lam S_i).
    lam = 0.5
    net = qm.Network(_stations(3), [qm.Open("j", lam, route=["q1", "q2", "q3"])])
    for r in (qm.solve(net), qm.qna(net), qm.ctmc(net, open_limit=40)):
        for s, S in zip(net.station_names, (0.6, 0.7, 0.8)):
            assert r.R[s] == pytest.approx(S / (1 - lam * S), rel=1e-6), (r.method, s)


def test_closed_route_is_a_cycle_and_product_form_agrees_with_visits():
    # a closed route: q1 -> q2 -> q3 -> q1, one visit each per cycle; the
    # product-form solution depends on the visit ratios only (BCMP 1975)
    stations = _stations(3)
    path = qm.Network(stations, [qm.Closed("t", 4, think_time=1.0, route=["q1", "q2", "q3"])])
    visits = qm.Network(stations, [qm.Closed("t", 4, think_time=1.0,
                                             visits={"q1": 1, "q2": 1, "q3": 1})])
    assert path.visits.tolist() == [[1.0, 1.0, 1.0]]
    assert path.klass("t").reference == "q1"
    a, b = qm.mva(path), qm.mva(visits)
    assert a.X["t"] == pytest.approx(b.X["t"], rel=1e-12)
    # the CTMC follows the cycle; in product form it agrees with MVA
    c = qm.ctmc(path)
    assert c.X["t"] == pytest.approx(a.X["t"], rel=1e-9)
    assert not any("route=" in w for w in c.warnings)


def test_route_round_trips_through_a_model_file():
    net = qm.Network(_stations(3), [
        qm.Open("j", 1.0, interarrival=qm.HyperExponential(4.0), route=["q2", "q1", "q3"]),
        qm.Closed("t", 2, route=["q3", "q1"])])
    d = net.to_dict()
    assert d["classes"][0]["route"] == ["q2", "q1", "q3"] and "routing" not in d["classes"][0]
    back = qm.Network.from_dict(d)
    assert back == net
    from qmodels.io.schema import validate

    validate(d)  # the JSON Schema accepts it


def test_route_in_a_model_file_names_unknown_stations():
    d = qm.Network(_stations(2), [qm.Open("j", 1.0, route=["q1", "q2"])]).to_dict()
    d["classes"][0]["route"] = ["q1", "qx"]
    with pytest.raises(ModelFileError, match=r"route\[1\]"):
        qm.Network.from_dict(d)


@pytest.mark.parametrize("bad, err", [
    ("q1", InvalidValueError),            # a string, not a list
    ([], RoutingError),
    (["q1", "q2", "q1"], RoutingError),   # a station twice: not one next station
    (["source", "q1"], RoutingError),
])
def test_bad_routes_are_refused_by_name(bad, err):
    with pytest.raises(err, match="class 'j'"):
        qm.Open("j", 1.0, route=bad)


def test_route_with_visits_or_routing_is_refused():
    with pytest.raises(InvalidValueError, match="exactly one of"):
        qm.Open("j", 1.0, route=["q1"], visits={"q1": 1})
    with pytest.raises(InvalidValueError, match="exactly one of"):
        qm.Open("j", 1.0, route=["q1", "q2"], routing={"source": {"q1": 1}, "q1": {"sink": 1}})
    # the path's own table beside it is no contradiction (dataclasses.replace
    # passes both): the class is the same
    same = qm.Open("j", 1.0, route=["q1"], routing={"source": {"q1": 1}, "q1": {"sink": 1}})
    assert same == qm.Open("j", 1.0, route=["q1"])
