"""``qmodels solve --json`` says what its answer is (issue 27, defect 4:
"--json drops every note"): method, exactness, assumptions, notes,
warnings and error, beside figures checked against references computed
here."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import qmodels as qm
from qmodels import modelfile
from qmodels.cli import main
from tests.test_truth import GI_CASES, _deterministic_queue, _fcfs_open

LABEL = ("method", "exactness", "assumptions", "notes", "warnings", "error")


def _json(tmp_path, capsys, net, *args):
    path = tmp_path / "m.yaml"
    modelfile.save(net, path)
    code = main(["solve", str(path), "--json", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _label_keys(d):
    assert set(LABEL) <= set(d), sorted(d)
    assert isinstance(d["method"], str)
    assert d["exactness"] in ("exact", "approximate", "bound")
    for key in ("assumptions", "notes", "warnings"):
        assert isinstance(d[key], list) and all(isinstance(x, str) for x in d[key])
    assert d["assumptions"], "every answer rests on something"
    if d["exactness"] == "approximate":
        assert isinstance(d["error"], dict)
    else:
        assert d["error"] is None


@pytest.mark.parametrize("case", list(GI_CASES))
def test_json_of_auto_on_a_gi_stream_names_its_method_and_error(tmp_path, capsys, case):
    d_, ref = GI_CASES[case]
    code, out, err = _json(tmp_path, capsys, qm.Network(
        [qm.Queue("q", 0.6)], [qm.Open("j", 1.0, interarrival=d_, visits={"q": 1})]))
    assert code == 0, err
    d = json.loads(out)
    _label_keys(d)
    assert d["method"] != "exact"
    assert any("method chosen by qm.solve" in n for n in d["notes"])
    R = d["classes"]["j"]["R"]
    if d["exactness"] == "exact":
        assert R == pytest.approx(ref, rel=1e-9)         # GI/M/1 (Kleinrock 1975, 6.4)
    else:
        assert R == pytest.approx(ref, rel=0.10)
        assert d["error"].get("validated") or any("error unmeasured" in w
                                                  for w in d["warnings"])


def test_json_of_the_fcfs_as_ps_substitute_carries_it(tmp_path, capsys):
    net = _fcfs_open()
    code, out, err = _json(tmp_path, capsys, net, "--method", "exact")
    assert code == 2 and "station 'a'" in err and out == ""      # refused by name
    code, out, err = _json(tmp_path, capsys, net, "--method", "exact",
                           "--option", "fcfs_as_ps=true")
    assert code == 0, err
    d = json.loads(out)
    _label_keys(d)
    assert d["method"] == "exact" and d["exactness"] == "approximate"
    sub = [a for a in d["assumptions"] if "processor sharing" in a]
    assert sub and "'a'" in sub[0] and "'b'" in sub[0]
    # the figures are those of the PS network (BCMP open PS: R_k = S_k / (1 - U_k))
    Ua, Ub = 10 * 0.002 + 2.5 * 0.05, 10 * 0.004 + 2.5 * 0.3
    assert d["classes"]["small"]["R"] == pytest.approx(0.002 / (1 - Ua) + 0.004 / (1 - Ub),
                                                       rel=1e-9)


def test_json_of_residual_mva_carries_its_approximation_and_warning(tmp_path, capsys):
    # (qm.solve would take the phase-type chain here: the method is named)
    code, out, err = _json(tmp_path, capsys, _deterministic_queue(4.0), "--method",
                           "mva-residual")
    assert code == 0, err
    d = json.loads(out)
    _label_keys(d)
    assert d["method"] == "mva-residual" and d["exactness"] == "approximate"
    assert any("residual" in n.lower() for n in d["notes"] + d["assumptions"])
    assert d["warnings"] or d["error"].get("validated")
    assert d["stations"]["q"]["U"] <= 1.0


def test_json_of_an_exact_answer_says_exact_and_has_no_error(tmp_path, capsys):
    net = qm.Network([qm.Queue("q", 0.5, capacity=3)], [qm.Open("j", 1.0, visits={"q": 1})])
    code, out, err = _json(tmp_path, capsys, net)
    assert code == 0, err
    d = json.loads(out)
    _label_keys(d)
    assert d["method"] == "ctmc" and d["exactness"] == "exact" and d["error"] is None
    assert any("'ctmc'" in n for n in d["notes"])


def test_the_installed_command_prints_the_label(tmp_path):
    path = tmp_path / "m.yaml"
    modelfile.save(qm.Network([qm.Queue("q", 0.6)], [qm.Open(
        "j", 1.0, interarrival=qm.HyperExponential(8), visits={"q": 1})]), path)
    p = subprocess.run([sys.executable, "-m", "qmodels", "solve", str(path), "--json"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    _label_keys(d)
    assert d["exactness"] != "exact" or d["classes"]["j"]["R"] == pytest.approx(
        GI_CASES["H2 scv 8"][1], rel=1e-9)


def test_json_of_the_phase_type_chain_names_its_fit_and_states(tmp_path, capsys):
    # qm.solve's choice for a closed FCFS queue with a deterministic time:
    # the chain, approximate by its Erlang-20 fit, the fit and the state
    # count in the label
    code, out, err = _json(tmp_path, capsys, _deterministic_queue(4.0))
    assert code == 0, err
    d = json.loads(out)
    _label_keys(d)
    assert d["method"] == "ctmc" and d["exactness"] == "approximate"
    assert any("Erlang-20" in a and "(a fit)" in a for a in d["assumptions"])
    assert any(n.startswith("CTMC of ") and " states " in n for n in d["notes"])
