"""The CTMC's answers with a low-variance shape held at the phase cap,
carried to the shape's own scv (``qmodels.analytic.ctmc._carried``:
the chains at Erlang-k, -k/2 and -k/4, Richardson in the fitted scv),
against exact references derived here: Pollaczek-Khinchine's M/D/1,
Cobham's M/D/1 with non-preemptive priorities, and the finite-source
M/D/1//N by its embedded chain at departures."""

import math

import numpy as np
import pytest
from scipy.stats import binom

import qmodels as qm
from qmodels.analytic.contract import law_violations


def md1_finite_source_X(N: int, Z: float, D: float) -> float:
    """Throughput of N jobs thinking an exponential time of mean Z, then
    served FCFS by one server for exactly D (the machine-repair model with
    deterministic repair, M/D/1//N).  Derived here: at a departure that
    leaves j jobs behind, the next service starts at once with j present
    (j >= 1; N - j think, the one that left among them) or, when j = 0,
    after the first of the N thinkers arrives (mean Z / N), with N - 1
    thinking; each thinker arrives within the service with probability
    p = 1 - exp(-D / Z), independently, so the number left at the next
    departure is j - 1 + Binomial(N - j, p) (or Binomial(N - 1, p) from
    j = 0).  With pi the stationary law of that chain, the mean time
    between departures is D + pi_0 Z / N and X its inverse (renewal
    reward; the embedded-chain method of Kleinrock 1975, sec. 5.5, for the
    finite source)."""
    p = 1.0 - math.exp(-D / Z)
    P = np.zeros((N, N))
    for j in range(N):
        present = max(j, 1)
        thinking = N - present
        for a in range(thinking + 1):
            P[j, present - 1 + a] += binom.pmf(a, thinking, p)
    A = np.vstack([P.T - np.eye(N), np.ones(N)])
    pi = np.linalg.lstsq(A, np.r_[np.zeros(N), 1.0], rcond=None)[0]
    return 1.0 / (D + pi[0] * Z / N)


def test_md1_mean_queue_is_pollaczek_khinchine():
    lam, S = 0.8, 1.0
    net = qm.Network([qm.Queue("q", S, distribution=qm.Deterministic())],
                     [qm.Open("o", lam, visits={"q": 1})])
    rho = lam * S
    L = rho + rho ** 2 / (2 * (1 - rho))       # P-K, scv 0 (Kleinrock 1975, eq. 5.105)
    r = qm.ctmc(net)
    assert r.info["extrapolation"]["phases"] == (20, 10, 5)
    assert float(r.Q["o"]) == pytest.approx(L, rel=1e-8)
    # the Erlang-20 chain alone overstates the mean wait by 1 + 1/20
    r20 = qm.ctmc(net, max_phases=20)
    assert float(r20.Q["o"]) == pytest.approx(rho + 1.05 * (L - rho), rel=1e-8)
    assert "extrapolation" not in r20.info
    assert r.info["approximation"] != r20.info["approximation"]


def test_md1_priority_waits_are_cobhams():
    # non-preemptive priority, deterministic service S = 1 for both classes:
    # W0 = sum lam_i E[S^2] / 2, W_k = W0 / ((1 - s_{k-1})(1 - s_k))
    # (Cobham 1954; Kleinrock, Queueing Systems vol. 2, 1976, eq. 3.30)
    lh, ll = 0.2, 0.3
    net = qm.Network([qm.Queue("p", 1.0, discipline="prio", distribution=qm.Deterministic())],
                     [qm.Open("hi", lh, visits={"p": 1}, priority=0),
                      qm.Open("lo", ll, visits={"p": 1}, priority=1)])
    W0 = (lh + ll) * 1.0 / 2
    r = qm.ctmc(net)
    assert float(r.R["hi"]) == pytest.approx(1 + W0 / (1 - lh), rel=1e-7)
    assert float(r.R["lo"]) == pytest.approx(1 + W0 / ((1 - lh) * (1 - lh - ll)), rel=1e-7)


@pytest.mark.parametrize("N,Z", [(3, 2.0), (5, 2.0), (8, 4.0)])
def test_finite_source_md1_throughput(N, Z):
    D = 1.0
    net = qm.Network([qm.Queue("q", D, distribution=qm.Deterministic())],
                     [qm.Closed("c", N, think_time=Z, visits={"q": 1})])
    X = md1_finite_source_X(N, Z, D)
    r = qm.ctmc(net)
    r20 = qm.ctmc(net, max_phases=20)
    err, err20 = abs(float(r.X["c"]) / X - 1), abs(float(r20.X["c"]) / X - 1)
    # measured: Erlang-20 1.0e-3 .. 3.9e-3 off, carried 8e-6 .. 1.6e-5
    assert err < 1e-4
    assert err < err20 / 20
    assert not law_violations(r)
    # job conservation holds for the carried answer: N = Q + X Z
    assert float(np.sum(r.station_queue_length)) + float(r.X["c"]) * Z == pytest.approx(N)
    # its marginal is a distribution whose mean is the queue
    p = qm.analytic.ctmc.marginal(r, "q")
    assert p.min() >= 0 and p.sum() == pytest.approx(1.0)
    assert float(np.arange(len(p)) @ p) == pytest.approx(float(r.Q["c"]), rel=1e-6)


def test_a_given_phase_cap_is_kept_and_its_error_is_unmeasured():
    net = qm.Network([qm.Queue("q", 1.0, distribution=qm.Deterministic()), qm.Queue("r", 0.5)],
                     [qm.Closed("c", 3, think_time=1.0,
                                routing={"q": {"r": 1.0}, "r": {"q": 1.0}})])
    r = qm.ctmc(net, max_phases=8)
    assert r.exactness == "approximate" and "extrapolation" not in r.info
    assert any("error unmeasured" in w for w in r.warnings)


def test_deterministic_arrivals_d_m_1_is_the_gi_m_1_root():
    # D/M/1: the arrival stream's constant interval held at Erlang-20, -10
    # and -5 and carried to scv 0.  Exact: sigma = A*(mu (1 - sigma)) with
    # A*(s) = exp(-s / lam) for a constant interval, R = 1 / (mu (1 - sigma))
    # (GI/M/1; Kleinrock 1975, sec. 6.4)
    from scipy.optimize import brentq

    lam, S = 1.0, 0.8
    mu = 1 / S
    net = qm.Network([qm.Queue("q", S)],
                     [qm.Open("o", lam, visits={"q": 1}, interarrival=qm.Deterministic())])
    sigma = brentq(lambda s: s - math.exp(-mu * (1 - s) / lam), 1e-12, 1 - 1e-12)
    R = 1 / (mu * (1 - sigma))
    r = qm.ctmc(net)
    r20 = qm.ctmc(net, max_phases=20)
    assert r.info["extrapolation"]["phases"] == (20, 10, 5)
    # measured: carried 8e-6 off, the Erlang-20 stream alone 4.3 %
    assert float(r.R["o"]) == pytest.approx(R, rel=1e-4)
    assert abs(float(r20.R["o"]) / R - 1) > 0.02


def test_d_d_1_is_not_carried_below_its_service_time():
    # D/D/1 at rho 0.807: no job waits, R = S exactly.  The chains with both
    # constants as Erlang-20, -10, -5 give R 0.893, 1.034, 1.351; every
    # polynomial through them undershoots S (quadratic 0.764, linear 0.752),
    # an answer no network can give (R below the no-contention time), so the
    # Erlang-20 chain's answer is kept and said to be
    S = 0.807
    net = qm.Network([qm.Queue("q", S, distribution=qm.Deterministic())],
                     [qm.Open("o", 1.0, visits={"q": 1}, interarrival=qm.Deterministic())])
    r = qm.ctmc(net)
    assert "extrapolation" not in r.info
    assert r.info["approximation"].startswith("the chain with its low-variance shapes at the "
                                              "phase cap")
    assert any(n.startswith("not extrapolated in the phases") for n in r.notes)
    assert float(r.R["o"]) >= S
    assert not law_violations(r)
