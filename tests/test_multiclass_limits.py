"""Exact multi-class MVA refuses, with its estimated time, a lattice that
would run for minutes: 4 classes x 150 jobs ran 349 s within the old size
limit (1e9 population vectors; 151^4 = 5.2e8).  The cost model is the
recursion's O(C K) per population vector (Lazowska et al., QSP 1984, sec.
7.4.2)."""

from __future__ import annotations

import pytest

import qmodels as qm
from qmodels.analytic import multiclass
from qmodels.errors import ProblemTooLargeError, UnsupportedModelError


def _net(n, K=3):
    st = [qm.Queue(f"s{k}", 0.01 * (k + 1)) for k in range(K)]
    return qm.Network(st, [qm.Closed(f"c{i}", n, visits={f"s{k}": 1 + (i + k) % 3
                                                         for k in range(K)})
                           for i in range(4)])


def test_four_classes_of_150_is_refused_with_its_estimated_time(monkeypatch):
    def never(*a, **k):
        raise AssertionError("the lattice recursion started")

    monkeypatch.setattr(multiclass, "_exact_kernel", never)
    with pytest.raises(ProblemTooLargeError, match=r"an estimated [0-9.e+]+ s") as e:
        qm.mva(_net(150))
    assert "schweitzer" in str(e.value) and "c0=150" in str(e.value)
    assert isinstance(e.value, UnsupportedModelError)   # what callers caught before
    # 151^4 vectors x 4 classes x 3 stations
    assert multiclass.exact_seconds(151 ** 4, 4, 3) == pytest.approx(
        151 ** 4 * 12 * multiclass._SECONDS_PER_UNIT)


def test_small_lattice_still_solves_exactly():
    # 4 x 5 jobs: well under the limit; the exact solution obeys Little's law
    # per class, N_c = X_c R_c (no think time)
    r = qm.mva(_net(5))
    for c in ("c0", "c1", "c2", "c3"):
        assert r.X[c] * r.R[c] == pytest.approx(5.0, rel=1e-12)
