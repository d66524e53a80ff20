"""JMT interchange: JMVA export/import round trips to the same solution,
JMVA and JSIMg exports are structurally valid against JMT's schemas (as
reconstructed in qmodels.io.jmt), and what cannot be mapped is refused with a
typed error naming it."""

import shutil
import xml.etree.ElementTree as ET
from importlib import resources

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qmodels as qm
from qmodels.errors import ModelFileError, UnstableError, UnsupportedModelError
from qmodels.io import jmt
from qmodels.testing import closed_networks, mixed_networks, networks, open_networks

EXAMPLES = sorted(p.name for p in resources.files("qmodels").joinpath("examples").iterdir()
                  if p.name.endswith(".yaml"))


def example(name):
    with resources.as_file(resources.files("qmodels").joinpath("examples", name)) as p:
        return qm.load(p)


def _mva(net):
    try:
        return qm.mva(net)
    except (UnsupportedModelError, UnstableError) as e:
        return e


def assert_same_solution(net, back):
    a, b = _mva(net), _mva(back)
    if isinstance(a, Exception):
        assert type(b) is type(a), (a, b)
        return
    for c in net.classes:
        assert b.X[c.name] == pytest.approx(a.X[c.name], rel=1e-9, abs=1e-12)
    for s in net.station_names:
        assert b.Q[s] == pytest.approx(a.Q[s], rel=1e-8, abs=1e-10)
        assert b.X[s] == pytest.approx(a.X[s], rel=1e-8, abs=1e-10)
        if type(net.station(s)) is type(back.station(s)):
            # (a c-server queue comes back load-dependent, whose U is 1 - P(empty))
            assert b.U[s] == pytest.approx(a.U[s], rel=1e-8, abs=1e-10)


# ---------------------------------------------------------------------------
# JMVA
# ---------------------------------------------------------------------------

SINGLE = dict(multi_server=False, load_dependent=False)

@settings(deadline=None, max_examples=60)
@given(st.one_of(closed_networks(max_classes=3, **SINGLE), open_networks(max_classes=2, **SINGLE),
                 mixed_networks(max_classes=3, **SINGLE),
                 closed_networks(max_classes=1, max_population=12),
                 networks(max_classes=3)))
def test_jmva_round_trip_solves_to_the_same_numbers(net):
    try:
        xml = jmt.to_jmva(net)
    except UnsupportedModelError as e:
        # the refusals for these networks: JMVA's load-dependent stations, and FCFS
        # with class-dependent service (not product form, which JMVA would assume)
        if "class-dependent service" in str(e):
            with pytest.raises(UnsupportedModelError, match="class-dependent"):
                qm.mva(net)
            return
        assert "single closed class" in str(e)
        assert len(net.classes) > 1 or not net.is_closed
        return
    assert jmt.validate_jmva(xml) == []
    assert_same_solution(net, jmt.from_jmva(xml))


def test_jmva_hand_example_and_file_round_trip(tmp_path):
    """Two queues and a think time: by hand, N = 1: X = 1/(Z + D1 + D2)."""
    net = qm.Network([qm.Queue("cpu", 0.2), qm.Queue("disk", 0.1)],
                     [qm.Closed("tx", 1, think_time=0.7, visits={"cpu": 1, "disk": 2})],
                     name="hand")
    path = tmp_path / "m.jmva"
    jmt.save_jmva(net, path)
    root = ET.parse(path).getroot()
    st_names = [e.get("name") for e in root.find("parameters/stations")]
    assert st_names == ["cpu", "disk", "Z.tx"]
    back = jmt.load_jmva(path)
    assert back.name == "hand"
    assert qm.mva(back).X["tx"] == pytest.approx(1 / (0.7 + 0.2 + 0.2), rel=1e-12)
    assert qm.mva(net).X["tx"] == pytest.approx(1 / (0.7 + 0.2 + 0.2), rel=1e-12)


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_exports_or_is_refused_by_name(name):
    net = example(name)
    for to, validate in ((jmt.to_jmva, jmt.validate_jmva), (jmt.to_jsimg, jmt.validate_jsimg)):
        try:
            xml = to(net)
        except UnsupportedModelError as e:
            assert any(f"'{n}'" in str(e) for n in net.station_names + net.class_names
                       + tuple(p.name for p in net.pools))
            continue
        assert validate(xml) == [], (to.__name__, validate(xml))


def test_two_tier_example_to_jmva_and_back():
    net = example("two_tier.yaml")
    with pytest.raises(UnsupportedModelError, match="station 'cpu': power"):
        jmt.to_jmva(net)
    xml = jmt.to_jmva(net, drop=("power",))  # JMT has no power
    assert jmt.validate_jmva(xml) == []
    assert_same_solution(net, jmt.from_jmva(xml))
    with pytest.raises(UnsupportedModelError, match="station 'raid': load-dependent"):
        jmt.to_jsimg(net, drop=("power",))


def test_jmva_refusals_are_typed_and_named():
    S = __import__("sympy").Symbol("S", positive=True)
    cases = [
        (qm.Network([qm.Queue("cpu", S)], [qm.Closed("c", 2, visits={"cpu": 1})]),
         "sympy symbols"),
        (qm.Network([qm.Queue("cpu", 1.0, capacity=2)], [qm.Closed("c", 3, visits={"cpu": 1})]),
         "station 'cpu': capacity 2 can bind"),
        (qm.Network([qm.Queue("cpu", 1.0, servers=2)],
                    [qm.Closed("a", 2, visits={"cpu": 1}), qm.Closed("b", 1, visits={"cpu": 1})]),
         "station 'cpu': a 2-server station"),
        (qm.Network([qm.Queue("a", 1.0), qm.Queue("b", 1.0)],
                    [qm.Closed("c", 2, routing={"a": {"b": 1}, "b": {"a": 1}})],
                    pools=[qm.TokenPool("buf", 1, "a", "b")]), "token pool 'buf'"),
        # FCFS with Erlang-2 service is not product form: JMVA would solve it
        # as exponential, as qmodels' own product-form solvers refuse to
        (qm.Network([qm.Queue("cpu", 1.0, distribution=qm.Erlang(2))],
                    [qm.Closed("c", 3, visits={"cpu": 1})]),
         r"station 'cpu': FCFS with erlang service \(scv 0.5\)"),
    ]
    for net, msg in cases:
        with pytest.raises(UnsupportedModelError, match=msg):
            jmt.to_jmva(net)
    # a capacity that never binds is dropped, and said so; so is the shape at a
    # PS station (insensitive to it: the means give the exact answer)
    ok = qm.Network([qm.Queue("cpu", 1.0, capacity=5, discipline="ps",
                              distribution=qm.Erlang(2))],
                    [qm.Closed("c", 3, visits={"cpu": 1})])
    desc = ET.fromstring(jmt.to_jmva(ok)).find("description").text
    assert "capacity of 'cpu' dropped" in desc and "(erlang) dropped" in desc


JMVA_OK = """<?xml version="1.0"?>
<model><parameters>
 <classes number="1"><closedclass name="c" population="2"/></classes>
 <stations number="1"><listation name="q"><servicetimes>
  <servicetime customerclass="c">0.5</servicetime></servicetimes>
  <visits><visit customerclass="c">1</visit></visits></listation></stations>
</parameters></model>"""


@pytest.mark.parametrize("mutate,path,fragment", [
    (lambda s: s.replace('population="2"', 'population="two"'),
     "model/parameters/classes/closedclass", "population='two' is not of type jdouble"),
    (lambda s: s.replace('number="1"><closedclass', 'number="3"><closedclass'),
     "model/parameters/classes", "number=3 but 1 are listed"),
    (lambda s: s.replace("<visits>", "<visitz>").replace("</visits>", "</visitz>"),
     "model/parameters/stations/listation", "do not match its content model"),
    (lambda s: s.replace('<listation name="q">', '<listation name="q" color="red">'),
     "model/parameters/stations/listation", "attribute 'color' is not allowed"),
    (lambda s: s.replace('customerclass="c">1<', 'customerclass="d">1<'),
     "model/parameters/stations/listation/visits", "expected each of ['c'] once"),
    (lambda s: s.replace("</model>", ""), "line", "not well-formed XML"),
    (lambda s: '<!DOCTYPE x [<!ENTITY a "aaaa">]>' + s.split("?>", 1)[1], "(file)",
     "DOCTYPE/ENTITY"),
])
def test_jmva_import_errors_have_paths(mutate, path, fragment):
    assert jmt.from_jmva(JMVA_OK).station("q").service == 0.5
    with pytest.raises(ModelFileError) as e:
        jmt.from_jmva(mutate(JMVA_OK))
    assert any(p.startswith(path) and fragment in m for p, m in e.value.errors), e.value.errors


def test_jmva_import_ldstation():
    xml = JMVA_OK.replace("listation", "ldstation").replace(
        '<servicetime customerclass="c">0.5</servicetime>',
        '<servicetimes customerclass="c">0.5;0.25</servicetimes>')
    net = jmt.from_jmva(xml)
    s = net.station("q")
    assert isinstance(s, qm.LoadDependent) and s.rate_multipliers == (1.0, 2.0)
    # N = 2 jobs at a station that serves 2 at once with S = 0.5: X = 2 / 0.5
    assert qm.mva(net).X["c"] == pytest.approx(4.0)


# ---------------------------------------------------------------------------
# JSIMg
# ---------------------------------------------------------------------------

SIM_FEATURES = dict(load_dependent=False, distributions=True, capacities=True, power=True,
                    max_classes=3)


@settings(deadline=None, max_examples=80)
@given(networks(**SIM_FEATURES))
def test_jsimg_exports_are_structurally_valid(net):
    try:
        xml = jmt.to_jsimg(net, seed=7, drop=("power",))
    except UnsupportedModelError as e:
        assert any(w in str(e) for w in ("empirical", "finite capacity from station"))
        return
    assert jmt.validate_jsimg(xml) == []
    root = ET.fromstring(xml)
    sim = root.find("sim")
    assert sim.get("seed") == "7"
    nodes = {n.get("name") for n in sim.findall("node")}
    assert set(net.station_names) <= nodes
    assert [u.get("name") for u in sim.findall("userClass")] == list(net.class_names)
    for c in net.closed_classes:
        uc = next(u for u in sim.findall("userClass") if u.get("name") == c.name)
        assert uc.get("customers") == str(c.population)


def _routing_of(sim, node, cls):
    for n in sim.findall("node"):
        if n.get("name") != node:
            continue
        router = next(s for s in n.findall("section") if s.get("className") == "Router")
        par = router.find("parameter")
        kids = list(par)
        for i, k in enumerate(kids):
            if k.tag == "refClass" and k.text == cls:
                strat = kids[i + 1]
                out = {}
                for e in strat.iter("subParameter"):
                    if e.get("name") == "EmpiricalEntry":
                        vals = [v.text for v in e.iter("value")]
                        out[vals[0]] = float(vals[1])
                return out
    raise KeyError(node)


def test_jsimg_visits_class_keeps_its_visit_ratios():
    """Random routing with rows V_k / T (the simulator's rule): the
    stationary visits of the embedded chain are proportional to V."""
    net = qm.Network([qm.Queue("a", 0.1), qm.Queue("b", 0.2, servers=2), qm.Delay("z", 1.0)],
                     [qm.Closed("c", 3, visits={"a": 1.0, "b": 3.0, "z": 0.5})])
    sim = ET.fromstring(jmt.to_jsimg(net)).find("sim")
    names = ["a", "b", "z"]
    P = np.array([[_routing_of(sim, s, "c").get(t, 0.0) for t in names] for s in names])
    w, v = np.linalg.eig(P.T)
    pi = np.real(v[:, np.argmin(abs(w - 1))])
    pi = pi / pi[0]
    np.testing.assert_allclose(pi, [1.0, 3.0, 0.5], rtol=1e-12)
    server = next(s for n in sim.findall("node") if n.get("name") == "b"
                  for s in n.findall("section") if s.get("className") == "Server")
    assert server.find("parameter[@name='maxJobs']/value").text == "2"


def test_jsimg_think_time_pools_and_capacity():
    net = qm.Network(
        [qm.Queue("cpu", 0.05, capacity=4, distribution=qm.Erlang(2)), qm.Queue("disk", 0.1),
         qm.Queue("port", 0.01)],
        [qm.Closed("tx", 3, think_time=2.0, reference="cpu",
                   routing={"cpu": {"disk": 1.0}, "disk": {"port": 1.0}, "port": {"cpu": 1.0}})],
        pools=[qm.TokenPool("buf", 2, "disk", "port")])
    xml = jmt.to_jsimg(net)
    assert jmt.validate_jsimg(xml) == []
    sim = ET.fromstring(xml).find("sim")
    assert _routing_of(sim, "port", "tx") == {"think.tx": 1.0}
    assert _routing_of(sim, "think.tx", "tx") == {"cpu": 1.0}
    region = sim.find("blockingRegion")
    assert [r.get("nodeName") for r in region.findall("regionNode")] == ["disk", "port"]
    assert region.find("globalConstraint").get("maxJobs") == "2.0"
    cpu = next(n for n in sim.findall("node") if n.get("name") == "cpu")
    assert cpu.find("section/parameter[@name='size']/value").text == "4"
    erl = next(e for e in cpu.iter("subParameter") if e.get("name") == "distrPar")
    vals = {e.get("name"): e.find("value").text for e in erl}
    # Erlang-2 of mean 0.05: rate per phase alpha = k / mean = 40
    assert float(vals["alpha"]) == pytest.approx(40.0) and vals["r"] == "2"
    pre = sim.find("preload/stationPopulations")
    assert pre.get("stationName") == "cpu"
    assert pre.find("classPopulation").get("population") == "3"


def test_jsimg_processor_sharing_and_uniform():
    net = qm.Network([qm.Queue("cpu", 0.5, discipline="ps", distribution=qm.Uniform(0.0))],
                     [qm.Closed("a", 2, visits={"cpu": 1}), qm.Closed("b", 1, visits={"cpu": 1})])
    xml = jmt.to_jsimg(net)
    assert jmt.validate_jsimg(xml) == []
    node = next(n for n in ET.fromstring(xml).find("sim").findall("node")
                if n.get("name") == "cpu")
    server = node.findall("section")[1]
    assert server.get("className") == "PSServer"
    assert [p.get("name") for p in server.findall("parameter")] == [
        "maxJobs", "numberOfVisits", "ServiceStrategy", "PSStrategy", "serviceWeights"]
    # a uniform with no spread is a constant
    assert "jmt.engine.random.DeterministicDistr" in {
        e.get("classPath") for e in server.iter("subParameter")}


def test_jsimg_refusals_are_typed_and_named():
    S = __import__("sympy").Symbol("S", positive=True)
    cases = [
        (qm.Network([qm.Queue("cpu", S)], [qm.Closed("c", 2, visits={"cpu": 1})]),
         "sympy symbols"),
        (qm.Network([qm.LoadDependent("raid", 1.0, rate_multipliers=(1, 2))],
                    [qm.Closed("c", 2, visits={"raid": 1})]), "station 'raid': load-dependent"),
        (qm.Network([qm.Queue("cpu", 1.0, distribution=qm.Empirical((1.0, 2.0)))],
                    [qm.Closed("c", 2, visits={"cpu": 1})]), "station 'cpu', class 'c'"),
        (qm.Network([qm.Queue("a", 0.1), qm.Queue("b", 0.1, capacity=2)],
                    [qm.Open("w", 1.0, routing={"source": {"a": 1}, "a": {"b": 1},
                                                "b": {"sink": 1}})]),
         "station 'b': open class 'w' reaches its finite capacity from station 'a'"),
        (qm.Network([qm.Queue("a", 0.1), qm.Queue("b", 0.1)],
                    [qm.Closed("c", 2, routing={"a": {"b": 1}, "b": {"a": 1}}),
                     qm.Closed("d", 1, routing={"a": {"b": 1}, "b": {"a": 1}})],
                    pools=[qm.TokenPool("buf", 1, "a", "b", ("c",))]),
         "token pool 'buf': used by classes"),
        (qm.Network([qm.Queue("a", 0.1), qm.Queue("b", 0.1), qm.Queue("x", 0.1)],
                    [qm.Closed("c", 2, routing={"a": {"b": 1}, "b": {"x": 0.5, "a": 0.5},
                                                "x": {"b": 1}})],
                    pools=[qm.TokenPool("buf", 1, "a", "b")]), "token pool 'buf'"),
    ]
    for net, msg in cases:
        with pytest.raises(UnsupportedModelError, match=msg):
            jmt.to_jsimg(net)


@pytest.mark.parametrize("mutate,fragment", [
    (lambda s: s.replace('type="closed"', 'type="closed" color="red"'),
     "attribute 'color' is not allowed"),
    (lambda s: s.replace("<connection", "<connectio").replace("</connection", "</connectio"),
     "element <connectio> is not allowed"),
    (lambda s: s.replace('target="b"', 'target="nowhere"'), "target 'nowhere' is not a node"),
    (lambda s: s.replace('alpha="0.010000000000000009"', 'alpha="high"'), "not of type jdouble"),
])
def test_jsimg_validator_catches_errors(mutate, fragment):
    net = qm.Network([qm.Queue("a", 0.1), qm.Queue("b", 0.2)],
                     [qm.Closed("c", 2, routing={"a": {"b": 1}, "b": {"a": 1}})])
    xml = jmt.to_jsimg(net)
    assert jmt.validate_jsimg(xml) == []
    bad = mutate(xml)
    assert bad != xml
    assert any(fragment in m for _, m in jmt.validate_jsimg(bad)), jmt.validate_jsimg(bad)


def test_exports_are_deterministic():
    net = example("two_tier.yaml")
    assert jmt.to_jmva(net, drop="power") == jmt.to_jmva(net, drop="power")
    small = qm.Network([qm.Queue("a", 0.1)], [qm.Open("w", 1.0, visits={"a": 1})])
    assert jmt.to_jsimg(small, seed=1) == jmt.to_jsimg(small, seed=1)


def test_line_solver_reads_the_exports(tmp_path):
    """An independent reader: LINE's JMT importer (needs line_solver and a
    Java runtime)."""
    line_solver = pytest.importorskip(
        "line_solver", reason="line_solver (LINE's JMT reader) is not installed")
    if shutil.which("java") is None:  # pragma: no cover - depends on the machine
        pytest.skip("line_solver needs a Java runtime, and none is on PATH")
    net = qm.Network([qm.Queue("cpu", 0.2), qm.Queue("disk", 0.1)],
                     [qm.Closed("tx", 4, visits={"cpu": 1, "disk": 2})])
    jmt.save_jmva(net, tmp_path / "m.jmva")
    jmt.save_jsimg(net, tmp_path / "m.jsimg", seed=1)
    reader = getattr(line_solver, "JMT2LINE", None) or line_solver.LINE.load
    for f in ("m.jmva", "m.jsimg"):
        model = reader(str(tmp_path / f))
        assert model is not None


def test_some_example_exports_to_each_format():
    ok = {"jmva": [], "jsimg": []}
    for name in EXAMPLES:
        net = example(name)
        for fmt, to in (("jmva", jmt.to_jmva), ("jsimg", jmt.to_jsimg)):
            try:
                to(net, drop=("power",))
            except UnsupportedModelError:
                continue
            ok[fmt].append(name)
    assert ok["jmva"] and ok["jsimg"], ok


def test_jsimg_finite_capacity_means_what_jmt_means():
    """JMT's own example ``open_1class_1stat_mm1k.jsimg`` (JMT source tree,
    examples/jsim/qn_models) is an M/M/1/11 queue, lambda = 9, mu = 10,
    written as Queue size = 11, drop, Server maxJobs = 1, exponential
    lambdas 9.0 and 10.0; JMT's stored simulation result for its mean number
    of customers is 4.2899 with 99% interval [4.2465, 4.3333].  Our export of
    the same model has the same structure, and the M/M/1/K closed form
    (K jobs in all, the one in service included) falls in JMT's interval, so
    qmodels' capacity is JMT's size."""
    net = qm.Network([qm.Queue("M/M/1/11", 0.1, capacity=11)],
                     [qm.Open("Class0", 9.0, visits={"M/M/1/11": 1})])
    sim = ET.fromstring(jmt.to_jsimg(net)).find("sim")
    node = next(n for n in sim.findall("node") if n.get("name") == "M/M/1/11")
    queue, server = node.findall("section")[:2]
    assert queue.find("parameter[@name='size']/value").text == "11"
    assert queue.find("parameter[@name='dropStrategies']/subParameter/value").text == "drop"
    assert server.get("className") == "Server"
    assert server.find("parameter[@name='maxJobs']/value").text == "1"
    lambdas = [float(e.find("value").text) for e in sim.iter("subParameter")
               if e.get("name") == "lambda"]
    assert sorted(lambdas) == [9.0, 10.0]
    L = qm.mm1k(9.0, 0.1, 11).L
    assert 4.2465 <= L <= 4.3333
