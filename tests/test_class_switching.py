"""Class switching: a job that changes class on its way.

References, each independent of the chain reduction under test:

* a published example: Schwetman, "Implementing the Mean Value Algorithm
  for the Solution of Queueing Network Models", Purdue CSD-TR-355 (1982),
  figure 9 (two classes switching at the CPU, three per-station figures per
  class to three decimals, as the Octave queueing package's qncmmva test
  reproduces them);
* a CTMC built here by hand over the (station, class) counts of a tiny
  closed network, solved by numpy (not qm.ctmc);
* closed forms derived in the tests (an open Jackson network with
  switching; a closed network of delays);
* the simulator, on a small open and a small closed network.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from hypothesis import assume, given, settings

import qmodels as qm
from qmodels.errors import (
    InvalidValueError,
    ModelFileError,
    RoutingError,
    UnknownNameError,
    UnreachableStationError,
    UnsupportedModelError,
)
from qmodels.io import schema
from qmodels.testing import assert_operational_laws, networks


def schwetman_fig9() -> qm.Network:
    """Schwetman (1982), figure 9: a CPU (processor sharing, class 1 0.01 s,
    class 2 0.05 s) and two I/O devices (0.07 s, 0.10 s); a class-1 job
    leaving the CPU goes to device 1 (0.7), device 2 (0.2) or back to the
    CPU as class 2 (0.1); a class-2 job to device 1 (0.3), device 2 (0.5)
    or back as class 1 (0.2); the devices return jobs to the CPU in their
    class.  Three jobs, all starting in class 1."""
    return qm.Network(
        stations=[qm.Queue("cpu", 0.01, discipline="ps"), qm.Queue("io1", 0.07),
                  qm.Queue("io2", 0.10)],
        classes=[
            qm.Closed("c1", population=3, service={"cpu": 0.01}, routing={
                "cpu": {"io1": 0.7, "io2": 0.2, "cpu": {"c2": 0.1}},
                "io1": {"cpu": 1.0}, "io2": {"cpu": 1.0}}),
            qm.Closed("c2", population=0, service={"cpu": 0.05}, routing={
                "cpu": {"io1": 0.3, "io2": 0.5, ("cpu", "c1"): 0.2},
                "io1": {"cpu": 1.0}, "io2": {"cpu": 1.0}}),
        ])


def cache_closed(n: int = 4) -> qm.Network:
    """Users think, hit a cache; 30% of requests miss and continue as class
    ``miss`` to the disk, which answers them back to the users as ``hit``."""
    return qm.Network(
        stations=[qm.Delay("users", 1.0), qm.Queue("cache", 0.02, discipline="ps"),
                  qm.Queue("disk", 0.08)],
        classes=[
            qm.Closed("hit", population=n, reference="users", routing={
                "users": {"cache": 1.0},
                "cache": {"users": 0.7, "disk": {"miss": 0.3}}}),
            qm.Closed("miss", population=0, service={"cache": 0.05}, routing={
                "disk": {"cache": 1.0},
                "cache": {"users": {"hit": 1.0}}}),
        ])


def cache_open(lam: float = 8.0) -> qm.Network:
    return qm.Network(
        stations=[qm.Queue("cache", 0.02, discipline="ps"), qm.Queue("disk", 0.08)],
        classes=[
            qm.Open("hit", lam, routing={"source": {"cache": 1.0},
                                         "cache": {"sink": 0.7, "disk": {"miss": 0.3}}}),
            qm.Open("miss", 0.0, service={"cache": 0.05}, routing={
                "disk": {"cache": 1.0}, "cache": {"sink": 1.0}}),
        ])


# ---------------------------------------------------------------------------
# the model
# ---------------------------------------------------------------------------

def test_chains_and_visit_ratios_from_the_chain_traffic_equations():
    net = schwetman_fig9()
    assert net.chains == (("c1", "c2"),)
    assert net.has_class_switching and net.chain_of("c2") == ("c1", "c2")
    # by hand: e(cpu,c1) = 1 (reference); e(cpu,c2) = 0.1 e(cpu,c1) + 0
    # (only c1 switches into c2 at the cpu, and c2's own returns come back
    # through the devices: e(cpu,c2) = 0.1 + 0.3 e(cpu,c2) + 0.5 e(cpu,c2)),
    # so e(cpu,c2) = 0.1 / 0.2 = 0.5; the devices carry 0.7, 0.2 (c1) and
    # 0.3 * 0.5, 0.5 * 0.5 (c2)
    np.testing.assert_allclose(net.visits, [[1.0, 0.7, 0.2], [0.5, 0.15, 0.25]])
    plain = qm.Network([qm.Queue("a", 1.0)], [qm.Closed("x", 1, visits={"a": 1})])
    assert plain.chains == (("x",),) and not plain.has_class_switching


def test_the_three_spellings_of_a_switch_are_one_model():
    a = cache_closed()
    row = {"users": 0.7, ("disk", "miss"): 0.3}
    b = qm.Network(a.stations, [
        qm.Closed("hit", population=4, reference="users",
                  routing={"users": {"cache": 1.0}, "cache": row}),
        a.classes[1]])
    assert a == b
    # naming the row's own class is ordinary routing
    c = qm.Closed("hit", population=4, routing={"users": {"cache": {"hit": 1.0}}})
    assert c.routing["users"] == {"cache": 1.0}


@pytest.mark.parametrize("change, error, words", [
    (lambda r: {**r, "cache": {"users": 0.7, "disk": {"mis": 0.3}}}, UnknownNameError,
     "unknown class 'mis'"),
    (lambda r: {**r, "cache": {"users": 0.6, "disk": {"miss": 0.3}}}, RoutingError,
     "sums to 0.9"),
    (lambda r: {**r, "cache": {"users": 0.7, "dsk": {"miss": 0.3}}}, UnknownNameError,
     "unknown station 'dsk'"),
])
def test_bad_switch_entries_are_refused_by_name(change, error, words):
    base = cache_closed()
    hit = base.classes[0]
    with pytest.raises(error, match=words):
        qm.Network(base.stations, [
            qm.Closed("hit", population=4, reference="users", routing=change(dict(hit.routing))),
            base.classes[1]])


def test_chain_rules_are_checked_with_typed_errors():
    st = [qm.Delay("users", 1.0), qm.Queue("cache", 0.02), qm.Queue("disk", 0.08)]
    hit = {"users": {"cache": 1.0}, "cache": {"users": 0.7, "disk": {"miss": 0.3}}}
    # the class switched to has no row at the station it is sent to
    with pytest.raises(RoutingError, match="no routing row 'disk'"):
        qm.Network(st, [qm.Closed("hit", 2, reference="users", routing=hit),
                        qm.Closed("miss", 0, routing={"cache": {"users": {"hit": 1.0}}})])
    # a switched-to class given by visits
    with pytest.raises(RoutingError, match="has no routing"):
        qm.Network(st, [qm.Closed("hit", 2, reference="users", routing=hit),
                        qm.Closed("miss", 0, visits={"disk": 1.0})])
    # open and closed in one chain
    with pytest.raises(RoutingError, match="all open or all closed"):
        qm.Network(st, [qm.Closed("hit", 2, reference="users", routing=hit),
                        qm.Open("miss", 0.0, routing={"disk": {"sink": 1.0}})])
    # think time in a chain
    with pytest.raises(InvalidValueError, match="think time"):
        qm.Network(st, [qm.Closed("hit", 2, reference="users", routing=hit, think_time=1.0),
                        qm.Closed("miss", 0, routing={"disk": {"users": {"hit": 1.0}}})])
    # a pair that can never get back to the reference pair
    with pytest.raises(RoutingError, match="station 'disk' as class 'miss' can never return"):
        qm.Network(st, [qm.Closed("hit", 2, reference="users", routing=hit),
                        qm.Closed("miss", 0, routing={"disk": {"disk": 1.0}})])
    # a pair nobody reaches
    with pytest.raises(UnreachableStationError, match="station 'cache' as class 'miss'"):
        qm.Network(st, [
            qm.Closed("hit", 2, reference="users", routing=hit),
            qm.Closed("miss", 0, routing={"disk": {"users": {"hit": 1.0}},
                                          "cache": {"disk": 1.0}})])
    # arrivals switching class at the source
    with pytest.raises(RoutingError, match="source"):
        qm.Network(st[1:], [
            qm.Open("a", 1.0, routing={"source": {"cache": {"b": 1.0}}, "cache": {"sink": 1}}),
            qm.Open("b", 0.0, routing={"cache": {"sink": 1.0}})])


# ---------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("make", [schwetman_fig9, cache_closed, cache_open])
def test_file_round_trip_gives_the_equal_model(make, tmp_path):
    net = make()
    d = net.to_dict()
    assert schema.conforms(d)
    assert qm.Network.from_dict(json.loads(json.dumps(d))) == net
    for ext in ("yaml", "json"):
        path = tmp_path / f"m.{ext}"
        qm.save(net, path)
        assert qm.load(path) == net


def test_file_form_of_a_switch_reads_as_a_nested_class():
    d = cache_closed().to_dict()
    assert d["classes"][0]["routing"]["cache"] == {"users": 0.7, "disk": {"miss": 0.3}}
    d["classes"][0]["routing"]["cache"]["disk"] = {"mis": 0.3}
    with pytest.raises(ModelFileError, match="unknown class 'mis'"):
        qm.Network.from_dict(d)


# ---------------------------------------------------------------------------
# exact solution by the chain reduction
# ---------------------------------------------------------------------------

def test_published_example_schwetman_1982_figure_9():
    r = qm.mva(schwetman_fig9())
    # Schwetman (1982) fig. 9, per class (rows) and station (cpu, io1, io2)
    np.testing.assert_allclose(r.station_response_time,
                               [[.015, .133, .163], [.073, .133, .163]], atol=6e-4)
    np.testing.assert_allclose(r.station_throughput,
                               [[12.609, 8.826, 2.522], [6.304, 1.891, 3.152]], atol=6e-4)
    np.testing.assert_allclose(r.station_queue_length,
                               [[.185, 1.175, .412], [.462, .252, .515]], atol=6e-4)
    np.testing.assert_allclose(r.station_utilization,
                               [[.126, .618, .252], [.315, .132, .315]], atol=6e-4)
    assert r.exactness == "exact"
    assert any("class switching" in a for a in r.assumptions)
    assert qm.solve(schwetman_fig9(), method="exact").station_queue_length.sum() == \
        pytest.approx(3.0)


def _ctmc(stations, pairs, rate, route, N, chain_of=None):
    """Mean figures of closed chains by a CTMC over the counts n[(station,
    class)], built here: ``stations`` maps a station to "ps" (one server
    shared) or "delay"; ``rate[(k, c)]`` is 1 / S; ``route[(k, c)]`` maps
    (k', c') to a probability; ``N`` the population (one chain) or a dict
    chain -> population with ``chain_of[pair]`` naming each pair's chain.
    Returns (Q, X) by pair."""
    if chain_of is None:
        chain_of, N = {p: 0 for p in pairs}, {0: N}

    def ok(s):
        tot = dict.fromkeys(N, 0)
        for p, n in zip(pairs, s):
            tot[chain_of[p]] += n
        return tot == N

    top = max(N.values(), default=0)
    states = [s for s in itertools.product(range(top + 1), repeat=len(pairs)) if ok(s)]
    idx = {s: i for i, s in enumerate(states)}
    at = {p: i for i, p in enumerate(pairs)}
    G = np.zeros((len(states), len(states)))
    comp = np.zeros((len(states), len(pairs)))        # completion rate of each pair
    for s in states:
        for p, i in at.items():
            if s[i] == 0:
                continue
            k = p[0]
            if stations[k] == "delay":
                mu = s[i] * rate[p]
            else:
                n_k = sum(s[at[q]] for q in pairs if q[0] == k)
                mu = rate[p] * s[i] / n_k
            comp[idx[s], i] = mu
            for q, prob in route[p].items():
                if q == p:
                    continue            # back to the same pair: no change of state
                t = list(s)
                t[i] -= 1
                t[at[q]] += 1
                G[idx[s], idx[tuple(t)]] += mu * prob
    np.fill_diagonal(G, -G.sum(axis=1))
    A = np.vstack([G.T, np.ones(len(states))])
    b = np.zeros(len(states) + 1)
    b[-1] = 1.0
    pi = np.linalg.lstsq(A, b, rcond=None)[0]
    occ = np.array(states, float)
    return ({p: float(pi @ occ[:, at[p]]) for p in pairs},
            {p: float(pi @ comp[:, at[p]]) for p in pairs})


def test_chain_reduction_against_a_hand_built_ctmc():
    net = cache_closed(n=3)
    S = {("users", "hit"): 1.0, ("cache", "hit"): 0.02, ("cache", "miss"): 0.05,
         ("disk", "miss"): 0.08}
    route = {("users", "hit"): {("cache", "hit"): 1.0},
             ("cache", "hit"): {("users", "hit"): 0.7, ("disk", "miss"): 0.3},
             ("disk", "miss"): {("cache", "miss"): 1.0},
             ("cache", "miss"): {("users", "hit"): 1.0}}
    pairs = list(S)
    Q, X = _ctmc({"users": "delay", "cache": "ps", "disk": "ps"}, pairs,
                 {p: 1 / s for p, s in S.items()}, route, 3)
    r = qm.mva(net)
    for (k, c) in pairs:
        ci, ki = net.class_index(c), net.station_index(k)
        assert r.station_queue_length[ci, ki] == pytest.approx(Q[(k, c)], rel=1e-9, abs=1e-12)
        assert r.station_throughput[ci, ki] == pytest.approx(X[(k, c)], rel=1e-9)
    # per class: X is the chain's cycle rate (visits to the users), R the
    # time a job spends as the class per cycle, and the chain holds N jobs
    assert r.class_throughput[1] == pytest.approx(X[("users", "hit")], rel=1e-9)
    assert r.class_response_time[1] == pytest.approx(
        (Q[("cache", "miss")] + Q[("disk", "miss")]) / X[("users", "hit")], rel=1e-9)
    assert r.station_queue_length.sum() == pytest.approx(3.0)


def test_open_chain_against_the_jackson_closed_form():
    lam = 8.0
    r = qm.mva(cache_open(lam))
    # by hand: a hit arrival visits the cache once as hit and, with
    # probability 0.3, the disk and the cache once more as miss.  Loads:
    # cache rho = lam (0.02 + 0.3 * 0.05) = 0.28, disk rho = lam 0.3 0.08 = 0.192;
    # M/M/1-PS: N = rho / (1 - rho), split by each class's share of the demand
    rc, rd = lam * (0.02 + 0.3 * 0.05), lam * 0.3 * 0.08
    nc, nd = rc / (1 - rc), rd / (1 - rd)
    np.testing.assert_allclose(r.station_queue_length,
                               [[nc * 0.02 / 0.035, 0.0], [nc * 0.015 / 0.035, nd]], rtol=1e-12)
    np.testing.assert_allclose(r.station_throughput, [[lam, 0.0], [0.3 * lam, 0.3 * lam]])
    np.testing.assert_allclose(r.class_throughput, [lam, lam])
    # the time a job spends as miss, per arrival: Little on its jobs
    assert r.class_response_time[1] == pytest.approx((nc * 0.015 / 0.035 + nd) / lam)


def test_a_closed_chain_of_delays_matches_the_cycle_time():
    """LINE's 'single diamond' shape: one job, three delays, class 1 switching
    to class 2 (0.3) or 3 (0.5); with delays only X = N / sum of demands at
    any population."""
    st = [qm.Delay("q0", 1.0), qm.Delay("q1", 2.0), qm.Delay("q2", 3.0)]
    net = qm.Network(st, [
        qm.Closed("k1", 2, routing={"q0": {"q0": 0.2, "q1": {"k2": 0.3}, "q2": {"k3": 0.5}}}),
        qm.Closed("k2", 0, routing={"q1": {"q0": {"k1": 1.0}}}),
        qm.Closed("k3", 0, routing={"q2": {"q0": {"k1": 1.0}}})])
    r = qm.mva(net)
    cycle = 1.0 + 0.3 * 2.0 + 0.5 * 3.0
    np.testing.assert_allclose(r.class_throughput, [2 / cycle] * 3)
    np.testing.assert_allclose(r.station_queue_length.sum(axis=1),
                               [2 / cycle, 2 * 0.6 / cycle, 2 * 1.5 / cycle])


def test_another_chain_beside_a_switching_one():
    base = cache_closed(3)
    net = qm.Network(base.stations, base.classes + (
        qm.Closed("batch", 2, visits={"cache": 1.0, "disk": 2.0}),))
    r = qm.mva(net)
    assert r.station_queue_length[:2].sum() == pytest.approx(3.0)
    assert r.station_queue_length[2].sum() == pytest.approx(2.0)
    # the same network, the chain written without switching (one class whose
    # demands are the chain's), gives the same station totals
    agg = qm.Network(base.stations, [
        qm.Closed("hit", 3, visits={"users": 1.0, "cache": 1.3, "disk": 0.3},
                  service={"cache": (0.02 + 0.3 * 0.05) / 1.3}),
        qm.Closed("batch", 2, visits={"cache": 1.0, "disk": 2.0})])
    ra = qm.mva(agg)
    np.testing.assert_allclose(r.station_queue_length.sum(axis=0)
                               - r.station_queue_length[2],
                               ra.station_queue_length[0], rtol=1e-10)


def test_fcfs_with_different_times_in_one_chain_is_refused_by_station():
    net = qm.Network(
        stations=[qm.Delay("users", 1.0), qm.Queue("cache", 0.02), qm.Queue("disk", 0.08)],
        classes=cache_closed().classes)
    with pytest.raises(UnsupportedModelError, match="station 'cache': FCFS"):
        qm.mva(net)


def test_fcfs_as_ps_with_switching_solves_the_ps_network_and_says_so():
    fcfs = qm.Network(
        stations=[qm.Delay("users", 1.0), qm.Queue("cache", 0.02), qm.Queue("disk", 0.08)],
        classes=cache_closed().classes)
    r = qm.mva(fcfs, fcfs_as_ps=True)
    ps = qm.mva(cache_closed())
    assert r.exactness == "approximate" and any("'cache'" in a for a in r.assumptions)
    np.testing.assert_allclose(r.station_queue_length, ps.station_queue_length, rtol=1e-12)
    assert r.network == fcfs
    # between chains too: a batch class at the disk with its own time
    mixed = qm.Network(cache_closed().stations, list(cache_closed(3).classes) + [
        qm.Closed("batch", 2, visits={"disk": 1.0}, service={"disk": 0.2})])
    with pytest.raises(UnsupportedModelError, match="station 'disk'"):
        qm.mva(mixed)
    r = qm.mva(mixed, fcfs_as_ps=True)
    assert r.exactness == "approximate" and any("'disk'" in a for a in r.assumptions)
    assert r.station_queue_length[:2].sum() == pytest.approx(3.0)


@pytest.mark.parametrize("method", ["schweitzer", "linearizer", "convolution",
                                    "mva-residual", "bounds"])
def test_methods_without_the_reduction_refuse_by_name(method):
    with pytest.raises(UnsupportedModelError, match="class switching"):
        qm.solve(cache_closed(), method=method)


def test_qna_refuses_an_open_chain_and_auto_picks_exact():
    with pytest.raises(UnsupportedModelError, match="'qna' does not handle class switching"):
        qm.solve(cache_open(), method="qna")
    from qmodels.analytic import requires

    # (the CTMC solves switching, tests/test_ctmc_switching.py, but gives way
    # to the reduction in product form)
    assert "product form" in requires.for_ctmc(cache_closed())
    r = qm.solve(cache_closed())
    assert r.method == "exact" and "chosen by qm.solve: 'exact'" in r.notes[-1]


def _hand_ctmc_of(net):
    """The hand CTMC (:func:`_ctmc`) of a closed network of single-server PS
    queues and delays, read off its routing."""
    pairs, rate, route, chain_of = [], {}, {}, {}
    S = np.asarray(net.service_times, float)
    for h, chain in enumerate(net.chains):
        for cname in chain:
            c = net.klass(cname)
            for src, row in c.routing.items():
                p = (src, cname)
                pairs.append(p)
                chain_of[p] = h
                rate[p] = 1.0 / S[net.class_index(cname), net.station_index(src)]
                route[p] = {}
                for key, q in row.items():
                    to = key if isinstance(key, tuple) else (key, cname)
                    route[p][to] = route[p].get(to, 0.0) + float(q)
    N = {h: sum(net.klass(c).population for c in ch) for h, ch in enumerate(net.chains)}
    kinds = {s.name: "delay" if s.kind == "delay" else "ps" for s in net.stations}
    return _ctmc(kinds, pairs, rate, route, N, chain_of)


@settings(max_examples=25, deadline=None)
@given(networks(kind="closed", class_switching=True, max_classes=3, max_stations=3,
                max_population=2, multi_server=False, load_dependent=False,
                disciplines=("ps",)))
def test_generated_switching_networks_against_the_hand_ctmc(net):
    assume(all(float(c.think_time) == 0 for c in net.classes))   # (no think stage here)
    Q, X = _hand_ctmc_of(net)
    r = qm.mva(net)
    for (k, c), q in Q.items():
        ci, ki = net.class_index(c), net.station_index(k)
        assert r.station_queue_length[ci, ki] == pytest.approx(q, rel=1e-7, abs=1e-10)
        assert r.station_throughput[ci, ki] == pytest.approx(X[(k, c)], rel=1e-7, abs=1e-10)


@settings(max_examples=40, deadline=None)
@given(networks(kind="any", class_switching=True, product_form=True, max_classes=3))
def test_generated_switching_networks_obey_the_laws_or_are_refused_by_name(net):
    try:
        r = qm.solve(net, method="exact")
    except UnsupportedModelError as e:
        assert "station" in str(e) or "class" in str(e)
        return
    assert_operational_laws(r)
    # a file round trip keeps the model
    assert qm.Network.from_dict(json.loads(json.dumps(net.to_dict()))) == net


def test_other_consumers_refuse_class_switching_by_name():
    from qmodels.io import jmt

    with pytest.raises(UnsupportedModelError, match="JMVA has no class switching"):
        jmt.to_jmva(cache_closed())
    with pytest.raises(UnsupportedModelError, match="switch class"):
        qm.response_time_distribution(cache_open(), "hit")


def _jsimg_routing(xml):
    """{(node, class): {node: p}} and {ClassSwitch node: {class: {class: p}}}
    read back from a JSIMg document."""
    import xml.etree.ElementTree as ET

    sim = ET.fromstring(xml).find("sim")
    routes, switch = {}, {}
    for node in sim.findall("node"):
        name = node.get("name")
        for sec in node.findall("section"):
            kids = list(sec.find("parameter")) if sec.find("parameter") is not None else []
            if sec.get("className") == "Router":
                for ref, strat in zip(kids[0::2], kids[1::2]):
                    routes[(name, ref.text)] = {
                        e.find("subParameter[@name='stationName']/value").text:
                        float(e.find("subParameter[@name='probability']/value").text)
                        for e in strat.iter("subParameter") if e.get("name") == "EmpiricalEntry"}
            if sec.get("className") == "ClassSwitch":
                m = {}
                for ref, row in zip(kids[0::2], kids[1::2]):
                    cells = list(row)
                    m[ref.text] = {r.text: float(c.find("value").text)
                                   for r, c in zip(cells[0::2], cells[1::2])}
                switch[name] = m
    return routes, switch


@pytest.mark.parametrize("make", [schwetman_fig9, cache_closed, cache_open])
def test_jsimg_export_routes_switches_through_classswitch_nodes(make):
    from qmodels.io import jmt

    net = make()
    xml = jmt.to_jsimg(net, seed=1)
    assert jmt.validate_jsimg(xml) == []
    routes, switch = _jsimg_routing(xml)
    assert switch
    # every (station, class) -> (station, class) probability of the model is
    # the product of the station's route to a ClassSwitch node and its matrix
    for c in net.classes:
        for src, row in c.routing.items():
            if src == "source":
                continue
            got: dict = {}
            for node, p in routes[(src, c.name)].items():
                if node in switch:
                    (dst,) = routes[(node, c.name)]
                    for to, q in switch[node][c.name].items():
                        if p * q > 0:
                            got[(dst, to)] = got.get((dst, to), 0.0) + p * q
                else:
                    got[(node, c.name)] = got.get((node, c.name), 0.0) + p
            want = {(k if isinstance(k, tuple) else (k, c.name)): float(p)
                    for k, p in row.items() if float(p) > 0}
            assert got.keys() == want.keys() and all(
                got[k] == pytest.approx(want[k]) for k in want), (c.name, src)


def test_the_laws_hold_per_chain_and_catch_a_wrong_split():
    from dataclasses import replace

    from qmodels.analytic.contract import law_violations

    r = qm.mva(cache_closed())
    assert law_violations(r) == []
    Q = np.array(r.station_queue_length)
    Q[1, 2] *= 1.1         # a miss too many at the disk: the chain holds > N
    bad = replace(r, station_queue_length=Q)
    assert any("per chain" in v for v in law_violations(bad))


# ---------------------------------------------------------------------------
# the simulator
# ---------------------------------------------------------------------------

def _within(sim, exact, metric, k, c, rel):
    est = sim.figures[metric][k, c]
    assert abs(est.mean - exact) <= max(4 * est.half_width, rel * exact), (metric, k, c, est)


def cache_closed_starting_as_misses() -> qm.Network:
    """The jobs start in the chain's second class: the same steady state."""
    from dataclasses import replace

    a = cache_closed()
    return qm.Network(a.stations, [replace(a.classes[0], population=0),
                                   replace(a.classes[1], population=4)])


def mixed_open_chain_and_closed_class() -> qm.Network:
    o = cache_open(5.0)
    return qm.Network(o.stations, list(o.classes) + [
        qm.Closed("batch", 2, visits={"cache": 1.0, "disk": 1.0})])


@pytest.mark.slow
@pytest.mark.parametrize("make", [cache_closed, cache_open, schwetman_fig9,
                                  cache_closed_starting_as_misses,
                                  mixed_open_chain_and_closed_class])
def test_simulator_switches_class_and_matches_the_exact_solution(make):
    net = make()
    r = qm.mva(net)
    s = qm.simulate(net, seed=7, horizon=4000.0, replications=5, progress=False)
    for ci, c in enumerate(net.class_names):
        for ki, k in enumerate(net.station_names):
            if net.visits[ci, ki] == 0:
                assert s.figures["throughput"][k, c].mean == 0.0
                continue
            _within(s, r.station_throughput[ci, ki], "throughput", k, c, 0.03)
            _within(s, r.station_queue_length[ci, ki], "queue_length", k, c, 0.05)
        x = s.figures["throughput"][c]
        assert abs(x.mean - r.class_throughput[ci]) <= max(4 * x.half_width,
                                                           0.03 * r.class_throughput[ci])
        rc = s.figures["response_time"][c]
        assert abs(rc.mean - r.class_response_time[ci]) <= max(
            4 * rc.half_width, 0.05 * r.class_response_time[ci])
