"""The `qmodels` command and model files: tables, JSON shape, and every
input error reported with its path, exit status 2 and no traceback."""

import json
import subprocess
import sys

import pytest

import qmodels as qm
from qmodels import modelfile
from qmodels.cli import main
from qmodels.errors import ModelFileError

GOOD = """
name: small
stations:
  - {name: users, kind: delay, service: 2.0}
  - {name: cpu, kind: queue, service: 0.05, servers: 2}
  - {name: disk, kind: queue, service: 0.04, power: {busy: 6.8, idle: 4.0}}
classes:
  - {name: tx, type: closed, population: 10, visits: {users: 1, cpu: 2, disk: 3}}
"""


def write(tmp_path, text, name="m.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_solve_prints_table_naming_bottleneck(tmp_path, capsys):
    code, out, err = run(["solve", write(tmp_path, GOOD)], capsys)
    assert code == 0, err
    net = modelfile.load(tmp_path / "m.yaml")
    r = qm.mva(net)
    assert f"bottleneck: {r.bottleneck[0]}" in out
    assert "exact solution [exact] of 'small'" in out


def test_solve_json_has_the_documented_shape(tmp_path, capsys):
    code, out, _ = run(["solve", write(tmp_path, GOOD), "--json"], capsys)
    assert code == 0
    d = json.loads(out)
    assert set(d) >= {"method", "classes", "stations"}
    assert d["method"] == "exact"
    assert set(d["classes"]["tx"]) == {"X", "R"}
    for name in ("users", "cpu", "disk"):
        assert {"U", "Q", "R", "X", "per_class"} <= set(d["stations"][name])
    r = qm.mva(modelfile.load(tmp_path / "m.yaml"))
    assert d["classes"]["tx"]["X"] == pytest.approx(r.X["tx"])
    # class R excludes think time: R = N/X - Z with Z = 0 here
    assert d["classes"]["tx"]["R"] == pytest.approx(10 / r.X["tx"])
    # station X = visits per second, U per server
    assert d["stations"]["cpu"]["X"] == pytest.approx(2 * r.X["tx"])
    assert d["stations"]["cpu"]["U"] == pytest.approx(2 * r.X["tx"] * 0.05 / 2)


def test_json_model_file_and_bounds(tmp_path, capsys):
    import yaml

    p = write(tmp_path, json.dumps(yaml.safe_load(GOOD)), "m.json")
    code, out, _ = run(["solve", p, "--method", "bounds", "--json"], capsys)
    assert code == 0
    d = json.loads(out)
    assert d["method"] == "bounds" and "N*" in d["classes"]["tx"]


def test_no_model_solves_builtin_and_says_so(capsys):
    code, out, _ = run(["solve"], capsys)
    assert code == 0
    assert "built-in example" in out and "bottleneck" in out


def test_demo_two_tier_runs(capsys):
    code, out, _ = run(["demo", "--two-tier"], capsys)
    assert code == 0 and "N*" in out and "The bottleneck is" in out


def test_demo_writes_the_spax_report(tmp_path, capsys):
    out_dir = tmp_path / "demo"
    code, out, _ = run(["demo", "--out", str(out_dir), "--no-sim"], capsys)
    assert code == 0
    assert "TPS" in out and "paper" in out and "report:" in out
    assert (out_dir / "README.md").exists()
    pngs = sorted(p.name for p in out_dir.glob("*.png"))
    assert len(pngs) >= 3, pngs


def test_methods_and_version(capsys):
    code, out, _ = run(["methods"], capsys)
    assert code == 0 and "exact" in out and "bounds" in out
    # each method on a line of its own with its label, the text indented under it
    heads = [ln for ln in out.splitlines() if ln and not ln.startswith(" ")]
    assert [h.split()[0] for h in heads] == list(qm.methods())
    labels = {h.split()[0]: h.split(None, 1)[1] for h in heads}
    assert labels["exact"] == "[exact]" and labels["qna"] == "[approximate]"
    assert labels["bounds"] == "[bound]" and labels["sim"] == "[simulated]"
    code, out, _ = run(["methods", "--json"], capsys)
    data = json.loads(out)
    assert data["ctmc"]["exactness"] == "exact" and isinstance(data["qna"]["envelopes"], list)
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert qm.__version__ in capsys.readouterr().out


BAD_CASES = [
    # (yaml text, path in the message, message fragment)
    ("stations: []\nclasses: []\n", "stations", "expected a non-empty list of stations"),
    ("""stations:
  - {name: cpu, kind: queue, service: -0.1}
classes:
  - {name: tx, population: 3, visits: {cpu: 1}}
""", "stations[0]", "station 'cpu': service time must be a finite non-negative number, got -0.1"),
    ("""stations:
  - {name: cpu, kind: queue, service: 0.1}
classes:
  - {name: tx, population: 10.3, visits: {cpu: 1}}
""", "classes[0].population", "population must be a non-negative integer, got 10.3"),
    ("""stations:
  - {name: cpu, kind: queue, service: 0.1}
classes:
  - {name: tx, population: 3, visits: {dsk: 1}}
""", "classes[0].visits.dsk", "unknown station 'dsk'"),
    ("""stations:
  - {name: a, kind: queue, service: 0.1}
  - {name: b, kind: queue, service: 0.1}
classes:
  - {name: tx, population: 3, routing: {a: {b: 0.9}, b: {a: 1}}}
""", "classes[0].routing", "routing row 'a' sums to 0.9, not 1"),
    ("""stations:
  - {name: a, kind: queue, service: 0.1}
  - {name: a, kind: delay, service: 0.1}
classes:
  - {name: tx, population: 3, visits: {a: 1}}
""", "stations[1].name", "duplicate station name 'a'"),
    ("""stations:
  - {name: a, kind: queue, service: 0.1, servrs: 2}
classes:
  - {name: tx, population: 3, visits: {a: 1}}
""", "stations[0].servrs", "unknown key 'servrs'"),
    ("""stations:
  - {name: a, kind: queue, service: fast}
classes:
  - {name: tx, type: open, visits: {a: 1}}
""", "stations[0].service", "expected a number, got 'fast'"),
    ("""stations:
  - {name: a, kind: disk, service: 0.1}
classes:
  - {name: tx, population: 3, visits: {a: 1}}
""", "stations[0].kind", "unknown kind 'disk'"),
    ("stations: [\n", "line", "not valid YAML/JSON"),
]


@pytest.mark.parametrize("text,path,fragment", BAD_CASES)
def test_api_reports_error_with_path(text, path, fragment):
    with pytest.raises(ModelFileError) as e:
        modelfile.loads(text)
    assert any(p.startswith(path) and fragment in m for p, m in e.value.errors), e.value.errors


@pytest.mark.parametrize("text,path,fragment", BAD_CASES)
def test_cli_reports_error_exit_2_no_traceback(tmp_path, capsys, text, path, fragment):
    code, out, err = run(["solve", write(tmp_path, text)], capsys)
    assert code == 2
    assert fragment in err and path in err
    assert "Traceback" not in err + out


def test_all_errors_reported_at_once():
    text = """stations:
  - {name: a, kind: queue, service: -1}
  - {name: b, kind: queue, service: 0.1, servers: 0}
classes:
  - {name: tx, population: -2, visits: {zz: 1}}
"""
    with pytest.raises(ModelFileError) as e:
        modelfile.loads(text)
    paths = [p for p, _ in e.value.errors]
    assert "stations[0].service" in paths and "stations[1].servers" in paths
    assert "classes[0].visits.zz" in paths


def test_unstable_and_unsupported_exit_2(tmp_path, capsys):
    unstable = """stations:
  - {name: cpu, kind: queue, service: 0.5}
classes:
  - {name: web, type: open, arrival_rate: 3, visits: {cpu: 1}}
"""
    code, _, err = run(["solve", write(tmp_path, unstable)], capsys)
    assert code == 2 and "UnstableError" in err and "station 'cpu' is unstable" in err
    code, _, err = run(["solve", write(tmp_path, GOOD), "--method", "nope"], capsys)
    assert code == 2 and "unknown method 'nope'" in err
    code, _, err = run(["solve", str(tmp_path / "missing.yaml")], capsys)
    assert code == 2 and "cannot read file" in err


def test_round_trip_to_dict():
    net = modelfile.loads(GOOD)
    again = modelfile.from_dict(modelfile.to_dict(net))
    assert again == net


def test_console_script_in_subprocess(tmp_path):
    p = write(tmp_path, "stations: []\nclasses: []\n")
    proc = subprocess.run([sys.executable, "-m", "qmodels", "solve", p],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "expected a non-empty list of stations" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_seed_with_an_analytic_method_is_refused_cleanly(tmp_path, capsys):
    path = tmp_path / "m.yaml"
    path.write_text(GOOD)
    assert main(["solve", str(path), "--method", "exact", "--seed", "3"]) == 2
    err = capsys.readouterr().err
    assert "--seed applies to --method sim only" in err and "Traceback" not in err


def test_ctrl_c_exits_130_with_one_line(monkeypatch, capsys):
    import qmodels.cli as cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "cmd_methods", interrupted)
    assert cli.main(["methods"]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "interrupted"


def test_options_the_messages_suggest_exist_on_the_command_line(tmp_path, capsys):
    # a multi-class model: bounds ask for a class, and --option cls=... gives it
    path = tmp_path / "two.yaml"
    path.write_text("""stations:
  - {name: a, kind: queue, service: 0.1}
  - {name: b, kind: queue, service: 0.2}
classes:
  - {name: x, type: closed, population: 2, visits: {a: 1, b: 1}}
  - {name: y, type: closed, population: 1, visits: {a: 1}}
""")
    assert main(["solve", str(path), "--method", "bounds"]) == 2
    err = capsys.readouterr().err
    assert "--option cls=NAME" in err
    assert main(["solve", str(path), "--method", "bounds", "--option", "cls=x"]) == 0
    assert "bounds" in capsys.readouterr().out.lower()
    assert main(["solve", str(path), "--method", "exact", "--option", "nope=1"]) == 2
    assert "has no option" in capsys.readouterr().err
