"""Tests of the validation harness (validation/).

The harness logic is tested with a stand-in simulator whose intervals are
built here from known values, so each verdict is known in advance; the
real simulator runs on the fast subset when it is installed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from validation import CATALOG, FAST, allowance, by_name, run, run_case, verdict, write_report
from validation.__main__ import main

ROOT = Path(__file__).resolve().parents[1]


class _Est:
    def __init__(self, mean, half):
        self.mean, self.low, self.high, self.n = mean, mean - half, mean + half, 10


class _Figs(dict):
    pass


class _FakeSim:
    """Intervals centred on ``value * (1 + shift)`` with relative
    half-width ``rel``; X/R/Q/U indexable like Figures."""

    def __init__(self, values, shift, rel):
        for m in "XRQU":
            f = _Figs()
            for (mm, key), v in values.items():
                if mm == m:
                    f[key] = _Est(v * (1 + shift), abs(v) * rel)
            setattr(self, m, f)


def _fake(shift, rel):
    def sim(net, seed, horizon, replications):
        from qmodels.analytic.ctmc import ctmc
        from qmodels.analytic.mva import mva

        try:
            r = mva(net)
        except Exception:
            r = ctmc(net)
        vals = {}
        for m in "XRQU":
            for k, v in getattr(r, m).items():
                vals[(m, k)] = v
        return _FakeSim(vals, shift, rel)

    return sim


def test_catalog_has_twenty_named_cases_of_both_kinds():
    names = [c.name for c in CATALOG]
    assert len(names) >= 20
    assert len(set(names)) == len(names)
    kinds = {c.kind for c in CATALOG}
    assert kinds == {"product-form", "non-product-form"}
    assert sum(c.kind == "product-form" for c in CATALOG) >= 10
    for c in CATALOG:
        assert c.description and c.figures
        c.build()  # every network is valid input
    assert set(FAST) <= set(names)
    with pytest.raises(KeyError, match="no validation case 'nope'"):
        by_name("nope")


def test_allowance_is_the_binomial_quantile():
    # P(Bin(40, .05) > a) <= 1 %: P(X <= 5) = 0.9861, P(X <= 6) = 0.9951
    # (binomial sums by hand / any table), so a = 6
    assert allowance(40) == 6
    assert allowance(0) == 0
    # for n = 1: P(X > 0) = 0.05 > 1 %, P(X > 1) = 0, so a = 1
    assert allowance(1) == 1


def test_exact_references_agree_with_ctmc_where_both_exist():
    # product-form cases that also run the CTMC: two exact routes must agree
    for c in CATALOG:
        if c.kind == "product-form" and c.ctmc:
            rep = run_case(c, seed=1, fast=True, simulate=None)
            for r in rep.rows:
                if r.exact is not None and r.ctmc is not None:
                    assert r.ctmc == pytest.approx(r.exact, rel=1e-7), (c.name, r.figure)


def test_closed_forms_match_ctmc_in_loss_cases():
    rep = run_case(by_name("mm1k-loss"), seed=1, fast=True, simulate=None)
    for r in rep.rows:
        assert r.approx["M/M/1/K"] == pytest.approx(r.ctmc, rel=1e-9)


def test_verdict_passes_a_correct_simulator_and_fails_a_biased_one(tmp_path):
    names = ["mm1", "cyclic-4", "closed-tandem-blocking"]
    good = run(names, seed=3, fast=True, simulate=_fake(0.0, 0.01))
    v = verdict(good)
    assert v["checks"] > 10 and v["misses"] == 0 and v["passed"]
    # a 5 % bias with 1 % half-widths: every check misses, by 5 half-widths
    bad = run(names, seed=3, fast=True, simulate=_fake(0.05, 0.01))
    v = verdict(bad)
    assert v["misses"] == v["checks"] and v["gross"] == v["checks"] and not v["passed"]
    # a 2 % bias with 1 % half-widths: misses but not gross; still fails
    # since every check misses (more than the allowance)
    v = verdict(run(names, seed=3, fast=True, simulate=_fake(0.02, 0.01)))
    assert v["gross"] == 0 and v["misses"] == v["checks"] and not v["passed"]
    out = write_report(bad, str(tmp_path), seed=3, fast=True)
    text = (tmp_path / "report.md").read_text()
    assert "Verdict: **FAIL**" in text and "GROSS MISS" in text
    assert out["passed"] is False
    assert (tmp_path / "exact_errors.png").stat().st_size > 0
    assert (tmp_path / "approx_errors.png").stat().st_size > 0


def test_report_without_simulator(tmp_path):
    reps = run(["mm1k-loss", "critical-section"], fast=True, simulate=None)
    v = write_report(reps, str(tmp_path), seed=1, fast=True)
    text = (tmp_path / "report.md").read_text()
    assert "Simulator not available" in text
    assert v["checks"] == 0 and v["passed"]
    # approximation errors are reported against the CTMC: MVA ignoring the
    # lock overestimates throughput of the critical-section case
    rep = reps[1]
    x = next(r for r in rep.rows if r.figure == "X[c]")
    assert x.approx["MVA (no pool)"] > x.ctmc


def test_cli_usage_errors(tmp_path, capsys):
    assert main(["--out", str(tmp_path), "--no-sim", "--case", "zzz"]) == 2
    assert "no validation case 'zzz'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([])  # --out is required


def test_fast_run_with_the_real_simulator(tmp_path):
    pytest.importorskip("qmodels.sim")
    proc = subprocess.run(
        [sys.executable, "-m", "validation", "--out", str(tmp_path), "--fast", "--seed", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    text = (tmp_path / "report.md").read_text()
    assert "## mm1 (product-form)" in text
    assert proc.returncode == (0 if "Verdict: **PASS**" in text else 1), proc.stderr[-2000:]
    assert proc.returncode == 0, text


def test_identical_estimates_count_as_one_check():
    # Q and U of a station that never queues are one time average: a single
    # unlucky estimate must not count as two misses
    from validation.report import Row, _distinct_checks

    a = Row("U[lock]", 0.51376, "CTMC", 0.51376, 0.51156, 0.0011)
    b = Row("Q[lock]", 0.51376, "CTMC", 0.51376, 0.51156, 0.0011)
    c = Row("U[log]", 0.41101, "CTMC", 0.41101, 0.41228, 0.0016)
    assert [r.figure for r in _distinct_checks([a, b, c])] == ["U[lock]", "U[log]"]


def test_cases_on_two_processes_report_what_one_process_reports():
    # each case runs from its own seed, so the split changes no figure
    pytest.importorskip("qmodels.sim")
    names = ["mm1", "mm1k-loss"]
    one = run(names, seed=2, fast=True)
    two = run(names, seed=2, fast=True, workers=2)
    assert [r.case.name for r in two] == names
    for a, b in zip(one, two):
        assert a.rows == b.rows and a.notes == b.notes
    # and a figure is a simulation's: another seed moves it
    other = run(names[:1], seed=5, fast=True)
    assert other[0].rows != one[0].rows


def test_cases_on_a_dask_scheduler_report_what_one_process_reports():
    distributed = pytest.importorskip("distributed")
    names = ["mm1k-loss"]
    one = run(names, seed=2, fast=True)
    with distributed.LocalCluster(n_workers=1, processes=False, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        two = run(names, seed=2, fast=True, scheduler=cluster.scheduler_address)
    assert [r.rows for r in two] == [r.rows for r in one]
