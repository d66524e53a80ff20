"""Model files: lossless round trips over generated networks, the JSON
Schema, and every malformed-input case reported as a ModelFileError with
its path (never a traceback, never a silent default)."""

import argparse
import io
import json
import os
import sys
import threading
from importlib import resources

import numpy as np
import pytest
import sympy as sp
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import qmodels as qm
from qmodels.cli import main
from qmodels.errors import ModelFileError, UnstableError, UnsupportedModelError
from qmodels.io import modelfile, schema
from qmodels.testing import closed_networks, mixed_networks, networks, open_networks

EXAMPLES = sorted(p.name for p in resources.files("qmodels").joinpath("examples").iterdir()
                  if p.name.endswith(".yaml"))


def errors_of(text, fmt="yaml"):
    with pytest.raises(ModelFileError) as e:
        modelfile.loads(text, format=fmt)
    return e.value.errors


def has(errors, path, fragment):
    return any(p == path and fragment in m for p, m in errors)


# ---------------------------------------------------------------------------
# round trips
# ---------------------------------------------------------------------------

def _same_solution(a, b):
    """mva on both, or the same refusal on both."""
    try:
        ra = qm.mva(a)
    except (UnsupportedModelError, UnstableError) as e:
        with pytest.raises(type(e)):
            qm.mva(b)
        return
    rb = qm.mva(b)
    for name in ("class_throughput", "class_response_time", "station_queue_length",
                 "station_utilization"):
        np.testing.assert_array_equal(getattr(ra, name), getattr(rb, name))


ALL_FEATURES = dict(distributions=True, capacities=True, power=True, pools=True,
                    max_classes=3)


@settings(deadline=None, max_examples=60)
@given(networks(**ALL_FEATURES))
def test_save_load_is_identity_yaml_and_json(tmp_path_factory, net):
    d = tmp_path_factory.mktemp("rt")
    for name in ("m.yaml", "m.json"):
        qm.save(net, d / name)
        again = qm.load(d / name)
        assert again == net
    _same_solution(net, qm.load(d / "m.yaml"))


@settings(deadline=None, max_examples=60)
@given(networks(**ALL_FEATURES, symbolic=True, unicode_names=True))
def test_round_trip_symbolic_and_unicode(net):
    assert modelfile.loads(modelfile.dumps(net)) == net
    assert net.to_dict() == modelfile.to_dict(net)
    assert qm.Network.from_dict(net.to_dict()) == net


@settings(deadline=None, max_examples=60)
@given(networks(**ALL_FEATURES, symbolic=True), st.randoms(use_true_random=False))
def test_round_trip_independent_of_key_order(net, rnd):
    """Sorted keys (yaml.safe_dump's default, the SPAX bug) or shuffled
    keys give back the same network."""
    assert qm.Network.from_dict(yaml.safe_load(yaml.safe_dump(net.to_dict()))) == net
    assert qm.Network.from_dict(json.loads(json.dumps(net.to_dict(), sort_keys=True))) == net

    def shuffle(x):
        if isinstance(x, dict):
            items = list(x.items())
            rnd.shuffle(items)
            return {k: shuffle(v) for k, v in items}
        if isinstance(x, list):
            return [shuffle(v) for v in x]
        return x

    assert qm.Network.from_dict(shuffle(net.to_dict())) == net


@settings(deadline=None, max_examples=30)
@given(st.one_of(closed_networks(), open_networks(), mixed_networks()))
def test_round_trip_solutions_equal(net):
    _same_solution(net, modelfile.loads(modelfile.dumps(net, "json"), format="json"))


def test_reference_station_survives_sorted_keys():
    """The reported bug: a closed class with routing and no explicit
    reference took the first routing row as reference; yaml.safe_dump sorted
    the rows and another station became the reference, changing X.  Here
    the routing starts at 'web' (not alphabetically first); the visit ratio
    of 'db' relative to 'web' is 2, so X through 'db' would be twice X
    through 'web' (Z = 0: the same dynamics, counted at another station)."""
    net = qm.Network(
        [qm.Queue("web", 0.02), qm.Queue("app", 0.03), qm.Queue("db", 0.01)],
        [qm.Closed("tx", 10,
                   routing={"web": {"app": 1.0}, "app": {"db": 1.0},
                            "db": {"web": 0.5, "app": 0.5}})])
    assert net.klass("tx").reference == "web"
    text = yaml.safe_dump(modelfile.to_dict(net))  # sort_keys=True
    assert text.index("app:") < text.index("web:")
    again = modelfile.loads(text)
    assert again == net
    x0, x1 = qm.mva(net).X["tx"], qm.mva(again).X["tx"]
    assert x1 == pytest.approx(x0, rel=1e-12)
    # the wrong reference would have changed X: the test can fail
    import dataclasses

    wrong = qm.Network(net.stations, [dataclasses.replace(net.classes[0], reference="db")])
    assert qm.mva(wrong).X["tx"] == pytest.approx(2 * x0, rel=1e-9)


def test_every_field_is_written():
    S = sp.Symbol("S_disk", positive=True)
    net = qm.Network(
        [qm.Queue("cpu", 0.01, servers=2, discipline="ps", capacity=5,
                  power=qm.Power(busy=95, idle=40, read=50, write=60),
                  distribution=qm.Erlang(3)),
         qm.Delay("think", 1.0, distribution=qm.Empirical((1.0, 2.0, 4.0))),
         qm.LoadDependent("raid", S / 2, rate_multipliers=(1, 1.8, 2.4))],
        [qm.Closed("tx", 3, think_time=sp.Rational(1, 3), reference="cpu",
                   routing={"cpu": {"raid": 1}, "raid": {"think": 1}, "think": {"cpu": 1}},
                   service={"raid": S}),
         qm.Open("web", 0.5, demands={"cpu": 0.2}, interarrival=qm.HyperExponential(4.0))],
        name="all fields", pools=[qm.TokenPool("buf", 2, "cpu", "raid", ("tx",))])
    d = modelfile.to_dict(net)
    assert d["symbols"] == {"S_disk": {"positive": True}}
    cpu = d["stations"][0]
    assert cpu["distribution"] == {"type": "erlang", "k": 3}
    assert cpu["power"] == {"busy": 95, "idle": 40, "read": 50, "write": 60}
    assert d["stations"][2]["service"] == "S_disk/2"
    tx, web = d["classes"]
    assert tx["think_time"] == "1/3" and tx["reference"] == "cpu"
    assert web["interarrival"] == {"type": "hyperexponential", "scv": 4.0}
    assert d["pools"] == [{"name": "buf", "tokens": 2, "acquire": "cpu", "release": "raid",
                           "classes": ["tx"]}]
    assert modelfile.from_dict(d) == net


def test_expressions_are_parsed_not_evaluated():
    base = "stations:\n  - {name: cpu, service: %s}\nclasses:\n  - {name: c, population: 1, " \
           "visits: {cpu: 1}}\n"
    for bad in ["\"__import__('os').system('true')\"", "\"().__class__\"", "\"cpu.x\"",
                "\"9**9**9\"", "\"lambda: 1\""]:
        errs = errors_of(base % bad)
        assert errs and errs[0][0] == "stations[0].service", errs
    errs = errors_of(base % "fast")
    assert has(errs, "stations[0].service", "expected a number, got 'fast'")
    assert "declared under symbols" in errs[0][1]
    ok = "symbols: {S: {positive: true}}\n" + base % "sqrt(S)/2 + 1e-3"
    net = modelfile.loads(ok)
    S = sp.Symbol("S", positive=True)
    assert net.station("cpu").service == sp.sqrt(S) / 2 + sp.Float(1e-3)


def test_symbol_names_must_be_usable_in_expressions():
    errs = errors_of("symbols: {lambda: {positive: true}, 2x: {}}\n" + GOOD)
    assert has(errs, "symbols.lambda", "Python keyword")
    assert has(errs, "symbols.2x", "not a valid symbol name")
    lam = sp.Symbol("lambda", positive=True)
    net = qm.Network([qm.Queue("cpu", 0.1)], [qm.Open("w", lam, visits={"cpu": 1})])
    with pytest.raises(ValueError, match="symbol 'lambda' cannot be written"):
        modelfile.to_dict(net)


def test_save_refuses_names_that_would_not_read_back(tmp_path):
    net = qm.Network([qm.Queue("e\u0301", 1.0)], [qm.Closed("c", 1, visits={"e\u0301": 1})])
    with pytest.raises(ValueError, match="not in Unicode NFC form"):
        qm.save(net, tmp_path / "m.yaml")


# ---------------------------------------------------------------------------
# the JSON Schema
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_is_valid(example):
    path = resources.files("qmodels").joinpath("examples", example)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert schema.validate(data) == []
    with resources.as_file(path) as p:
        net = qm.load(p)
    assert schema.validate(net.to_dict()) == []


def test_schema_is_valid_draft_2020_12_and_shipped():
    import jsonschema

    s = schema.schema()
    jsonschema.Draft202012Validator.check_schema(s)
    assert s["$schema"].endswith("2020-12/schema")
    assert set(s["properties"]) >= {"stations", "classes", "pools", "symbols"}


def test_schema_cli_prints_it(capsys, tmp_path):
    parser = argparse.ArgumentParser(prog="qmodels")
    schema.register_cli(parser.add_subparsers())
    args = parser.parse_args(["schema"])
    assert args.func(args) == 0
    assert json.loads(capsys.readouterr().out) == schema.schema()
    args = parser.parse_args(["schema", "-o", str(tmp_path / "s.json")])
    assert args.func(args) == 0
    assert json.loads((tmp_path / "s.json").read_text()) == schema.schema()
    args = parser.parse_args(["schema", "-o", str(tmp_path / "no" / "s.json")])
    assert args.func(args) == 2
    assert capsys.readouterr().err.startswith("error: cannot write")


def _leaf_paths(x, prefix=()):
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _leaf_paths(v, prefix + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _leaf_paths(v, prefix + (i,))
    else:
        yield prefix


def _set(x, path, value):
    for p in path[:-1]:
        x = x[p]
    x[path[-1]] = value


@settings(deadline=None, max_examples=80)
@given(networks(distributions=True, capacities=True, power=True, pools=True),
       st.data())
def test_fuzzed_wrong_types_are_reported_at_their_path(net, data):
    """Replace one value of a valid file by a value of the wrong type: the
    error names that value's path (from the validator)."""
    d = net.to_dict()
    leaves = [p for p in _leaf_paths(d) if p and p[0] != "name"]
    path = data.draw(st.sampled_from(leaves))
    wrong = data.draw(st.sampled_from([[1, 2], {"x": 1}, None, True]))
    _set(d, path, wrong)
    text = yaml.safe_dump(d, sort_keys=False)
    with pytest.raises(ModelFileError) as e:
        modelfile.loads(text)
    where = schema.format_path(list(path))
    assert any(p == where for p, _ in e.value.errors), (where, e.value.errors)


# ---------------------------------------------------------------------------
# each malformed input: typed error with its path
# ---------------------------------------------------------------------------

GOOD = """stations:
  - {name: cpu, kind: queue, service: 0.05}
classes:
  - {name: tx, population: 2, visits: {cpu: 1}}
"""


def test_duplicate_keys_yaml_and_json():
    errs = errors_of("""stations:
  - {name: cpu, service: 0.1, service: 0.2}
classes:
  - {name: tx, population: 2, visits: {cpu: 1}}
""")
    assert has(errs, "stations[0].service", "duplicate key 'service'")
    errs = errors_of(json.dumps({"stations": [{"name": "cpu", "service": 1}], "classes": []})
                     .replace('"service": 1', '"service": 1, "service": 2'), "json")
    assert has(errs, "stations[0].service", "duplicate key 'service'")
    errs = errors_of("stations: []\nstations: []\nclasses: []\n")
    assert has(errs, "stations", "duplicate key 'stations'")


def test_queue_with_servers_and_rate_multipliers_is_refused():
    errs = errors_of("""stations:
  - {name: cpu, kind: queue, service: 0.1, servers: 3, rate_multipliers: [1, 2, 3]}
classes:
  - {name: tx, population: 2, visits: {cpu: 1}}
""")
    assert has(errs, "stations[0].rate_multipliers", "a queue has servers, not rate_multipliers")
    errs = errors_of("""stations:
  - {name: raid, kind: ld, service: 0.1, servers: 3, rate_multipliers: [1, 2]}
classes:
  - {name: tx, population: 2, visits: {raid: 1}}
""")
    assert has(errs, "stations[0].servers", "a load-dependent station has no servers")


def test_missing_service_is_an_error_not_zero():
    errs = errors_of("""stations:
  - {name: cpu, kind: queue}
classes:
  - {name: tx, population: 2, visits: {cpu: 1}}
""")
    assert has(errs, "stations[0].service", "missing service time of station 'cpu'")
    # allowed when every class gives its own time there
    net = modelfile.loads("""stations:
  - {name: cpu, kind: queue}
classes:
  - {name: tx, population: 2, demands: {cpu: 0.3}}
""")
    assert net.demands[0, 0] == 0.3


def test_unicode_names_normalised_and_control_characters_refused():
    errs = errors_of("""stations:
  - {name: "caf\\u00e9", service: 0.1}
  - {name: "cafe\\u0301", service: 0.2}
classes:
  - {name: tx, population: 2, visits: {"cafe\\u0301": 1}}
""")
    assert has(errs, "stations[1].name", "duplicate station name 'caf\u00e9'")
    # a class naming the decomposed form reaches the composed station
    net = modelfile.loads("""stations:
  - {name: "caf\\u00e9", service: 0.1}
classes:
  - {name: tx, population: 2, visits: {"cafe\\u0301": 1}}
""")
    assert net.visits[0, 0] == 1
    for ch, kind in (("\\u200b", "invisible format"), ("\\u0007", "control")):
        errs = errors_of(f'stations:\n  - {{name: "cpu{ch}", service: 0.1}}\n'
                         'classes:\n  - {name: tx, population: 2, visits: {cpu: 1}}\n')
        assert has(errs, "stations[0].name", f"{kind} character"), errs


def test_pool_classes_as_a_string_is_reported():
    errs = errors_of(GOOD + "pools:\n  - {name: p, tokens: 2, acquire: cpu, release: cpu, "
                            "classes: tx}\n")
    assert has(errs, "pools[0].classes", "expected a list, got the string 'tx'")


def test_station_name_list_or_map_and_empirical_strings():
    errs = errors_of("""stations:
  - {name: [a, b], service: 0.1}
  - {name: {x: 1}, service: 0.1}
  - {name: e, service: 0.1, distribution: {type: empirical, samples: ["1", 2]}}
classes:
  - {name: tx, population: 2, visits: {e: 1}}
""")
    assert has(errs, "stations[0].name", "expected a string, got a list")
    assert has(errs, "stations[1].name", "expected a string, got a mapping")
    assert has(errs, "stations[2].distribution.samples[0]", "expected a number")
    errs = errors_of("""stations:
  - {name: a, service: 0.1}
  - {name: e, service: 0.1, distribution: {type: empirical, samples: {x: 1}}}
classes:
  - {name: tx, population: 2, visits: {e: 1, a: 1}}
pools: [{name: p, tokens: 1, acquire: [a], release: {e: 1}}]
""")
    assert has(errs, "stations[1].distribution.samples", "expected a list, got a mapping")
    assert has(errs, "pools[0].acquire", "expected a string, got a list")
    assert has(errs, "pools[0].release", "expected a string, got a mapping")
    # the same through the API (from_dict), which the audit saw raise TypeError
    with pytest.raises(ModelFileError, match=r"pools\[0\]\.acquire: expected a string"):
        qm.Network.from_dict({"stations": [{"name": "a", "service": 0.1}],
                              "classes": [{"name": "tx", "population": 2, "visits": {"a": 1}}],
                              "pools": [{"name": "p", "tokens": 1, "acquire": ["a"],
                                         "release": "a"}]})


def test_all_errors_at_once_structural_and_semantic():
    errs = errors_of("""stations:
  - {name: a, kind: queue, service: -1}
  - {name: b, kind: queu, service: 0.1}
classes:
  - {name: tx, population: 2.5, visits: {zz: 1}}
  - {name: w, type: open, arrival_rate: 1, visits: {a: 1}, population: 3}
""")
    paths = {p for p, _ in errs}
    assert {"stations[0].service", "stations[1].kind", "classes[0].visits.zz",
            "classes[1].population"} <= paths
    assert has(errs, "stations[0].service", "station 'a': service time must be a finite "
                                            "non-negative number, got -1")


def test_value_errors_point_at_the_value():
    errs = errors_of("""stations:
  - {name: a, kind: queue, service: 0.1, servers: 0, capacity: 0}
  - {name: b, kind: ld, service: 0.1, rate_multipliers: [1, -2]}
  - {name: c, kind: delay, service: 0.1, power: {busy: 1, idle: -3}}
classes:
  - {name: tx, population: 2.5, think_time: -1, visits: {a: -1}}
  - {name: w, type: open, arrival_rate: -2, routing: {source: {a: 1.5}, a: {sink: 1}}}
  - {name: v, type: closed, population: 1, demands: {a: 1}, service: {a: 2}}
""")
    for path, fragment in [
        ("stations[0].servers", "servers must be an integer >= 1, got 0"),
        ("stations[0].capacity", "capacity must be an integer >= 1, got 0"),
        ("stations[1].rate_multipliers[1]", "must be a finite positive number, got -2"),
        ("stations[2].power.idle", "power.idle must be"),
        ("classes[0].population", "population must be a non-negative integer, got 2.5"),
        ("classes[0].think_time", "think time must be"),
        ("classes[0].visits.a", "visit ratio at station 'a'"),
        ("classes[1].arrival_rate", "arrival rate must be"),
        ("classes[2]", "give either demands or service times, not both"),
    ]:
        assert has(errs, path, fragment), (path, errs)
    errs = errors_of("""stations:
  - {name: a, service: 0.1}
classes:
  - {name: w, type: open, arrival_rate: 1, routing: {source: {a: 1}, a: {sink: 0.5}}}
""")
    assert has(errs, "classes[0].routing", "routing row 'a' sums to 0.5")


def _file(tmp_path, data: bytes, name="m.yaml"):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_binary_non_utf8_and_oversize_files(tmp_path, monkeypatch):
    with pytest.raises(ModelFileError, match="binary data"):
        qm.load(_file(tmp_path, b"stations: \x00\x01"))
    with pytest.raises(ModelFileError, match="not UTF-8 text: byte 0xff at offset 10"):
        qm.load(_file(tmp_path, b"stations: \xff\xfe"))
    monkeypatch.setattr(modelfile, "MAX_BYTES", 64)
    with pytest.raises(ModelFileError, match="larger than the .* limit"):
        qm.load(_file(tmp_path, GOOD.encode() * 3))
    monkeypatch.undo()
    assert qm.load(_file(tmp_path, GOOD.encode())).station_names == ("cpu",)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need a POSIX system")
def test_a_pipe_with_no_writer_is_refused_not_waited_on(tmp_path, monkeypatch):
    fifo = tmp_path / "model.yaml"
    os.mkfifo(fifo)
    monkeypatch.setattr(modelfile, "PIPE_WAIT", 0.2)
    with pytest.raises(ModelFileError, match=r"nothing arrived from this pipe in 0.2 s") as e:
        qm.load(fifo)
    assert str(fifo) in str(e.value)

    def write():
        with open(fifo, "w") as f:
            f.write(GOOD)

    writer = threading.Thread(target=write)
    monkeypatch.setattr(modelfile, "PIPE_WAIT", 10.0)
    writer.start()
    try:
        assert qm.load(fifo).station_names == ("cpu",)
    finally:
        writer.join()


def test_deep_nesting_yaml_and_json(tmp_path):
    deep_yaml = "stations: " + "[" * 5000 + "]" * 5000 + "\nclasses: []\n"
    with pytest.raises(ModelFileError, match="nested deeper"):
        qm.load(_file(tmp_path, deep_yaml.encode()))
    deep_json = '{"stations": ' + "[" * 100000 + "]" * 100000 + "}"
    with pytest.raises(ModelFileError, match="nested deeper"):
        qm.load(_file(tmp_path, deep_json.encode(), "m.json"))
    mid = '{"stations": ' + "[" * 80 + "]" * 80 + "}"
    with pytest.raises(ModelFileError, match="nested deeper than 64"):
        qm.load(_file(tmp_path, mid.encode(), "m.json"))


def test_yaml_alias_bomb_is_refused(monkeypatch):
    monkeypatch.setattr(modelfile, "MAX_NODES", 10_000)
    text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for i in range(1, 8):
        text += f"a{i}: &a{i} [*a{'' if i == 1 else i - 1}" + f", *a{'' if i == 1 else i - 1}" * 9 + "]\n"
    with pytest.raises(ModelFileError, match="more than 10000 values"):
        modelfile.loads(text)


def test_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(GOOD.encode())))
    assert qm.load("-").station_names == ("cpu",)


def test_cli_exit_2_with_paths_and_no_traceback(tmp_path, capsys):
    p = _file(tmp_path, b"stations:\n  - {name: [x], service: 1}\nclasses: []\n")
    code = main(["solve", str(p)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "stations[0].name: expected a string" in err
    assert "classes: expected a non-empty list of classes" in err


# ---------------------------------------------------------------------------
# qmodels check / convert, save by suffix
# ---------------------------------------------------------------------------

def _cli():
    parser = argparse.ArgumentParser(prog="qmodels")
    sub = parser.add_subparsers()
    modelfile.register_cli(sub)
    return parser


def run_cli(argv, capsys):
    args = _cli().parse_args(argv)
    code = args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_check_reports_ok_and_errors(tmp_path, capsys):
    good = _file(tmp_path, GOOD.encode(), "good.yaml")
    bad = _file(tmp_path, b"stations:\n  - {name: cpu, kind: queue, service: 1, servers: 2, "
                          b"rate_multipliers: [1, 2]}\nclasses: []\n", "bad.yaml")
    code, out, err = run_cli(["check", str(good)], capsys)
    assert code == 0 and "good.yaml: ok (1 stations, 1 closed class)" in out
    code, out, err = run_cli(["check", str(good), str(bad)], capsys)
    assert code == 2 and "good.yaml: ok" in out
    assert err.startswith("error: ") and "Traceback" not in err
    assert "stations[0].rate_multipliers" in err and "classes: expected a non-empty" in err


def test_convert_between_formats(tmp_path, capsys):
    src = _file(tmp_path, GOOD.encode(), "m.yaml")
    net = qm.load(src)
    for suffix in (".json", ".yml", ".jmva", ".jsimg"):
        target = tmp_path / f"out{suffix}"
        code, _, err = run_cli(["convert", str(src), str(target)], capsys)
        assert code == 0, err
        if suffix in (".json", ".yml"):
            assert qm.load(target) == net
        elif suffix == ".jmva":
            assert qm.mva(qm.load(target)).X["tx"] == pytest.approx(qm.mva(net).X["tx"])
        else:
            from qmodels.io import jmt

            assert jmt.validate_jsimg(target.read_text()) == []
    code, out, _ = run_cli(["convert", str(src), "-", "--to", "json"], capsys)
    assert code == 0 and qm.Network.from_dict(json.loads(out)) == net
    code, _, err = run_cli(["convert", str(src), str(tmp_path / "out.txt")], capsys)
    assert code == 2 and "cannot tell the format" in err
    ld = qm.Network([qm.LoadDependent("raid", 1.0, rate_multipliers=(1, 2))],
                    [qm.Closed("c", 2, visits={"raid": 1})])
    qm.save(ld, tmp_path / "ld.yaml")
    code, _, err = run_cli(["convert", str(tmp_path / "ld.yaml"), str(tmp_path / "x.jsimg")],
                           capsys)
    assert code == 2 and err.startswith("error: UnsupportedModelError: station 'raid'")


def test_save_suffixes(tmp_path):
    net = qm.load(_file(tmp_path, GOOD.encode()))
    with pytest.raises(ValueError, match="cannot tell the format"):
        qm.save(net, tmp_path / "m.txt")
    with pytest.raises(TypeError, match="needs a qmodels Network"):
        qm.save(net.to_dict(), tmp_path / "m.yaml")


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=True)
    | st.text(max_size=5) | st.sampled_from(["s0", "c0", "source", "sink", "1/0", "x**99"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=3),
    max_leaves=6)


def _nodes(x, prefix=()):
    yield prefix
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _nodes(v, prefix + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _nodes(v, prefix + (i,))


@settings(deadline=None, max_examples=150)
@given(networks(distributions=True, capacities=True, power=True, pools=True, symbolic=True),
       st.data())
def test_any_mutation_gives_a_network_or_a_model_file_error(net, data):
    """Replace or delete any part of a valid file with arbitrary JSON: the
    result is a Network or a ModelFileError, never another exception."""
    d = net.to_dict()
    path = data.draw(st.sampled_from([p for p in _nodes(d) if p]))
    if data.draw(st.booleans()):
        _set(d, path, data.draw(_JSON))
    else:
        parent = d
        for p in path[:-1]:
            parent = parent[p]
        del parent[path[-1]]
    try:
        out = modelfile.from_dict(d)
    except ModelFileError as e:
        assert e.errors and all(isinstance(p, str) and m for p, m in e.errors)
    else:
        assert isinstance(out, qm.Network)


def test_a_pool_path_survives_save_and_load(tmp_path):
    # Regression: the held path of a pool (needed by a class given by
    # visits) was not written, so the SPAX model reloaded without it and the
    # decomposition refused or answered differently.
    from qmodels.cases import spax

    net = spax.network(spax.Params())
    assert all(p.path for p in net.pools)
    for name in ("spax.yaml", "spax.json"):
        qm.save(net, tmp_path / name)
        again = qm.load(tmp_path / name)
        assert [p.path for p in again.pools] == [p.path for p in net.pools]
        assert again == net
        assert qm.solve(again, method="decomposition").X["tx"] == \
            qm.solve(net, method="decomposition").X["tx"]
    bad = errors_of("""
stations: [{name: a, kind: queue, service: 1}, {name: b, kind: queue, service: 1}]
classes: [{name: t, type: closed, population: 2, visits: {a: 1, b: 1}}]
pools: [{name: p, tokens: 1, acquire: a, release: b, path: [a, c, b]}]
""")
    assert has(bad, "pools[0].path[1]", "unknown station 'c'")


def test_save_refusals_are_qmodels_errors(tmp_path):
    """qm.save's refusals (an unknown suffix, a symbol or name that cannot
    be written) were bare ValueErrors; they are InvalidValueError (still a
    ValueError), so ``except qm.QModelsError`` catches every refusal."""
    net = qm.load(_file(tmp_path, GOOD.encode()))
    with pytest.raises(qm.InvalidValueError, match="cannot tell the format"):
        qm.save(net, tmp_path / "m.txt")
    lam = sp.Symbol("lambda", positive=True)
    sym = qm.Network([qm.Queue("cpu", 0.1)], [qm.Open("w", lam, visits={"cpu": 1})])
    with pytest.raises(qm.InvalidValueError, match="symbol 'lambda'"):
        qm.save(sym, tmp_path / "s.yaml")
    nfd = qm.Network([qm.Queue("e\u0301", 1.0)], [qm.Closed("c", 1, visits={"e\u0301": 1})])
    with pytest.raises(qm.InvalidValueError, match="NFC"):
        qm.save(nfd, tmp_path / "n.yaml")
    with pytest.raises(qm.InvalidValueError, match="format must be"):
        qm.save(net, tmp_path / "m.yaml", format="toml")


# ---------------------------------------------------------------------------
# libyaml's loader reads what the Python loader reads
# ---------------------------------------------------------------------------

_TRICKY = [
    "a: 1e-3\nb: 1.5E+2\nc: '1e-3'\nd: .inf\ne: -.nan\n",
    "base: &b {service: 0.1, servers: 2}\nq: {<<: *b, servers: 3}\n",
    "a: 1\na: 2\n",
    "a: 010\nb: 0x10\nc: 1:30\nd: 1_000\ne: 1e-400\n",
    "a: [1, 2\n",
    "a: b: c\n",
    "a:\n\t- 1\n",
    "a: \x07\n",
    "a: 'caf\u00e9'\nb: \"\\u00e9\"\n",
    "? [1, 2]\n: x\n",
    "- 1\n- two\n- {three: 3}\n",
    "",
    "---\na: 1\n---\nb: 2\n",
    "a: !!python/object:os.system x\n",
    "a: yes\nb: off\nc: ~\nd: 2026-11-29\n",
]


def _parsed(text):
    try:
        return ("ok", modelfile.parse(text))
    except ModelFileError as e:
        return ("error", e.errors)


@pytest.mark.parametrize("text", _TRICKY + [
    resources.files("qmodels").joinpath("examples", n).read_text() for n in EXAMPLES])
def test_libyaml_reads_what_the_python_loader_reads(text, monkeypatch):
    fast = _parsed(text)
    plain = modelfile._yaml_loader.__wrapped__
    monkeypatch.setattr(modelfile, "_yaml_loader", lambda fast=True: plain(False))
    assert fast == _parsed(text)


def test_libyaml_is_used_where_pyyaml_has_it():
    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML built without libyaml")
    assert issubclass(modelfile._yaml_loader(), yaml.CSafeLoader)
