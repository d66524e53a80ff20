"""The lattice multigrid of the CTMC's large closed chains
(:mod:`qmodels.analytic._lattice_mg`): its aggregates, and its answers
against the other solvers (the chain's own LU or D-ILU solve, exact MVA)."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qmodels as qm
from qmodels.analytic import _lattice_mg as mg
from qmodels.analytic import ctmc as ctmc_mod

pytest.importorskip("numba")


def _hand_lattice(N):
    """States of a hand-made closed lattice: station 0 with two phase
    columns (a0, a1), stations 1 and 2 one column each, a0 + a1 + b + c = N
    and at most one job in phase 2 (a1 <= 1, a1 = 0 when station 0 is
    empty), as an FCFS station counted by phase keeps them."""
    rows = []
    for a, b in itertools.product(range(N + 1), repeat=2):
        c = N - a - b
        if c < 0:
            continue
        rows.append((a, 0, b, c))
        if a >= 1:
            rows.append((a - 1, 1, b, c))
    return np.array(rows, dtype=np.int64)


def test_the_first_level_lumps_exactly_the_states_of_equal_station_totals():
    st = _hand_lattice(30)
    maps = mg.coarsening(st, off=[0, 2, 3], width=[2, 1, 1], coarsest=20)
    assert len(maps) >= 2
    agg = maps[0]
    totals = np.stack([st[:, 0] + st[:, 1], st[:, 2], st[:, 3]], axis=1)
    # same aggregate <=> same totals (checked both ways through the groups)
    _, by_totals = np.unique(totals, axis=0, return_inverse=True)
    pairs = set(zip(agg.tolist(), by_totals.ravel().tolist()))
    assert len(pairs) == agg.max() + 1 == by_totals.max() + 1
    # every later level lumps (fewer aggregates) and numbers them 0..m-1
    size = len(st)
    for a in maps:
        assert len(a) == size
        assert set(a.tolist()) == set(range(a.max() + 1))
        assert a.max() + 1 < size
        size = a.max() + 1
    assert size <= 20 or len(maps) > 2


def test_halving_pairs_lumps_a_closed_lattice_where_one_count_alone_would_not():
    # three exponential stations: no phases to merge; the closed lattice
    # a + b + c = N lumps only when two counts are halved together
    N = 60
    st = np.array([(a, b, N - a - b) for a in range(N + 1) for b in range(N + 1 - a)])
    maps = mg.coarsening(st, off=[0, 1, 2], width=[1, 1, 1], coarsest=50)
    assert len(maps) >= 2
    first = maps[0]
    # the key (a//2, b//2, c): c and so a + b fixed, a pair of states at most
    # in an aggregate, and a step lumps at least STEP_GAIN of the states
    assert np.bincount(first).max() == 2
    assert first.max() + 1 <= (1 - mg.STEP_GAIN) * len(st)
    for i, j in ((0, 1), (60, 61)):
        if first[i] == first[j]:
            assert st[i, 2] == st[j, 2]
    key = np.stack([st[:, 0] // 2, st[:, 1] // 2, st[:, 2]], axis=1)
    _, want = np.unique(key, axis=0, return_inverse=True)
    assert len(set(zip(first.tolist(), want.ravel().tolist()))) == first.max() + 1


def test_restrict_drops_emptied_aggregates_and_renumbers():
    maps = [np.array([0, 0, 1, 2, 2]), np.array([0, 1, 1])]
    out = mg.restrict(maps, np.array([0, 1, 3, 4]))
    # state 2 alone made aggregate 1: it goes, aggregate 2 becomes 1;
    # level 1's aggregates 0 and 2 are left, in different level-2 aggregates
    assert out[0].tolist() == [0, 0, 1, 1]
    assert out[1].tolist() == [0, 1]


def _three_tier(N):
    # a closed three-tier model that is not product form: Erlang, Erlang and
    # H2 service at FCFS queues (benchmarks.bench_ctmc.ph_web)
    return qm.Network(
        [qm.Queue("web", 0.02, distribution=qm.Erlang(2)),
         qm.Queue("app", 0.03, distribution=qm.Erlang(4)),
         qm.Queue("disk", 0.025, distribution=qm.HyperExponential(4.0))],
        [qm.Closed("users", N, think_time=1.0, visits={"web": 1, "app": 1, "disk": 1})])


@pytest.fixture
def small_mg(monkeypatch):
    """The multigrid from a few thousand states on (its default threshold
    is 100,000), with few aggregates on the coarsest level."""
    monkeypatch.setattr(mg, "MG_STATES", 1_000)
    monkeypatch.setattr(mg, "COARSEST", 150)


def test_multigrid_answers_the_three_tier_chain_as_the_other_solvers(small_mg, monkeypatch):
    got = qm.ctmc(_three_tier(14), max_states=10**6)
    assert got.info["linear_solver"] == "mg-bicgstab"
    assert any("population lattice" in n for n in got.notes)
    monkeypatch.setattr(mg, "MG_STATES", 10**9)
    ref = qm.ctmc(_three_tier(14), max_states=10**6)
    assert ref.info["linear_solver"] != "mg-bicgstab"
    assert got.X["users"] == pytest.approx(ref.X["users"], rel=1e-10)
    for s in ("web", "app", "disk"):
        assert got.Q[s] == pytest.approx(ref.Q[s], rel=1e-9)


def _product_form_net():
    return qm.Network(
        [qm.Queue("a", 0.02), qm.Queue("b", 0.05), qm.Queue("c", 0.03, servers=2),
         qm.Delay("z", 0.5)],
        [qm.Closed("jobs", 40, visits={"a": 2, "b": 1, "c": 1, "z": 1})])


def test_a_chain_with_a_product_form_start_is_left_to_ilu(small_mg):
    # from the product form the ILU(0) solve needs a few iterations and no
    # set-up: the multigrid is not offered
    got = qm.ctmc(_product_form_net(), max_states=10**6)
    assert got.info["states"] > 1_000
    assert got.info["linear_solver"] != "mg-bicgstab"


def test_multigrid_answers_a_product_form_network_as_exact_mva(small_mg, monkeypatch):
    # without the product-form start the multigrid solves it, from 0
    monkeypatch.setattr(ctmc_mod, "_product_form_guess", lambda *a: None)
    net = _product_form_net()
    got = qm.ctmc(net, max_states=10**6)
    assert got.info["linear_solver"] == "mg-bicgstab"
    ref = qm.mva(net)
    assert got.X["jobs"] == pytest.approx(ref.X["jobs"], rel=1e-10)
    for s in ("a", "b", "c", "z"):
        assert got.Q[s] == pytest.approx(ref.Q[s], rel=1e-10)


def test_a_multigrid_answer_the_residual_refuses_falls_back_to_ilu(small_mg, monkeypatch):
    def wrong(A, b, maps, budget, x0=None, rtol=1e-14, maxiter=mg.MG_MAXITER, **_kw):
        return np.ones(A.shape[0]), 1
    monkeypatch.setattr(mg, "mg_bicgstab", wrong)
    got = qm.ctmc(_three_tier(14), max_states=10**6)
    assert got.info["linear_solver"] != "mg-bicgstab"
    monkeypatch.setattr(mg, "MG_STATES", 10**9)
    ref = qm.ctmc(_three_tier(14), max_states=10**6)
    assert got.X["users"] == pytest.approx(ref.X["users"], rel=1e-12)


def test_an_order_keeping_station_gets_no_lattice(small_mg, monkeypatch):
    # two classes of different service at an FCFS queue: its columns keep
    # the order of the jobs (codes, not counts), so no aggregates are made
    net = qm.Network(
        [qm.Queue("cpu", 0.02), qm.Queue("disk", 0.03)],
        [qm.Closed("a", 5, think_time=0.5, visits={"cpu": 1, "disk": 1}),
         qm.Closed("b", 5, think_time=0.5, visits={"cpu": 1, "disk": 1},
                   service={"cpu": 0.04, "disk": 0.01})])
    called = []
    monkeypatch.setattr(mg, "coarsening", lambda *a, **k: called.append(1) or [])
    got = qm.ctmc(net, max_states=10**6)
    assert got.info["linear_solver"] != "mg-bicgstab"
    assert called == [] or got.info["build"] != "compiled"


def test_the_multigrid_returns_none_without_a_hierarchy():
    import scipy.sparse as sp

    A = sp.csr_matrix(np.array([[-2.0, 1.0], [1.0, -2.0]]))
    assert mg.mg_bicgstab(A, np.ones(2), [], 10**9) is None
    assert ctmc_mod._SOLVER_NAMES["mg-bicgstab"].startswith("lattice-multigrid")


def test_the_galerkin_kernel_is_r_a_p():
    import scipy.sparse as sp

    rng = np.random.default_rng(7)
    n, nc = 60, 13
    A = sp.random(n, n, density=0.15, random_state=11, format="csr") + sp.eye(n)
    A.sort_indices()
    agg = rng.permutation(np.arange(n) % nc).astype(np.int64)
    w = rng.random(n) + 0.5
    ip, ix, data = mg._galerkin(A.indptr, A.indices, A.data, agg, w, nc)
    got = sp.csr_matrix((data, ix, ip), shape=(nc, nc)).toarray()
    P = np.zeros((n, nc))
    P[np.arange(n), agg] = w
    R = np.zeros((nc, n))
    R[agg, np.arange(n)] = 1.0
    np.testing.assert_allclose(got, R @ A.toarray() @ P, rtol=1e-13, atol=1e-15)
    for a in range(nc):                     # each row's indices sorted
        assert np.all(np.diff(ix[ip[a]:ip[a + 1]]) > 0)


def _captured(net, monkeypatch):
    """(Q, lattice, pi) of the chain qm.ctmc solves for ``net``."""
    from qmodels.analytic import _ctmc_solve as LA

    seen = {}
    original = LA.stationary_pinned

    def grab(Q, budget, guess=None, lattice=None):
        got = original(Q, budget, guess, lattice)
        seen.update(Q=Q, lattice=lattice, pi=got[0])
        return got

    monkeypatch.setattr(LA, "stationary_pinned", grab)
    qm.ctmc(net, max_states=10**6)
    return seen["Q"], seen["lattice"], seen["pi"]


def test_the_pin_is_a_state_the_chain_makes_probable(small_mg, monkeypatch):
    # the smallest exit rate is an improbable state here (39 jobs at the
    # H2 disk's slow phase at 40 users; 13 at 14): the aggregated chain's
    # choice is not
    Q, lattice, pi = _captured(_three_tier(14), monkeypatch)
    assert lattice
    p = mg.probable_state(Q, lattice)
    low = int(np.argmin(-Q.diagonal()))
    assert pi[low] < 1e-3 * pi.max()
    assert pi[p] >= 1e-2 * pi.max()


def test_the_pinned_levels_made_from_the_unpinned_ones_equal_galerkin_of_the_pinned_system(
        small_mg, monkeypatch):
    # pinned_levels takes the pinned state's row and column out of the
    # unpinned chain's Galerkin products; here against the products of the
    # pinned system made afresh (_setup's own way), at pins whose aggregate
    # holds other states and at one alone in its first-level aggregate
    # (dropped, as restrict drops it)
    import scipy.sparse as sp

    from qmodels.analytic import _ctmc_solve as LA

    Q, lattice, _pi = _captured(_three_tier(14), monkeypatch)
    Q = sp.csc_matrix(Q)
    levels = mg.unpinned_levels(Q, lattice)
    first = np.bincount(lattice[0])
    alone = np.flatnonzero(first[lattice[0]] == 1)
    assert alone.size, "no state alone in its first-level aggregate to test"
    shared = np.flatnonzero(first[lattice[0]] > 1)
    for p in (int(alone[0]), int(shared[0]), int(shared[-1]), int(np.argmax(_pi))):
        A, b, rest = LA.pinned_system(Q, p)
        maps = mg.restrict(lattice, rest)
        got = mg.pinned_levels(Q, lattice, levels, p, b)
        ip, ix, data = A.indptr, A.indices, A.data
        w = 1.0 / np.abs(A.diagonal())
        assert len(got) == len(maps)
        for agg, (gip, gix, gdata) in zip(maps, got, strict=True):
            nc = int(agg.max()) + 1
            ip, ix, data = mg._galerkin(ip, ix, data, agg, w, nc)
            w = np.ones(nc)
            want = sp.csr_matrix((data, ix, ip), shape=(nc, nc)).toarray()
            have = sp.csr_matrix((gdata, gix, gip), shape=(nc, nc)).toarray()
            scale = np.abs(want).max()
            np.testing.assert_allclose(have, want, rtol=0, atol=1e-13 * scale)
            for a in range(nc):                 # each row's indices sorted
                assert np.all(np.diff(gix[gip[a]:gip[a + 1]]) > 0)


phase_type = [("erlang", 2), ("erlang", 3), ("h2", 3.0), ("h2", 6.0)]
shapes = st.sampled_from([("exp", 1.0)] + phase_type)


def _dist(shape):
    kind, v = shape
    return {"exp": None, "erlang": lambda: qm.Erlang(v),
            "h2": lambda: qm.HyperExponential(v)}[kind]


@settings(max_examples=12, deadline=None)
@given(st.tuples(st.floats(0.005, 0.05), st.sampled_from(phase_type)),
       st.lists(st.tuples(st.floats(0.005, 0.05), shapes), min_size=1, max_size=2),
       st.integers(15, 30), st.floats(0.2, 1.0))
def test_multigrid_and_ilu_agree_on_random_closed_phase_type_networks(first, rest, N, think):
    # every chain here (136 states and more; one queue at least not
    # exponential, so no product form starts the solve) solved iteratively,
    # by the multigrid first, then again without it
    queues = [first] + rest
    stations = []
    for k, (s, shape) in enumerate(queues):
        make = _dist(shape)
        stations.append(qm.Queue(f"q{k}", s) if make is None
                        else qm.Queue(f"q{k}", s, distribution=make()))
    net = qm.Network(stations, [qm.Closed("jobs", N, think_time=think,
                                          visits={f"q{k}": 1 for k in range(len(queues))})])
    saved = mg.MG_STATES, mg.COARSEST, ctmc_mod.ITERATIVE_FROM
    try:
        mg.MG_STATES, mg.COARSEST, ctmc_mod.ITERATIVE_FROM = 100, 30, 100
        got = qm.ctmc(net, max_states=10**6)
        mg.MG_STATES = 10**12
        ref = qm.ctmc(net, max_states=10**6)
    finally:
        mg.MG_STATES, mg.COARSEST, ctmc_mod.ITERATIVE_FROM = saved
    assert got.info["linear_solver"] == "mg-bicgstab"
    assert ref.info["linear_solver"] != "mg-bicgstab"
    assert got.X["jobs"] == pytest.approx(ref.X["jobs"], rel=1e-9)
    for k in range(len(queues)):
        assert got.Q[f"q{k}"] == pytest.approx(ref.Q[f"q{k}"], rel=1e-8, abs=1e-12)


def test_a_breakdown_near_the_answer_starts_afresh(monkeypatch):
    # on this chain of 256 states BiCGSTAB's inner product rh.v came out
    # exactly 0 at iteration 21, within 2e-12 of the answer: the solve
    # starts afresh from its iterate instead of giving up
    monkeypatch.setattr(mg, "MG_STATES", 100)
    monkeypatch.setattr(mg, "COARSEST", 30)
    monkeypatch.setattr(ctmc_mod, "ITERATIVE_FROM", 100)
    net = qm.Network([qm.Queue("q0", 0.03125, distribution=qm.Erlang(2)),
                      qm.Queue("q1", 0.03125)],
                     [qm.Closed("jobs", 15, think_time=1.0, visits={"q0": 1, "q1": 1})])
    got = qm.ctmc(net)
    assert got.info["states"] == 256
    assert got.info["linear_solver"] == "mg-bicgstab"
    monkeypatch.setattr(ctmc_mod, "ITERATIVE_FROM", 10**6)
    ref = qm.ctmc(net)                       # the complete LU
    assert got.X["jobs"] == pytest.approx(ref.X["jobs"], rel=1e-10)


def _grab_system(monkeypatch):
    """The pinned system, maps and budget of the three-tier chain at N = 14
    as the CTMC hands them to the multigrid."""
    got = {}
    real = mg.mg_bicgstab

    def grab(A, b, maps, budget, *a, **k):
        got.update(A=A, b=b, maps=maps, budget=budget)
        return real(A, b, maps, budget, *a, **k)
    monkeypatch.setattr(mg, "mg_bicgstab", grab)
    qm.ctmc(_three_tier(14), max_states=10**6)
    monkeypatch.setattr(mg, "mg_bicgstab", real)
    return got


def test_the_early_stop_offers_every_iterate_from_check_from_and_returns_the_accepted(
        small_mg, monkeypatch):
    # a scripted acceptance refusing three iterates, then passing one:
    # offered at iterations 4, 5, 6 and 7, and the solve returns the
    # iterate of iteration 7 (BiCGSTAB's own tolerance set out of reach)
    g = _grab_system(monkeypatch)
    script = iter([False, False, False, True])
    offered = []

    def accept(x):
        offered.append(x.copy())
        return next(script)
    done = []
    import scipy.sparse.linalg as sla
    real = sla.bicgstab

    def counting(*a, callback=None, **k):
        def cb(xk):
            done.append(1)
            callback(xk)
        return real(*a, callback=cb, **k)
    monkeypatch.setattr(sla, "bicgstab", counting)
    x, its = mg.mg_bicgstab(g["A"], g["b"], g["maps"], g["budget"], rtol=1e-300,
                            accept=accept)
    assert mg.CHECK_FROM == 4
    assert its == len(done) == 7 and len(offered) == 4
    assert np.array_equal(x, offered[-1])


def test_an_iterate_the_early_stop_accepts_is_checked_once(small_mg, monkeypatch):
    # balance() runs once per offered iterate; the accepted one is not
    # checked again by finish (its pi is the one finish would give).  At
    # this size BiCGSTAB's own tolerance ends the solve an iteration before
    # the early stop's margin of 1e-4 would (its third ratio is 1.1e-3):
    # a margin of 1e-2 lets the early stop end it
    from qmodels.analytic import _ctmc_solve as S

    monkeypatch.setattr(S, "EARLY_MARGIN", 1e-2)

    calls = []
    real = S.balance
    monkeypatch.setattr(S, "balance", lambda *a, **k: calls.append(1) or real(*a, **k))
    offers = []
    real_mg = mg.mg_bicgstab

    def counted(A, b, maps, budget, x0=None, rtol=1e-14, accept=None, **k):
        def acc(x):
            offers.append(1)
            return accept(x)
        return real_mg(A, b, maps, budget, x0, rtol, accept=acc, **k)
    monkeypatch.setattr(mg, "mg_bicgstab", counted)
    got = qm.ctmc(_three_tier(14), max_states=10**6)
    assert got.info["linear_solver"] == "mg-bicgstab"
    assert offers and len(calls) == len(offers)
    monkeypatch.setattr(mg, "MG_STATES", 10**9)
    ref = qm.ctmc(_three_tier(14), max_states=10**6)
    assert got.X["users"] == pytest.approx(ref.X["users"], rel=1e-10)


def test_balance_measures_what_finish_accepts():
    # a two-state chain (rates 1 and 3): pi = (3/4, 1/4) by hand; an iterate
    # off by d = 1e-9 has the residual worked out below, and finish accepts
    # it exactly at margins above that ratio
    import scipy.sparse as sp

    from qmodels.analytic import _ctmc_solve as S

    Q = sp.csc_matrix(np.array([[-1.0, 1.0], [3.0, -3.0]]))
    QT = Q.T
    pi, ratio = S.balance(Q, QT, 0, np.array([1 / 3]))
    assert pi == pytest.approx([0.75, 0.25], rel=1e-15) and ratio <= 1.0
    x = np.array([1 / 3 + 1e-9])
    pi, ratio = S.balance(Q, QT, 0, x)
    # pi = (1, 1/3 + d)/(4/3 + d); (pi Q)_0 = (-1 + 3 (1/3 + d))/(4/3 + d)
    want = 3e-9 / (4 / 3 + 1e-9) / (S.RESID_TOL * 3.0)
    assert ratio == pytest.approx(want, rel=1e-5)
    assert S.finish(Q, QT, 0, x, margin=ratio * 1.01) is not None
    assert S.finish(Q, QT, 0, x, margin=ratio * 0.99) is None
    assert S.balance(Q, QT, 0, np.array([-0.5]))[0] is None
    assert S.balance(Q, QT, 0, np.array([np.nan]))[1] == np.inf
