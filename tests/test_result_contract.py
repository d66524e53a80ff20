"""Every result object speaks the same vocabulary (qmodels.results.Report):
table(), to_dict() (JSON-serialisable), to_frame() (a pandas DataFrame) and
_repr_html_(); whole-network results also name their bottleneck."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import sympy as sp

import qmodels as qm
from qmodels.results import NetworkReport, Report


def _net(n=5):
    return qm.Network([qm.Queue("a", 0.1, power=qm.Power(busy=5.0, idle=1.0)),
                       qm.Queue("b", 0.2, servers=2), qm.Delay("z", 1.0)],
                      [qm.Closed("c", n, visits={"a": 1, "b": 1, "z": 1})])


def _pool_net():
    return qm.Network([qm.Queue("a", 0.1), qm.Queue("b", 0.2), qm.Delay("z", 1.0)],
                      [qm.Closed("c", 4, routing={"z": {"a": 1}, "a": {"b": 1}, "b": {"z": 1}})],
                      pools=[qm.TokenPool("buf", 1, "a", "b")])


def _two_class():
    return qm.Network([qm.Queue("a", 0.1), qm.Queue("b", 0.2)],
                      [qm.Closed("c", 2, visits={"a": 1, "b": 1}),
                       qm.Closed("d", 1, visits={"a": 2})])


B = sp.Symbol("B", positive=True)
MAKERS = {
    "Result": lambda: qm.mva(_net()),
    "Curve": lambda: qm.mva(_net(), curve=True).curve,
    "Lattice": lambda: qm.mva(_two_class(), curve=True).curve,
    "SimResult": lambda: qm.simulate(_net(2), seed=1, horizon=200.0, replications=3),
    "SymbolicResult": lambda: qm.mva_symbolic(_net(2)),
    "Bounds": lambda: qm.bounds(_net()),
    "EnergyReport": lambda: qm.energy(qm.mva(_net())),
    "decomposition": lambda: qm.decompose(_pool_net()),
    "TokenCurve": lambda: qm.throughput_vs_tokens(_pool_net(), "buf", [1, 2]),
    "BatchResult": lambda: qm.mva_batch([[0.1, 0.2]], [1.0], [3]),
    "BottleneckRegions": lambda: qm.bottleneck_regions(
        qm.Network([qm.Queue("buf", sp.Rational(1, 100), servers=B), qm.Queue("dma", 0.002)],
                   [qm.Closed("p", 4, visits={"buf": 1, "dma": 1})]), B, domain=(1, sp.oo)),
    "CaseReport": lambda: qm.cases.report("nic"),
    "QueueMetrics": lambda: qm.mmc(3.0, 0.5, 2),
}


@pytest.mark.parametrize("name", list(MAKERS))
def test_every_result_speaks_the_same_vocabulary(name):
    r = MAKERS[name]()
    assert isinstance(r, Report), f"{type(r).__name__} lacks part of the Report contract"
    assert isinstance(r.table(), str) and r.table()
    json.dumps(r.to_dict(), default=str)
    assert isinstance(r.to_frame(), pd.DataFrame)
    assert "<" in r._repr_html_()


@pytest.mark.parametrize("name", ["Result", "SimResult", "SymbolicResult", "Bounds",
                                  "decomposition"])
def test_network_results_name_their_bottleneck(name):
    r = MAKERS[name]()
    assert isinstance(r, NetworkReport)
    assert isinstance(r.bottleneck, tuple) and r.bottleneck


#: every answer says what it is (issue 27): the objects that are answers of a
#: method, and what their label must be
LABELLED = {"Result": "exact", "Curve": "exact", "Lattice": "exact", "SimResult": "simulated",
            "SymbolicResult": "exact", "Bounds": "bound", "EnergyReport": "exact",
            "decomposition": "approximate", "TokenCurve": "approximate",
            "BatchResult": "exact", "QueueMetrics": "exact"}


@pytest.mark.parametrize("name", list(LABELLED))
def test_every_answer_carries_its_label_as_data(name):
    r = MAKERS[name]()
    assert r.exactness == LABELLED[name]
    assert isinstance(r.method, str) and r.method
    assert isinstance(r.assumptions, tuple) and r.assumptions
    assert isinstance(r.notes, tuple) and isinstance(r.warnings, tuple)
    d = r.to_dict()
    for key in ("method", "exactness", "assumptions", "notes", "warnings", "error"):
        assert key in d, key
    assert d["exactness"] == LABELLED[name]
    json.dumps(d, default=str)
    if r.exactness == "approximate":
        assert r.error is not None or r.warnings
