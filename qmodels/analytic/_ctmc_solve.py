"""The linear algebra of :func:`qmodels.analytic.ctmc.ctmc`: the stationary
vector pi of an irreducible generator Q (pi Q = 0, sum(pi) = 1).

Every solve here is of the *pinned* system: one state's probability is set
to 1 and its balance equation dropped, which leaves the other m - 1
equations with Q's sparsity and a nonsingular matrix (Q^T without the
pinned row and column is a nonsingular M-matrix when the chain is
irreducible; Stewart, *Introduction to the Numerical Solution of Markov
Chains*, Princeton 1994, ch. 2), then normalised.

Which state is pinned decides whether the solve is well scaled.  On a
*stiff* chain (a closed network with a clear bottleneck: the jobs pile up
there, and the states with few jobs at the bottleneck are improbable by
factors of (D_other / D_bottleneck)^n, 1e-80 and less at 80 jobs) a pin
at an improbable state makes the unknowns huge multiples of it, and the
Krylov solvers break down (BiCGSTAB's inner products vanish) or stall.
The pin is therefore the state the chain holds longest, the one of
smallest total exit rate q_i: pi_i = (1/q_i) / m_ii with m_ii its mean
return time (Norris, *Markov Chains*, Cambridge 1997, sec. 3.5), so a long
holding time makes a state probable, and on a bottleneck network it is the
state with every job at the bottleneck.  The
heuristic can mislead (a slow station that jobs rarely visit: every job
there is a long-held but improbable state), so a few damped Jacobi sweeps
check it first (:func:`pin_first`), a solve whose pinned state
turns out less than :data:`REPIN` times the most probable one is done
again pinning that one, and where the solves at the first pin fail, the
next pins are the most probable state after a few hundred damped Jacobi
sweeps from the uniform vector (:func:`_sweep_pin`), then the one the
failed iterate makes most probable (:func:`_next_pin`), up to
:data:`MAX_PINS` pins.

The solvers, cheapest first (:func:`stationary_pinned`):

1. BiCGSTAB with a diagonal (Jacobi) preconditioner (van der Vorst, SIAM
   J. Sci. Stat. Comput. 13(2), 1992; Saad, *Iterative Methods for Sparse
   Linear Systems*, 2nd ed. 2003, alg. 7.7; Stewart 1994, ch. 4); from
   :data:`ILU0_STATES` states, compiled and preconditioned by the
   incomplete LU of zero fill (:mod:`._ilu0`: 3.4-3.9x less CPU time on
   chains of 10^5 states, ``python -m benchmarks.bench_ctmc --precond``),
   its diagonal variant (D-ILU) applied by Eisenstat's trick first
   (about the same iterations at two-thirds of the time,
   :func:`ilu0_bicgstab`), the Jacobi one where both factorisations fail.
   Before them, on a closed chain of at least
   :data:`._lattice_mg.MG_STATES` states whose states are rows of counts,
   BiCGSTAB preconditioned by a multigrid over the population lattice
   (:mod:`._lattice_mg`: aggregates lump phases, then neighbouring counts;
   its iterations grow far more slowly with the population than
   ILU(0)'s, 22 against 183 on a three-tier chain of 583,400 states).
2. A complete sparse LU of the pinned system (SuperLU with the COLAMD
   column ordering; Davis, Gilbert, Larimore & Ng, ACM TOMS 30(3), 2004;
   Stewart 1994, sec. 2.3 on LU for Markov chains) computed as SuperLU's
   incomplete LU with no drop tolerance and its fill capped by the memory
   budget (``fill_factor``, :data:`LU_FILL` at most), so that the memory
   stays bounded: where the factors fit under the cap nothing is dropped
   and the factorisation is the exact LU, solved directly (with one step
   of iterative refinement); as the fill nears the cap SuperLU drops
   entries (its area rule), the factor is incomplete, and the residual
   check below refuses its solve: the stage is passed.  It
   is tried once, when the Jacobi BiCGSTAB fails at the first pin (before
   its other pins): a stiff chain that BiCGSTAB does not solve but whose
   LU fits (an open tandem of phase-type queues, a two-dimensional
   lattice: 51,520 states, fill 36x, 2 s) is solved here.
2a. Restarted GMRES (Saad 2003, alg. 6.9 and sec. 9.3) preconditioned by
   one V-cycle of aggregation multigrid: neighbouring states (strongly
   connected in the pinned matrix) are lumped into aggregates, the
   aggregated chain is solved on the coarser level, recursively, and two
   symmetric Gauss-Seidel sweeps smooth on each level (Horton &
   Leutenegger, ACM SIGMETRICS 1994, on multilevel aggregation for the
   steady state of Markov chains; De Sterck, Manteuffel, McCormick et
   al., SIAM J. Sci. Comput. 30(5), 2008; the aggregates of Vanek,
   Mandel & Brezina, Computing 56(3), 1996, with the tentative
   (unsmoothed) prolongator; PyAMG's ``smoothed_aggregation_solver``
   with ``smooth=None``, Bell, Olson, Schroder & Southworth, JOSS 8(87),
   2023).  It converges where the slow modes of the chain are smooth
   over its lattice of counts and phases, as on a closed priority network
   whose low class is starved: three stations, preemptive, Erlang-4
   service (33,253 states) defeat the Jacobi BiCGSTAB, and their complete
   LU fills past its cap after 35 s; this stage solves them in about a
   second of CPU (50 iterations), and ``qm.ctmc`` answers in 3.4 s end to
   end, the same network with Erlang-8 service (102,113 states) in 9.9 s
   (``python -m benchmarks.bench_ctmc_stiff --case p10x2-e4 --case
   p10x2-e8``; 80 s and 348 s by the ILU-preconditioned solves before).
   On chains of at most :data:`LU_FIRST` states the complete LU goes
   first.  The prolongator smoothed by PyAMG's
   default (energy minimisation) took fewer iterations but a setup of up
   to 16 s on a 59,000-state chain where it then did not converge; the
   unsmoothed one's setup is a few hundredths of a second.  It is tried
   when the Jacobi BiCGSTAB fails at the first pin; the hierarchy (about
   :data:`AMG_BYTES` per nonzero) and GMRES's basis must fit the budget.
3. BiCGSTAB, then restarted GMRES (Saad 2003, alg. 6.9 and sec. 9.3),
   preconditioned by an incomplete LU factorisation with threshold
   dropping, ILUT (Saad 2003, sec. 10.4; SuperLU's ILU, Li & Shao, ACM
   TOMS 37(4), 2011) whose fill is capped (``fill_factor``) so that its
   memory stays within the budget: a stronger preconditioner for chains
   where the Jacobi one does not converge (Stewart 1994, ch. 4; ch. 6 on
   nearly completely decomposable chains, whose aggregation-disaggregation
   methods are not used here).  With a fill within the cap and a small drop
   tolerance the ILU is close to the exact LU, and the Krylov method
   converges in a few steps.  (At a well-chosen pin the Jacobi BiCGSTAB
   converged on every stiff benchmark, benchmarks/bench_ctmc_stiff.py.)

The Jacobi BiCGSTAB starts, where the caller has one, from a guess of pi:
the BCMP product form evaluated at every state
(:func:`qmodels.analytic.ctmc._product_form_guess`), which is the answer
on a product-form network (a few iterations confirm it to :data:`RTOL`:
12 instead of 275 on a 906,192-state chain); it is given only where the
chain can be product form.

Each answer is checked by its residual, max |pi Q| at most
:data:`RESID_TOL` times the largest rate, whatever the solver said.

The sparse solves use no more than one BLAS thread (:func:`one_blas_thread`):
their dense kernels (the Krylov methods' inner products on vectors of at
most a few million entries, SuperLU's small supernodal updates) gain little
from more, and idle BLAS threads spin on a shared machine.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import warnings

import numpy as np

from .._jit import lazyjit

#: relative residual ||A x - b|| / ||b|| of the pinned system at which the
#: Krylov methods stop
RTOL = 1e-14
#: a solution is accepted when max |pi Q| <= RESID_TOL x the largest rate
RESID_TOL = 1e-12
#: the lattice multigrid's BiCGSTAB stops early where max |pi Q| is at
#: most this fraction of the acceptance (:func:`._lattice_mg.mg_bicgstab`)
EARLY_MARGIN = 1e-4
#: ILUT drop tolerance (relative to the row's norm; Saad 2003, sec. 10.4)
ILU_DROP = 1e-8
#: the most fill an ILU may have, as a multiple of the pinned matrix's
#: nonzeros (lowered to what the memory budget allows)
ILU_FILL = 20.0
#: bytes per nonzero of an ILU factor (value, row index) and of SuperLU's
#: work on it, an upper estimate
ILU_BYTES = 24
#: the most fill the complete LU may have, as a multiple of the pinned
#: matrix's nonzeros (lowered to what the memory budget allows); below
#: LU_MIN_FILL the stage is not tried
LU_FILL = 100.0
LU_MIN_FILL = 5.0
#: the multigrid stage: GMRES's restart length (lowered to what the memory
#: budget allows), its restarts, and bytes per nonzero of the pinned matrix
#: that the aggregation hierarchy takes (its operator complexity was 1.2
#: to 1.5 on the priority lattices; each level's matrix, prolongator and
#: restrictor stored as CSR, and the smoother's work: an upper estimate)
AMG_RESTART = 100
AMG_CYCLES = 4
AMG_BYTES = 80
#: iterations of the last GMRES cycle towards :data:`RTOL`
AMG_POLISH = 30
#: up to this many states the complete LU is tried before the multigrid
#: (its factors cost well under a second there, and its answer is the more
#: accurate where rates span many orders of magnitude: a chain of 3,276
#: states with rates 0.01 to 100 had Q 5e-8 off by the multigrid's GMRES
#: stopped at 1e-12 (2e-10 with the last cycle of AMG_POLISH), 1e-9 by the
#: LU, all with max |pi Q| far below RESID_TOL); past it the
#: multigrid first, since a complete LU that fills past its cap there can
#: take tens of seconds before it fails
LU_FIRST = 20_000
#: how many pins are tried before giving up
MAX_PINS = 3
#: Jacobi sweeps that pick a pin when the first pin's solves fail
SWEEPS = 300
#: a solve whose pinned state has less than this fraction of the most
#: probable state's probability is done again pinning that state
REPIN = 1e-3


def budget() -> int:
    """Bytes the solve may take: half the memory available now
    (:func:`._ctmc_fast.memory_budget`, read after the chain is built)."""
    from ._ctmc_fast import memory_budget

    return memory_budget()


#: the first pin's check: damped Jacobi sweeps (as :func:`_sweep_pin`) in
#: blocks of PIN_BLOCK, at most PIN_SWEEPS; the smallest-exit-rate state is
#: kept once it holds PIN_KEEP of the sweeps' largest mass, passed for their
#: most probable state where it holds less than PIN_DROP at the end
PIN_BLOCK = 20
PIN_SWEEPS = 100
PIN_KEEP = 0.9
PIN_DROP = 0.01


def pin_first(Q) -> int:
    """The first state to pin: the one of smallest total exit rate (the
    longest mean holding time; see the module docstring), the lowest index
    among equals, unless a few damped Jacobi sweeps of the balance
    equations from the uniform vector (Stewart 1994, ch. 3) drain it: the
    sweeps run in blocks of :data:`PIN_BLOCK` and stop as soon as that
    state holds :data:`PIN_KEEP` of their largest mass (a bottleneck's
    full state: one block); after :data:`PIN_SWEEPS` a state holding less
    than :data:`PIN_DROP` of it gives way to the sweeps' most probable
    state.  A state may hold long and yet be improbable: on the three-tier
    phase-type model of ``benchmarks.bench_ctmc --ph`` at N = 40 (174,001
    states) the smallest exit rate is 39 jobs at the H2 disk's slow phase,
    of probability 4e-9 of the most probable; the Jacobi BiCGSTAB pinned
    there ran its 1,000 iterations in vain before a second pin converged
    (solve 6.9 s CPU; pinned at the sweeps' choice, 1e-3 of the most
    probable after 100 sweeps, 3.4 s: ``python -m benchmarks.bench_ctmc -N 8
    --ph``, benchmarks/README.md)."""
    q = -Q.diagonal()
    p = int(np.argmin(q))
    if Q.shape[0] <= 2 or not np.all(q > 0):
        return p
    for x in _sweeps(Q, PIN_BLOCK, PIN_SWEEPS):
        top = float(x.max())
        if x[p] >= PIN_KEEP * top:
            return p
    return int(np.argmax(x)) if x[p] < PIN_DROP * top else p


def _first_pin(Q, lattice, made: dict | None = None) -> int:
    """The first state to pin: with the lattice multigrid's maps, the state
    the aggregated chain makes most probable
    (:func:`._lattice_mg.probable_state`: its coarse solve costs less than
    :func:`pin_first`'s sweeps, 0.53 s of CPU against 1.75 s on the closed
    two-queue chain of 1,001,001 states of ``benchmarks.bench_ctmc --ph``,
    both pinning a state of probability 0.016 of the most probable; the
    smallest exit rate alone, the same state there, is one of 3e-9 on the
    three-tier chain at 52 users, where the multigrid then took 25
    iterations against 16 at this pin), else (or where that fails)
    :func:`pin_first`.  The aggregated chain's Galerkin products are kept
    in ``made["levels"]``, and the exit rates -q_ii in ``made["q"]``, for
    the pinned solves (:func:`_solve_at`)."""
    if lattice is not None:
        from ._lattice_mg import probable_state, unpinned_levels

        q = -Q.diagonal()
        levels = unpinned_levels(Q, lattice, q)
        if made is not None:
            made.update(levels=levels, q=q)
        p = probable_state(Q, lattice, levels, q)
        if p is not None:
            return p
    return pin_first(Q)


def _sweeps(Q, block: int, most: int):
    """The damped Jacobi sweeps of the balance equations, pi_j <- (pi_j +
    sum_i pi_i q_ij / q_j) / 2 (Stewart 1994, ch. 3; damped: a periodic
    chain would cycle), from the uniform vector, each renormalised: the
    vector after every ``block`` sweeps, ``most`` in all."""
    import scipy.sparse as sp

    q = -Q.diagonal()
    off = sp.csr_matrix((Q - sp.diags(-q)).T)
    x = np.full(Q.shape[0], 1.0 / Q.shape[0])
    for _block in range(most // block):
        for _ in range(block):
            x = 0.5 * x + 0.5 * (off @ x) / q
            x /= x.sum()
        yield x


def pinned_system(Q, p: int):
    """(A, b, rest): the balance equations of every state but ``p`` (A is
    Q^T without row and column ``p``, CSR), with pi_p = 1 moved to the
    right-hand side, and the indices of those states.  ``Q`` is CSC, so
    its arrays are those of Q^T in CSR: A's are cut from them directly
    (:func:`_cut`: at 1,005,937 states 0.15 s of CPU, where the same cut
    by NumPy array operations took 0.39 s and a CSC copy without the row
    and column and its transpose more)."""
    import scipy.sparse as sp

    Q = sp.csc_matrix(Q)
    if not Q.has_sorted_indices:
        Q = Q.sorted_indices()
    m = Q.shape[0]
    rest = np.concatenate((np.arange(p), np.arange(p + 1, m)))
    indptr, idx, vals, b = _cut.run(Q.nnz, Q.indptr, Q.indices, Q.data, p)
    A = sp.csr_matrix((vals, idx, indptr.astype(Q.indptr.dtype)), shape=(m - 1, m - 1))
    A.has_sorted_indices = True
    return A, b, rest


@lazyjit(threshold=20_000)
def _cut(ip, ix, data, p):
    """Q^T in CSR (``ip``, ``ix``, ``data``, sorted indices) without row
    and column ``p``: ``(indptr, indices, values, b)``, the column indices
    past p shifted down (the rows stay sorted), b_j = -Q^T[j, p] the rates
    out of p, in the order of the rows kept."""
    m = ip.shape[0] - 1
    indptr = np.zeros(m, dtype=np.int64)
    indices = np.empty_like(ix)
    vals = np.empty_like(data)
    b = np.zeros(m - 1)
    q = 0
    r = 0
    for i in range(m):
        if i == p:
            continue
        for e in range(ip[i], ip[i + 1]):
            j = ix[e]
            if j == p:
                b[r] = -data[e]
            else:
                indices[q] = j - 1 if j > p else j
                vals[q] = data[e]
                q += 1
        r += 1
        indptr[r] = q
    return indptr, indices[:q], vals[:q], b


def balance(Q, QT, p: int, x, scale: float | None = None):
    """(pi, ratio) from the solution ``x`` of the system pinned at ``p``
    (:func:`pinned_system`: x holds every other state in order; pi_p = 1,
    then normalised): ``ratio`` is max |pi Q| over :data:`RESID_TOL` x the
    largest rate (at least 1), the answer's residual as a multiple of what
    :func:`finish` accepts; pi None and the ratio infinite where x is not
    finite or has a clearly negative entry.  ``scale``: the largest rate,
    max |q_ii|, if the caller has it (the lattice multigrid's early stop
    asks at every iteration; Q's diagonal took 17 ms at 10^6 states)."""
    # the rejections from x's extremes alone (NaN and inf show in them):
    # most iterates the early stop offers have a negative entry, and this
    # is 2 passes over x where building pi first took 5
    lo, hi = (float(np.min(x)), float(np.max(x))) if len(x) else (1.0, 1.0)
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo < -1e-9 * max(1.0, hi, -lo):
        return None, np.inf
    m = QT.shape[0]
    pi = np.empty(m)
    pi[p] = 1.0
    pi[:p] = x[:p]
    pi[p + 1:] = x[p:]
    total = np.sum(np.abs(pi))
    np.maximum(pi, 0.0, out=pi)
    pi /= total
    if scale is None:
        scale = float(np.max(np.abs(Q.diagonal())))
    r = QT @ pi
    return pi, max(float(r.max()), -float(r.min())) / (RESID_TOL * max(scale, 1.0))


def finish(Q, QT, p: int, x, margin: float = 1.0, scale: float | None = None):
    """pi from the solution ``x`` of the system pinned at ``p``
    (:func:`balance`), or None when it is not finite, has a clearly
    negative entry, or leaves a residual max |pi Q| above ``margin`` x
    :data:`RESID_TOL` x the largest rate (``scale``, or max |q_ii|)."""
    pi, ratio = balance(Q, QT, p, x, scale)
    return pi if ratio <= margin else None


def jacobi_bicgstab(A, b, x0=None):
    """x with A x = b by BiCGSTAB with a diagonal (Jacobi) preconditioner,
    stopping at relative residual :data:`RTOL`; NaN where it cannot start
    (a zero diagonal).  It starts from x = 0; where that breaks down
    (BiCGSTAB divides by an inner product that can vanish: with the pinned
    system's right-hand side, a handful of rates out of the pinned state,
    it does on some phase-type chains at the first step) it starts again
    from x = 1.  Given ``x0`` (a guess of the answer, e.g. the product
    form: :func:`qmodels.analytic.ctmc._product_form_guess`) it starts
    there first."""
    from scipy.sparse.linalg import LinearOperator, bicgstab

    d = A.diagonal()
    if not np.all(d != 0):
        return np.full(len(b), np.nan)
    A = A.tocsr()
    inv = 1.0 / d
    M = LinearOperator(A.shape, matvec=lambda y: y * inv, dtype=float)
    maxiter = max(1000, int(2 * np.sqrt(len(b))))
    if x0 is not None:
        x, info = bicgstab(A, b, x0=x0, M=M, rtol=RTOL, atol=0.0, maxiter=maxiter)
        if info == 0 and np.all(np.isfinite(x)):
            return x
    x, info = bicgstab(A, b, M=M, rtol=RTOL, atol=0.0, maxiter=maxiter)
    if info < 0 or not np.all(np.isfinite(x)):
        x, info = bicgstab(A, b, x0=np.ones(len(b)), M=M, rtol=RTOL, atol=0.0,
                           maxiter=maxiter)
    return x


#: from this many states the first solver is BiCGSTAB preconditioned by
#: ILU(0) (:mod:`._ilu0`, compiled; 3.4-3.9x less CPU time than the Jacobi
#: preconditioner on chains of 174,000 and 492,803 states), below it the
#: Jacobi-preconditioned one (no compile: most chains that reach this
#: stage are small)
ILU0_STATES = 20_000
#: the most iterations of the ILU(0)-preconditioned BiCGSTAB: on every chain
#: of ``benchmarks.bench_ctmc_stiff`` and ``bench_ctmc --ph`` that it solved
#: it took 1 to 204 (a starved priority lattice of 33,253 states); one it
#: does not solve (the same lattice at Erlang-8, 102,113 states, answered
#: by the multigrid stage) cost 15 s of CPU in 1,000 iterations
ILU0_MAXITER = 400


def ilu0_bytes(A) -> int:
    """Bytes the ILU(0) solve adds to A's own: its factors' values (one
    float per nonzero), the diagonal's positions and BiCGSTAB's eight work
    vectors."""
    return 8 * A.nnz + 8 * 9 * A.shape[0]


def ilu0_bicgstab(A, b, x0=None):
    """x with A x = b by the compiled BiCGSTAB of :mod:`._ilu0` with an
    incomplete LU of zero fill, stopping at relative residual
    :data:`RTOL`, from ``x0`` if given, else from 0, then (on a breakdown)
    from 1, as :func:`jacobi_bicgstab` does: first with the diagonal
    variant (D-ILU) applied by Eisenstat's trick
    (:func:`._ilu0.bicgstab_dilu`: about the iterations of ILU(0) at
    two-thirds of the time: the three-tier chain of ``benchmarks.bench_ctmc``
    at 40 users, 174,000 unknowns, 115 iterations in 1.76 s against 107
    in 2.53 s; at 60 users, 583,400, 10.2 s against 14.8 s; a priority
    chain of 262,144, 1.68 s against 2.38 s), then, where that does not
    converge or its pivots fail, with ILU(0) itself; NaN where neither
    converges, None where both factorisations fail (a zero pivot: the
    caller uses the Jacobi preconditioner instead)."""
    from . import _ilu0

    A = A.tocsr()
    A.sort_indices()
    ip, ix = A.indptr, A.indices          # as they are (int32 below 2^31 nonzeros)
    maxiter = ILU0_MAXITER
    starts = ([x0] if x0 is not None else []) + [np.zeros(len(b)), np.ones(len(b))]
    bf = np.asarray(b, dtype=float)
    d, dpos, ok = _ilu0.dilu(ip, ix, A.data)
    if ok:
        for x in starts:
            x, info, _its = _ilu0.bicgstab_dilu(ip, ix, A.data, d, dpos, bf,
                                                np.array(x, dtype=float), RTOL, maxiter)
            if info == 0 and np.all(np.isfinite(x)):
                return x
            if info == 1:
                break               # ran its iterations: ILU(0) next
    lu, diag, ok = _ilu0.ilu0(ip, ix, A.data)
    if not ok:
        return None
    for x in starts:
        x, info, _its = _ilu0.bicgstab(ip, ix, A.data, lu, diag, np.asarray(b, dtype=float),
                                       np.array(x, dtype=float), RTOL, maxiter)
        if info == 0 and np.all(np.isfinite(x)):
            return x
        if info == 1:
            break                   # ran its iterations: another start will not help
    return np.full(len(b), np.nan)


def ilu_fill_cap(nnz: int, budget: int, most: float = ILU_FILL, least: float = 1.0) -> float:
    """A factor's fill cap: ``most`` (:data:`ILU_FILL` for the ILU,
    :data:`LU_FILL` for the complete LU), lowered so that the factors
    (about :data:`ILU_BYTES` per nonzero) take at most ``budget`` bytes; 0
    when not even ``least`` fits."""
    cap = min(most, budget / max(ILU_BYTES * nnz, 1))
    return cap if cap >= least else 0.0


def complete_lu(A, b, budget: int):
    """x with A x = b by a complete sparse LU whose fill the memory budget
    caps (module docstring, solver 2), or None when not even
    :data:`LU_MIN_FILL` fits or it fails (an exactly zero pivot).  Past
    the cap the factor is incomplete: the caller's residual check decides."""
    from scipy.sparse.linalg import spilu

    cap = ilu_fill_cap(A.nnz, budget, LU_FILL, LU_MIN_FILL)
    if cap == 0.0:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lu = spilu(A.tocsc(), drop_tol=0.0, fill_factor=cap, permc_spec="COLAMD")
    except RuntimeError:
        return None
    x = lu.solve(b)
    if not np.all(np.isfinite(x)):
        return None
    # one step of iterative refinement (Golub & Van Loan, Matrix
    # Computations, 4th ed., sec. 3.5.3); SuperLU drops entries (its area
    # rule) as the fill nears the cap, well before reaching it, and the
    # factor is then incomplete: the caller's residual check (finish)
    # refuses a solve that is not accurate, as for every solver here
    x += lu.solve(b - A @ x)
    return x if np.all(np.isfinite(x)) else None


def amg_krylov(A, b, budget: int):
    """x with A x = b by GMRES(:data:`AMG_RESTART`), at most
    :data:`AMG_CYCLES` restarts, preconditioned by an aggregation
    multigrid V-cycle (module docstring, solver 2a), stopping at relative
    (preconditioned) residual :data:`RTOL` x 100, then at most
    :data:`AMG_POLISH` iterations more towards :data:`RTOL` (the caller's
    residual check decides); None when the hierarchy and the basis do not fit
    ``budget`` bytes or the setup fails.  (:func:`amg_gmres` with no
    start and a new hierarchy.)"""
    return amg_gmres(A, b, budget)[0]


def amg_hierarchy(A):
    """The aggregation-multigrid hierarchy of A (module docstring, solver
    2a: PyAMG's ``smoothed_aggregation_solver`` with the tentative,
    unsmoothed prolongator and two symmetric Gauss-Seidel sweeps on each
    level), or None where the setup fails."""
    import pyamg

    sweeps = ("gauss_seidel", {"sweep": "symmetric", "iterations": 2})
    try:
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            return pyamg.smoothed_aggregation_solver(A.tocsr(), symmetry="nonsymmetric",
                                                     smooth=None, max_coarse=500,
                                                     presmoother=sweeps, postsmoother=sweeps)
    except (ValueError, RuntimeError, np.linalg.LinAlgError, ZeroDivisionError):
        return None


def amg_gmres(A, b, budget: int, x0=None, ml=None, polish: bool = True):
    """(x, ml): :func:`amg_krylov`'s solve started from ``x0`` (None:
    zero) and preconditioned by the hierarchy ``ml`` (None: a new one of
    A, :func:`amg_hierarchy`), which is returned for the next solve.  A
    hierarchy of a nearby matrix (the same chain with some rates changed,
    as a fixed-point iteration changes them from one sweep to the next)
    is still a preconditioner: GMRES converges whatever M is, only more
    slowly the further M^-1 is from A^-1 (Saad 2003, sec. 9.3), and the
    caller's residual check decides.  Without ``polish``, no last cycle
    towards :data:`RTOL` (a caller that checks the residual first and
    polishes only where it fails).  x None when the hierarchy and the
    basis do not fit ``budget`` bytes or the setup fails (where GMRES
    stops short of the tolerance, its last iterate: the caller's residual
    check decides)."""
    from pyamg.krylov import gmres

    n = len(b)
    room = budget - AMG_BYTES * A.nnz
    restart = min(AMG_RESTART, int(room // (8 * n * 2)) if room > 0 else 0)
    if restart < 10:
        return None, ml
    if ml is None:
        ml = amg_hierarchy(A)
        if ml is None:
            return None, None
    start = None if x0 is None else np.array(x0, dtype=float)
    try:
        # recorded and dropped (PyAMG's GMRES sets its own warnings to
        # "always" at each call, so an "ignore" filter here would not hold
        # them): its small Hessenberg solves warn of ill-conditioning as
        # the residual nears zero, and the caller's residual check decides
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            M = ml.aspreconditioner(cycle="V")
            x, info = gmres(A, b, x0=start, M=M, tol=100 * RTOL, restart=restart,
                            maxiter=AMG_CYCLES)
            if polish and info == 0 and np.all(np.isfinite(x)):
                # a last short cycle from there towards RTOL: GMRES never
                # raises the (preconditioned) residual from its start, and
                # where the rates span many orders it buys digits cheaply
                # (the 3,276-state chain of LU_FIRST: 3 more iterations,
                # pi's largest error 1e-9 -> 7e-12 of its largest entry);
                # where it stagnates near 1e-13 it costs AMG_POLISH
                more, _ = gmres(A, b, x0=x.copy(), M=M, tol=RTOL, restart=AMG_POLISH,
                                maxiter=1)
                x = more if np.all(np.isfinite(more)) else x
    except (ValueError, RuntimeError, np.linalg.LinAlgError, ZeroDivisionError):
        return None, ml
    return (x if np.all(np.isfinite(x)) else None), ml


def ilu_krylov(A, b, fill: float):
    """(x, name): x with A x = b by BiCGSTAB, then (if that does not reach
    :data:`RTOL`) restarted GMRES(50), both preconditioned by the ILUT of
    A (drop tolerance :data:`ILU_DROP`, at most ``fill`` times A's
    nonzeros, SuperLU's minimum-degree ordering of A^T + A); ``name`` is
    ``"ilu-bicgstab"`` or ``"ilu-gmres"``; x NaN if the ILU fails (an
    exactly zero pivot)."""
    from scipy.sparse.linalg import LinearOperator, bicgstab, gmres, spilu

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ilu = spilu(A.tocsc(), drop_tol=ILU_DROP, fill_factor=fill,
                        permc_spec="MMD_AT_PLUS_A")
    except RuntimeError:
        return np.full(len(b), np.nan), "ilu-bicgstab"
    M = LinearOperator(A.shape, matvec=ilu.solve, dtype=float)
    A = A.tocsr()
    x, info = bicgstab(A, b, M=M, rtol=RTOL, atol=0.0, maxiter=500)
    if info == 0 and np.all(np.isfinite(x)):
        return x, "ilu-bicgstab"
    x0 = x if np.all(np.isfinite(x)) else None
    x, info = gmres(A, b, x0=x0, M=M, rtol=RTOL, atol=0.0, restart=50, maxiter=20)
    return x, "ilu-gmres"


def _next_pin(x, rest, tried) -> int | None:
    """The state a failed iterate ``x`` makes most probable, if it is one
    not yet pinned (None else, or when ``x`` says nothing)."""
    if x is None or not np.all(np.isfinite(x)) or np.max(x) <= 1.0:
        return None  # nothing more probable than the pinned state
    p = int(rest[int(np.argmax(x))])
    return None if p in tried else p


def _sweep_pin(Q, tried) -> int | None:
    """A state to pin found without solving: the most probable state after
    :data:`SWEEPS` Jacobi sweeps of the balance equations,
    pi_j <- sum_i pi_i q_ij / q_j (Stewart 1994, ch. 3), from the
    uniform vector, each renormalised; the sweeps move the mass towards
    the states that hold it whatever the scaling, so their argmax is a
    well-scaled pin even where they are far from converged.  None if that
    state was pinned already."""
    *_, x = _sweeps(Q, SWEEPS, SWEEPS)
    p = int(np.argmax(x))
    return None if p in tried else p


def _start(guess, p: int, rest):
    """The pinned system's start from a guess of log pi (None: none):
    pi / pi_p at the other states, or None where that is not finite."""
    if guess is None:
        return None
    with np.errstate(over="ignore", under="ignore"):
        x0 = np.exp(guess[rest] - guess[p])
    return x0 if np.all(np.isfinite(x0)) else None


#: the stages tried once at the first pin when the Jacobi BiCGSTAB fails
#: there: solver -> (function, name, why it was passed, ``how``)
_STRONG = {
    "amg": ("amg_krylov", "aggregation-multigrid-preconditioned GMRES",
            "its hierarchy passes the memory budget of {gib} GiB or its setup failed",
            "amg-gmres"),
    "lu": ("complete_lu", "complete LU (COLAMD)",
           "its factors pass the fill the memory budget of {gib} GiB allows", "lu"),
}


def _solve_at(Q, p: int, solver: str, budget: int, tried: list, guess=None, lattice=None,
              made: dict | None = None):
    """(rest, x, how, pi): ``solver`` ("bicgstab", "amg", "lu" or "ilu") on
    the system pinned at ``p`` (noted in ``tried``); None when the stage
    does not fit the budget (or, "amg" and "lu", does not answer).  Given
    ``lattice`` (the aggregation maps of :func:`._lattice_mg.coarsening`
    over Q's states), "bicgstab" on a chain of at least
    :data:`._lattice_mg.MG_STATES` states tries the lattice multigrid
    first, keeping its answer where :func:`finish` accepts it (its coarse
    levels made from the unpinned ones in ``made["levels"]`` where
    :func:`_first_pin` left them).  ``pi``: that answer as :func:`finish`
    gave it, where it was checked here (the multigrid's), else None."""
    A, b, rest = pinned_system(Q, p)
    if solver == "bicgstab" and lattice is not None:
        from . import _lattice_mg

        if A.shape[0] >= _lattice_mg.MG_STATES:
            QT = Q.T
            q = (made or {}).get("q")
            q = -Q.diagonal() if q is None else q
            scale = float(np.max(np.abs(q)))
            early: dict = {}            # the pi of the iterate the early stop accepted

            def accept(x):
                pi, ratio = balance(Q, QT, p, x, scale)
                if ratio <= EARLY_MARGIN:
                    early["pi"] = pi
                return ratio <= EARLY_MARGIN

            levels = (made or {}).get("levels")
            coarse = (None if levels is None
                      else _lattice_mg.pinned_levels(Q, lattice, levels, p, b, q))
            got = _lattice_mg.mg_bicgstab(A, b, _lattice_mg.restrict(lattice, rest), budget,
                                          _start(guess, p, rest), RTOL, accept=accept,
                                          coarse=coarse)
            # the iterate the early stop accepted (the solve ends there and
            # returns it) passes finish, the same pi with 1e4 to spare: not
            # checked twice
            pi = (early["pi"] if early else
                  None if got is None else finish(Q, QT, p, got[0]))
            good = pi is not None
            why = ("" if good else
                   " (its answer failed the residual check)" if got is not None else
                   " (no answer: numba missing, the hierarchy past the budget or a zero "
                   "pivot, or an iterate not finite)")
            tried.append(f"lattice-multigrid-preconditioned BiCGSTAB pinning state {p}{why}")
            if good:
                return rest, got[0], "mg-bicgstab", pi
    if solver == "bicgstab":
        if A.shape[0] >= ILU0_STATES and ilu0_bytes(A) <= budget:
            x = ilu0_bicgstab(A, b, _start(guess, p, rest))
            if x is not None:
                tried.append(f"ILU(0)-preconditioned BiCGSTAB (its D-ILU variant first) "
                             f"pinning state {p}")
                return rest, x, "ilu0-bicgstab", None
        tried.append(f"Jacobi-preconditioned BiCGSTAB pinning state {p}")
        return rest, jacobi_bicgstab(A, b, _start(guess, p, rest)), "bicgstab", None
    if solver in _STRONG:
        run, name, passed, how = _STRONG[solver]
        x = globals()[run](A, b, budget)    # looked up at call time (tests replace them)
        if x is None:
            tried.append(f"{name}: " + passed.format(gib=f"{budget / 2**30:.2g}"))
            return None
        tried.append(f"{name} pinning state {p}")
        return rest, x, how, None
    fill = ilu_fill_cap(A.nnz, budget)
    if fill == 0.0:
        tried.append("no ILU: even its least fill passes the memory budget of "
                     f"{budget / 2**30:.2g} GiB")
        return None
    tried.append(f"ILUT(drop {ILU_DROP:g}, fill <= {fill:.3g} x nnz)-preconditioned BiCGSTAB "
                 f"and GMRES pinning state {p}")
    x, how = ilu_krylov(A, b, fill)
    return rest, x, how, None


def _accept(Q, QT, p, got, solver, budget, tried, guess, pins):
    """(pi, how) from a solve ``got`` = (rest, x, how, pi) at pin ``p``
    (pi: :func:`finish`'s answer if :func:`_solve_at` checked it), or
    None when its residual fails; a solution whose pinned state is less
    than :data:`REPIN` times the most probable one is solved once more
    pinning that state (the unknowns were large multiples of an improbable
    pin, which costs digits; a Krylov solver's concern: the LU's pivoting
    is not, and its residual is checked all the same)."""
    _, x, how, pi = got
    if pi is None:
        pi = finish(Q, QT, p, x)
    if pi is None:
        return None
    best = int(np.argmax(pi))
    if pi[p] < REPIN * pi[best] and best not in pins and solver != "lu":
        # started from this answer, rescaled to the new pin: on the
        # three-tier model of benchmarks.bench_ctmc --ph at N = 56 (474,769
        # states) the ILU(0) BiCGSTAB took 1 iteration (0.1 s) there instead
        # of 102 (7 s) from 0
        # (not by the lattice multigrid: its set-up would cost more than
        # the few ILU(0) iterations from an answer already found)
        with np.errstate(divide="ignore"):
            again = _solve_at(Q, best, solver, budget, tried, np.log(pi))
        if again is not None:
            good = finish(Q, QT, best, again[1])
            if good is not None:
                # the re-solve polishes an answer the first solver found (and
                # the residual check accepted): it keeps that solver's name
                return good, how
    return pi, how


def stationary_pinned(Q, budget: int, guess=None, lattice=None):
    """(pi, how, tried): the stationary vector of the irreducible generator
    ``Q`` (CSC) by the solvers of the module docstring in turn, each at the
    pins of :func:`_first_pin` and :func:`_next_pin`; ``how`` is
    ``"mg-bicgstab"``, ``"bicgstab"``, ``"ilu0-bicgstab"``, ``"amg-gmres"``,
    ``"lu"``, ``"ilu-bicgstab"`` or ``"ilu-gmres"``, and pi None (how None)
    when none of them reached the residual.  ``tried`` lists what was
    tried, for the caller's error message.  ``budget`` bytes bound the
    ILU's factors; ``guess`` (log pi up to a constant, or None) is where
    the Jacobi-preconditioned BiCGSTAB starts; ``lattice`` (aggregation
    maps over Q's states, or None) lets the first stage try the lattice
    multigrid (:mod:`._lattice_mg`; ``how`` ``"mg-bicgstab"``)."""
    import scipy.sparse as sp

    Q = sp.csc_matrix(Q)
    QT = Q.T                      # a CSR view, for the residual
    tried: list[str] = []
    made: dict = {}                 # the lattice's Galerkin products, made once
    pins = [_first_pin(Q, lattice, made)]
    with one_blas_thread():
        strong_tried = False
        for solver in ("bicgstab", "ilu"):
            i = 0
            while i < len(pins):
                p = pins[i]
                i += 1
                got = _solve_at(Q, p, solver, budget, tried, guess, lattice, made)
                if got is None:
                    break           # no ILU fits the budget
                pi = _accept(Q, QT, p, got, solver, budget, tried, guess, pins)
                if pi is not None:
                    return pi[0], pi[1], tried
                if solver == "bicgstab" and not strong_tried:
                    # the Jacobi BiCGSTAB failed at the first pin: a stiff
                    # chain; the multigrid, then its complete LU, where they
                    # fit, before more pins
                    strong_tried = True
                    order = ("lu", "amg") if Q.shape[0] <= LU_FIRST else ("amg", "lu")
                    for strong in order:
                        direct = _solve_at(Q, p, strong, budget, tried, guess)
                        pi = None if direct is None else _accept(Q, QT, p, direct, strong,
                                                                 budget, tried, guess, pins)
                        if pi is not None:
                            return pi[0], pi[1], tried
                if solver == "bicgstab":
                    # where else to pin: the sweeps' guess (once), then the
                    # failed iterate's most probable state
                    rest, x = got[0], got[1]
                    more = [_sweep_pin(Q, pins)] if len(pins) == 1 else []
                    for nxt in more + [_next_pin(x, rest, pins)]:
                        if nxt is not None and nxt not in pins and len(pins) < MAX_PINS:
                            pins.append(nxt)
            # the ILU at the better-informed pins first
            pins.reverse()
    return None, None, tried


# ---------------------------------------------------------------------------
# BLAS threads
# ---------------------------------------------------------------------------

#: (setter, getter) symbol names of the OpenBLAS builds numpy and scipy ship
_OPENBLAS = (("openblas_set_num_threads", "openblas_get_num_threads"),
             ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
             ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
             ("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"))

_handles: list | None = None


def _openblas_handles() -> list:
    """(set, get) functions of every OpenBLAS already loaded in the process
    (read from /proc/self/maps; none elsewhere than Linux)."""
    global _handles
    if _handles is not None:
        return _handles
    found, seen = [], set()
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "openblas" in line.lower()}
    except OSError:
        paths = set()
    for path in sorted(paths):
        if not os.path.isfile(path) or path in seen:
            continue
        seen.add(path)
        try:
            lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 0) | ctypes.RTLD_LOCAL)
        except OSError:
            continue
        for set_name, get_name in _OPENBLAS:
            setter, getter = getattr(lib, set_name, None), getattr(lib, get_name, None)
            if setter is not None and getter is not None:
                setter.argtypes, setter.restype = [ctypes.c_int], None
                getter.argtypes, getter.restype = [], ctypes.c_int
                found.append((setter, getter))
                break
    _handles = found
    return found


_NOT_LOOKED = object()
_limits = _NOT_LOOKED


def _threadpoolctl():
    """threadpoolctl's ``threadpool_limits`` if it is installed (looked up
    once), else None."""
    global _limits
    if _limits is _NOT_LOOKED:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            threadpool_limits = None
        _limits = threadpool_limits
    return _limits


@contextlib.contextmanager
def one_blas_thread():
    """Run the block with one BLAS thread, restoring the counts after:
    threadpoolctl's ``threadpool_limits`` where it is installed, else the
    OpenBLAS libraries' own ``*_set_num_threads`` (the BLAS that numpy's
    and scipy's wheels ship), else nothing."""
    threadpool_limits = _threadpoolctl()
    if threadpool_limits is not None:
        with threadpool_limits(limits=1, user_api="blas"):
            yield
        return
    saved = []
    for setter, getter in _openblas_handles():
        saved.append((setter, int(getter())))
        setter(1)
    try:
        yield
    finally:
        for setter, n in saved:
            setter(n)
