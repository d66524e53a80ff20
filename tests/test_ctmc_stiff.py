"""The CTMC's stationary solve on stiff chains (qmodels.analytic._ctmc_solve).

A closed network with a clear bottleneck piles its jobs up there: a state
with n jobs elsewhere has probability of order (D_other / D_bottleneck)^n,
so the stationary vector spans tens of orders of magnitude.  Pinning an
improbable state (the build's first, every job at the first queue) made
the iterative solve break down, and such chains above 50,000 states were
refused.  The reference is exact MVA (the networks are product form, an
independent method); a birth-death chain's closed form (Kleinrock 1975,
eq. 3.11) checks the solve itself.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import qmodels as qm
from qmodels.analytic import _ctmc_solve as LA
from qmodels.analytic import ctmc as C
from qmodels.errors import UnsupportedModelError


def bottleneck(N: int, K: int, ratio: float = 10.0):
    """One class of N jobs over K FCFS queues (visit ratio 1, random
    routing), the last ``ratio`` times slower: C(N + K - 1, K - 1) states."""
    names = [f"q{k}" for k in range(K)]
    st = [qm.Queue(n, 0.01 * (ratio if k == K - 1 else 1 + 0.1 * k))
          for k, n in enumerate(names)]
    return qm.Network(st, [qm.Closed("c", N, visits=dict.fromkeys(names, 1))])


def _agrees_with_mva(r, net, rel=1e-8):
    m = qm.mva(net)
    for c in net.class_names:
        assert r.X[c] == pytest.approx(m.X[c], rel=rel)
    for s in net.station_names:
        assert r.Q[s] == pytest.approx(m.Q[s], rel=rel)
        assert r.U[s] == pytest.approx(m.U[s], rel=rel)


def test_stiff_chain_past_the_old_lu_limit_is_solved_and_equals_mva():
    # 54,740 states; the probability of a state with n jobs off the
    # bottleneck is about 10^-n (up to 1e-67).  The old solve pinned the
    # first state (all 67 jobs at q0, probability ~1e-67), BiCGSTAB broke
    # down, and a chain past 50,000 states was then refused
    # (UnsupportedModelError)
    net = bottleneck(67, 4)
    r = qm.ctmc(net)
    assert r.info["states"] == math.comb(70, 3)
    assert r.info["linear_solver"] in ("bicgstab", "ilu0-bicgstab", "ilu-bicgstab", "ilu-gmres")
    assert r.info["residual"] <= 1e-12 * 100.0   # largest rate 1/0.01
    assert any("max |pi Q| =" in n for n in r.notes)
    _agrees_with_mva(r, net)


def test_the_ilu_preconditioned_solve_answers_where_jacobi_does_not(monkeypatch):
    # the fallback on its own: the Jacobi-preconditioned BiCGSTAB made to
    # fail and the complete LU to pass its fill cap, the ILU-preconditioned
    # Krylov solve must still equal MVA
    monkeypatch.setattr(LA, "jacobi_bicgstab", lambda A, b, x0=None: np.full(len(b), np.nan))
    monkeypatch.setattr(LA, "complete_lu", lambda A, b, budget: None)
    monkeypatch.setattr(LA, "amg_krylov", lambda A, b, budget: None)
    net = bottleneck(30, 4, ratio=30.0)        # 5,456 states
    r = qm.ctmc(net)
    assert r.info["linear_solver"] in ("ilu-bicgstab", "ilu-gmres")
    assert any("ILU-preconditioned" in n and "max |pi Q|" in n for n in r.notes)
    _agrees_with_mva(r, net)


def test_the_complete_lu_answers_where_jacobi_does_not(monkeypatch):
    # Jacobi (and the multigrid) made to fail: the complete LU (its fill
    # well under the cap on 5,456 states) answers, once, and equals MVA
    monkeypatch.setattr(LA, "jacobi_bicgstab", lambda A, b, x0=None: np.full(len(b), np.nan))
    monkeypatch.setattr(LA, "amg_krylov", lambda A, b, budget: None)
    net = bottleneck(30, 4, ratio=30.0)
    r = qm.ctmc(net)
    assert r.info["linear_solver"] == "lu"
    assert r.info["residual"] <= 1e-12 * 100.0
    _agrees_with_mva(r, net, rel=1e-10)


def test_the_multigrid_answers_where_jacobi_does_not(monkeypatch):
    # Jacobi made to fail: the multigrid-preconditioned GMRES answers first
    # (before the complete LU, as past LU_FIRST states) and equals MVA
    monkeypatch.setattr(LA, "jacobi_bicgstab", lambda A, b, x0=None: np.full(len(b), np.nan))
    monkeypatch.setattr(LA, "LU_FIRST", 0)
    monkeypatch.setattr(LA, "complete_lu", lambda A, b, budget: pytest.fail("LU tried"))
    net = bottleneck(30, 4, ratio=30.0)
    r = qm.ctmc(net)
    assert r.info["linear_solver"] == "amg-gmres"
    assert r.info["residual"] <= 1e-12 * 100.0
    assert any("multigrid" in n and "max |pi Q|" in n for n in r.notes)
    _agrees_with_mva(r, net, rel=1e-9)


def _starved_priority(high: int, low: int, disc: str = "prio-pr"):
    """Three stations, a preemptive deterministic priority queue that the
    high class alone loads near saturation, a low class starved behind it:
    the 3-D lattice of counts and Erlang phases where the Jacobi BiCGSTAB
    fails and the complete LU fills past its cap."""
    st = [qm.Queue("p", 0.45, discipline=disc, distribution=qm.Deterministic()),
          qm.Queue("q", 0.2), qm.Queue("r", 0.15, discipline="ps")]
    both = {s.name: 1 for s in st}
    return qm.Network(st, [qm.Closed("hi", high, visits=both, priority=0, think_time=0.05),
                           qm.Closed("lo", low, visits=both, priority=1)])


def test_the_multigrid_equals_the_complete_lu_on_a_starved_priority_lattice(monkeypatch):
    # not product form: the reference is the other exact solve of the same
    # chain, the complete LU (the multigrid made to fail), to 1e-9
    net = _starved_priority(5, 2)
    monkeypatch.setattr(LA, "jacobi_bicgstab", lambda A, b, x0=None: np.full(len(b), np.nan))
    monkeypatch.setattr(LA, "LU_FIRST", 0)
    amg = qm.ctmc(net, max_phases=4)
    assert amg.info["linear_solver"] == "amg-gmres"
    monkeypatch.setattr(LA, "amg_krylov", lambda A, b, budget: None)
    lu = qm.ctmc(net, max_phases=4)
    assert lu.info["linear_solver"] == "lu"
    assert amg.info["states"] == lu.info["states"] > 2000
    for c in net.class_names:
        assert amg.X[c] == pytest.approx(lu.X[c], rel=1e-9)
    for s in net.station_names:
        for c in net.class_names:
            assert amg.Q[s, c] == pytest.approx(lu.Q[s, c], rel=1e-8, abs=1e-12)


def test_the_multigrid_stays_within_the_budget():
    # a budget below the hierarchy's estimate: the stage is passed (None),
    # never allocated
    net = bottleneck(30, 4, ratio=30.0)
    import scipy.sparse as sp
    Q = sp.csc_matrix(_generator(net))
    A, b, rest = LA.pinned_system(Q, LA.pin_first(Q))
    assert LA.amg_krylov(A, b, LA.AMG_BYTES * A.nnz) is None
    x = LA.amg_krylov(A, b, 10**10)
    assert LA.finish(Q, Q.T.tocsr(), LA.pin_first(Q), x) is not None


def test_the_complete_lu_under_a_tight_fill_cap_never_answers_wrong(monkeypatch):
    # the pinned system of a 5,456-state chain: with the budget the stage
    # equals a direct sparse solve; under a cap the factors need more than
    # (37x here), SuperLU drops entries and the solve is inexact: the
    # residual check refuses it (or, where it is accurate, it equals MVA)
    import scipy.sparse as sp
    from scipy.sparse.linalg import spsolve
    net = bottleneck(30, 4, ratio=30.0)
    Q = sp.csc_matrix(_generator(net))
    A, b, rest = LA.pinned_system(Q, LA.pin_first(Q))
    assert LA.complete_lu(A, b, int(4 * LA.ILU_BYTES * A.nnz)) is None   # cap 4 < LU_MIN_FILL
    x = LA.complete_lu(A, b, 10**12)
    assert np.allclose(x, spsolve(A.tocsc(), b), rtol=1e-9, atol=0)
    monkeypatch.setattr(LA, "jacobi_bicgstab", lambda A, b, x0=None: np.full(len(b), np.nan))
    monkeypatch.setattr(LA, "amg_krylov", lambda A, b, budget: None)
    for cap in (5.0, 8.0, 20.0):
        monkeypatch.setattr(LA, "LU_FILL", cap)
        _agrees_with_mva(qm.ctmc(net), net, rel=1e-9)


def _generator(net):
    """The generator the solve receives (captured from qm.ctmc)."""
    seen = {}

    def grab(Q, budget, guess=None, lattice=None):
        seen["Q"] = Q
        return LA_stationary(Q, budget, guess, lattice)
    LA_stationary = LA.stationary_pinned
    LA.stationary_pinned = grab
    try:
        qm.ctmc(net)
    finally:
        LA.stationary_pinned = LA_stationary
    return seen["Q"]


def test_a_bad_first_pin_is_left_for_a_better_one(monkeypatch):
    # the first state pinned forced to the build's first (all 30 jobs at
    # q0, probability ~1e-30): the sweeps' pin must rescue the solve
    monkeypatch.setattr(LA, "pin_first", lambda Q: 0)
    net = bottleneck(30, 4)                    # 5,456 states
    _agrees_with_mva(qm.ctmc(net), net)


def test_a_long_held_improbable_state_is_not_the_pin_that_answers():
    # a slow station visited once in 1,000 cycles: every job there is the
    # state of smallest exit rate, yet improbable (its demand 0.1 against
    # the bottleneck's 1): the solve is done again from the most probable
    # state, and the answer equals MVA
    st = [qm.Queue("b", 1.0), qm.Queue("slow", 100.0, discipline="ps"),
          qm.Queue("f1", 0.01), qm.Queue("f2", 0.02)]
    net = qm.Network(st, [qm.Closed("c", 25, visits={"b": 1, "slow": 0.001, "f1": 1,
                                                      "f2": 1})])
    r = qm.ctmc(net)
    assert r.info["states"] == math.comb(28, 3)
    _agrees_with_mva(r, net)


def test_no_solve_within_the_memory_budget_is_a_typed_error(monkeypatch):
    # Jacobi made to fail and a budget too small for the least ILU: refused
    # by name (what was tried, the budget), never a complete LU whose fill
    # has no bound
    monkeypatch.setattr(LA, "jacobi_bicgstab", lambda A, b, x0=None: np.full(len(b), np.nan))
    monkeypatch.setattr(LA, "budget", lambda: 1000)
    net = bottleneck(30, 4)
    with pytest.raises(UnsupportedModelError, match="memory budget") as e:
        qm.ctmc(net)
    assert "5,456-state" in str(e.value)


def test_the_ilu_fill_is_capped_by_the_budget():
    nnz = 10**6
    assert LA.ilu_fill_cap(nnz, 10**12) == LA.ILU_FILL
    cap = LA.ilu_fill_cap(nnz, 5 * LA.ILU_BYTES * nnz)
    assert cap == pytest.approx(5.0)
    assert LA.ilu_fill_cap(nnz, LA.ILU_BYTES * nnz // 2) == 0.0


@pytest.mark.parametrize("n", [500, 3000])
def test_birth_death_chain_spanning_thousands_of_orders_of_magnitude(n):
    # pi_k proportional to (up/down)^k, normalised in log space (Kleinrock
    # 1975, eq. 3.11); up/down = 1000 puts state 0 at 1e-(3(n-1)) of the
    # mass: the pin must be the most probable state (the top one, the
    # smallest exit rate) for the solve to be accurate; 3000 states takes
    # the iterative path
    up, down = 1e3, 1.0
    rows = list(range(n - 1)) + list(range(1, n))
    cols = list(range(1, n)) + list(range(n - 1))
    vals = [up] * (n - 1) + [down] * (n - 1)
    logw = np.arange(n) * math.log(up / down)
    ref = np.exp(logw - logw.max())
    ref /= ref.sum()
    used: list[str] = []
    pi, resid = C._stationary(n, rows, cols, vals, str, used)
    iterative = n > C.ITERATIVE_FROM
    assert used == (["bicgstab"] if iterative else ["lu"])
    # the LU is accurate entry by entry; the Krylov solve norm-wise (its
    # residual is a norm): entries below 1e-16 of the largest are noise
    np.testing.assert_allclose(pi, ref, rtol=1e-9, atol=1e-15 if iterative else 1e-300)
    big = ref > 1e-12
    np.testing.assert_allclose(pi[big], ref[big], rtol=1e-9)


def test_blas_threads_are_one_inside_and_restored_after():
    import scipy.sparse.linalg  # noqa: F401 - load scipy's BLAS too

    handles = LA._openblas_handles()
    if not handles:
        # numpy/scipy linked against another BLAS (a distribution's reference
        # BLAS or MKL) expose no OpenBLAS thread setter: nothing to cap here
        pytest.skip("no OpenBLAS loaded in this process")
    before = [int(get()) for _, get in handles]
    with LA.one_blas_thread():
        assert [int(get()) for _, get in handles] == [1] * len(handles)
    assert [int(get()) for _, get in handles] == before


@pytest.mark.slow
@pytest.mark.parametrize("N,K", [(80, 4), (30, 6)])
def test_large_stiff_chains_equal_mva(N, K):
    # 91,881 and 324,632 states (both refused before, the second after 78 s)
    net = bottleneck(N, K)
    r = qm.ctmc(net, max_states=10**6)
    assert r.info["states"] == math.comb(N + K - 1, K - 1)
    _agrees_with_mva(r, net)


def _birth_death(lam, mu):
    # generator of a birth-death chain: lam[i] up from i, mu[i] down from i + 1
    import scipy.sparse as sp

    n = len(lam) + 1
    Q = sp.lil_matrix((n, n))
    for i, (a, b) in enumerate(zip(lam, mu)):
        Q[i, i + 1] = a
        Q[i + 1, i] = b
    Q.setdiag(-np.asarray(Q.sum(axis=1)).ravel())
    return sp.csc_matrix(Q)


def test_the_first_pin_passes_a_long_held_improbable_state():
    # births 0.1, deaths 1 except the last, 0.05: the top state holds
    # longest (exit rate 0.05, the least) but pi_10 / pi_0 = 0.1^9 x 2
    # (the birth-death product form, Kleinrock 1975, eq. 3.11): the sweeps
    # pass it for the most probable state, 0
    from qmodels.analytic import _ctmc_solve as S

    Q = _birth_death([0.1] * 10, [1.0] * 9 + [0.05])
    assert int(np.argmin(-Q.diagonal())) == 10
    assert S.pin_first(Q) == 0
    # a bottleneck's full state, long held and most probable, is kept:
    # births 1, deaths 0.5 (pi grows by 2 a step, the top holds longest)
    Q = _birth_death([1.0] * 10, [0.5] * 10)
    assert S.pin_first(Q) == int(np.argmin(-Q.diagonal())) == 10


def test_the_pinned_system_is_q_transposed_without_the_pins_row_and_column():
    # cut from Q's CSC arrays directly: against dense slicing of Q^T, for
    # pins first, last and inside, on random generators (one with an
    # unsorted CSC, one of two states)
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    for n in (2, 3, 10, 200):
        M = sp.random(n, n, density=0.3, random_state=int(rng.integers(10**6)), format="csr")
        M = M - sp.diags(np.asarray(M.sum(axis=1)).ravel())
        Q = sp.csc_matrix(M)
        if n == 10:                          # indices unsorted within columns
            for j in range(n):
                lo, hi = Q.indptr[j], Q.indptr[j + 1]
                Q.indices[lo:hi] = Q.indices[lo:hi][::-1].copy()
                Q.data[lo:hi] = Q.data[lo:hi][::-1].copy()
            Q.has_sorted_indices = False
        dense = Q.toarray()
        for p in sorted({0, n - 1, n // 2}):
            A, b, rest = LA.pinned_system(Q, p)
            assert A.format == "csr" and A.has_sorted_indices
            np.testing.assert_array_equal(A.toarray(), dense.T[np.ix_(rest, rest)])
            np.testing.assert_array_equal(b, -dense[p, rest])
            np.testing.assert_array_equal(rest, np.delete(np.arange(n), p))
            for i in range(n - 1):
                assert np.all(np.diff(A.indices[A.indptr[i]:A.indptr[i + 1]]) > 0)
