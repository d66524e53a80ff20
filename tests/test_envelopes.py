"""The measured error envelopes of the approximate methods
(``qmodels/analytic/envelopes.json``, written by ``python -m
validation.envelopes --write``; read by :mod:`qmodels.analytic.envelopes`).

No expected number is written here: the stored envelopes are checked
against their schema, against a fresh ``--quick`` run of the same
catalogs (whose networks are the first of each full catalog, so their
errors cannot exceed the stored maxima: a regression guard), and against
the matching that gives an approximate answer its envelope.
"""

from __future__ import annotations

import json

import pytest

import qmodels as qm
from qmodels.analytic import envelopes as env_mod
from validation import envelopes as V

ENVS = env_mod.envelopes()
DETERMINISTIC = [n for n, c in V.CATALOGS.items() if c.reference != "sim"]
SIMULATED = [n for n, c in V.CATALOGS.items() if c.reference == "sim"]


def _stored(catalog: str, ap: V.Approx):
    """The shipped envelope of ``ap`` on ``catalog`` (None if every network
    was refused)."""
    found = [e for e in ENVS if e.get("catalog") == catalog and e["method"] == ap.method
             and bool(e.get("substituted", False)) == ap.substituted]
    assert len(found) <= 1
    return found[0] if found else None


# ---------------------------------------------------------------------------
# (i) the shipped file
# ---------------------------------------------------------------------------

def test_shipped_envelopes_follow_the_schema():
    doc = json.loads(V.JSON_PATH.read_text())
    assert doc["generated"] and doc["command"].startswith(V.COMMAND)
    assert doc["envelopes"], "no envelope shipped: run python -m validation.envelopes --write"
    for e in doc["envelopes"]:
        assert V.validate_entry(e) == [], (e.get("method"), e.get("family"))
        assert e["catalog"] in V.CATALOGS
        assert e["command"] == f"{V.COMMAND} --family {e['catalog']}"
        assert set(e["where"]) == set(env_mod.FEATURES)
        assert (e["reference"] == "simulator") == ("sim_halfwidth" in e)


def test_every_approximate_method_has_an_envelope():
    plain = {e["method"] for e in ENVS if not e.get("substituted")}
    assert set(V.APPROXIMATE_METHODS) <= plain
    substituted = {e["method"] for e in ENVS if e.get("substituted")}
    assert set(V.SUBSTITUTED_METHODS) <= substituted


def test_every_catalog_is_shipped():
    assert {e["catalog"] for e in ENVS} == set(V.CATALOGS)


def test_validate_entry_finds_what_is_wrong():
    good = next(e for e in ENVS if e["networks"] > 0)
    assert V.validate_entry(good) == []
    bad = json.loads(json.dumps(good))
    bad["where"]["utilization"] = [0.9, 0.1]
    bad["error"]["X"]["max"] = -1
    bad["networks"] = 0
    assert len(V.validate_entry(bad)) == 3


# ---------------------------------------------------------------------------
# (ii) a quick rerun stays inside the stored envelopes
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(V.CATALOGS))
def test_quick_networks_are_the_first_of_the_catalog(name):
    cat = V.CATALOGS[name]
    quick = V.networks(cat, quick=True)
    first = V.networks(cat)[:cat.quick]
    assert len(quick) == cat.quick and repr(quick) == repr(first)


def _check_quick(name, slack):
    """Every network of ``name``'s quick run answers as the full run did
    (no law violation, crash or stall) within the stored max error, plus
    ``slack(row)`` for a simulated reference."""
    cat = V.CATALOGS[name]
    rows = V.run([name], quick=True)[name]
    assert len(rows) == cat.quick
    for r in rows:
        for ap, a in zip(cat.approx, r["approx"]):
            assert a["status"] in ("ok", "refused"), (name, r["index"], ap.method, a["message"])
            env = _stored(name, ap)
            if a["status"] == "refused":
                assert env is None or env["refused"] > 0
                continue
            assert env is not None
            for fig, err in (("X", a["eX"]), ("R", a["eR"])):
                assert err <= env["error"][fig]["max"] + slack(r, env), \
                    (name, r["index"], ap.method, fig, err, env["error"][fig]["max"])


@pytest.mark.parametrize("name", DETERMINISTIC)
def test_quick_rerun_within_the_envelope(name):
    """Exact references (CTMC, MVA): the same networks give the same
    errors, never above the stored max."""
    _check_quick(name, lambda r, env: 1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("name", SIMULATED)
def test_quick_rerun_within_the_envelope_simulated(name):
    """A simulated reference: the quick run's shorter simulation moves
    the error by about its own half-width and the full run's, so each may
    exceed the stored max by twice both (about four standard errors)."""
    _check_quick(name, lambda r, env: 2.0 * (r["hw"] + env["sim_halfwidth"]))


# ---------------------------------------------------------------------------
# (iii) the catalogs' networks lie in their own boxes
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(V.CATALOGS))
def test_catalog_networks_lie_in_their_box(name):
    cat = V.CATALOGS[name]
    for i, net in enumerate(V.networks(cat, quick=True)):
        for ap in cat.approx:
            status, out = V._solve(ap, net)
            if status == "refused":
                continue
            assert status == "ok", (name, i, ap.method, out)
            f = env_mod.features(net, out[0])
            inside, outside = env_mod.match(ap.method, f, ap.substituted)
            assert any(e.get("catalog") == name for e in inside), \
                (name, i, ap.method, [(e.get("catalog"), why) for e, why in outside
                                      if e.get("catalog") == name])


# ---------------------------------------------------------------------------
# (iv) what an answer says
# ---------------------------------------------------------------------------

def _inside_families(method, result, substituted=False):
    f = env_mod.features(result.network, result)
    return env_mod.match(method, f, substituted)[0]


@pytest.mark.parametrize("name, function, kwargs", [
    ("qna-nonexp", "qna", {}),
    ("mva-residual-fewjobs", "mva_residual", {}),
    ("amva-plain", "linearizer", {}),
    ("priority-open", "priority", {}),
    ("decomposition", "decompose", {}),
    ("forkjoin-closed", "forkjoin", {}),
    ("fcfs-classdep-closed", "schweitzer", {"fcfs_as_ps": True}),
])
def test_an_answer_inside_a_box_carries_its_envelope(name, function, kwargs):
    # the first network the method answers approximately (a catalog may hold
    # networks it solves exactly, e.g. one priority queue on Poisson streams)
    answers = (getattr(qm, function)(net, **kwargs)
               for net in V.networks(V.CATALOGS[name], quick=True))
    r = next(a for a in answers if a.exactness == "approximate")
    assert r.error["validated"] is True
    inside = _inside_families(r.method, r, bool(kwargs))
    assert r.error["family"] in {e["family"] for e in inside}
    assert name in {e["catalog"] for e in inside}
    worst = max(max(e["error"]["X"]["max"], e["error"]["R"]["max"]) for e in inside)
    assert max(r.error["X"]["max"], r.error["R"]["max"]) == worst
    note = [n for n in r.notes if r.error["family"] in n]
    assert note and r.error["reference"] in note[0] and r.error["command"] in note[0]
    assert not any("error unmeasured" in w for w in r.warnings)


def test_an_answer_far_outside_every_box_gets_a_warning():
    # 30 queues in series, arrivals of SCV 50, every queue at 0.97
    names = [f"q{i}" for i in range(30)]
    net = qm.Network([qm.Queue(n, 0.97) for n in names],
                     [qm.Open("o", 1.0, routing=V._tandem(names),
                              interarrival=qm.HyperExponential(50.0))])
    r = qm.qna(net)
    assert r.error["validated"] is False
    w = [w for w in r.warnings if "error unmeasured" in w]
    assert w and "nearest measured family" in w[0] and "arrival_scv" in w[0]


def test_quick_never_writes(capsys):
    with pytest.raises(SystemExit) as e:
        V.main(["--quick", "--write"])
    assert e.value.code == 2


def test_readme_error_table_is_the_shipped_envelopes():
    # the README's table of measured errors is regenerated from envelopes.json
    # (python -m validation.envelopes --write, or --tables): it never claims less
    # error than the catalogs measured
    from validation.envelopes import README_BEGIN, README_END, README_PATH, _order, readme_table

    text = README_PATH.read_text()
    block = text.split(README_BEGIN, 1)[1].split(README_END, 1)[0].strip()
    shipped = sorted(env_mod.envelopes(), key=_order)
    assert block == readme_table(shipped).strip()


# ---------------------------------------------------------------------------
# (iv) make validate compares its run with the committed table
# ---------------------------------------------------------------------------

def test_drift_names_what_moved():
    shipped = json.loads(V.JSON_PATH.read_text())["envelopes"]
    assert V.drift(shipped, shipped) == []
    moved = json.loads(json.dumps(shipped))
    moved[0]["error"]["R"]["max"] += 0.01
    moved[1]["networks"] += 1
    lines = V.drift(moved, shipped)
    assert len(lines) == 2
    assert moved[0]["catalog"] in lines[0] and "R max" in lines[0]
    assert "networks" in lines[1]
    fresh = dict(shipped[0], catalog="not-committed")
    assert "new envelope" in V.drift([fresh], shipped)[0]


def test_out_writes_the_run_and_its_drift(tmp_path):
    shipped = json.loads(V.JSON_PATH.read_text())["envelopes"]
    assert V.write_out(str(tmp_path), shipped, [], quick=False) == []
    assert "equals the committed" in (tmp_path / "envelopes_drift.md").read_text()
    assert (tmp_path / "envelopes_table.md").read_text().count("\n|") >= len(shipped)
    moved = json.loads(json.dumps(shipped))
    moved[0]["error"]["X"]["mean"] *= 2.0
    moved[0]["error"]["X"]["mean"] += 0.001
    assert len(V.write_out(str(tmp_path), moved, [], quick=False)) == 1


@pytest.mark.parametrize("name", ["qna-ph", "marie-ph", "priority-closed-ph"])
def test_exact_catalogs_hold_only_phase_type_shapes(name):
    """The catalogs whose reference is the exact CTMC draw only shapes the
    CTMC holds exactly (exponential, Erlang, hyperexponential), so their
    reference is exact, not a fit."""
    from qmodels.model.distributions import Erlang, Exponential, HyperExponential

    ok = (Erlang, Exponential, HyperExponential, type(None))
    for net in V.networks(V.CATALOGS[name])[:20]:
        for st in net.stations:
            assert isinstance(getattr(st, "distribution", None), ok), (name, st)
        for c in net.open_classes:
            assert isinstance(c.interarrival, ok), (name, c)
