"""The compiled ILU(0)-preconditioned BiCGSTAB of qmodels.analytic._ilu0
against direct solves (SuperLU) and the exact LU where ILU(0) has no fill
to drop."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

from qmodels.analytic import _ctmc_solve as LA
from qmodels.analytic import _ilu0


def _csr(A):
    A = sp.csr_matrix(A)
    A.sort_indices()
    return A.indptr, A.indices, A.data.copy()


def _random_generator(n, seed, density=0.02):
    # an irreducible generator: a ring (so every state reaches every other)
    # plus random rates spanning four orders of magnitude
    rng = np.random.default_rng(seed)
    R = sp.random(n, n, density=density, random_state=rng, format="lil")
    for i in range(n):
        R[i, (i + 1) % n] = rng.uniform(0.5, 2.0)
        R[i, i] = 0.0
    R = sp.csr_matrix(R)
    R.data = 10.0 ** rng.uniform(-2, 2, R.nnz)
    return (R - sp.diags(np.asarray(R.sum(axis=1)).ravel())).tocsc()


def _tridiagonal(n, seed):
    """(rng, A): a diagonally dominant tridiagonal M-matrix of order n."""
    rng = np.random.default_rng(seed)
    return rng, sp.diags([rng.uniform(-1, -0.1, n - 1), rng.uniform(3, 4, n),
                          rng.uniform(-1, -0.1, n - 1)], [-1, 0, 1], format="csr")


def test_ilu0_of_a_tridiagonal_matrix_is_its_exact_lu():
    # no fill outside the pattern: L U = A exactly (Saad 2003, sec. 10.3)
    n = 40
    rng, A = _tridiagonal(n, 1)
    ip, ix, d = _csr(A)
    lu, diag, ok = _ilu0.ilu0(ip, ix, d)
    assert ok
    F = sp.csr_matrix((lu, ix, ip), shape=A.shape).toarray()
    L = np.tril(F, -1) + np.eye(n)
    U = np.triu(F)
    assert np.allclose(L @ U, A.toarray(), rtol=0, atol=1e-13)
    b = rng.normal(size=n)
    x, info, its = _ilu0.bicgstab(ip, ix, d, lu, diag, b, np.zeros(n), 1e-14, 100)
    assert info == 0 and its <= 2
    assert np.allclose(x, spsolve(A.tocsc(), b), rtol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pinned_chain_solved_as_superlu_solves_it(seed):
    Q = _random_generator(600, seed)
    A, b, rest = LA.pinned_system(Q, 0)
    x = LA.ilu0_bicgstab(A, b)
    ref = spsolve(A.tocsc(), b)
    assert x is not None and np.allclose(x, ref, rtol=1e-9, atol=0)
    # and from a start near the answer
    assert np.allclose(LA.ilu0_bicgstab(A, b, ref * 1.01), ref, rtol=1e-9, atol=0)


def test_a_zero_pivot_is_reported_and_the_stage_falls_back_to_jacobi(monkeypatch):
    A = sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 2.0]]))
    assert not _ilu0.ilu0(*_csr(A))[2]
    assert LA.ilu0_bicgstab(A, np.ones(2)) is None
    # in the solver's first stage (made to apply from 2 states): Jacobi
    monkeypatch.setattr(LA, "ILU0_STATES", 2)
    monkeypatch.setattr(LA, "ilu0_bicgstab", lambda A, b, x0=None: None)
    Q = _random_generator(300, 4)
    pi, how, tried = LA.stationary_pinned(Q, LA.budget())
    assert how == "bicgstab" and tried[0].startswith("Jacobi-preconditioned")
    assert np.max(np.abs(Q.T @ pi)) < 1e-10


def test_first_stage_from_ilu0_states_is_ilu0(monkeypatch):
    monkeypatch.setattr(LA, "ILU0_STATES", 100)
    Q = _random_generator(400, 5)
    pi, how, tried = LA.stationary_pinned(Q, LA.budget())
    assert how == "ilu0-bicgstab" and tried[0].startswith("ILU(0)-preconditioned")
    A, b, rest = LA.pinned_system(Q, LA.pin_first(Q))
    ref = np.empty(Q.shape[0])
    ref[rest] = spsolve(A.tocsc(), b)
    ref[LA.pin_first(Q)] = 1.0
    assert np.allclose(pi, ref / ref.sum(), rtol=1e-9, atol=1e-15)


def test_a_repin_starts_from_the_first_answer(monkeypatch):
    # pinned first at the least probable state (made so), the answer is
    # solved again pinning the most probable one (REPIN), from the first
    # answer rescaled: the second BiCGSTAB starts at the solution
    Q = _random_generator(400, 6)
    A, b, rest = LA.pinned_system(Q, 0)
    ref = np.empty(Q.shape[0])
    ref[rest] = spsolve(A.tocsc(), b)
    ref[0] = 1.0
    ref /= ref.sum()
    low = int(np.argmin(ref))
    assert ref[low] < LA.REPIN * ref.max()
    monkeypatch.setattr(LA, "ILU0_STATES", 100)
    monkeypatch.setattr(LA, "pin_first", lambda Q: low)
    runs = []
    kernel = _ilu0.bicgstab_dilu    # (the first solver: D-ILU, Eisenstat's trick)

    def counted(*args):
        out = kernel(*args)
        runs.append(out[2])
        return out

    monkeypatch.setattr(_ilu0, "bicgstab_dilu", counted)
    pi, how, tried = LA.stationary_pinned(Q, LA.budget())
    assert how == "ilu0-bicgstab" and len(runs) == 2
    assert f"pinning state {int(np.argmax(ref))}" in tried[-1]
    assert runs[1] <= 2 < runs[0]
    assert np.allclose(pi, ref, rtol=1e-9, atol=1e-15)


def test_past_the_memory_budget_the_first_stage_stays_jacobi(monkeypatch):
    # the factors' values and the work vectors (ilu0_bytes) must fit the
    # budget the caller gives, as every other stage's memory must
    monkeypatch.setattr(LA, "ILU0_STATES", 100)
    Q = _random_generator(400, 7)
    A, _, _ = LA.pinned_system(Q, LA.pin_first(Q))
    pi, how, tried = LA.stationary_pinned(Q, LA.ilu0_bytes(A) - 1)
    assert how == "bicgstab" and tried[0].startswith("Jacobi-preconditioned")
    pi2, how2, _ = LA.stationary_pinned(Q, LA.ilu0_bytes(A))
    assert how2 == "ilu0-bicgstab"
    assert np.allclose(pi, pi2, rtol=1e-9, atol=1e-15)


def test_dilu_of_a_tridiagonal_matrix_is_its_exact_lu():
    # no fill outside the pattern and A's own off-diagonals in the factors:
    # (D + L) D^-1 (D + U) = A exactly, so BiCGSTAB on the split system
    # converges at once
    n = 40
    rng, A = _tridiagonal(n, 2)
    ip, ix, data = _csr(A)
    d, dpos, ok = _ilu0.dilu(ip, ix, data)
    assert ok
    Ad = A.toarray()
    L, U, D = np.tril(Ad, -1), np.triu(Ad, 1), np.diag(d)
    assert np.allclose((D + L) @ np.linalg.inv(D) @ (D + U), Ad, rtol=0, atol=1e-13)
    b = rng.normal(size=n)
    x, info, its = _ilu0.bicgstab_dilu(ip, ix, data, d, dpos, b, np.zeros(n), 1e-14, 100)
    assert info == 0 and its <= 2
    assert np.allclose(x, spsolve(A.tocsc(), b), rtol=1e-12)


@pytest.mark.parametrize("seed", [0, 3])
def test_the_dilu_solve_stops_at_the_residual_of_the_system_itself(seed):
    # its own residual is the split system's, M1^-1 (b - A x): it must
    # stop only where b - A x itself is within the tolerance
    Q = _random_generator(500, seed)
    A, b, _ = LA.pinned_system(Q, 0)
    A = sp.csr_matrix(A)
    A.sort_indices()
    d, dpos, ok = _ilu0.dilu(A.indptr, A.indices, A.data)
    assert ok
    for rtol in (1e-6, 1e-10):
        x, info, its = _ilu0.bicgstab_dilu(A.indptr, A.indices, A.data, d, dpos, b,
                                           np.zeros(len(b)), rtol, 500)
        assert info == 0
        assert np.linalg.norm(b - A @ x) <= rtol * np.linalg.norm(b)
    assert np.allclose(x, spsolve(A.tocsc(), b), rtol=1e-8, atol=0)


def test_where_the_dilu_pivots_fail_ilu0_solves(monkeypatch):
    Q = _random_generator(600, 8)
    A, b, _ = LA.pinned_system(Q, 0)
    ref = spsolve(A.tocsc(), b)
    used = []
    kernel = _ilu0.bicgstab

    def counted(*args):
        used.append(1)
        return kernel(*args)

    monkeypatch.setattr(_ilu0, "bicgstab", counted)
    monkeypatch.setattr(_ilu0, "dilu", lambda *a: (None, None, False))
    x = LA.ilu0_bicgstab(A, b)
    assert used and np.allclose(x, ref, rtol=1e-9, atol=0)
