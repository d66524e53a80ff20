"""End-to-end response-time distributions (qmodels.analytic.passage)
against hand derivations, the M/M/c closed form of the sizing module, the
open product-form mean, and the simulator's percentiles."""

from __future__ import annotations

import math

import numpy as np
import pytest

import qmodels as qm
from qmodels.errors import UnsupportedModelError


def _tandem(lam=2.0, s=(0.2, 0.3)):
    names = [f"q{i}" for i in range(len(s))]
    routing = {"source": {names[0]: 1.0}, names[-1]: {"sink": 1.0}}
    routing.update({a: {b: 1.0} for a, b in zip(names, names[1:])})
    return qm.Network([qm.Queue(n, x) for n, x in zip(names, s)],
                      [qm.Open("o", lam, routing=routing)])


def test_two_mm1_in_tandem_is_the_hypoexponential_sum():
    # Reich 1957: sojourns Exp(mu1 - lam) and Exp(mu2 - lam), independent;
    # their sum has CDF 1 - (a2 e^{-a1 t} - a1 e^{-a2 t}) / (a2 - a1),
    # derived here by convolving the two densities
    lam = 2.0
    a1, a2 = 1 / 0.2 - lam, 1 / 0.3 - lam
    d = qm.response_time_distribution(_tandem(lam))
    for t in (0.1, 0.5, 1.0, 2.0, 4.0):
        want = 1 - (a2 * math.exp(-a1 * t) - a1 * math.exp(-a2 * t)) / (a2 - a1)
        assert d.cdf(t) == pytest.approx(want, rel=1e-12, abs=1e-14)
    assert d.mean == pytest.approx(1 / a1 + 1 / a2, rel=1e-12)
    for q in (50, 95, 99):
        t = d.percentile(q)
        assert 1 - (a2 * math.exp(-a1 * t) - a1 * math.exp(-a2 * t)) / (a2 - a1) \
            == pytest.approx(q / 100, abs=1e-11)
    assert d.exactness == "exact" and d.method == "passage"


def test_one_mmc_queue_matches_the_sizing_closed_form():
    from qmodels.whatif.size import mmc_response_quantile

    net = qm.Network([qm.Queue("disk", 0.004, servers=3)],
                     [qm.Open("io", 500, visits={"disk": 1})])
    d = qm.response_time_distribution(net)
    for p in (0.5, 0.9, 0.95, 0.99):
        assert d.quantile(p) == pytest.approx(mmc_response_quantile(500, 0.004, 3, p),
                                              rel=1e-9)
    assert d.mean == pytest.approx(float(qm.mva(net).R["io"]), rel=1e-12)


def test_the_mean_is_the_open_product_form_mean_with_cross_traffic():
    # a second class joins at q1 and leaves after it: the path stays
    # overtake-free, and q1's sojourn rate counts both flows
    net = qm.Network([qm.Queue("q0", 0.1), qm.Queue("q1", 0.15), qm.Delay("z", 0.5)],
                     [qm.Open("o", 2.0, routing={"source": {"q0": 1}, "q0": {"q1": 1},
                                                 "q1": {"z": 1}, "z": {"sink": 1}}),
                      qm.Open("x", 3.0, visits={"q1": 1})])
    d = qm.response_time_distribution(net, "o")
    assert d.mean == pytest.approx(float(qm.mva(net).R["o"]), rel=1e-12)
    assert d.path == ("q0", "q1", "z")


@pytest.mark.slow
def test_simulated_percentiles_cover_the_closed_form():
    net = _tandem(2.0, (0.2, 0.3, 0.25))
    d = qm.response_time_distribution(net)
    s = qm.simulate(net, seed=4, horizon=40000.0, replications=10, progress=False)
    for q in (50, 95):
        e = s.percentiles["o"][q]
        # the simulator's histogram has 0.6 % resolution: widen by it
        assert e.low * 0.99 <= d.percentile(q) <= e.high * 1.01, (q, e, d.percentile(q))


def test_what_has_no_closed_form_is_refused_by_name():
    base = [qm.Queue("a", 0.2), qm.Queue("b", 0.3)]
    # visit ratios to two stations: random routing
    with pytest.raises(UnsupportedModelError, match="route="):
        qm.response_time_distribution(qm.Network(base, [qm.Open("o", 1, visits={"a": 1,
                                                                              "b": 1})]))
    # a c-server queue inside the path
    net = qm.Network([qm.Queue("a", 0.2, servers=2), qm.Queue("b", 0.3)],
                     [qm.Open("o", 1, routing={"source": {"a": 1}, "a": {"b": 1},
                                               "b": {"sink": 1}})])
    with pytest.raises(UnsupportedModelError, match="'a'.*overtake"):
        qm.response_time_distribution(net)
    # processor sharing
    net = qm.Network([qm.Queue("a", 0.2, discipline="ps")], [qm.Open("o", 1, visits={"a": 1})])
    with pytest.raises(UnsupportedModelError, match="'a'"):
        qm.response_time_distribution(net)
    # a bypass from a to c around b lets jobs overtake
    net = qm.Network([qm.Queue("a", 0.1), qm.Queue("b", 0.1), qm.Queue("c", 0.1)],
                     [qm.Open("o", 1, routing={"source": {"a": 1}, "a": {"b": 1},
                                               "b": {"c": 1}, "c": {"sink": 1}}),
                      qm.Open("y", 1, routing={"source": {"a": 1}, "a": {"c": 1},
                                               "c": {"sink": 1}})])
    with pytest.raises(UnsupportedModelError, match="overtake"):
        qm.response_time_distribution(net, "o")
    # non-Poisson arrivals break product form
    net = qm.Network(base[:1], [qm.Open("o", 1, visits={"a": 1},
                                        interarrival=qm.HyperExponential(4))])
    with pytest.raises(UnsupportedModelError, match="Poisson"):
        qm.response_time_distribution(net)
    # a closed class goes to the tagged job's chain (tests/test_passage_closed.py),
    # which refuses what it does not model by name
    net = qm.Network(base[:1], [qm.Closed("c", 2, visits={"a": 1})])
    assert qm.response_time_distribution(net).method == "ctmc-passage"
    net = qm.Network([qm.Queue("a", 0.2, discipline="lcfs-pr")],
                     [qm.Closed("c", 2, visits={"a": 1})])
    with pytest.raises(UnsupportedModelError, match="'a'.*lcfs-pr"):
        qm.response_time_distribution(net)


def test_unstable_station_is_the_open_solvers_error():
    net = qm.Network([qm.Queue("a", 0.6)], [qm.Open("o", 2, visits={"a": 1})])
    with pytest.raises(qm.UnstableError, match="'a'"):
        qm.response_time_distribution(net)


def test_label_and_dict():
    d = qm.response_time_distribution(_tandem())
    out = d.to_dict()
    assert out["exactness"] == "exact" and out["method"] == "passage"
    assert out["percentiles"]["95"] == pytest.approx(d.percentile(95))
    assert any("Walrand" in a for a in out["assumptions"])
    assert "p95" in repr(d)
    assert np.isfinite(d.quantile(0.999))


def test_small_matrix_exponential_matches_scipy_on_phase_type_generators():
    # the CDF's exp(T t) by scaling and squaring (Moler & Van Loan 2003)
    # against scipy's Pade approximant, on random sub-generators of the
    # upper-triangular shape a path's convolution builds
    from scipy.linalg import expm

    from qmodels.analytic.passage import _expm

    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 6):
        for _ in range(20):
            T = np.triu(rng.uniform(0, 50, (n, n)), 1)
            T[np.diag_indices(n)] = -(T.sum(axis=1) + rng.uniform(0.1, 100, n))
            for t in (1e-4, 0.05, 1.0, 20.0):
                ref = expm(T * t)
                assert np.allclose(_expm(T * t), ref, rtol=1e-10, atol=1e-14 * np.abs(ref).max())
