"""A one-class FCFS station with service phases kept as counts per phase
(qmodels.analytic._ctmc_chain.COMPACT_FCFS, kind 4 of the compiled
layout) instead of an ordered row of its jobs.

The references are independent of that form: exact MVA and the
convolution algorithm's marginals on a product-form network (the
exponential service written as a two-phase Coxian, so the phases are
there and the chain is a refinement of the exponential one), the
Pollaczek-Khinchine mean queue length of M/E_k/1 and M/H2/1, and the wide
form (an ordered row of the station's jobs, ``COMPACT_FCFS = False``) of
the same network, which is the same chain (the wide form's sorted jobs in
service and its count of identical waiting jobs are the compact form's
counts): the same number of states and the same answers to solver
precision, on networks that are not product form (Erlang and H2 FCFS
stations, c = 1 and 2), through the compiled build and through the Python
builder (a reachable capacity: blocking after service).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import qmodels as qm
from qmodels.analytic import _ctmc_chain as CH
from qmodels.analytic import _ctmc_fast as F
from qmodels.analytic import _ctmc_spec as SP
from qmodels.analytic import ctmc as C
from qmodels.analytic.phase_type import Coxian

# the open tandem truncates its open jobs at a few on purpose
pytestmark = pytest.mark.filterwarnings("ignore::qmodels.NumericalWarning")

FIELDS = ("class_throughput", "class_response_time", "station_throughput",
          "station_queue_length", "station_response_time", "station_utilization")


def _layout(net, open_limit=None):
    spec = SP._Spec(net, open_limit)
    chain = CH._Chain(spec)
    return spec, chain, F.layout(spec, chain)


def _wide(net, monkeypatch, **kw):
    """qm.ctmc of ``net`` with the FCFS stations kept as ordered rows."""
    with monkeypatch.context() as m:
        m.setattr(CH, "COMPACT_FCFS", False)
        return qm.ctmc(net, **kw)


def _assert_same_answers(a, b, rtol=1e-9):
    assert a.info["states"] == b.info["states"]
    for f in FIELDS:
        np.testing.assert_allclose(np.asarray(getattr(a, f)), np.asarray(getattr(b, f)),
                                   rtol=rtol, atol=1e-12, err_msg=f)
    for k, p in b.info["marginals"].items():
        q = a.info["marginals"][k]
        assert len(q) == len(p)
        np.testing.assert_allclose(q, p, rtol=rtol, atol=1e-12, err_msg=k)


# ---------------------------------------------------------------------------
# product form: an exponential service as a two-phase Coxian
# ---------------------------------------------------------------------------

def _exponential_in_two_phases(dist, mean, max_phases=None, who=""):
    """Exp(mu) as the Coxian (2 mu, q = 1/2, mu): its Laplace transform
    2mu/(s + 2mu) (1/2 + 1/2 mu/(s + mu)) = mu/(s + mu) (the identity
    lambda/(s + lambda) (s + mu)/mu = lambda/mu + (1 - lambda/mu)
    lambda/(s + lambda) of Cumani 1982 with lambda = 2 mu), so every
    service time is exactly exponential while the chain tracks two
    phases."""
    mu = 1.0 / mean
    return Coxian((2.0 * mu, mu), (0.5, 0.0))


def _product_form_net(N=6):
    # (the Erlang shapes only make the stations phased: the Coxian above
    # replaces them, so the service is exponential and the network BCMP)
    return qm.Network(
        [qm.Queue("cpu", 0.04, servers=2, distribution=qm.Erlang(2)),
         qm.Queue("disk", 0.05, distribution=qm.Erlang(2)),
         qm.Queue("net", 0.09, servers=3, distribution=qm.Erlang(2))],
        [qm.Closed("jobs", N, think_time=0.2,
                   visits={"cpu": 1.0, "disk": 0.7, "net": 0.5})])


def test_an_exponential_in_two_phases_matches_exact_mva_and_the_convolution(monkeypatch):
    net = _product_form_net()
    monkeypatch.setattr(SP, "coxian_of", _exponential_in_two_phases)
    spec, chain, lay = _layout(net)
    # every station is one-class FCFS with phases: counted by phase (kind 4)
    assert lay is not None and not lay.ordered.any() and (lay.kind == 4).all()
    res = qm.ctmc(net)
    monkeypatch.undo()
    exp = qm.Network(
        [qm.Queue("cpu", 0.04, servers=2), qm.Queue("disk", 0.05),
         qm.Queue("net", 0.09, servers=3)],
        [qm.Closed("jobs", 6, think_time=0.2, visits={"cpu": 1.0, "disk": 0.7, "net": 0.5})])
    ref = qm.mva(exp)
    for f in ("class_throughput", "station_queue_length", "station_utilization"):
        np.testing.assert_allclose(np.asarray(getattr(res, f)), np.asarray(getattr(ref, f)),
                                   rtol=1e-9, atol=1e-12, err_msg=f)
    conv = qm.convolution(exp, marginals=True)
    for k in ("cpu", "disk", "net"):
        p, q = qm.marginal(res, k), qm.marginal(conv, k)
        np.testing.assert_allclose(p, q[:len(p)], rtol=1e-8, atol=1e-12, err_msg=k)
        assert p.sum() == pytest.approx(1.0, abs=1e-12)


# ---------------------------------------------------------------------------
# M/E_k/1 and M/H2/1: Pollaczek-Khinchine
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape, scv", [(qm.Erlang(3), 1 / 3), (qm.HyperExponential(4.0), 4.0)])
def test_one_open_queue_matches_pollaczek_khinchine(shape, scv):
    """L = rho + rho^2 (1 + C_s^2) / (2 (1 - rho)), the Pollaczek-Khinchine
    mean value formula (Kleinrock, *Queueing Systems* vol. 1, 1975, sec.
    5.5; Gross, Shortle, Thompson & Harris 2008, sec. 5.1.1); truncated at
    400 jobs, whose tail at rho = 0.6 holds far below the tolerance."""
    lam, S = 1.0, 0.6
    net = qm.Network([qm.Queue("q", S, distribution=shape)],
                     [qm.Open("a", lam, routing={"source": {"q": 1}, "q": {"sink": 1}})])
    _, chain, lay = _layout(net, 400)
    # a column per phase (3 for the Erlang-3, 2 for the H2's Coxian) and the
    # open-job count, where the wide form had a slot per job (400)
    assert chain.compact[0] and lay.kind[0] == 4
    assert lay.D == int(lay.width[0]) + 1 <= 4
    res = qm.ctmc(net, open_limit=400)
    rho = lam * S
    L = rho + rho ** 2 * (1.0 + scv) / (2.0 * (1.0 - rho))
    assert float(np.asarray(res.station_queue_length).sum()) == pytest.approx(L, rel=1e-8)
    assert float(np.asarray(res.station_utilization).sum()) == pytest.approx(rho, rel=1e-9)


# ---------------------------------------------------------------------------
# not product form: the compact chain against the wide one
# ---------------------------------------------------------------------------

def _erlang_h2_net(c, N=7):
    return qm.Network(
        [qm.Queue("web", 0.05, servers=c, distribution=qm.Erlang(3)),
         qm.Queue("db", 0.08, servers=c, distribution=qm.HyperExponential(4.0)),
         qm.Queue("log", 0.03, distribution=qm.Erlang(2))],
        [qm.Closed("users", N, think_time=0.5, visits={"web": 1.0, "db": 1.2, "log": 0.5})])


@pytest.mark.parametrize("c", [1, 2])
def test_erlang_and_h2_fcfs_stations_give_the_wide_forms_answers(c, monkeypatch):
    net = _erlang_h2_net(c)
    _, chain, lay = _layout(net)
    assert (lay.kind == 4).all() and not lay.ordered.any()
    with monkeypatch.context() as m:
        m.setattr(CH, "COMPACT_FCFS", False)
        _, wchain, wlay = _layout(net)
    assert wlay.ordered[:3].all() and wlay.D > lay.D
    _assert_same_answers(qm.ctmc(net), _wide(net, monkeypatch))


def test_a_multiclass_fcfs_station_keeps_its_order_and_a_one_class_one_is_counted(monkeypatch):
    # the priority model of benchmarks/bench_ctmc.py --ph: a prio CPU of two
    # classes (ordered), each class's own H2 disk (one class: counted)
    net = qm.Network(
        [qm.Queue("cpu", 0.01, discipline="prio", distribution=qm.Erlang(2)),
         qm.Queue("d1", 0.03, servers=2, distribution=qm.HyperExponential(4.0)),
         qm.Queue("d2", 0.03, distribution=qm.HyperExponential(4.0))],
        [qm.Closed("fg", 4, think_time=0.2, visits={"cpu": 1, "d1": 1}, priority=0),
         qm.Closed("bg", 4, think_time=0.1, visits={"cpu": 1, "d2": 1}, priority=1,
                   service={"cpu": 0.02, "d2": 0.03})])
    _, chain, lay = _layout(net)
    assert chain.ordered[:3] == [True, False, False] and chain.compact[:3] == [False, True, True]
    _assert_same_answers(qm.ctmc(net), _wide(net, monkeypatch))


def test_a_fcfs_station_two_classes_visit_is_not_counted():
    net = qm.Network(
        [qm.Queue("q", 0.05, servers=2, distribution=qm.Erlang(2)), qm.Delay("z", 0.3)],
        [qm.Closed("a", 3, visits={"q": 1, "z": 1}),
         qm.Closed("b", 2, visits={"q": 1, "z": 1}, service={"q": 0.07, "z": 0.3})])
    _, chain, lay = _layout(net)
    assert chain.ordered[0] and not chain.compact[0] and lay.kind[0] == 1


def test_open_tandem_with_phased_arrivals_gives_the_wide_forms_answers(monkeypatch):
    net = qm.Network(
        [qm.Queue("a", 0.5, distribution=qm.Erlang(3)),
         qm.Queue("b", 0.4, servers=2, distribution=qm.HyperExponential(2.0))],
        [qm.Open("j", 1.0, interarrival=qm.HyperExponential(8.0),
                 routing={"source": {"a": 1}, "a": {"b": 1}, "b": {"sink": 1}})])
    _assert_same_answers(qm.ctmc(net, open_limit=12), _wide(net, monkeypatch, open_limit=12))


def test_blocking_after_service_in_the_python_builder(monkeypatch):
    # a reachable capacity: the Python builder; the Erlang-2 two-server
    # station before it holds blocked jobs (each keeping a server) in its
    # count of phase 0 by destination
    net = qm.Network(
        [qm.Queue("a", 0.05, servers=2, distribution=qm.Erlang(2)),
         qm.Queue("b", 0.08, capacity=2, distribution=qm.HyperExponential(3.0)),
         qm.Delay("z", 0.2)],
        [qm.Closed("j", 6, routing={"a": {"b": 1}, "b": {"z": 1}, "z": {"a": 1}})])
    spec, chain, lay = _layout(net)
    assert lay is None
    states = chain.build(10**5)[0]
    assert chain.compact[0] and not chain.ordered[0]
    assert any("->b" in C._describe(spec, chain, st) for st in states)
    res = qm.ctmc(net)
    _assert_same_answers(res, _wide(net, monkeypatch))


# ---------------------------------------------------------------------------
# the two builders, the estimate, the descriptions
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("c", [1, 2])
def test_the_compiled_build_is_the_python_builders_chain(c):
    net = _erlang_h2_net(c, N=5)
    spec, chain, _ = _layout(net)
    states, rows, cols, vals = chain.build(10**6)
    spec2, chain2, lay = _layout(net)
    S, n, r2, c2, v2, nnz, status = F.build(lay, 10**6, compiled=False)
    assert status == 0 and n == len(states)
    assert np.array_equal(S[:n], np.array([lay.encode(x) for x in states]))
    assert np.array_equal(r2[:nnz], rows) and np.array_equal(c2[:nnz], cols)
    np.testing.assert_allclose(v2[:nnz], vals, rtol=1e-15, atol=0)


@pytest.mark.parametrize("c, N", [(1, 9), (2, 9), (3, 5)])
def test_the_estimate_counts_the_compact_chain_from_above(c, N):
    """Each station's own states with n jobs: C(min(n, c) + P - 1, P - 1)
    (its jobs in service over its P phases); every placement of the N
    jobs over the think stage and the stations is reachable, so the
    count is the states' number itself."""
    net = _erlang_h2_net(c, N)
    spec, _, lay = _layout(net)
    n = F.build(lay, 10**6, compiled=False)[1]
    est, _, _, upper = F.estimate(spec, lay, 10**7)
    assert upper
    # by hand: sum over compositions (think, web, db, log) of the phase spreads
    P = (3, 2, 2)
    cs = (c, c, 1)
    by_hand = 0
    for a in range(N + 1):
        for b in range(N + 1 - a):
            for d in range(N + 1 - a - b):
                ways = 1
                for m, p, cc in zip((a, b, d), P, cs, strict=True):
                    ways *= math.comb(min(m, cc) + p - 1, p - 1)
                by_hand += ways
    assert est == by_hand == n


@pytest.mark.parametrize("c,N", [(1, 4), (2, 5), (1, 40)])
def test_a_counted_chain_is_ranked_each_state_by_a_rank_of_its_own(c, N):
    # parts: think, then web (3 phases), db (2), log (2) each as one part: the
    # compositions of N into 4 parts, C(N + 3, 3); and per station the
    # spread of at most c jobs over its phases past the first,
    # C(c + P - 1, P - 1) (log has one server)
    spec, _, lay = _layout(_erlang_h2_net(c, N))
    by_hand = math.comb(N + 3, 3) * math.comb(c + 2, 2) * math.comb(c + 1, 1) * 2
    assert lay.rsize == by_hand and lay.ranked(10**6)
    # every reachable state (the hashed build's) gets a rank of its own
    lay.rsize = 0
    states, n = F.build(lay, 10**6, compiled=N > 20)[:2]
    ranked = _layout(_erlang_h2_net(c, N))[2]
    acc = np.zeros(len(ranked.rstride), dtype=np.int64)
    ranks = [F._rank(states[i], ranked.rgrp, ranked.rbar, ranked.rstride, ranked.binom, acc,
                     ranked.rgrp2, ranked.rbar2) for i in range(n)]
    assert len(set(ranks)) == n and 0 <= min(ranks) and max(ranks) < by_hand
    assert n == F.estimate(spec, lay, 10**7)[0]
    # (the ranked build against the hashed one, state by state and rate by
    # rate: tests/test_ctmc_large.py, counted_phases)


def test_a_counted_station_of_many_servers_is_hashed():
    # c = 10 servers, N = 11 jobs: the ranks count C(12, 2) = 66 spreads of
    # web's jobs over its later phases (and 11 of db's) with every split of
    # the jobs over the stations, most of which leaves fewer than c jobs
    # there, so fewer spreads: the ranks outnumber the states by far
    spec, _, lay = _layout(_erlang_h2_net(10, 11))
    assert (lay.kind == 4).all()
    ranks = math.comb(14, 3) * math.comb(12, 2) * math.comb(11, 1) * 2
    states = F.estimate(spec, lay, 10**7)[0]
    assert ranks > F.RANK_SLACK * states and not lay.ranked(10**9)


def test_the_estimate_of_the_three_tier_model_at_n_40_fits_the_budget():
    # counted phase by phase as free columns it was C(48, 8) = 377 million
    # ranks; each station's jobs as one part and its phase spread apart,
    # C(43, 3) x 2 x 4 x 2
    from benchmarks.bench_ctmc import ph_web

    spec, _, lay = _layout(ph_web(40))
    est, _, nbytes, upper = F.estimate(spec, lay, 10**8)
    assert upper and est == 174_001
    assert lay.ranked(10**8) and lay.rsize == math.comb(43, 3) * 16
    assert nbytes < 2**30


def test_descriptions_name_the_phases_of_the_counted_station():
    net = _erlang_h2_net(2, N=3)
    spec, chain, lay = _layout(net)
    S, n, *_ = F.build(lay, 10**5, compiled=False)
    texts = [C._describe(spec, chain, lay.decode(S[i])) for i in range(n)]
    assert len(set(texts)) == n            # distinct states, distinct descriptions
    assert any("users#1" in t for t in texts) and any("users#2" in t for t in texts)
