"""The schema's fast structural check (:func:`qmodels.io.schema.conforms`),
which lets a valid model file skip importing jsonschema, must agree with
jsonschema itself on every document: valid ones and each kind of broken one.
The reference is jsonschema's own verdict (an independent implementation)."""

from __future__ import annotations

import copy
import subprocess
import sys
from importlib import resources

import pytest
import yaml

from qmodels.io import schema


def _jsonschema_valid(doc) -> bool:
    return not any(True for _ in schema._validator().iter_errors(doc))


def _examples():
    folder = resources.files("qmodels").joinpath("examples")
    return [yaml.safe_load(p.read_text()) for p in folder.iterdir() if p.name.endswith(".yaml")]


def _mutations(doc):
    """Documents one edit away from ``doc``: each key dropped, an unknown key
    added, each leaf replaced by values of other JSON types."""
    out = []

    def walk(node, path):
        if isinstance(node, dict):
            for k in list(node):
                yield path + [k], node[k]
                yield from walk(node[k], path + [k])
        elif isinstance(node, list):
            for i, v in enumerate(node):
                yield path + [i], v
                yield from walk(v, path + [i])

    def edit(path, fn):
        d = copy.deepcopy(doc)
        parent = d
        for p in path[:-1]:
            parent = parent[p]
        fn(parent, path[-1])
        out.append(d)

    for path, _ in list(walk(doc, [])):
        if isinstance(path[-1], str):
            edit(path, lambda par, k: par.pop(k))
        for value in (None, True, 1, 2.5, -1, "", "x", "erlang", [], [1], {}, {"type": "erlang"}):
            edit(path, lambda par, k, v=value: par.__setitem__(k, v))
    for path, v in list(walk(doc, [])):
        if isinstance(v, dict):
            edit(path, lambda par, k: par[k].__setitem__("bogus_key", 1))
    out.append([])
    out.append({"stations": [], "classes": []})
    out.append({**doc, "symbols": {"9bad": {}}})
    out.append({**doc, "symbols": {"S": {"positive": True}}})
    out.append({**doc, "symbols": {"S": {"positive": 1}}})
    return out


@pytest.mark.parametrize("doc", _examples(), ids=lambda d: d.get("name", "?"))
def test_fast_check_agrees_with_jsonschema(doc):
    assert schema.conforms(doc) and _jsonschema_valid(doc)
    docs = _mutations(doc)
    assert len(docs) > 100
    disagree = [d for d in docs if schema.conforms(d) != _jsonschema_valid(d)]
    assert not disagree, disagree[:2]
    # the edits do reach both verdicts
    verdicts = {schema.conforms(d) for d in docs}
    assert verdicts == {True, False}


def test_distribution_branches_agree():
    base = {"stations": [{"name": "a", "service": 1}],
            "classes": [{"name": "c", "type": "closed", "population": 1,
                         "visits": {"a": 1}}]}
    for dist in ("exponential", "erlang", {"type": "erlang"}, {"type": "erlang", "k": 2},
                 {"type": "lognormal"}, {"type": "lognormal", "scv": 2},
                 {"type": "uniform", "spread": 0.5}, {"type": "empirical", "samples": []},
                 {"type": "empirical", "samples": [1.0, 2]}, {"k": 2}, 3):
        doc = copy.deepcopy(base)
        doc["stations"][0]["distribution"] = dist
        assert schema.conforms(doc) == _jsonschema_valid(doc), dist


def test_unknown_keyword_falls_back_to_jsonschema():
    """A schema keyword the fast check does not implement (added later) sends
    the decision to jsonschema instead of being ignored."""
    s = schema.schema()
    s["properties"]["name"]["maxLength"] = 3
    assert not schema._keywords_known(s)
    assert schema._keywords_known(schema.schema())


def test_solving_a_model_file_imports_neither_jsonschema_nor_sympy():
    code = ("import sys; from qmodels.cli import main; "
            "main(['solve', '--json']); "
            "print('LOADED', 'jsonschema' in sys.modules, 'sympy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip().splitlines()[-1] == "LOADED False False"


def test_a_broken_file_still_gets_jsonschema_messages():
    doc = {"stations": [{"name": "a", "service": 1, "colour": "red"}],
           "classes": [{"name": "c", "type": "closed", "population": 1, "visits": {"a": 1}}]}
    errs = schema.validate(doc)
    assert errs and errs[0][0] == "stations[0].colour"


#: a document with the keys of the fork-join, priority and Pareto
#: vocabulary (oneOf and minimum in the schema)
_VOCABULARY = {
    "name": "vocabulary",
    "stations": [{"name": "fj", "kind": "forkjoin", "branches": [["d1"], ["d2"]], "tasks": [1, 2]},
                 {"name": "d1", "service": 0.01, "discipline": "prio"},
                 {"name": "d2", "service": 0.01,
                  "distribution": {"type": "pareto", "alpha": 3}}],
    "classes": [{"name": "c", "type": "closed", "population": 2, "priority": 1,
                 "visits": {"fj": 1}}],
}


def test_fast_check_agrees_on_the_new_vocabulary():
    assert schema._fast_schema() is not None      # no keyword sends it to jsonschema
    assert schema.conforms(_VOCABULARY) and _jsonschema_valid(_VOCABULARY)
    docs = _mutations(_VOCABULARY) + [
        {**_VOCABULARY, "classes": [{**_VOCABULARY["classes"][0], "priority": -1}]},
        {**_VOCABULARY, "stations": [{**_VOCABULARY["stations"][0], "tasks": 0}]
         + _VOCABULARY["stations"][1:]},
        {**_VOCABULARY, "stations": [{**_VOCABULARY["stations"][0], "tasks": [1, 0]}]
         + _VOCABULARY["stations"][1:]},
        {**_VOCABULARY, "stations": [{**_VOCABULARY["stations"][0], "tasks": 2.5}]
         + _VOCABULARY["stations"][1:]},
    ]
    disagree = [d for d in docs if schema.conforms(d) != _jsonschema_valid(d)]
    assert not disagree, disagree[:2]
    assert {schema.conforms(d) for d in docs} == {True, False}
