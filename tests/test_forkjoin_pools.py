"""The fork-join with token pools (qmodels.analytic.forkjoin_pools).

References: hand derivations for one transaction (a one-token pool
serialises the tasks; k exponential tasks in parallel end after the mean
maximum S H_k), the decomposition for k = 1 (no fork: the fork-join is its
branch), and the simulator on a SPAX burst configuration (slow).  The exact
fork-join chain (qm.ctmc) refuses pools, so it cannot serve here.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest

import qmodels as qm
from qmodels.analytic.decomposition import decompose
from qmodels.analytic.forkjoin_pools import forkjoin_pools, refusal
from qmodels.errors import InvalidValueError, RoutingWarning, UnsupportedModelError

REL = 1e-6


def _burst(N, k, *, Z=1.0, S=(0.1, 0.2, 0.15), tokens=(2, 1), cpu=0.05):
    """think -> cpu -> fork-join of k tasks down release -> a -> b -> c,
    pool p1 held over a..b and p2 over b..c (SPAX's XNIF slot and switch
    port, smaller)."""
    return qm.Network(
        [qm.Queue("cpu", cpu), qm.Delay("release", 1e-9), qm.Queue("a", S[0]),
         qm.Queue("b", S[1]), qm.Queue("c", S[2]),
         qm.ForkJoin("fj", [["release", "a", "b", "c"]], tasks=k)],
        [qm.Closed("job", N, visits={"cpu": 1.0, "fj": 1.0}, think_time=Z)],
        pools=[qm.TokenPool("p1", tokens[0], "a", "b", path=("a", "b")),
               qm.TokenPool("p2", tokens[1], "b", "c", path=("b", "c"))])


@pytest.mark.parametrize("fork", ["chain", "fes"])
@pytest.mark.parametrize("k", [1, 2, 7])
def test_one_token_serialises_the_tasks(k, fork):
    """One job, a one-token pool over both queues of the branch: each task
    holds the token for S_a + S_b (mean), one after the other, so the
    fork-join takes k (S_a + S_b) and X = 1 / (Z + k (S_a + S_b)); the
    tasks wait for the token (k - 1) + (k - 2) + ... + 0 holding times per
    cycle, k (k - 1) / 2 (S_a + S_b) task-seconds."""
    Sa, Sb, Z = 0.1, 0.25, 2.0
    net = qm.Network(
        [qm.Delay("release", 1e-9), qm.Queue("a", Sa), qm.Queue("b", Sb),
         qm.ForkJoin("fj", [["release", "a", "b"]], tasks=k)],
        [qm.Closed("job", 1, visits={"fj": 1}, think_time=Z)],
        pools=[qm.TokenPool("slot", 1, "a", "b", path=("a", "b"))])
    r = forkjoin_pools(net, fork=fork)
    cycle = Z + k * (Sa + Sb)
    assert float(r.X["job"]) == pytest.approx(1.0 / cycle, rel=REL)
    assert r.info["pools"]["slot"]["waiting"] == pytest.approx(
        k * (k - 1) / 2 * (Sa + Sb) / cycle, rel=REL, abs=1e-12)
    assert r.info["pools"]["slot"]["held"] == pytest.approx(k * (Sa + Sb) / cycle, rel=REL)
    assert float(r.Q["fj"]) == pytest.approx(k * (Sa + Sb) / cycle, rel=REL)
    assert r.exactness == "approximate" and r.method == "forkjoin-pools"


@pytest.mark.parametrize("fork", ["chain", "fes"])
@pytest.mark.parametrize("k", [2, 5, 12])
def test_parallel_tasks_end_after_the_mean_maximum(k, fork):
    """One job, k tasks through a delay of mean S (the pool, k tokens, never
    binds): the join waits for the largest of k independent exponentials,
    of mean S H_k (order statistics; Nelson & Tantawi 1988)."""
    S, Z = 0.4, 1.0
    net = qm.Network(
        [qm.Delay("release", 1e-9), qm.Delay("d", S),
         qm.ForkJoin("fj", [["release", "d"]], tasks=k)],
        [qm.Closed("job", 1, visits={"fj": 1}, think_time=Z)],
        pools=[qm.TokenPool("p", k, "d", "d", path=("d",))])
    H = sum(1.0 / i for i in range(1, k + 1))
    assert float(forkjoin_pools(net, fork=fork).X["job"]) == pytest.approx(1.0 / (Z + S * H),
                                                                          rel=REL)


@pytest.mark.parametrize("fork", ["chain", "fes"])
@pytest.mark.parametrize("N", [1, 4, 12])
def test_one_task_is_the_decomposition(N, fork):
    """k = 1: the fork-join is its branch, so the answer is the
    decomposition's of the network with the branch's stations visited
    directly (the branch's flow-equivalent server composes exactly with
    the decomposition's, Chandy, Herzog & Woo 1975)."""
    net = _burst(N, 1)
    flat = qm.Network(
        [qm.Queue("cpu", 0.05), qm.Delay("release", 1e-9), qm.Queue("a", 0.1),
         qm.Queue("b", 0.2), qm.Queue("c", 0.15)],
        [qm.Closed("job", N, visits={"cpu": 1, "release": 1, "a": 1, "b": 1, "c": 1},
                   think_time=1.0)],
        pools=[qm.TokenPool("p1", 2, "a", "b", path=("a", "b")),
               qm.TokenPool("p2", 1, "b", "c", path=("b", "c"))])
    r = forkjoin_pools(net, fork=fork)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RoutingWarning)
        d = decompose(flat)
    assert float(r.X["job"]) == pytest.approx(float(d.X["job"]), rel=REL)
    for s in ("cpu", "a", "b", "c"):
        assert float(r.Q[s]) == pytest.approx(float(d.Q[s]), rel=1e-5, abs=1e-9)
    for p in ("p1", "p2"):
        assert r.info["pools"][p]["waiting"] == pytest.approx(
            d.info["pools"][p]["waiting"], rel=1e-5, abs=1e-9)
        assert r.info["pools"][p]["held"] == pytest.approx(
            d.info["pools"][p]["held"], rel=1e-5, abs=1e-9)


def _batch_chain(N, k, Z, S):
    """The exact chain, built by hand, of N jobs that think (mean Z) and
    fork k tasks into one exponential FCFS server (mean S) held by a
    one-token pool: state (j, r) = j jobs forked, r tasks left of the
    oldest (tasks leave in order); returns (X, mean tasks waiting)."""
    states = [(0, 0)] + [(j, r) for j in range(1, N + 1) for r in range(1, k + 1)]
    ix = {s: i for i, s in enumerate(states)}
    G = np.zeros((len(states), len(states)))
    for (j, r), i in ix.items():
        if j < N:
            G[i, ix[(j + 1, r if j else k)]] += (N - j) / Z
        if j:
            nxt = (j, r - 1) if r > 1 else ((j - 1, k) if j > 1 else (0, 0))
            G[i, ix[nxt]] += 1.0 / S
        G[i, i] = -G[i].sum()
    A = np.vstack([G.T, np.ones(len(states))])
    b = np.zeros(len(states) + 1)
    b[-1] = 1.0
    pi = np.linalg.lstsq(A, b, rcond=None)[0]
    X = sum(p * (N - j) / Z for p, (j, r) in zip(pi, states))
    wait = sum(p * max((j - 1) * k + r - 1, 0) for p, (j, r) in zip(pi, states))
    return X, wait


@pytest.mark.parametrize("N,k", [(2, 3), (3, 4), (5, 2)])
def test_chain_is_exact_for_a_server_fed_by_think_time(N, k):
    """Jobs that think and fork k tasks into one exponential server (a
    one-token pool over one queue: the token is the server's place): the
    branch's rate mu = 1 / S is exact, the rest (a delay) sends jobs at
    exactly (N - j) / Z, so the method's chain is the exact chain, here
    built by hand as a generator matrix and solved directly."""
    S, Z = 0.3, 2.0
    net = qm.Network(
        [qm.Delay("release", 1e-9), qm.Queue("a", S),
         qm.ForkJoin("fj", [["release", "a"]], tasks=k)],
        [qm.Closed("job", N, visits={"fj": 1}, think_time=Z)],
        pools=[qm.TokenPool("slot", 1, "a", "a", path=("a",))])
    X, wait = _batch_chain(N, k, Z, S)
    r = forkjoin_pools(net)
    assert float(r.X["job"]) == pytest.approx(X, rel=1e-6)
    assert r.info["pools"]["slot"]["waiting"] == pytest.approx(wait, rel=1e-6)
    # the fork-join as an FES loses the drain's low variability: not exact here
    f = forkjoin_pools(net, fork="fes")
    assert abs(f.info["pools"]["slot"]["waiting"] - wait) > 1e-3 * wait


def test_solve_answers_a_fork_join_with_pools():
    """qm.solve takes the method where nothing more exact answers, and the
    answer keeps the laws (the contract checks them) and the bounds."""
    net = _burst(6, 4)
    r = qm.solve(net)
    assert r.method == "forkjoin-pools" and r.exactness == "approximate"
    # no faster than the most utilised pool or queue allows: p2 is held for
    # S_b + S_c per task, one token, k tasks per job
    assert float(r.X["job"]) <= 1.0 / (4 * (0.2 + 0.15)) * (1 + 1e-9)
    assert r.info["pools"]["p2"]["utilization"] <= 1.0 + 1e-9
    # more tokens never slow it down
    more = forkjoin_pools(_burst(6, 4, tokens=(4, 2)))
    assert float(more.X["job"]) >= float(r.X["job"]) * (1 - 1e-9)


def test_refusals_name_what_is_not_modelled():
    base = _burst(3, 2)
    two = qm.Network(
        list(base.stations) + [qm.Delay("r2", 1e-9), qm.Queue("e", 0.1),
                               qm.ForkJoin("fj2", [["r2", "e"]], tasks=2)],
        [qm.Closed("job", 3, visits={"cpu": 1, "fj": 1, "fj2": 1})], pools=list(base.pools))
    with pytest.raises(UnsupportedModelError, match="one fork-join"):
        forkjoin_pools(two)
    with pytest.raises(UnsupportedModelError, match="forkjoin-pools: .*one fork-join"):
        qm.solve(two)
    with pytest.raises(InvalidValueError, match="fork must be"):
        forkjoin_pools(base, fork="max")
    branches = qm.Network(
        [qm.Delay("r1", 1e-9), qm.Queue("a", 0.1), qm.Delay("r2", 1e-9), qm.Queue("b", 0.1),
         qm.ForkJoin("fj", [["r1", "a"], ["r2", "b"]], tasks=2)],
        [qm.Closed("job", 2, visits={"fj": 1})],
        pools=[qm.TokenPool("p", 1, "a", "a", path=("a",))])
    with pytest.raises(UnsupportedModelError, match="2 branches"):
        forkjoin_pools(branches)
    outside = qm.Network(
        list(base.stations) + [qm.Queue("x", 0.1), qm.Queue("y", 0.1)],
        [qm.Closed("job", 3, visits={"cpu": 1, "fj": 1, "x": 1, "y": 1})],
        pools=list(base.pools) + [qm.TokenPool("q", 1, "x", "y", path=("x", "y"))])
    with pytest.raises(UnsupportedModelError, match="'q'.*not held along the branch"):
        forkjoin_pools(outside)
    classes = qm.Network(
        list(base.stations),
        [qm.Closed("job", 3, visits={"cpu": 1, "fj": 1}),
         qm.Closed("other", 2, visits={"cpu": 1})], pools=list(base.pools))
    with pytest.raises(UnsupportedModelError, match="one closed class"):
        forkjoin_pools(classes)
    no_pool = qm.Network(list(base.stations), [qm.Closed("job", 3, visits={"cpu": 1, "fj": 1})])
    assert "no token pool" in refusal(no_pool)
    with pytest.raises(UnsupportedModelError, match="no token pool"):
        forkjoin_pools(no_pool)
    # a fork-join without pools still goes to the fork-join methods
    plain = qm.Network(
        [qm.Queue("cpu", 0.05), qm.Queue("a", 0.1), qm.Queue("b", 0.2),
         qm.ForkJoin("fj", [["a"], ["b"]])],
        [qm.Closed("job", 3, visits={"cpu": 1, "fj": 1})])
    assert qm.solve(plain).method != "forkjoin-pools"


@pytest.mark.slow
@pytest.mark.parametrize("p_io,q_tol", [(0.1, 0.15), (0.4, 0.02)])
def test_spax_burst_against_the_simulator(p_io, q_tol):
    """The SPAX burst (160 transactions, k = 32 packets, 4 XNIF slots, one
    switch-port place), m = 0, unlimited disks: TPS within 5 % of the
    simulator (plus its 95 % half-width); the packets waiting for an XNIF
    slot within 15 % at light load (measured -9 %) and 2 % saturated
    (measured +0.2 %), plus the half-width."""
    from qmodels.cases import spax

    q = dataclasses.replace(spax.Params(), p_io=p_io, miss_rate=0.0, disks_per_ion=0)
    net = spax.burst_network(q)
    a = qm.solve(net)
    assert a.method == "forkjoin-pools"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RoutingWarning)
        s = qm.simulate(net, seed=3, horizon=60.0, replications=4, progress=False)
    x, hw = float(s.X["tx"].mean), float(s.X["tx"].half_width)
    assert math.isfinite(x) and x > 0
    assert abs(float(a.X["tx"]) - x) <= 0.05 * x + hw
    w = s.pools["xnif"]["Q"]
    assert abs(a.info["pools"]["xnif"]["waiting"] - float(w.mean)) <= \
        q_tol * float(w.mean) + float(w.half_width)


@pytest.mark.slow
def test_small_burst_against_the_simulator():
    """Two jobs, four tasks each through three queues under two overlapping
    pools (2 and 1 tokens), where the fork-join weighs on X: the chain
    within 3 % of the simulated X (measured +1.1 %; the FES of the
    fork-join, -3.2 %) and the tasks waiting for the first pool within
    10 % (measured -5.6 %), plus the half-widths."""
    net = _burst(2, 4)
    a = forkjoin_pools(net)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RoutingWarning)
        s = qm.simulate(net, seed=7, horizon=8000.0, replications=5, progress=False)
    x, hx = float(s.X["job"].mean), float(s.X["job"].half_width)
    assert abs(float(a.X["job"]) - x) <= 0.03 * x + hx
    w = s.pools["p1"]["Q"]
    assert abs(a.info["pools"]["p1"]["waiting"] - float(w.mean)) <= \
        0.10 * float(w.mean) + float(w.half_width)
