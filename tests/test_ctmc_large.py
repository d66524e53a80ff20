"""The exact CTMC at scale: the ranked build, the product-form start of the
solve, the memory refusal (qmodels.analytic._ctmc_fast, ctmc).

References are independent: exact MVA on product-form networks, the BCMP
product form written out by hand for a small chain, and the hashed build
(the states found by hashing their rows) for the ranked one.
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

import qmodels as qm
from qmodels.analytic import _ctmc_fast as F
from qmodels.analytic._ctmc_chain import _Chain
from qmodels.analytic._ctmc_spec import _Spec
from qmodels.errors import ProblemTooLargeError

C = importlib.import_module("qmodels.analytic.ctmc")


def closed_fcfs(N: int, K: int, ratio: float = 1.0):
    names = [f"q{k}" for k in range(K)]
    st = [qm.Queue(n, 0.01 * (ratio if (ratio != 1.0 and k == K - 1) else 1 + 0.1 * k))
          for k, n in enumerate(names)]
    return qm.Network(st, [qm.Closed("c", N, visits=dict.fromkeys(names, 1))])


def mixed():
    """Closed jobs with a think time, an open Erlang stream, PS stations
    with phase-type service, a delay: every column a count (ranked)."""
    return qm.Network(
        [qm.Queue("a", 0.1, discipline="ps", distribution=qm.Erlang(2)),
         qm.Queue("b", 0.05, discipline="ps", distribution=qm.HyperExponential(3.0)),
         qm.Delay("z", 0.3)],
        [qm.Closed("c", 3, visits={"a": 1, "b": 2, "z": 1}),
         qm.Open("o", 2.0, visits={"a": 1, "b": 1}, interarrival=qm.Erlang(2)),
         qm.Closed("d", 2, visits={"a": 1, "z": 1}, think_time=0.5)])


def counted_phases():
    """One closed class over FCFS stations with phases, two servers at two
    of them: each counted by phase (kind 4) and ranked, its jobs one part
    of the composition and its phase spread a digit of its own."""
    return qm.Network(
        [qm.Queue("web", 0.05, servers=2, distribution=qm.Erlang(3)),
         qm.Queue("db", 0.08, servers=2, distribution=qm.HyperExponential(4.0)),
         qm.Queue("log", 0.03, distribution=qm.Erlang(2))],
        [qm.Closed("users", 9, think_time=0.5, visits={"web": 1.0, "db": 1.2, "log": 0.5})])


def _layout(net, limit=None):
    spec = _Spec(net, limit)
    chain = _Chain(spec)
    return spec, F.layout(spec, chain)


@pytest.mark.parametrize("net,limit,compiled", [
    (closed_fcfs(6, 4), None, False), (mixed(), 1, False),
    (counted_phases(), None, False), (counted_phases(), None, True),
    # 49,000 states: numba's kernel (plain Python took 45 s per build)
    (mixed(), 4, True)])
def test_ranked_build_equals_the_hashed_one(net, limit, compiled):
    # the states found by rank and by hashing their rows: the same states in
    # the same order, the same rates
    spec, lay = _layout(net, limit)
    assert lay.ranked(10**6)
    a = F.build(lay, 10**6, compiled=compiled)
    spec2, lay2 = _layout(net, limit)
    lay2.rsize = 0          # no ranking: hashed
    assert not lay2.ranked(10**6)
    b = F.build(lay2, 10**6, compiled=compiled)
    n, nnz = a[1], a[5]
    assert (n, nnz) == (b[1], b[5])
    assert np.array_equal(a[0][:n], b[0][:n])
    for x, y in zip(a[2:5], b[2:5], strict=True):
        assert np.array_equal(x[:nnz], y[:nnz])


def test_ranks_count_the_compositions():
    # one closed class of N jobs over K single-phase queues: the ranks are
    # the C(N + K - 1, K - 1) compositions, each reached once
    spec, lay = _layout(closed_fcfs(7, 4))
    assert lay.rsize == math.comb(10, 3)
    states, n = F.build(lay, 10**6, compiled=False)[:2]
    acc = np.zeros(len(lay.rstride), dtype=np.int64)
    ranks = {F._rank(states[i], lay.rgrp, lay.rbar, lay.rstride, lay.binom, acc, lay.rgrp2,
                     lay.rbar2) for i in range(n)}
    assert n == math.comb(10, 3)
    assert ranks == set(range(n))


def test_an_order_keeping_station_is_hashed_not_ranked():
    # two classes at an FCFS station with phases: it keeps their order (one
    # class there would be counted by phase: tests/test_ctmc_compact_fcfs.py)
    net = qm.Network([qm.Queue("q", 1.0, distribution=qm.Erlang(2)), qm.Queue("r", 0.5)],
                     [qm.Closed("c", 4, visits={"q": 1, "r": 1}),
                      qm.Closed("d", 2, visits={"q": 1, "r": 1})])
    spec, lay = _layout(net)
    assert lay.ordered[0] and not lay.ranked(10**6)


def test_product_form_guess_is_the_bcmp_product_form_by_hand():
    # two FCFS queues (S = 0.1, 0.2) and a delay (Z = 0.5), 3 jobs, visits
    # 1 each: pi(n1, n2, n3) ~ 0.1^n1 0.2^n2 0.5^n3 / n3! (BCMP)
    net = qm.Network([qm.Queue("a", 0.1), qm.Queue("b", 0.2), qm.Delay("z", 0.5)],
                     [qm.Closed("c", 3, visits={"a": 1, "b": 1, "z": 1})])
    spec, lay = _layout(net)
    states, n = F.build(lay, 10**6, compiled=False)[:2]
    states = states[:n]
    g = C._product_form_guess(spec, lay, states)
    cols = [int(lay.off[k]) for k in range(3)]
    want = np.array([0.1 ** s[cols[0]] * 0.2 ** s[cols[1]] * 0.5 ** s[cols[2]]
                     / math.factorial(s[cols[2]]) for s in states])
    got = np.exp(g - g.max())
    assert got / got.sum() == pytest.approx(want / want.sum(), rel=1e-12)


def test_multiclass_ps_answer_equals_mva_from_the_product_form_start():
    # 3 classes of 6 jobs over 3 PS queues (28^3 = 21,952 states): the
    # iterative solve, started at the product form, equals exact MVA
    names = ("q0", "q1", "q2")
    base = {"a": (0.01, 0.02, 0.03), "b": (0.03, 0.01, 0.02), "c": (0.02, 0.03, 0.01)}
    net = qm.Network([qm.Queue(n, 0.01, discipline="ps") for n in names],
                     [qm.Closed(c, 6, visits=dict.fromkeys(names, 1),
                                service=dict(zip(names, S, strict=True)))
                      for c, S in base.items()])
    r = qm.ctmc(net)
    m = qm.mva(net)
    assert r.info["states"] == 28 ** 3
    for c in net.class_names:
        assert r.X[c] == pytest.approx(m.X[c], rel=1e-10)
    for s in net.station_names:
        assert r.Q[s] == pytest.approx(m.Q[s], rel=1e-10)


def test_non_product_form_guess_still_gives_the_exact_answer():
    # Erlang-2 FCFS service: not product form, so the start is only a
    # guess; the answer must equal the one solved without it
    net = qm.Network([qm.Queue("q0", 0.01, distribution=qm.Erlang(2)),
                      qm.Queue("q1", 0.012), qm.Queue("q2", 0.014)],
                     [qm.Closed("c", 70, visits={"q0": 1, "q1": 1, "q2": 1})])
    spec, lay = _layout(net)
    states, n, rows, cols, vals, nnz, _ = F.build(lay, 10**6, compiled=False)
    assert n > C.ITERATIVE_FROM
    g = C._product_form_guess(spec, lay, states[:n])
    pi_g, _ = C._stationary(n, rows[:nnz], cols[:nnz], vals[:nnz], str, None, g)
    pi_0, _ = C._stationary(n, rows[:nnz], cols[:nnz], vals[:nnz], str)
    assert np.max(np.abs(pi_g - pi_0)) <= 1e-11 * np.max(pi_0)


def test_refused_before_allocation_with_states_nonzeros_and_bytes(monkeypatch):
    # a budget too small for the chain: refused by the estimate, before the
    # build runs, the message naming the states, nonzeros and bytes
    net = closed_fcfs(20, 6)
    monkeypatch.setattr(F, "memory_budget", lambda: 10**6)

    def no_build(*a, **k):
        raise AssertionError("the build ran")

    monkeypatch.setattr(F, "build", no_build)
    with pytest.raises(ProblemTooLargeError) as e:
        qm.ctmc(net, max_states=10**6)
    msg = str(e.value)
    assert f"{math.comb(25, 5):,} states" in msg
    assert "nonzero rates" in msg and "GiB" in msg


@pytest.mark.slow
@pytest.mark.parametrize("N,K,ratio", [(26, 7, 1.0), (40, 6, 100.0)])
def test_a_million_state_closed_network_equals_mva(N, K, ratio):
    # 906,192 and 1,221,759 states (the second stiff: the bottleneck 100 x
    # slower, probabilities over ~80 orders of magnitude)
    net = closed_fcfs(N, K, ratio)
    r = qm.ctmc(net, max_states=2 * 10**6)
    m = qm.mva(net)
    assert r.info["states"] == math.comb(N + K - 1, K - 1)
    assert r.X["c"] == pytest.approx(m.X["c"], rel=1e-10)
    for s in net.station_names:
        assert r.Q[s] == pytest.approx(m.Q[s], rel=1e-10)
