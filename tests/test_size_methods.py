"""qm.size through any method: the answer names its method and exactness,
and an approximate or simulated answer keeps a stated margin for the
method's error.

The reference for the exact case is the GI/M/1 closed form (Kleinrock,
*Queueing Systems* vol. 1, 1975, sec. 6.4, eqs. 6.21-6.22): R = S / (1 -
sigma), sigma the root in (0, 1) of sigma = A*(mu (1 - sigma)).  Solving
R = R_max for the arrival rate: sigma* = 1 - S / R_max, and the largest
rate is the one whose inter-arrival transform passes through
(mu (1 - sigma*), sigma*), found here by root finding on the transform
itself (no qmodels code).
"""

from __future__ import annotations

import math

import pytest
from scipy.optimize import brentq

import qmodels as qm

S = 0.6


def h2_lst(mean: float, scv: float):
    """LST of the balanced-means two-phase hyperexponential (Whitt 1982):
    p1 = (1 + sqrt((c2 - 1)/(c2 + 1)))/2, rates 2 p_i / m."""
    p1 = 0.5 * (1.0 + math.sqrt((scv - 1.0) / (scv + 1.0)))
    p2 = 1.0 - p1
    l1, l2 = 2 * p1 / mean, 2 * p2 / mean
    return lambda s: p1 * l1 / (l1 + s) + p2 * l2 / (l2 + s)


def gim1_largest_rate(S: float, scv: float, r_max: float) -> float:
    sigma = 1.0 - S / r_max
    mu = 1.0 / S
    return brentq(lambda lam: h2_lst(1.0 / lam, scv)(mu * (1.0 - sigma)) - sigma,
                  1e-6, (1.0 - 1e-9) / S, xtol=1e-14)


def _h2_queue(scv=4.0):
    return qm.Network([qm.Queue("q", S)], [
        qm.Open("j", 1.0, interarrival=qm.HyperExponential(scv), visits={"q": 1})])


@pytest.mark.parametrize("scv, r_max", [(4.0, 3.0), (8.0, 2.0)])
def test_gim1_sized_through_qna_matches_the_closed_form(scv, r_max):
    s = qm.size(_h2_queue(scv), f"R<={r_max}", vary="arrival_rate")
    ref = gim1_largest_rate(S, scv, r_max)
    assert s.answer == pytest.approx(ref, rel=1e-5)
    # exact either way: QNA's GI/M/1 root or the phase-type chain (H2 held
    # exactly), whichever auto reaches first
    assert s.method in ("qna", "ctmc") and s.exactness == "exact"
    assert s.margin == {}  # exact: no margin kept
    assert any("no margin needed" in n for n in s.notes)


def test_exact_only_still_refuses_outside_product_form():
    with pytest.raises(qm.UnsupportedModelError, match="class 'j'.*method='auto'"):
        qm.size(_h2_queue(), "R<=3", vary="arrival_rate", method="exact")


def test_product_form_is_still_sized_exactly():
    net = qm.Network([qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08)],
                     [qm.Closed("tx", 1, visits={"cpu": 1, "disk": 1})])
    s = qm.size(net, "R<=0.5")
    assert (s.answer, s.method, s.exactness) == (6, "exact", "exact")


def test_an_approximate_answer_keeps_the_measured_envelope_as_margin():
    # H2 arrivals into a tandem: q1 is GI/M/1 (exact), q2 sees QNA's
    # approximate departure stream, so the class R is approximate
    net = qm.Network([qm.Queue("q1", 0.6), qm.Queue("q2", 0.5)], [
        qm.Open("j", 1.0, interarrival=qm.HyperExponential(4.0), route=["q1", "q2"])])
    s = qm.size(net, "R<=6", vary="arrival_rate", method="qna")
    assert (s.method, s.exactness) == ("qna", "approximate")
    e = s.error["R"]["max"]
    assert s.error["validated"] and 0 < e < 1
    assert s.margin == {"R[j]": pytest.approx(e)}
    # the target is met by the approximation plus the margin: if QNA is off
    # by at most e (relative), the true R <= R_qna / (1 - e) <= 6
    R_at = qm.qna(s.network).R["j"]
    assert R_at / (1 - e) <= 6.0 * (1 + 1e-9)
    assert R_at / (1 - e) == pytest.approx(6.0, rel=1e-4)  # and it binds
    assert s.at["R[j]+margin"] == pytest.approx(R_at / (1 - e))
    assert any("margin kept" in n and "R[j]" in n for n in s.notes)


def test_a_simulated_answer_keeps_its_interval_as_margin():
    # M/M/1: R = S / (1 - lam S) <= 1 with S = 0.5 for lam <= 1 exactly; the
    # simulated search must stay on the safe side of that by its interval
    net = qm.Network([qm.Queue("q", 0.5)], [qm.Open("j", 1.0, visits={"q": 1})])
    s = qm.size(net, "R<=1", vary="arrival_rate", method="sim", seed=3, tol=1e-2)
    assert (s.method, s.exactness) == ("sim", "simulated")
    assert 0 < s.margin["R[j]"] < 0.2
    assert s.at["R[j]+margin"] <= 1.0
    assert 0.7 < s.answer < 1.0 + 0.05   # the exact answer is 1
