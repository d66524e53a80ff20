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


def _stored_all(catalog: str, ap: V.Approx) -> list:
    """The shipped envelopes of ``ap`` on ``catalog``, one per form that
    answered it (empty if every network was refused)."""
    return [e for e in ENVS if e.get("catalog") == catalog and e["method"] == ap.method
            and bool(e.get("substituted", False)) == ap.substituted]


def _stored(catalog: str, ap: V.Approx, form):
    """The shipped envelope of ``ap`` on ``catalog`` for an answer of
    ``form`` (None if there is none)."""
    found = [e for e in _stored_all(catalog, ap) if env_mod.holds_form(e, form)]
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
            if a["status"] == "refused":
                assert all(e["refused"] > 0 for e in _stored_all(name, ap))
                continue
            # the envelope of the form that answered (the full run answered
            # this network in the same form)
            env = _stored(name, ap, a["form"])
            assert env is not None, (name, r["index"], ap.method, a["form"])
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
            form = (out[0].info or {}).get("approximation")
            inside, outside = env_mod.match(ap.method, f, ap.substituted, form=form)
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


# ---------------------------------------------------------------------------
# (v) one envelope per form of a method
# ---------------------------------------------------------------------------

_F = {"workload": "closed", "classes": 2, "population": 10, "stations": 3, "servers": 1,
      "load_dependent": 0, "service_scv_min": 1.0, "service_scv_max": 1.0, "arrival_scv": 1.0,
      "utilization": 0.5, "priority_levels": 1, "branches": 0, "pools": 0,
      "class_dependent": 1}


def _row(index, form, eX, eR, hw=0.01, status="ok", **feat):
    """One synthetic measured network of a one-method catalog."""
    a = {"method": "marie", "substituted": False, "status": status, "message": ""}
    if status == "ok":
        a.update(eX=eX, eR=eR, form=form, features=dict(_F, **feat), R={"c": 1.0})
    return {"catalog": "?", "index": index, "approx": [a], "hw": hw, "ref_R": {"c": 1.0}}


def test_writer_splits_a_catalog_by_the_form_that_answered():
    # two forms: each envelope holds its own rows only (networks, maxima,
    # means, box, half-width), with its own form and no legacy list
    rows = [_row(0, "smaller subsystems", 0.02, 0.03, population=8),
            _row(1, "stations alone (Marie's decomposition)", 0.40, 0.10, hw=0.03,
                 population=20),
            _row(2, "smaller subsystems", 0.04, 0.01, population=12),
            _row(3, None, 0, 0, status="refused")]
    envs, defects = V.envelopes_of("marie-classdep-large", rows)
    assert defects == [] and len(envs) == 2
    by = {e["form"]: e for e in envs}
    pairs, alone = by["smaller subsystems"], by["stations alone (Marie's decomposition)"]
    assert pairs["networks"] == 2 and alone["networks"] == 1
    assert pairs["error"]["X"]["max"] == pytest.approx(0.04)
    assert pairs["error"]["X"]["mean"] == pytest.approx(0.03)
    assert pairs["error"]["R"]["max"] == pytest.approx(0.03)
    assert alone["error"]["X"]["max"] == pytest.approx(0.40)
    assert pairs["where"]["population"] == [8, 12] and alone["where"]["population"] == [20, 20]
    assert pairs["sim_halfwidth"] == pytest.approx(0.01)
    assert alone["sim_halfwidth"] == pytest.approx(0.03)
    for e in envs:
        assert "forms" not in e and e["refused"] == 1 and e["catalog"] == "marie-classdep-large"
        assert V.validate_entry(e) == []
        assert e["command"] == f"{V.COMMAND} --family marie-classdep-large"
    # one form: one envelope, with that form
    envs, _ = V.envelopes_of("marie-classdep-large", rows[:1] + rows[2:3])
    assert [e["form"] for e in envs] == ["smaller subsystems"]
    # a method of one form (no answer names one): one envelope without a form
    envs, _ = V.envelopes_of("marie-classdep-large", [_row(0, None, 0.1, 0.2)])
    assert len(envs) == 1 and "form" not in envs[0] and "forms" not in envs[0]


def test_schema_knows_form_and_legacy_forms():
    good = next(e for e in ENVS if e["networks"] > 0)
    e = dict(good, form="smaller subsystems")
    e.pop("forms", None)
    assert V.validate_entry(e) == []
    assert V.validate_entry(dict(e, form="")) == ["form: not a non-empty string"]
    assert V.validate_entry(dict(e, form=["a"])) == ["form: not a non-empty string"]
    legacy = dict(good, forms=["a", "b"])
    legacy.pop("form", None)
    assert V.validate_entry(legacy) == []
    assert "both form and forms" in V.validate_entry(dict(legacy, form="a"))


def test_write_replaces_every_entry_of_a_catalog_run(tmp_path, monkeypatch):
    # the old file: the catalog's one legacy envelope (a list of forms) and
    # another catalog's; the new run writes two envelopes of the catalog
    old = [dict(e) for e in ENVS if e["catalog"] in ("marie-classdep-large", "marie-ph")]
    legacy = next(e for e in old if e["catalog"] == "marie-classdep-large")
    legacy.pop("form", None)
    legacy["forms"] = ["stations alone (Marie's decomposition)", "smaller subsystems"]
    others = [e for e in old if e["catalog"] != "marie-classdep-large"]
    doc = {"generated": "2000-01-01", "command": V.COMMAND, "envelopes": [legacy] + others,
           "unanswered": []}
    monkeypatch.setattr(V, "ROOT", tmp_path)
    monkeypatch.setattr(V, "JSON_PATH", tmp_path / "envelopes.json")
    monkeypatch.setattr(V, "TABLE_PATH", tmp_path / "envelopes_table.md")
    monkeypatch.setattr(V, "README_PATH", tmp_path / "README.md")
    (tmp_path / "envelopes.json").write_text(json.dumps(doc))
    (tmp_path / "README.md").write_text(f"x\n{V.README_BEGIN}\nold\n{V.README_END}\ny\n")
    rows = [_row(0, "smaller subsystems", 0.02, 0.03),
            _row(1, "stations alone (Marie's decomposition)", 0.4, 0.1)]
    new, _ = V.envelopes_of("marie-classdep-large", rows)
    V.write(new, {"marie-classdep-large"})
    written = json.loads((tmp_path / "envelopes.json").read_text())["envelopes"]
    mine = [e for e in written if e["catalog"] == "marie-classdep-large"]
    assert sorted(e["form"] for e in mine) == sorted(e["form"] for e in new)
    assert not any("forms" in e for e in mine)
    assert [e for e in written if e["catalog"] != "marie-classdep-large"] == others
    # the tables name each row's form
    table = (tmp_path / "envelopes_table.md").read_text()
    assert "| marie | smaller subsystems |" in table and "| marie | stations alone |" in table
    readme = (tmp_path / "README.md").read_text()
    assert "`marie` (smaller subsystems)" in readme and "`marie` (stations alone)" in readme


def test_drift_is_per_form():
    shipped = json.loads(V.JSON_PATH.read_text())["envelopes"]
    e = next(e for e in shipped if e["networks"] > 0)
    a = dict(e, form="smaller subsystems")
    b = dict(e, form="stations alone (Marie's decomposition)", networks=e["networks"] + 1)
    for x in (a, b):
        x.pop("forms", None)
    assert V.drift([a, b], [a, b]) == []
    lines = V.drift([a, b], [a, dict(b, networks=e["networks"])])
    assert len(lines) == 1 and "(stations alone)" in lines[0] and "networks" in lines[0]
    # a committed form the run no longer answers in is named
    lines = V.drift([a], [a, b])
    assert len(lines) == 1 and "no longer measured" in lines[0]


@pytest.fixture
def table_of(monkeypatch):
    """Make :mod:`qmodels.analytic.envelopes` read ``envs`` instead of the
    shipped file (its per-method cache emptied before and after)."""
    def use(envs):
        monkeypatch.setattr(env_mod, "envelopes", lambda: tuple(envs))
        env_mod._of_method.cache_clear()
    yield use
    env_mod._of_method.cache_clear()


CHAIN = "the network's own Markov chain (qm.ctmc)"
FES = "finite-source priority chain with the flow-equivalent server of the rest"


def _starved_det_template():
    """(the shipped envelopes but ``priority-closed-starved-det``'s, that
    catalog's envelope of the answers by the own chain: the box of the
    networks the chain takes; or its one envelope if written before the
    split by form)."""
    rest = [e for e in ENVS if e.get("catalog") != "priority-closed-starved-det"]
    mine = [e for e in ENVS if e.get("catalog") == "priority-closed-starved-det"]
    assert mine
    own = [e for e in mine if e.get("form") == CHAIN] or mine
    return rest, own[0]


def _starved_det_split(chain_err, fes_err):
    """The shipped envelopes with ``priority-closed-starved-det``'s
    replaced by two of one box (the own chain's): one per form, of the given
    X and R max errors."""
    envs, e = _starved_det_template()
    for form, (x, r) in ((CHAIN, chain_err), (FES, fes_err)):
        one = {k: v for k, v in e.items() if k not in ("forms", "form")}
        one["form"] = form
        one["error"] = {"X": {"max": x, "mean": x / 2}, "R": {"max": r, "mean": r / 2}}
        envs.append(one)
    return envs


def test_attach_quotes_the_envelope_of_the_answers_own_form(table_of):
    # network 7 of priority-closed-starved-det: priority answers it by the
    # network's own chain (fast); the starved low class is where the
    # flow-equivalent chain is 58 % off, the own chain a few per cent
    net = V.networks(V.CATALOGS["priority-closed-starved-det"])[7]
    table_of(_starved_det_split((0.031, 0.04), (0.583, 1.398)))
    r = qm.priority(net)
    assert r.info["approximation"] == CHAIN and r.error["validated"]
    assert r.error.get("form") == CHAIN
    assert r.error["X"]["max"] == pytest.approx(0.031)
    assert r.error["R"]["max"] == pytest.approx(0.04)
    note = [n for n in r.notes if r.error["family"] in n]
    assert note and "58.3 %" not in note[0] and CHAIN in note[0]
    f = env_mod.features(net, r)
    inside, outside = env_mod.match("priority", f, form=CHAIN)
    assert all(env_mod.holds_form(e, CHAIN) for e in inside)
    # the FES envelope of the same box is outside, with the reason
    fes = [why for e, why in outside if e.get("form") == FES
           and e["catalog"] == "priority-closed-starved-det"]
    assert fes and "not by the form measured there" in fes[0][0]
    # the same network answered by the flow-equivalent chain (the whole
    # chain turned off) is given that form's envelope, not the chain's
    r = qm.priority(net, max_states=0)
    assert r.info["approximation"] == FES
    assert r.error["X"]["max"] >= 0.583 and r.error.get("form", FES) == FES


def test_legacy_forms_list_still_holds_each_of_its_forms(table_of):
    # an envelope written before the split by form (a ``forms`` list, the
    # worst of the rows of both forms) still attaches: the chain answer on
    # the starved network is given its error
    envs, e = _starved_det_template()
    legacy = {k: v for k, v in e.items() if k != "form"}
    legacy["forms"] = [FES, CHAIN]
    legacy["error"] = {"X": {"max": 0.583, "mean": 0.04}, "R": {"max": 1.398, "mean": 0.07}}
    table_of(envs + [legacy])
    net = V.networks(V.CATALOGS["priority-closed-starved-det"])[7]
    r = qm.priority(net)
    assert r.info["approximation"] == CHAIN
    assert r.error["validated"] and r.error["X"]["max"] == pytest.approx(0.583)
    assert env_mod.holds_form(legacy, CHAIN) and env_mod.holds_form(legacy, FES)
    assert not env_mod.holds_form(legacy, "shadow server (Sevcik 1977), Schweitzer AMVA")


def test_the_shipped_chain_answer_of_a_starved_network_quotes_its_own_forms_rows():
    # the shipped table, measured per form: the chain answer of network 7
    # is given the worst of the catalog's chain rows, below every FES row's
    # (the catalog's networks are all answered by the chain since its
    # Erlang-4 tier goes to a million states: no FES row of its own)
    net = V.networks(V.CATALOGS["priority-closed-starved-det"])[7]
    r = qm.priority(net)
    assert r.info["approximation"] == CHAIN and r.error["form"] == CHAIN
    rows = {e.get("form"): e for e in ENVS if e.get("catalog") == "priority-closed-starved-det"}
    assert CHAIN in rows and set(rows) <= {CHAIN, FES}
    assert r.error["X"]["max"] >= rows[CHAIN]["error"]["X"]["max"]
    fes_worst = max(e["error"]["X"]["max"] for e in ENVS
                    if e["method"] == "priority" and e.get("form") == FES
                    and "starved" in e.get("catalog", ""))
    assert r.error["X"]["max"] < fes_worst


def test_holds_form():
    assert env_mod.holds_form({"form": "a"}, "a")
    assert not env_mod.holds_form({"form": "a"}, "b")
    assert not env_mod.holds_form({"form": "a"}, None)
    assert env_mod.holds_form({"forms": ["a", "b"]}, "b")
    assert not env_mod.holds_form({"forms": ["a", "b"]}, "c")
    assert env_mod.holds_form({}, "a") and env_mod.holds_form({}, None)


@pytest.mark.parametrize("name", ["marie-fewjobs", "marie-ph"])
def test_a_marie_answer_carries_its_forms_envelope(name):
    # the shipped Marie envelopes are one per form (none left with a legacy
    # ``forms`` list): an answer is given one of its own form (an exact
    # answer, the whole network in one subsystem, carries none: every
    # network of fcfs-classdep-closed is one now)
    assert not any("forms" in e for e in ENVS if e["method"] == "marie")
    seen = 0
    for net in V.networks(V.CATALOGS[name], quick=True):
        r = qm.marie(net)
        if r.exactness != "approximate":
            continue
        seen += 1
        form = r.info["approximation"]
        assert r.error["validated"] and r.error["form"] == form, (name, r.error)
        inside = env_mod.match("marie", env_mod.features(net, r), form=form)[0]
        assert inside and all(e["form"] == form for e in inside)
        worst = max(max(e["error"]["X"]["max"], e["error"]["R"]["max"]) for e in inside)
        assert max(r.error["X"]["max"], r.error["R"]["max"]) == worst
    assert seen


def test_an_envelope_of_answers_naming_no_form_speaks_for_those_alone():
    # the CTMC's catalogs measure its exact answers (no form) beside its
    # fitted ones (a form each): the first envelope must not speak for a
    # fitted answer, as an envelope of a one-form method would
    unnamed = [e for e in ENVS if e.get("unnamed_form")]
    assert unnamed and all(e["method"] == "ctmc" for e in unnamed)
    for e in unnamed:
        assert env_mod.holds_form(e, None)
        assert not env_mod.holds_form(e, "the chain of the fitted shapes")
    plain = next(e for e in ENVS if e["method"] == "qna")
    assert env_mod.holds_form(plain, None) and env_mod.holds_form(plain, "anything")
