"""qm.estimate_demands: service demands from monitoring data.

The truth comes from outside the estimator: simulated monitoring data whose
demands were set in validation/monitoring.py (the shipped CSV and fresh
runs of the simulator), and noise-free data built here by the utilisation
law U = sum_c X_c D_c + B (Denning & Buzen 1978).
"""

from __future__ import annotations

import warnings
from importlib import resources

import numpy as np
import pandas as pd
import pytest

import qmodels as qm
from validation import monitoring as mon


def _shipped():
    path = resources.files("qmodels").joinpath("examples", "monitoring.csv")
    return pd.read_csv(path, comment="#")


def _truth(est):
    for i, c in enumerate(est.classes):
        for k, s in enumerate(est.stations):
            yield f"D[{c},{s}]", mon.DEMANDS[c][s], est.lower[i, k], est.upper[i, k]
    for k, s in enumerate(est.stations):
        yield f"B[{s}]", mon.BACKGROUND[s], est.background_lower[k], est.background_upper[k]


def test_shipped_csv_recovers_the_simulated_demands():
    df = _shipped()
    assert len(df) == 60
    # 9 parameters judged at once: Bonferroni, each at 1 - 0.05/9, so that all
    # nine intervals hold the truth with probability >= 95 %
    with warnings.catch_warnings():
        warnings.simplefilter("error", qm.CollinearityWarning)
        est = qm.estimate_demands(df, servers=mon.SERVERS, level=1 - 0.05 / 9, seed=3)
    missed = [(name, truth, lo, hi) for name, truth, lo, hi in _truth(est)
              if not lo <= truth <= hi]
    assert not missed, missed
    # and the non-zero demands to within 10 %
    for c, row in mon.DEMANDS.items():
        for s, d in row.items():
            if d > 0:
                assert est.demand(c, s) == pytest.approx(d, rel=0.10), (c, s)


def test_network_reproduces_the_measured_utilisations():
    df = _shipped()
    est = qm.estimate_demands(df, servers=mon.SERVERS)
    net = est.network()              # open classes at their mean measured throughput
    r = qm.solve(net)
    for s in ("cpu", "disk", "net"):
        assert r.U[s] == pytest.approx(df[f"U[{s}]"].mean(), rel=0.02, abs=1e-4), s
    closed = est.network(populations={"web": 20}, think_times={"web": 1.0}, background=False)
    assert isinstance(closed.classes[0], qm.Closed)
    assert qm.solve(closed).X["web"] > 0


def test_noise_free_data_recovered_exactly():
    rng = np.random.default_rng(7)
    X = rng.uniform(1, 20, size=(30, 3))
    D = np.array([[0.01, 0.0], [0.02, 0.03], [0.0, 0.005]])     # classes x stations
    B = np.array([0.05, 0.0])
    U = X @ D + B
    df = pd.DataFrame({"X[a]": X[:, 0], "X[b]": X[:, 1], "X[c]": X[:, 2],
                       "U[cpu]": U[:, 0], "U[disk]": U[:, 1], "time": np.arange(30)})
    est = qm.estimate_demands(df, resamples=200)
    np.testing.assert_allclose(est.demands, D, atol=1e-12)
    np.testing.assert_allclose(est.background, B, atol=1e-12)
    assert est.stations == ("cpu", "disk") and est.classes == ("a", "b", "c")
    frame = est.to_frame()
    assert frame.loc[("b", "disk"), "demand"] == pytest.approx(0.03)
    assert "(background)" in repr(est)
    # percent and servers: the same data as sar would print it, cpu with 2 servers
    df2 = df.assign(**{"U[cpu]": 100 * U[:, 0] / 2})
    est2 = qm.estimate_demands(df2.assign(**{"U[disk]": 100 * U[:, 1]}), percent=True,
                               servers={"cpu": 2}, resamples=200)
    np.testing.assert_allclose(est2.demands, D, atol=1e-12)


def test_collinear_classes_warn():
    rng = np.random.default_rng(1)
    xa = rng.uniform(5, 10, 40)
    xb = 2 * xa + rng.normal(0, 0.01, 40)          # b moves with a
    df = pd.DataFrame({"X[a]": xa, "X[b]": xb, "U[cpu]": 0.01 * xa + 0.02 * xb})
    with pytest.warns(qm.CollinearityWarning, match="condition number"):
        est = qm.estimate_demands(df, background=False, resamples=200)
    assert est.condition_number > 30
    assert issubclass(qm.CollinearityWarning, qm.NumericalWarning)


def test_bad_input_is_named():
    df = pd.DataFrame({"X[a]": [1.0, 2, 3, 4, 5], "U[cpu]": [0.1, 0.2, 0.3, 0.4, 0.5]})
    with pytest.raises(qm.InvalidValueError, match="U\\[<station>\\]"):
        qm.estimate_demands(df.drop(columns="U[cpu]"))
    with pytest.raises(qm.InvalidValueError, match="row 2"):
        qm.estimate_demands(df.assign(**{"X[a]": [1.0, 2, -3, 4, 5]}))
    with pytest.raises(qm.InvalidValueError, match="percent=True"):
        qm.estimate_demands(df.assign(**{"U[cpu]": [10.0, 20, 30, 40, 50]}))
    with pytest.raises(qm.InvalidValueError, match="intervals"):
        qm.estimate_demands(df.head(3))
    with pytest.raises(qm.UnknownNameError, match="U\\[gpu\\]"):
        qm.estimate_demands(df, stations=["gpu"])


@pytest.mark.slow
def test_interval_coverage_over_seeds():
    """Over 20 independent simulated data sets, the 90 % intervals hold the
    true demand in about 90 % of cases (each parameter, pooled)."""
    hits = total = 0
    for seed in range(100, 120):
        df = mon.monitoring(seed=seed, intervals=40, horizon=60.0)
        est = qm.estimate_demands(df, servers=mon.SERVERS, level=0.90, seed=seed)
        for _name, truth, lo, hi in _truth(est):
            if truth == 0:
                continue          # a zero truth sits on the NNLS boundary: always covered
            hits += lo <= truth <= hi
            total += 1
    # 20 x 7 = 140 judgements at 90 %: binomial sd 2.5 %; 80 % is four sd below
    assert hits / total >= 0.80, (hits, total)
