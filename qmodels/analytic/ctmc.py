"""Exact continuous-time Markov chain (CTMC) solution of small networks.

The chain is built state by state from the network itself, so it honours
what the product-form solvers cannot: finite capacity with blocking, loss of
open arrivals, token pools held across several stations (simultaneous
resource possession), FCFS stations whose service time differs by class,
non-exponential service and inter-arrival times (as phase-type
distributions whose phase is part of the state), priority queues.  It is
the exact ground truth against which the approximations and the simulator
are judged.

Semantics (shared with the simulator, :mod:`qmodels.sim`)
---------------------------------------------------------
* **Service**: mean ``S[class, station]``, shape the class's own there
  (``distribution={station: shape}``) or else the station's
  ``distribution``, as a Coxian phase-type distribution
  (:mod:`qmodels.analytic.phase_type`): exactly the model's for the
  exponential, Erlang-k and hyperexponential shapes (balanced means, given
  branches or a three-moment fit); a
  named moment fit for the deterministic, uniform, lognormal, Pareto and
  empirical ones (deterministic: Erlang-k, k = ``max_phases``, 20 by
  default, 10 then 5 when the chain at 20 passes ``max_states``, and then
  the answers at k, k/2 and k/4 extrapolated to the shape's scv; the
  others: two moments below SCV 1, three above where an H2 has them).
  A job in service is in one phase; its phase moves on at the phase's rate
  (times the job's share of the server at a PS or load-dependent station).
  An answer with a fitted shape is labelled approximate and names the fit
  in its assumptions.  Where the network is product form the shapes at PS,
  LCFS-PR, delay and load-dependent stations do not change the answer
  (BCMP insensitivity) and are taken exponential (said in the label).
* **Delay**: every job served at once.
* **FCFS, c servers**: the first ``c`` jobs in arrival order are in service.
  The queue order is part of the state whenever more than one job type can
  be present and jobs can queue (or the service has phases), so
  class-dependent service is exact (it is not product form).
* **Priority** (``prio``: non-preemptive; ``prio-pr``: preemptive resume;
  c servers; the classes' ``priority``, 0 the highest): a waiting job of a
  higher level is served before any of a lower one, FCFS within a level;
  at ``prio-pr`` an arriving job takes the server of the job in service
  that would be served last (the lowest level, the latest arrival) when it
  comes before it, and that job later resumes in the phase it was in (as
  the simulator: the remaining work resumes).  A priority queue visited by
  classes of one level is FCFS.  **LCFS-PR** (one server): the latest
  arrival is served, the one it displaced resumes later.
* **PS, c servers**: each of ``n`` jobs is served at ``min(1, c/n)`` of a
  server.
* **Load-dependent**: with ``n`` present the station completes at
  ``a(n)/S`` split in proportion to the jobs of each type (BCMP, multi-class
  load-dependent PS).
* **Think time** ``Z`` of a closed class: an infinite-server stage, once per
  cycle: with ``routing``, just before the job enters the class's reference
  station; with ``visits``, one more place of the random routing below,
  with visit ratio 1.  A job that finishes thinking and finds its next
  station full waits there (blocked), holding nothing but its tokens.
* **Finite capacity, blocking after service** (Perros, *Queueing Networks
  with Blocking*, 1994, sec. 1.2): a job that completes service and is routed
  to a full station stays where it is, holding its server, until a place
  frees; blocked jobs enter in the order they were blocked.  A blocked job
  at a PS station keeps one server's share; the others share the rest.  An
  open arrival whose first station is full is lost.
* **Token pools**: a job takes a token of pool ``P`` before it enters
  ``P.acquire`` (unless it already holds one), waiting FIFO without holding
  a server (it has left its previous station); it gives the token back when
  it *leaves* ``P.release`` (a job blocked after service at ``release``
  still holds it).  A freed token goes to the head of the waiting line.
  Jobs waiting for a token are in no station: they appear in
  ``info["pools"][P]["waiting"]`` and in the class response time, not in
  any station's Q.
* **Class switching** (:mod:`qmodels.model.chains`): a routing entry
  (station i, class r) -> (station j, class s) with probability p moves
  the job and changes its class; a job's class is part of its state at
  every station, so a closed chain's population (the sum of its classes')
  is split among its classes as the routing takes it (where the jobs
  start does not matter: the chain's routing is irreducible).  A class's
  X is per cycle of its chain (closed) or per arrival to it (open), and
  its R the time a chain job spends as that class (Q_c / X), as in the
  chain reduction (:mod:`qmodels.analytic.switching`) and the simulator.
  Token pools with class switching are refused.
* **Routing**: a class given by ``routing`` follows it.  A class given by
  ``visits`` or ``demands`` is routed at random in proportion to its visit
  ratios (from any station, next station ``j`` with probability
  ``v_j / sum(v)``; an open class then leaves with probability
  ``1/sum(v)``); any Markov routing with the same visit ratios gives the
  same answer in product form, but not with blocking or pools, so classes
  that meet a binding capacity must give ``routing``, and classes that use
  a pool must give ``routing`` or use pools with a ``path``: each chain of
  held stations (:func:`qmodels.model.pool_chains`) is then one place of
  the random routing, traversed in order (as in the simulator).  A class
  given by ``route`` follows that path (its routing table).  Outside
  product form a class routed at random makes the result warn, naming the
  way to give its path.
* **Open classes**: a renewal stream of rate ``arrival_rate`` whose
  inter-arrival time has the shape ``interarrival`` (default exponential:
  Poisson), as a Coxian phase-type distribution like service (its phase in
  the state; the same exact forms and fits); or a correlated stream given
  as a Markovian arrival process (:class:`~qmodels.model.map.MAP`), held
  exactly: its phase is in the state, changes without an arrival at the
  rates D0 off its diagonal and with one at the rates D1, the next interval
  starting in the phase D1's row chose (Neuts 1979; Lucantoni 1991; a
  Coxian renewal stream is the MAP D0 = T, D1 = t e_1, and both go through
  the same moves).  The state space is truncated
  at ``open_limit`` open jobs in the network (arrivals beyond it are turned
  away); the probability of being at the bound (for a Poisson stream the
  fraction of arrivals turned away, PASTA) is ``info["truncation_mass"]``.
  When capacities alone bound the open population no truncation is made
  and the mass is 0.

Restrictions (each raises :class:`~qmodels.errors.UnsupportedModelError`):
a shape with no phase-type form (a :class:`~qmodels.distributions.Distribution`
subclass the module does not know), zero service time at a visited
station, symbolic parameters, a pool's ``acquire`` station with a finite
capacity, two pools acquired at one station, a load-dependent station that
a job can be blocked at, a preemptive (``prio-pr``, ``lcfs-pr``) station
that a job can be blocked at, more states than ``max_states``, and
blocking deadlocks.  A network with fork-joins is solved by the chain of
:mod:`qmodels.analytic._ctmc_forkjoin` (one closed class or one open
class of Poisson arrivals, its jobs truncated as above; exponential
times, single-server FCFS queues on the branches, one task per branch:
exact; anything else refused by name there).

Which builds are compiled: the numba kernel of
:mod:`qmodels.analytic._ctmc_fast` builds every network without token
pools and without a capacity that can be reached, service phases,
priority and LCFS-PR queues and phase-type arrivals included; networks
with pools or reachable capacities (blocking, loss) are built by the
Python generator :class:`~._ctmc_chain._Chain`, which follows the same
semantics (the two are checked to number the same states and rates on
random networks, tests/test_ctmc_compiled.py).

References
----------
Stewart, W. J., *Introduction to the Numerical Solution of Markov Chains*,
Princeton, 1994, ch. 2 (direct methods: replace one balance equation by the
normalisation condition).
Bolch, G., Greiner, S., de Meer, H., Trivedi, K. S., *Queueing Networks and
Markov Chains*, 2nd ed., Wiley 2006, ch. 2-3 (CTMC, global balance
pi Q = 0, sum pi = 1).
Perros, H. G., *Queueing Networks with Blocking*, Oxford, 1994 (blocking
after service).
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np

from ..errors import (
    InvalidValueError,
    NumericalWarning,
    ProblemTooLargeError,
    UnstableError,
    UnsupportedModelError,
)
from ..model.network import Closed, Delay, LoadDependent, Network
from ..results import Result, label_of
from . import _ctmc_fast
from . import _ctmc_solve as _la
from ._ctmc_chain import _Chain
from ._ctmc_spec import _DELAY, _FCFS, _FREE, _LD, DEFAULT_OPEN_LIMIT, _check_size, _Spec
from .contract import answers

__all__ = ["ctmc", "marginal", "DEFAULT_OPEN_LIMIT"]


# ---------------------------------------------------------------------------
# solving pi Q = 0
# ---------------------------------------------------------------------------

def _pinned_solve(Q, spsolve, pin=0):
    """pi Q = 0 with pi_pin = 1 (by default the chain's first state, where
    the breadth-first build starts: the closed jobs placed, no open job),
    solved on the other m - 1 balance equations, which keep Q's sparsity
    (Stewart 1994, sec. 2.3); normalised.  None when it is not accurate
    (the pinned state improbable, so the others are huge multiples of it):
    :func:`_stationary` therefore pins the state of smallest exit rate
    (:func:`._ctmc_solve.pin_first`), and imposes sum(pi) = 1 by a row of
    ones where that fails too, slower (a dense row fills the LU) but
    robust."""
    A, b, _ = _la.pinned_system(Q, pin)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = np.atleast_1d(spsolve(A.tocsc(), b))
    return _la.finish(Q, Q.T, pin, x)


#: chains of more states than this are solved iteratively (the LU of a
#: multi-class chain fills in: 9,261 states of three classes over three
#: queues, 34 million nonzeros in L + U); smaller ones by LU as before
ITERATIVE_FROM = 2_000
#: relative residual ||A x - b|| / ||b|| of the pinned system at which the
#: Krylov methods stop (the result is then checked as an LU's is: max
#: |pi Q| at most 1e-12 times the largest rate); at 1e-12 the 91,125-state
#: benchmark chain agreed with exact MVA to 2e-12 only, at 1e-14 to 3e-14
#: for the same time
ITERATIVE_RTOL = _la.RTOL


def _bicgstab(A, b):
    """x with A x = b by Jacobi-preconditioned BiCGSTAB
    (:func:`._ctmc_solve.jacobi_bicgstab`)."""
    return _la.jacobi_bicgstab(A, b)


def _stationary(n, rows, cols, vals, names_of_state, used=None, guess=None, lattice=None,
                bfs=False):
    """Stationary vector of the generator given by its off-diagonal rates.

    The recurrent class must be unique; transient states get probability 0.
    Direct method (Stewart 1994, sec. 2.3): one state pinned to 1 (the one
    of smallest exit rate, :func:`._ctmc_solve.pin_first`: the chain holds
    it longest, so it is not improbable, which keeps a stiff chain's solve
    well scaled), its balance equation dropped, the rest solved by sparse
    LU (SuperLU); where that is not accurate, sum(pi) = 1 in place of one
    equation.  A chain of more than :data:`ITERATIVE_FROM` states is solved
    iteratively (:func:`._ctmc_solve.stationary_pinned`: BiCGSTAB
    preconditioned by the lattice multigrid where ``lattice`` is given,
    by Jacobi, or from 20,000 states by ILU(0), then GMRES preconditioned
    by aggregation multigrid, a complete LU whose fill the memory budget
    caps, then
    BiCGSTAB and GMRES preconditioned by an incomplete LU whose fill the
    budget caps), never by an uncapped LU (its fill is not bounded); a
    chain none of them solves is refused
    (:class:`~qmodels.errors.UnsupportedModelError`, naming what was
    tried).  Returns pi and the residual max |pi Q|; appends the solver's
    name (``"lu"``, ``"bicgstab"``, ``"mg-bicgstab"``, ``"ilu0-bicgstab"``,
    ``"amg-gmres"``, ``"ilu-bicgstab"`` or ``"ilu-gmres"``) to ``used`` if
    given.  ``guess`` (log pi up to a constant, per state:
    :func:`_product_form_guess`) is where the iterative solve starts;
    ``lattice`` (:func:`._lattice_mg.coarsening` of the states, or None)
    offers the lattice multigrid to the iterative solve.  ``bfs``: the
    triplets are a breadth-first build's from state 0 (:func:`._ctmc_fast._bfs`:
    grouped by source in ascending order, one entry per target, none into
    the source, every state reachable from state 0), which lets Q^T be made
    by a counting sort and irreducibility be checked by one search.
    """
    import scipy.sparse as sp
    from scipy.sparse.csgraph import breadth_first_order, connected_components
    from scipy.sparse.linalg import spsolve

    rows, cols = (x if isinstance(x, np.ndarray) and x.dtype.kind in "iu"
                  else np.asarray(x, dtype=np.int64) for x in (rows, cols))
    vals = np.asarray(vals, dtype=float)
    # the rates out of each state, summed in the build's order (a state's
    # rates are contiguous in the triplets)
    out = np.bincount(rows, weights=vals, minlength=n)
    dead = np.flatnonzero(out == 0)
    if n > 1 and dead.size:
        raise UnsupportedModelError(
            "the chain has a state with no way out: "
            f"{names_of_state(int(dead[0]))}: a blocking deadlock, or jobs of a lower priority "
            "level that never get the server because higher-level jobs, returning at once, "
            "keep it busy forever (their throughput would be 0); raise capacities, change the "
            "routing or the levels"
        )
    # the generator made once, as Q^T in CSR (so Q in CSC, the solvers'
    # form, is its transpose view): one conversion of the triplets, not a
    # matrix of the rates, its difference with the diagonal and a CSC copy
    # (0.13 + 0.21 + 0.23 s of CPU at 1,001,001 states); a breadth-first
    # build's triplets by a counting sort (:func:`._ctmc_fast._transposed`)
    QT = None
    if bfs and n > ITERATIVE_FROM:
        ok, indptr, indices, data = _ctmc_fast._transposed.run(len(rows), n, rows, cols, vals,
                                                               out)
        if ok:
            QT = sp.csr_matrix((data, indices, indptr), shape=(n, n))
            QT.has_canonical_format = True
        del indptr, indices, data
    if QT is None:
        idx = np.arange(n, dtype=np.result_type(rows.dtype, cols.dtype))
        QT = sp.csr_matrix((np.concatenate((vals, -out)),
                            (np.concatenate((cols, idx)), np.concatenate((rows, idx)))),
                           shape=(n, n))
        del idx
    keep = np.arange(n)
    # every state of a breadth-first build is reachable from state 0, so the
    # chain is irreducible where every state reaches state 0: one search of
    # Q^T from it (0.23 s at 1,005,937 states, where the strongly connected
    # components took 0.76 s)
    if not (bfs and len(breadth_first_order(QT, 0, directed=True,
                                            return_predecessors=False)) == n):
        # Q^T's graph is Q's reversed: the same strongly connected components
        ncomp, labels = connected_components(QT, directed=True, connection="strong")
        if ncomp > 1:
            # closed components: no rate leaving them
            leaving = np.zeros(ncomp, dtype=bool)
            cross = labels[rows] != labels[cols]
            leaving[labels[rows[cross]]] = True
            closed = np.flatnonzero(~leaving)
            if len(closed) != 1:
                raise UnsupportedModelError(
                    f"the chain has {len(closed)} closed classes of states (for example "
                    f"{names_of_state(int(np.flatnonzero(labels == closed[0])[0]))}); "
                    "its long-run behaviour depends on the start: a blocking deadlock?"
                )
            keep = np.flatnonzero(labels == closed[0])
            if keep.size == 1 and n > 1:
                raise UnsupportedModelError(
                    "the chain ends in a blocking deadlock: "
                    f"{names_of_state(int(keep[0]))}; raise capacities or change the routing"
                )
    # a closed class has no rate leaving it, so its states' diagonal is kept
    Q = QT.T if keep.size == n else sp.csc_matrix(QT.T)[keep][:, keep].tocsc()
    del QT
    m = Q.shape[0]
    outB = out[keep]
    if m == 1:
        pi_k = np.ones(1)
        how = "lu"
    else:
        pi_k, how = None, "lu"
        if m > ITERATIVE_FROM:
            if lattice is not None and keep.size != n:
                from . import _lattice_mg

                lattice = _lattice_mg.restrict(lattice, keep)
            pi_k, how, tried = _la.stationary_pinned(
                Q, _la.budget(), None if guess is None else guess[keep], lattice)
            if pi_k is None:
                raise UnsupportedModelError(
                    f"ctmc: no iterative solve of the {m:,}-state chain reached the residual "
                    f"max |pi Q| <= {_la.RESID_TOL:g} x the largest rate ({'; '.join(tried)}); "
                    f"a complete sparse LU is not tried above {ITERATIVE_FROM:,} states, its "
                    "fill could pass the memory budget; reduce the populations or open_limit")
        if pi_k is None:
            with _la.one_blas_thread():
                pi_k = _pinned_solve(Q, spsolve, _la.pin_first(Q))
                if pi_k is None:
                    pi_k = _pinned_solve(Q, spsolve)
                if pi_k is None:
                    M = Q.T.tolil()
                    M[m - 1, :] = np.ones(m)
                    rhs = np.zeros(m)
                    rhs[m - 1] = 1.0
                    pi_k = spsolve(M.tocsc(), rhs)
        if not np.all(np.isfinite(pi_k)):
            raise UnsupportedModelError("the balance equations are singular (reducible chain?)")
        pi_k = np.where(pi_k < 0, 0.0, pi_k)  # round-off only (checked by the residual)
        pi_k /= pi_k.sum()
    resid = float(np.max(np.abs(Q.T @ pi_k))) if m > 1 else 0.0
    scale = float(outB.max()) if m > 1 else 1.0
    if resid > 1e-8 * max(scale, 1.0):
        warnings.warn(
            f"ctmc: residual max|pi Q| = {resid:.3g} is large for rates up to {scale:.3g}",
            NumericalWarning,
            stacklevel=3,
        )
    pi = np.zeros(n)
    pi[keep] = pi_k
    if used is not None:
        used.append(how)
    return pi, resid


# ---------------------------------------------------------------------------
# public solver
# ---------------------------------------------------------------------------

@answers(switching="native")
def ctmc(net: Network, *, max_states: int = 200_000, open_limit: int | None = None,
         max_phases: int | None = None) -> Result:
    """Exact solution of a small network as a continuous-time Markov chain.

    Parameters
    ----------
    net : Network
        Delay, FCFS, PS, priority (``prio``, ``prio-pr``) and LCFS-PR queues
        (c servers), load-dependent stations; service of any shape
        (phase-type: exact for exponential, Erlang and hyperexponential,
        fitted for the others); closed classes, open classes with any
        inter-arrival shape; finite capacities (blocking after service, loss
        of open arrivals); token pools.  See the module docstring for the
        exact semantics and restrictions.
    max_states : int
        Largest state space to build; a larger one raises
        :class:`~qmodels.errors.ProblemTooLargeError` with the count.
        The budget is enforced three times, each refusal naming its figure:
        (1) before any state is built, where no closed job can be blocked
        or wait for a token, a lower bound on the count (the placements of
        the closed jobs) is checked against ``max_states``, so a far too
        large chain is refused at once; (2) before the compiled build
        allocates anything, its states, nonzero rates and bytes are
        estimated and a chain needing more than half the memory available
        is refused; (3) while building, the state after the
        ``max_states``-th stops the build.  ``qm.solve(net)`` gives the
        chain 50,000 states.  Measured on one core of a loaded 2-core
        machine (``python -m benchmarks.bench_ctmc --ph``, 2026-11-29,
        with the lattice multigrid of large closed chains): about 25,000
        to 210,000 states per CPU second end to end for phase-type and
        priority models, the largest within 10 CPU s 231,361 states (two
        classes at a priority CPU, 8.6-9.0 s), 1,005,937 (a closed
        three-tier model, 9.2-9.3 s), 1,441,201 to 1,691,301 (a closed
        two-queue model, 8.6-8.7 s and 9.7-10.3 s) and 1,883,842 (an open
        tandem fed by H2 arrivals, 8.6-10.0 s)
        (``benchmarks/README.md``).  Product-form networks of about
        a million states (``python -m benchmarks.bench_ctmc_large``, one
        BLAS thread): 6 to 12.5 CPU s end to end, 753,571 to 1,221,759
        states, equal to exact MVA within 2e-12.
    open_limit : int, optional
        Bound on the number of open jobs present when capacities do not
        already bound them; the probability of being at the bound (the
        fraction of arrivals turned away) is ``info["truncation_mass"]``,
        and a :class:`NumericalWarning` is issued when it exceeds 1e-6.  By
        default the bound starts at :data:`DEFAULT_OPEN_LIMIT` = 40 and
        doubles until that probability is at most :data:`TRUNCATION_TOL`
        (1e-9), as long as the next chain stays within :data:`GROW_STATES`
        (20,000) and ``max_states`` states (else the warning, and a note,
        say where it stopped); the bound used is ``info["open_limit"]``.
    max_phases : int, optional
        The most phases a *fitted* low-variability shape gets (a
        deterministic time is an Erlang of ``max_phases`` phases: the
        M/G/1 mean wait is then overstated by the factor 1 + 1/k).  By
        default 20, then 10, then 5 when the chain at 20 passes
        ``max_states`` (the label names the k used), and the answer is
        carried to the shape's own scv from the chains at k, k/2 and k/4
        (Richardson's extrapolation in the fitted scv: exact for an M/D/1
        queue's mean, ``info["extrapolation"]`` and a note say how far it
        moved the figures).  Given, that k is used as it is (no
        extrapolation).  Exact Erlang shapes keep their own k.

    Returns
    -------
    Result
        ``method="ctmc"``.  Station U per server is the fraction of time a
        server is *held* (serving or blocked after service; without
        blocking this is X S / c; delay: mean number present), station R
        per visit (Q/X, blocking at the station included, token waits
        excluded), class X in cycles (closed)
        or accepted jobs (open) per second, class R excluding think time
        (N/X - Z for closed classes, Little's law with token waits for open
        ones).  ``info`` holds ``states``, ``residual`` (max |pi Q|),
        ``truncation_mass``, ``loss`` (class -> fraction of arrivals lost
        at a full station), ``blocked`` (station -> mean number of jobs
        blocked there), ``pools`` (pool -> mean ``waiting`` jobs, mean
        ``held`` tokens, ``utilization`` = held/tokens), ``marginals``
        (station -> P(n jobs present), n = 0, 1, ...) and ``linear_solver``
        (``"lu"``, ``"bicgstab"``, ``"mg-bicgstab"``, ``"ilu0-bicgstab"``,
        ``"amg-gmres"``, ``"ilu-bicgstab"`` or ``"ilu-gmres"``;
        the notes name it with the residual).  An answer with a fitted
        shape has ``approximation`` (its form, whose measured error
        envelope it quotes) and, when extrapolated in the phases,
        ``extrapolation`` (the phases, states and weights of the chains
        combined, the degree, the target scv, and ``moved_X``/``moved_R``:
        how far the figures moved from the finest chain's).

    Notes
    -----
    The reachable states are enumerated breadth first from one valid
    placement of the closed jobs; the off-diagonal rates follow from the
    semantics in the module docstring.  The stationary vector solves
    pi Q = 0, sum(pi) = 1 with one state pinned (the state of smallest
    exit rate, which the chain holds longest: on a network with a
    bottleneck the others are then not huge multiples of an improbable
    one) and a sparse LU factorisation (Stewart 1994, sec. 2.3; Bolch et
    al. 2006, sec. 3.1); a chain of more than 2,000 states by
    BiCGSTAB to a relative residual of 1e-14 (van der Vorst 1992; the LU of
    a multi-class chain fills in), preconditioned by Jacobi, or from 20,000
    states by the incomplete LU of zero fill (Saad 2003, sec. 10.3.2); a
    closed chain of 100,000 states or more whose states are counts and that
    has no product form to start from, first by one V-cycle of multigrid
    over the population lattice (:mod:`qmodels.analytic._lattice_mg`:
    its iterations grow far more slowly with the population, 22 against
    183 at 583,400 states), pinned where its aggregated chain is most
    probable; then, on a stiff
    chain where that does not converge, by BiCGSTAB and GMRES
    preconditioned by an incomplete LU whose fill the memory budget caps
    (Saad 2003, sec. 10.4; :mod:`qmodels.analytic._ctmc_solve`), each
    checked as the LU is (max |pi Q| at most 1e-12 times the largest
    rate); a complete LU is not tried above 2,000 states (its fill is not
    bounded), and a chain none of them solves is refused by name.  The
    sparse solves run on one BLAS thread.  The build is compiled
    (:mod:`qmodels.analytic._ctmc_fast`: numba, same states in the same
    order, same rates) for a network without token pools or reachable
    capacities; the others are built in Python.  Before the compiled build
    allocates anything, its memory is estimated (states, nonzero rates,
    bytes) and a chain that would need more than half the available
    memory is refused with :class:`~qmodels.errors.ProblemTooLargeError`
    naming the estimate.  States outside the unique closed
    communicating class (transients of the initial placement) get
    probability 0.  Figures are expectations under pi: Q_rk = E[n_rk],
    X_rk = E[completion rate of r at k] (every completion eventually
    departs), U_k = E[servers held at k] / c_k (serving or blocked; equal to
    X_k S_k / c_k when nothing can block; delay: E[n_k]; load-dependent:
    1 - P(empty)), as the simulator measures it.

    References
    ----------
    Stewart, *Introduction to the Numerical Solution of Markov Chains*,
    1994, ch. 2.  Bolch et al., *Queueing Networks and Markov Chains*, 2nd
    ed. 2006, ch. 2-3.  Perros, *Queueing Networks with Blocking*, 1994.

    Examples
    --------
    >>> import qmodels as qm
    >>> net = qm.Network([qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08)],
    ...                  [qm.Closed("tx", 3, visits={"cpu": 1, "disk": 1})])
    >>> round(ctmc(net).X["tx"], 4)   # equals exact MVA
    11.1495
    """
    if isinstance(max_states, bool) or not isinstance(max_states, (int, np.integer)) \
            or max_states < 1:
        raise InvalidValueError(f"max_states must be an integer >= 1, got {max_states!r}")
    if "forkjoin" in net.lowered.kind:
        # fork-joins of FCFS single-server branches, one closed or open
        # class: the chain of queue lengths (refused by name otherwise; an
        # open class's jobs truncated at open_limit as below; max_phases
        # has nothing to bound there: exponential times)
        from ._ctmc_forkjoin import solve as _forkjoin_chain

        return _forkjoin_chain(net, int(max_states), open_limit=open_limit)
    _check_open_load(net)
    tries = (max_phases,) if max_phases is not None else PHASE_STEPS
    for n, k in enumerate(tries):
        try:
            res, limit = _solve_growing(net, max_states, open_limit, k)
            break
        except ProblemTooLargeError:
            # a shape fitted at the phase cap: a coarser fit may fit the budget
            if n + 1 == len(tries) or not _Spec(net, open_limit, k).capped:
                raise
    res = _unvisited(net, res, max_states, limit, k)
    if res.info.get("phase_capped"):
        rule = (f"max_phases = {k} as given" if max_phases is not None else
                f"k = {k}, the first of {', '.join(map(str, PHASE_STEPS))} phases whose chain "
                f"fits max_states = {int(max_states)}")
        res = dataclasses.replace(res, notes=tuple(res.notes) + (
            f"phase cap for the fitted low-variability shapes: {rule}.  Accuracy rule: an "
            f"Erlang-k in place of a deterministic time has scv 1/k, and in an M/G/1 queue "
            f"the mean wait is overstated by the factor 1 + 1/k ({100 / k:.3g} % at k = {k}) "
            "(Pollaczek-Khinchine; Kleinrock 1975, eq. 5.105); in a network that is no "
            "bound: a low priority class starved behind a high one (network 25 of "
            "priority-closed-starved-det, the high level's deterministic service as an "
            "Erlang-5) had its X 53 % high against the simulator (the chains at Erlang-5, -2 "
            "and -1 extrapolated to scv 0: 1.6 % below method='priority', which is 0.2 % "
            "off the simulator there)",))
        if max_phases is None:
            def coarser(kk):
                with warnings.catch_warnings():
                    # (the finest chain's warnings were given)
                    warnings.simplefilter("ignore")
                    r, _ = _solve_growing(net, max_states, limit, kk)
                    return _unvisited(net, r, max_states, limit, kk)

            res = _carried(net, res, k, coarser)
    if res.info.get("fits"):
        # the form whose measured error envelope the answer quotes
        form = ("the chain with its low-variance shapes extrapolated in their phases"
                if "extrapolation" in res.info else
                f"the chain with its low-variance shapes at the phase cap (Erlang-{k})"
                if res.info.get("phase_capped") else "the chain of the fitted shapes")
        res = dataclasses.replace(res, info={**res.info, "approximation": form})
    return res


def _carried(net: Network, first: Result, k1: int, solve) -> Result:
    """A low-variance shape held at the phase cap ``k1`` (an Erlang-k1,
    scv 1/k1, for a deterministic time): the chain again with k1/2 and k1/4
    phases (``solve(k)``, Erlang-1 the exponential) and every figure
    carried to the shape's own scv by the polynomial through the three in
    the fitted scv (Richardson's deferred approach to the limit,
    :func:`qmodels.analytic.phase_type.richardson`; linear in the scv is
    the Pollaczek-Khinchine mean of an M/G/1 queue, exact there, and a
    network is curved beyond that, so the quadratic is tried first and the
    linear step of the two finest where it leaves the figures' range: a
    throughput moved by half its value or more, a queue below zero, a
    server loaded past 1, a visit shorter than its service).  The
    throughputs, queue lengths, utilisations, class response times times
    throughputs (N - X Z for a closed class),
    loss and blocking rates, pool figures and marginal probabilities are
    expectations under the stationary vector, linear in it, so one set of
    weights carries them all and the laws that are linear (job
    conservation, U = X S / c, Little's at each station with R = Q / X)
    hold for the answer.  The shapes are the service times' and the open
    streams' inter-arrival times alike.  On an M/D/1 queue the answer is
    Pollaczek-Khinchine's (the queue is linear in the fitted scv), where
    the Erlang-20 overstates the mean wait by 5 %; on a D/M/1 queue it is
    8e-6 off the GI/M/1 root, the Erlang-20 stream 4.3 %; on a closed network it
    is the better estimate the finer the chains (tests/test_ctmc_carried.py
    measures both against exact references).  ``first`` is returned as it
    is when no coarser chain can be solved or no degree stays in range
    (with a note).  A shape that the cap k1 fits exactly (a mixture of
    Erlangs) keeps its phases in the coarser chains
    (:func:`qmodels.analytic.phase_type.coarser_caps`), so that only the
    capped shapes' fitted scv moves between them."""
    from ..errors import ProblemTooLargeError
    from .phase_type import capped_scvs, coarser_caps, richardson

    targets = capped_scvs(net, k1)
    if not targets:
        return first
    runs, ks = [first], [k1]
    for k in coarser_caps(net, k1):
        try:
            runs.append(solve(k))
        except ProblemTooLargeError:
            break
        ks.append(k)
    if len(runs) < 2:
        return first
    top = max(len(m) for r in runs for m in r.info["marginals"].values())
    figs = [_expectation_figures(net, r, top) for r in runs]
    Xc1 = figs[0]["Xc"]
    live = Xc1 > 0
    scale = max([float(c.population) for c in net.classes if isinstance(c, Closed)] + [1.0])
    # (a delay's U is its mean number present)
    servers = np.array([not isinstance(st, Delay) for st in net.stations])
    S = np.asarray(net.service_times, dtype=float)

    def admissible(F):
        # in range: throughputs within half of the finest chain's, queues
        # not below zero, no server loaded past 1, and no visit shorter than
        # its service, Q >= X S (a D/D/1 queue's R falls from 0.89 at
        # Erlang-20 towards its service time 0.807 faster than any
        # polynomial in 1/k: the quadratic undershot it, 0.764)
        return not (np.any(F["Xc"][live] <= 0.5 * Xc1[live])
                    or np.any(F["Xc"][live] >= 1.5 * Xc1[live])
                    or np.any(F["Q"] < -1e-12 * scale)
                    or np.any(F["U"].sum(axis=0)[servers] > 1.0 + 1e-9)
                    or np.any(F["Q"] < F["X"] * S * (1.0 - 1e-9) - 1e-12 * scale))

    t0 = float(np.mean(targets))
    out = richardson(figs, t0, [1.0 / k for k in ks], admissible)
    if out is None:
        return dataclasses.replace(first, notes=tuple(first.notes) + (
            "not extrapolated in the phases: the chains with "
            + ", ".join(f"Erlang-{k}" for k in ks) + " in place of the low-variance shapes "
            f"carry the figures out of their range (the Erlang-{k1} chain's answer is given)",))
    F, degree, w = out
    used = ks[:degree + 1]
    Xc, X = F["Xc"], F["X"]
    Q = np.maximum(F["Q"], 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        Rc = np.where(Xc > 0, F["RcXc"] / np.where(Xc > 0, Xc, 1.0),
                      np.asarray(first.class_response_time, dtype=float))
        Rst = np.where(X > 0, Q / np.where(X > 0, X, 1.0), F["Rst"])
    info = dict(first.info)
    names = net.station_names
    info["residual"] = max(float(r.info["residual"]) for r in runs[:degree + 1])
    info["loss"] = {c: float(v) for c, v in zip(info["loss"], F["loss"])}
    info["blocked"] = {n: float(v) for n, v in zip(names, F["blocked"])}
    if info["pools"]:
        info["pools"] = {p: {"waiting": float(F["pools"][j, 0]), "held": float(F["pools"][j, 1]),
                             "utilization": float(F["pools"][j, 2])}
                         for j, p in enumerate(info["pools"])}
    marg = {}
    for k, n in enumerate(names):
        p = np.maximum(F["marginals"][k], 0.0)
        p = np.trim_zeros(p / p.sum(), "b") if p.sum() > 0 else p[:1]
        p.flags.writeable = False
        marg[n] = p
    info["marginals"] = marg
    R1 = np.asarray(first.class_response_time, dtype=float)
    on = live & (R1 > 0) & np.isfinite(R1)
    moved = float(np.max(np.abs(Xc[live] / Xc1[live] - 1.0))) if live.any() else 0.0
    moved_R = float(np.max(np.abs(Rc[on] / R1[on] - 1.0))) if on.any() else 0.0
    info["extrapolation"] = {"phases": tuple(used), "states": tuple(int(r.info["states"])
                                                                    for r in runs[:degree + 1]),
                             "degree": degree, "weights": tuple(w), "scv": t0,
                             "moved_X": moved, "moved_R": moved_R}
    sizes = ", ".join(f"{n:,}" for n in info["extrapolation"]["states"])
    erlangs = ", ".join(f"Erlang-{k}" for k in used)
    how = "linear" if degree == 1 else f"degree {degree}"
    note = (f"the low-variance shapes held at the phase cap extrapolated to their scv "
            f"({t0:.3g}) from the chains with {erlangs} in their place ({sizes} states; "
            f"Richardson, {how} in the fitted scv): class X moved by up to {100 * moved:.3g} %, "
            f"R by up to {100 * moved_R:.3g} % from the Erlang-{k1} chain's")
    return dataclasses.replace(
        first, class_throughput=Xc, class_response_time=Rc, station_throughput=X,
        station_queue_length=Q, station_response_time=Rst,
        station_utilization=np.where(servers, np.clip(F["U"], 0.0, 1.0), np.maximum(F["U"], 0.0)),
        info=info,
        notes=tuple(first.notes) + (note,))


def _expectation_figures(net: Network, r: Result, top: int) -> dict:
    """The figures of a ctmc answer that are expectations under its
    stationary vector (linear in it), as arrays, for :func:`_carried`; the
    marginals padded to ``top`` entries."""
    names = net.station_names
    Xc = np.asarray(r.class_throughput, dtype=float)
    Rc = np.asarray(r.class_response_time, dtype=float)
    pools = r.info["pools"]
    marg = [np.asarray(r.info["marginals"][n], dtype=float) for n in names]
    return {
        "Xc": Xc,
        "RcXc": np.where(Xc > 0, Rc * Xc, 0.0),
        "X": np.asarray(r.station_throughput, dtype=float),
        "Q": np.asarray(r.station_queue_length, dtype=float),
        "U": np.asarray(r.station_utilization, dtype=float),
        "Rst": np.asarray(r.station_response_time, dtype=float),
        "loss": np.array(list(r.info["loss"].values()), dtype=float),
        "blocked": np.array([r.info["blocked"][n] for n in names], dtype=float),
        "pools": np.array([[v["waiting"], v["held"], v["utilization"]] for v in pools.values()],
                          dtype=float).reshape(len(pools), 3),
        "marginals": np.array([np.pad(m, (0, top - len(m))) for m in marg]),
    }


def _check_open_load(net: Network) -> None:
    """Refuse (:class:`~qmodels.errors.UnstableError`) open classes whose
    load no steady state can carry: where no finite capacity can turn an
    open job away, every open job passes, so a station's open load
    sum_c lambda_c D_ck must stay below its capacity (c servers, a
    load-dependent station's largest multiplier), and a token pool's below
    its tokens: a job holds a token while it is served at the pool's
    ``acquire`` station, so by Little's law the tokens held are at least
    sum_c lambda_c V_c,acquire S_c,acquire / sigma (sigma the fastest a job
    is served there, :func:`~.laws.job_speed`).  Without this the chain,
    truncated at the open-job bound, answered an unstable network with the
    figures of its truncation."""
    from .laws import job_speed

    if not net.open_classes or any(s.capacity is not None for s in net.stations):
        return
    if not set(net.lowered.kind) <= {"delay", "queue", "ld"}:
        return          # (refused below, by name)
    from ..model.chains import chain_rates

    # (a class of a switching chain: its demands are per arrival to the chain)
    lam = np.array(chain_rates(net), dtype=float)
    D = np.asarray(net.demands, dtype=float)
    for k, s in enumerate(net.stations):
        if isinstance(s, Delay):
            continue
        cap = float(max(s.rate_multipliers)) if isinstance(s, LoadDependent) else float(s.servers)
        rho = float(lam @ D[:, k]) / cap
        if rho >= 1.0:
            raise UnstableError(
                f"station {s.name!r} is unstable: its open load rho = sum lambda D / "
                f"{'a_max' if isinstance(s, LoadDependent) else 'c'} = {rho:.6g} >= 1",
                station=s.name, rho=rho)
    V = np.asarray(net.visits, dtype=float)
    S = np.asarray(net.service_times, dtype=float)
    for p in net.pools:
        k = net.station_names.index(p.acquire)
        users = [i for i, c in enumerate(net.classes)
                 if p.classes is None or c.name in p.classes]
        held = sum(lam[i] * V[i, k] * S[i, k] for i in users) / float(job_speed(net.stations[k]))
        if held >= p.tokens:
            raise UnstableError(
                f"token pool {p.name!r} is unstable: its open jobs hold at least {held:.6g} "
                f"tokens on average while served at {p.acquire!r} (lambda V S), and it has "
                f"{p.tokens}",
                station=p.acquire, rho=held / p.tokens)


#: largest probability at the open-job bound that the default truncation
#: leaves (it grows the bound until the probability is below this)
TRUNCATION_TOL = 1e-9
def shortfall(limit, mass: float) -> float:
    """The estimated relative shortfall of the mean queues of a chain whose
    open jobs are cut at ``limit`` = K, the probability at the bound being
    ``mass`` = p: (K + 1) p.

    For one M/M/1 queue cut at K (the M/M/1/K queue, p_n = (1 - r) r^n /
    (1 - r^(K+1)); Gross & Harris, *Fundamentals of Queueing Theory*, 3rd
    ed., sec. 2.5) the mean queue falls short of the M/M/1 mean r / (1 - r)
    by (K + 1) r^(K+1) / (1 - r^(K+1)), which is exactly (K + 1) p_K of it.
    For a network's chain it is an estimate, not a bound (several queues
    share the cut; an M/E2 -> H2 tandem at r = 0.98 cut at 80 jobs, p =
    0.0097: (K + 1) p = 78 %, its R 34 % short)."""
    return (int(limit) + 1) * float(mass)


#: the default truncation grows only while the next chain would have at most
#: this many states (a chain of open jobs over several stations grows as
#: bound^stations, and its solve with it)
GROW_STATES = 20_000


#: the phase caps tried in turn for a low-variability shape that is fitted
#: (a deterministic time: Erlang-20, else Erlang-10, else Erlang-5) when
#: ``max_phases`` is not given and the chain at one cap passes max_states
PHASE_STEPS = (20, 10, 5)


def _solve_growing(net: Network, max_states, open_limit, max_phases=PHASE_STEPS[0]):
    """Solve; with the default ``open_limit`` (None), double the bound on
    the open jobs from :data:`DEFAULT_OPEN_LIMIT` until the probability at
    the bound is at most :data:`TRUNCATION_TOL` (the fraction of arrivals
    the truncation turns away, by PASTA) or the chain would outgrow
    ``max_states``.  Only the last solve's warnings reach the caller.
    Returns the result and the bound used (None if nothing was truncated)."""
    if open_limit is not None:
        return _solve(net, max_states, open_limit, max_phases), open_limit
    # the chain grows at most as bound^d, d the stations open jobs visit
    d = max(1, sum(1 for k in range(len(net.stations)) if any(
        net.visits[i][k] > 0 for i, c in enumerate(net.classes) if not isinstance(c, Closed))))
    limit, res, said, why = DEFAULT_OPEN_LIMIT, None, [], None
    masses: list[float] = []
    while True:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                new = _solve(net, max_states, limit, max_phases)
        except ProblemTooLargeError:
            if res is None:
                raise
            why = f"a bound of {limit} would pass max_states = {int(max_states)}"
            break
        res, said = new, caught
        if res.info["open_limit"] is None or res.info["truncation_mass"] <= TRUNCATION_TOL:
            break
        masses.append(float(res.info["truncation_mass"]))
        _check_settles(masses, limit, d)
        guess = res.info["states"] * 2 ** d
        if guess > min(GROW_STATES, int(max_states)):
            why = (f"a bound of {2 * limit} would need up to {guess} states (the default "
                   f"grows to {GROW_STATES}; pass open_limit= for a larger chain)")
            break
        limit *= 2
    for w in said:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if why is not None:
        res = dataclasses.replace(res, notes=tuple(res.notes) + (
            f"the open-job bound stopped growing at {res.info['open_limit']}: {why}",))
    return res, res.info["open_limit"]


#: the default truncation gives up on a chain whose probability at the bound
#: falls by less than 1 - SETTLE_RATIO at each of two doublings of the bound
SETTLE_RATIO = 0.9


def _check_settles(masses: list, limit: int, d: int) -> None:
    """Refuse (:class:`~qmodels.errors.UnstableError`) open jobs that pile
    up at the truncation bound: the probability there falls by less than
    10 % at each of the last two doublings of the bound and is more than
    2 (d + 1) / L, with L the bound and d the stations open jobs visit.

    A stable chain's tail falls geometrically, so doubling the bound takes
    most of the mass off it; at saturation (a null-recurrent chain) the
    truncated chain spreads its mass evenly over the open populations, and
    the sum of d such stations (a token queue one more) puts about d / L at
    the bound (P(n) ~ n^(d-1), normalised over n <= L); more than twice
    that is mass piling up against the bound, which only an unstable
    network does (a pool whose tokens another class's jobs slow down, an
    open class that closed jobs crowd out of a station).  Without this the
    truncation grew to its state budget, each chain slower to solve (pi_0
    vanishes, the pinned solve fails and the dense normalisation row fills
    the LU: minutes at 10,000 states), and answered with the figures of its
    truncation."""
    if len(masses) < 3:
        return
    a, b, c = masses[-3:]
    if b > SETTLE_RATIO * a and c > SETTLE_RATIO * b and c * limit > 2 * (d + 1):
        raise UnstableError(
            f"the open jobs do not settle: the probability at the truncation bound stays at "
            f"{a:.4g}, {b:.4g}, {c:.4g} as the bound doubles to {limit} (jobs pile up "
            "against it), so the network is unstable; pass open_limit= to solve the "
            "truncated chain anyway (an approximation)")


def _unvisited(net: Network, res: Result, max_states, open_limit,
               max_phases=PHASE_STEPS[0]) -> Result:
    """Station R per visit of a class at a queue it never visits: the
    arrival-theorem value, the mean time a class-c job would spend there
    on arrival, S_ck sum_{j>=1} j / a(j) P(n_k = j - 1), with the marginal of
    the network with one class-c job less (closed class with N_c >= 1;
    Reiser & Lavenberg 1980) or of the network itself (open class, PASTA;
    a closed class of population 0).  This is what exact MVA, convolution,
    Schweitzer and Linearizer report; in a network that is not product form
    (blocking, token pools) it is a convention, not an observation."""

    V = np.asarray(net.visits, dtype=float)
    S = np.asarray(net.service_times, dtype=float)
    R = np.array(res.station_response_time, dtype=float)
    changed = False
    for ci, c in enumerate(net.classes):
        ks = [k for k, st in enumerate(net.stations)
              if V[ci, k] == 0 and not isinstance(st, Delay) and S[ci, k] > 0]
        if not ks:
            continue
        base = res
        # one job fewer in the class's chain (any class of it: only the
        # chain's total matters in steady state)
        mine = [net.classes[x] for x in _chain_classes(net, ci)] if isinstance(c, Closed) else []
        giver = next((x for x in mine if int(x.population) >= 1), None)
        if giver is not None:
            base = _solve(net.with_population(int(giver.population) - 1, giver.name),
                          max_states, open_limit, max_phases)
        for k in ks:
            st = net.stations[k]
            p = np.asarray(base.info["marginals"][st.name], dtype=float)
            j = np.arange(1, len(p) + 1)
            a = np.array([float(st.rate_multiplier(int(x))) for x in j])
            R[ci, k] = S[ci, k] * float(np.sum(j / a * p))
            changed = True
    if not changed:
        return res
    R.flags.writeable = False
    return dataclasses.replace(res, station_response_time=R)


def _chain_classes(net: Network, ci: int) -> list[int]:
    """Class indices of the routing chain of class ``ci`` (itself first)."""
    chain = [net.class_index(n) for n in net.chain_of(net.class_names[ci])]
    return [ci] + [x for x in chain if x != ci]


def _solve(net: Network, max_states, open_limit, max_phases=PHASE_STEPS[0]) -> Result:
    spec = _Spec(net, open_limit, max_phases)
    _check_size(spec, int(max_states))
    chain = _Chain(spec)
    lay = _ctmc_fast.layout(spec, chain)
    if lay is not None:
        return _solve_compiled(net, spec, chain, lay, int(max_states))
    states, rows, cols, vals = chain.build(int(max_states))
    n = len(states)

    def describe(i):
        return _describe(spec, chain, states[i])

    used: list[str] = []
    pi, resid = _stationary(n, rows, cols, vals, describe, used)
    return _starved(net, spec, _figures(net, spec, chain, states, pi, resid, used[0]))


def _starved(net, spec, res: Result) -> Result:
    """``res``, or an :class:`UnsupportedModelError` naming a closed class
    with jobs whose long-run throughput is 0 (its response time infinite):
    a lower priority level that higher-level jobs, returning at once, keep
    off the server forever.  (A transient answer may have X = 0 at t = 0;
    only the stationary one is checked.)"""
    for r, c in enumerate(net.classes):
        if isinstance(c, Closed) and spec.pop[r] > 0 and math.isinf(res.class_response_time[r]):
            raise UnsupportedModelError(
                f"class {c.name!r}: its {spec.pop[r]} job(s) never complete in the long run "
                "(throughput 0, response time infinite): jobs of a lower priority level that "
                "never get the server because higher-level jobs, returning at once, keep it "
                "busy forever; change the routing or the levels")
    return res


def _too_many(max_states) -> ProblemTooLargeError:
    return ProblemTooLargeError(
        f"the state space has more than max_states = {max_states} states "
        f"(reached {max_states + 1} and still growing); reduce the populations, "
        "capacities or open_limit, or raise max_states")


def _solve_compiled(net, spec, chain, lay, max_states, compiled=None) -> Result:
    """The compiled build (:mod:`._ctmc_fast`): the memory estimate checked
    before anything is allocated, the chain built and its expectations
    taken by numba kernels (plain Python on a small chain), the same
    stationary solve."""
    est_states, _, _, upper = _ctmc_fast.check_memory(spec, lay, max_states)
    # the estimate is a lower bound where stations keep the order of their
    # jobs (orders split the placements): lean towards the machine code there
    work = est_states * lay.D * (1 if upper else 10)
    states, n, rows, cols, vals, nnz, status = _ctmc_fast.build(
        lay, max_states, work=work, compiled=compiled)
    if status:
        raise _too_many(max_states)
    states = states[:n]

    def describe(i):
        return _describe(spec, chain, lay.decode(states[i]))

    used: list[str] = []
    # the product-form start only where the chain can be product form (no
    # order-keeping station nor one counted by phase, Poisson arrivals):
    # elsewhere a poor guess cost more iterations than the start from 0 (an
    # H2 FCFS chain)
    guess = (_product_form_guess(spec, lay, states)
             if n > ITERATIVE_FROM and not lay.ordered.any() and not (lay.kind == 4).any()
             and lay.A == 0 else None)
    lattice = _lattice(spec, lay, states, guess)
    pi, resid = _stationary(n, rows[:nnz], cols[:nnz], vals[:nnz], describe, used, guess,
                            lattice, bfs=True)
    return _starved(net, spec, _result(
        net, spec, n, resid, _compiled_sums(spec, lay, states, n, pi, compiled), used[0],
        build="compiled"))


def _lattice(spec, lay, states, guess) -> list | None:
    """The lattice multigrid's aggregation maps (:mod:`._lattice_mg`) for
    the iterative solve of a compiled build's chain, or None: offered on a
    closed chain of at least :data:`._lattice_mg.MG_STATES` states whose
    states are counts (no order-keeping station) and that has no product
    form to start from (from it the ILU(0) solve needs a few iterations and
    no set-up: a closed tandem of five exponential FCFS queues, 237,336
    states, took 4.3 s end to end so, 6.2 s by the multigrid)."""
    if (guess is not None or len(states) <= ITERATIVE_FROM or lay.ordered.any()
            or np.any(spec.is_open)):
        return None             # (and a small model's solve does not import the module)
    from . import _lattice_mg

    if len(states) < _lattice_mg.MG_STATES:
        return None
    return _lattice_mg.coarsening(states, lay.off, lay.width)


def _product_form_guess(spec, lay, states) -> np.ndarray | None:
    """A start for the iterative solve: the BCMP product form evaluated at
    every state of a compiled build, up to a constant (Baskett, Chandy,
    Muntz & Palacios, JACM 22(2), 1975, thm. 1; Bolch et al. 2006, eqs.
    7.77-7.80): pi(s) ~ prod_k f_k(s_k), with, at a station of n jobs of
    which n_t of type t (a class in one of its service phases),
    f_k = n! / prod_t n_t! x prod_t a_t^{n_t} / beta_k(n) (FCFS kept as
    counts and PS with c servers: beta(n) = prod_{j<=n} min(j, c);
    load-dependent: prod_{j<=n} a(j)), f_k = prod_t a_t^{n_t} / n_t! at a
    delay station and at the think stage, and a_t the visits per cycle
    (per second for an open class: lambda_r V_rk) times the mean time a
    job spends in that phase per visit (the probability of reaching it
    over its rate; Z at the think stage).  Where the network is product
    form this is the stationary vector, and the solve starts at its
    answer; elsewhere (an order-keeping station: each job counted with
    its class's a_t, divided by beta(n); phase-type arrivals ignored) it
    is a guess, and the solve corrects it; :func:`_solve_compiled` uses
    it only where the chain can be product form (no order-keeping
    station, Poisson arrivals), as a poor guess (an H2 FCFS chain) cost
    more iterations than the start from 0.  Either way the answer is the
    solve's, checked by its residual.  Returns log pi(s) + const, or None
    when it is not finite."""
    from scipy.special import gammaln

    K = spec.K
    n = states.shape[0]
    logw = np.zeros(n)
    T = len(lay.tclass)
    with np.errstate(divide="ignore", invalid="ignore"):
        # log a_t at each station: visits x (reach / rate)
        la = np.full((T, K + 1), -np.inf)
        for t in range(T):
            r = int(lay.tclass[t])
            scale = spec.lam[r] if spec.is_open[r] else 1.0
            for k in range(K):
                reach, u = 1.0, int(lay.tbase[t])
                while u != t and u >= 0:
                    reach *= lay.tq[u, k]
                    u = int(lay.tnext[u])
                a = scale * spec.V[r, k] * reach / lay.mu[t, k] if lay.mu[t, k] > 0 else 0.0
                if a > 0:       # (a class switched to has no arrivals of its own)
                    la[t, k] = math.log(a)
            if lay.zthink[t] > 0:
                la[t, K] = math.log(lay.zthink[t])
    for k in range(K + 1):
        o, wd = int(lay.off[k]), int(lay.width[k])
        if wd == 0:
            continue
        block = states[:, o:o + wd]
        if lay.ordered[k]:
            held = block > 0
            tot = held.sum(axis=1)
            logw += np.where(held, la[np.maximum(block - 1, 0), k], 0.0).sum(axis=1)
        else:
            types = lay.colt[k, :wd]
            cnt = block.astype(np.float64)
            tot = block.sum(axis=1)
            lak = la[types, k]
            logw += (cnt * np.where(np.isfinite(lak), lak, 0.0)).sum(axis=1)
            logw -= gammaln(cnt + 1.0).sum(axis=1)
            if k < K and lay.kind[k] == 0:
                continue          # delay: prod a^n / n!
            if k == K:
                continue          # think stage: a delay
            logw += gammaln(tot + 1.0)
        if k == K or lay.kind[k] == 0:
            if lay.ordered[k]:
                logw -= gammaln(tot + 1.0)
            continue
        top = int(tot.max()) if n else 0
        j = np.arange(1, top + 1, dtype=float)
        if lay.kind[k] == 3:
            m = lay.mult[k, :int(lay.nmult[k])]
            beta = m[np.minimum(j.astype(int), len(m)) - 1]
        else:
            beta = np.minimum(j, lay.servers[k])
        logbeta = np.concatenate(([0.0], np.cumsum(np.log(beta))))
        logw -= logbeta[tot]
    if not np.all(np.isfinite(logw)):
        return None
    return logw


def _compiled_sums(spec, lay, states, n, pi, compiled=None) -> _Sums:
    """The :class:`_Sums` of a compiled build (no pools: nothing waits for
    a token; no reachable capacity: nothing blocked or lost)."""
    Q, X, held, p_empty, marg, seen, trunc, mass = _ctmc_fast.expectations(
        lay, states, n, pi, spec.C, spec.truncating, compiled)
    acc = _Sums(spec)
    acc.Q, acc.X, acc.held_srv, acc.p_empty, acc.trunc = Q, X, held, p_empty, trunc
    acc.trunc_mass = float(mass)
    acc.marg = [{int(j): float(marg[k, j]) for j in np.flatnonzero(seen[k])}
                for k in range(spec.K)]
    return acc


def _describe(spec, chain, st) -> str:
    names = spec.net.station_names
    cn = spec.net.class_names
    parts = []
    for k, p in enumerate(st[0][: spec.K]):
        ents = p if chain.ordered[k] else [(t, d) for t, d, n in p for _ in range(n)]
        if ents:
            txt = ",".join(cn[spec.types[t][0]]
                           + (f"#{spec.types[t][2]}" if spec.types[t][2] else "")
                           + (f"->{names[d]}" if d >= 0 else "")
                           for t, d in ents)
            parts.append(f"{names[k]}[{txt}]")
    if len(st) > 5 and st[5]:
        parts.append("arrival phases " + ",".join(
            f"{cn[r]}#{ph}" for r, ph in zip(spec.arr_phased, st[5], strict=True)))
    return "{" + " ".join(parts) + "}"


def _held_servers(spec, chain, k, pk, n, p, out):
    """Add p x (servers held by each class at station k) to ``out``."""
    kind = spec.kind[k]
    types = spec.types
    if chain.ordered[k]:
        for t, _ in pk[: spec.c[k]]:
            out[types[t][0], k] += p
        return
    if kind in (_DELAY, _LD):
        for t, _, m in pk:
            out[types[t][0], k] += p * m
        return
    c = spec.c[k]
    if kind == _FCFS:  # one job type, or never queueing
        for t, _, m in pk:
            out[types[t][0], k] += p * m * min(n, c) / n
        return
    b = sum(m for _, d, m in pk if d != _FREE)  # PS
    free = n - b
    share = min(1.0, (c - b) / free) if free and c > b else 0.0
    for t, d, m in pk:
        out[types[t][0], k] += p * m * (1.0 if d != _FREE else share)


class _Sums:
    """Expectations under pi accumulated state by state (see
    :func:`_expectations`)."""

    def __init__(self, spec):
        K, C = spec.K, spec.C
        self.Q = np.zeros((C, K))
        self.X = np.zeros((C, K))
        self.blocked = np.zeros(K)
        self.held_srv = np.zeros((C, K))  # servers held (serving or blocked), per class
        self.p_empty = np.zeros(K)
        self.waiting = np.zeros(max(spec.P, 1))
        self.waiting_c = np.zeros(C)
        self.held = np.zeros(max(spec.P, 1))
        self.lost = np.zeros(C)
        self.trunc = np.zeros(C)
        self.trunc_mass = 0.0
        self.marg: list[dict[int, float]] = [dict() for _ in range(K)]


def _add_places(spec, chain, places, p, acc):
    """Add state probability ``p`` x (jobs, blocked jobs, servers held,
    marginal counts) of every station of the state's ``places``."""
    for k in range(spec.K):
        pk = places[k]
        ents = ((t, d, 1) for t, d in pk) if chain.ordered[k] else pk
        tot = 0
        for t, d, m in ents:
            acc.Q[spec.types[t][0], k] += p * m
            tot += m
            if d != _FREE:
                acc.blocked[k] += p * m
        if tot:
            _held_servers(spec, chain, k, pk, tot, p, acc.held_srv)
        acc.marg[k][tot] = acc.marg[k].get(tot, 0.0) + p
        if tot == 0:
            acc.p_empty[k] += p


def _expectations(spec, chain, states, pi) -> _Sums:
    """E[.] under pi of queue lengths, completion rates, blocked jobs,
    servers held, token waits and holdings, lost and turned-away arrivals
    and the marginal distributions, in one pass over the states."""
    acc = _Sums(spec)
    K = spec.K
    for i, st in enumerate(states):
        p = pi[i]
        _add_places(spec, chain, st[0], p, acc)
        for place, t, _, rate in chain.rates[i]:
            if place < K:
                acc.X[spec.types[t][0], place] += p * (rate * (1.0 - chain.cont(t, place)))
        for j in range(spec.P):
            q = st[1][j]
            acc.waiting[j] += p * len(q)
            for t, _ in q:
                acc.waiting_c[spec.types[t][0]] += p
            acc.held[j] += p * (spec.tokens[j] - st[3][j])
        acc.lost += p * chain.lost[i]
        acc.trunc += p * chain.trunc[i]
        if spec.truncating and st[4] >= spec.open_limit:
            acc.trunc_mass += p
    return acc


def _station_utilization(spec, acc) -> np.ndarray:
    """U per server: servers held / c (delay and load-dependent: c = 1);
    a load-dependent station is busy with probability 1 - P(empty), split
    in proportion to the classes' queue lengths."""
    K, C = spec.K, spec.C
    servers = np.array([1.0 if spec.kind[k] in (_DELAY, _LD) else float(spec.c[k])
                        for k in range(K)])
    Ust = acc.held_srv / servers[None, :]
    for k in range(K):
        if spec.kind[k] == _LD:
            tot_q = acc.Q[:, k].sum()
            share = acc.Q[:, k] / tot_q if tot_q > 0 else np.zeros(C)
            Ust[:, k] = (1.0 - acc.p_empty[k]) * share
    return Ust


def _class_figures(net, spec, acc):
    """Class throughput (cycles, or accepted jobs, per second) and response
    time: N/X - Z for a closed class, Little's law with token waits for an
    open one; with no jobs or no throughput the no-contention value."""
    C = spec.C
    S = spec.S
    Xc = np.zeros(C)
    Rc = np.zeros(C)
    for r, c in enumerate(net.classes):
        v = spec.V[r].sum()
        Xc[r] = acc.X[r].sum() / v if v > 0 else 0.0
        alone = len(spec.chains[spec.chain_of[r]]) == 1
        if alone and not isinstance(c, Closed) and acc.lost[r] > 0:
            # arrivals lost at a full first station: where the class enters
            # at several stations the accepted jobs' entry mix is not the
            # routing's, nor their visit ratios, so X is the accepted rate
            # lambda - lost - turned away (each a rate under pi), not
            # sum X_k / sum V_k
            Xc[r] = max(spec.lam[r] - acc.lost[r] - acc.trunc[r], 0.0)
        if not alone:
            # class switching: X per chain cycle (or arrival), R the time a
            # chain job spends as class r (Little; no think time in a chain)
            Rc[r] = acc.Q[r].sum() / Xc[r] if Xc[r] > 0 else float(np.sum(spec.V[r] * S[r]))
        elif isinstance(c, Closed):
            if spec.pop[r] == 0:
                Rc[r] = float(np.sum(spec.V[r] * S[r]))
            elif Xc[r] > 0:
                Rc[r] = max(spec.pop[r] / Xc[r] - spec.Z[r], 0.0)
            else:
                Rc[r] = math.inf    # (a stationary answer refuses it: _starved)
        else:
            Rc[r] = (acc.Q[r].sum() + acc.waiting_c[r]) / Xc[r] if Xc[r] > 0 else float(
                np.sum(spec.V[r] * S[r]))
    return Xc, Rc


def _marginal_arrays(net, acc) -> dict:
    """Station -> read-only array P(n jobs present), n = 0..max."""
    marginals = {}
    for k, name in enumerate(net.station_names):
        top = max(acc.marg[k]) if acc.marg[k] else 0
        arr = np.zeros(top + 1)
        for j, v in acc.marg[k].items():
            arr[j] = v
        arr.flags.writeable = False
        marginals[name] = arr
    return marginals


def _info(net, spec, n, resid, acc) -> dict:
    """The ``info`` mapping of a ctmc result (see :func:`ctmc`) of a chain
    of ``n`` states."""
    names = net.station_names
    return {
        "states": n,
        "residual": resid,
        "truncation_mass": acc.trunc_mass,
        "open_limit": spec.open_limit if spec.truncating else None,
        "loss": {c.name: (acc.lost[r] / spec.lam[r] if spec.lam[r] > 0 else 0.0)
                 for r, c in enumerate(net.classes) if spec.is_open[r]},
        "blocked": {names[k]: float(acc.blocked[k]) for k in range(spec.K)},
        "pools": {p.name: {"waiting": float(acc.waiting[j]), "held": float(acc.held[j]),
                           "utilization": float(acc.held[j] / spec.tokens[j])}
                  for j, p in enumerate(spec.pools)},
        "marginals": _marginal_arrays(net, acc),
    }


def _shapes_label(spec) -> tuple[str, list]:
    """(exactness, assumptions) from the time shapes: the method's own
    label when every time is exponential; else the phase-type chain, the
    shapes it holds exactly, and each fit (then approximate: the chain is
    that of the fitted distribution, not the model's)."""
    if not (spec.shapes or spec.fits or spec.insensitive_shapes):
        return "exact", list(label_of("ctmc")[1])
    assumed = ["a continuous-time Markov chain whose state holds each job's service phase "
               "and each open stream's inter-arrival phase (phase-type times in Coxian form)"]
    assumed += [f"{x}: held exactly (a Markovian arrival process: its phase carries over "
                "an arrival, so correlated intervals are modelled; Neuts 1979, Lucantoni 1991)"
                if "(a MAP of" in x else f"{x}: phase-type, held exactly" for x in spec.shapes]
    assumed += [f"{x} (a fit)" for x in spec.fits]
    if spec.insensitive_shapes:
        assumed.append(
            "service shapes at " + ", ".join(repr(x) for x in spec.insensitive_shapes)
            + " taken exponential: the network is product form, whose figures do not depend "
            "on the shapes at PS, LCFS-PR, delay and load-dependent stations (BCMP "
            "insensitivity, Baskett et al. 1975)")
    return ("approximate" if spec.fits else "exact"), assumed


def _label(net, spec, trunc_mass) -> tuple[str, tuple, tuple]:
    """(exactness, assumptions, warnings) of a ctmc result: exact, with the
    truncation of the open jobs stated when there is one (and approximate,
    with a warning, when it holds more than :data:`TRUNCATION_TOL` of the
    probability); a class given by visits over several stations is routed
    at random, which is an assumption about the model where blocking or
    pools make the order matter.  Warns (NumericalWarning) when the
    truncation holds more than 1e-6."""
    exactness, assumed = _shapes_label(spec)
    warned = []
    if spec.truncating:
        turned = ("" if spec.arr_phased else ", the fraction of arrivals turned away")
        assumed.append(f"open jobs truncated at {spec.open_limit} in the network (probability "
                       f"at the bound {trunc_mass:.3g}{turned})")
        if trunc_mass > TRUNCATION_TOL:
            exactness = "approximate"
            warned.append(f"the open-job truncation at {spec.open_limit} holds probability "
                          f"{trunc_mass:.3g} > {TRUNCATION_TOL:g}: the figures are those of the "
                          "truncated chain; raise open_limit (or max_states) for an exact answer")
        if trunc_mass > 1e-6:
            warnings.warn(
                f"ctmc: open population truncated at {spec.open_limit} holds probability "
                f"{trunc_mass:.3g} (mean queues may be short by about "
                f"{100 * shortfall(spec.open_limit, trunc_mass):.2g} %: (K + 1) p, exact for one "
                "M/M/1/K queue); raise open_limit for an exact answer",
                NumericalWarning,
                stacklevel=4,
            )
    V = np.asarray(net.visits)
    if any(c.routing is None and int((V[i] != 0).sum()) > 1
           for i, c in enumerate(net.classes)):
        assumed.append("classes given by visits routed at random in proportion to them (not "
                       "in path order)")
    return exactness, tuple(assumed), tuple(warned)


def _figures(net, spec, chain, states, pi, resid, solver="lu") -> Result:
    """The Result of a solved chain: expectations under pi (see the Notes
    of :func:`ctmc`)."""
    return _result(net, spec, len(states), resid, _expectations(spec, chain, states, pi),
                   solver)


#: the readable name of each ``info["linear_solver"]``
_SOLVER_NAMES = {"lu": "sparse LU", "bicgstab": "BiCGSTAB",
                 "ilu0-bicgstab": "ILU(0)-preconditioned BiCGSTAB (its D-ILU variant first)",
                 "amg-gmres": "multigrid-preconditioned GMRES",
                 "mg-bicgstab": "lattice-multigrid-preconditioned BiCGSTAB",
                 "ilu-bicgstab": "ILU-preconditioned BiCGSTAB",
                 "ilu-gmres": "ILU-preconditioned GMRES"}


def _result(net, spec, n, resid, acc, solver="lu", build="python") -> Result:
    """The Result from the expectations ``acc`` of a chain of ``n`` states
    whose stationary vector ``solver`` found (a key of :data:`_SOLVER_NAMES`), built by
    ``build`` ("compiled" or "python")."""
    Ust = _station_utilization(spec, acc)
    X, Q = acc.X, acc.Q
    with np.errstate(divide="ignore", invalid="ignore"):
        Rst = np.where(X > 0, Q / np.where(X > 0, X, 1.0), spec.S)
    Xc, Rc = _class_figures(net, spec, acc)
    info = _info(net, spec, n, resid, acc)
    info["linear_solver"] = solver
    info["build"] = build
    info["max_phases"] = spec.max_phases
    info["fits"] = tuple(spec.fits)
    info["phase_capped"] = bool(spec.capped)
    how = _SOLVER_NAMES.get(solver, solver)
    notes = [f"CTMC of {n:,} states ({build} build, stationary vector by {how})"]
    exactness, assumed, warned = _label(net, spec, acc.trunc_mass)
    # an answer of the truncated chain is approximate: its error is the
    # probability at the bound, the fraction of open arrivals turned away
    error = None if exactness == "exact" else {
        "validated": False, "source": "truncation",
        "truncation_mass": float(acc.trunc_mass), "open_limit": spec.open_limit}
    if spec.switching:
        notes.append("class switching: each job's class is in the state; figures per class "
                     "are per chain cycle (closed) or per arrival to the chain (open); chains "
                     + "; ".join("+".join(net.class_names[r] for r in ch)
                                 for ch in spec.chains if len(ch) > 1))
    if solver in ("bicgstab", "ilu0-bicgstab"):
        pre = "Jacobi" if solver == "bicgstab" else "ILU(0)"
        notes.append(f"stationary vector by BiCGSTAB ({pre} preconditioned, relative "
                     f"residual {ITERATIVE_RTOL:g}; max |pi Q| = {resid:.2g})")
    elif solver == "mg-bicgstab":
        notes.append(f"stationary vector by BiCGSTAB preconditioned by a multigrid over the "
                     f"population lattice (relative residual {ITERATIVE_RTOL:g}; where the "
                     f"state it pinned proved improbable, solved again from its answer "
                     f"pinning the most probable state; max |pi Q| = {resid:.2g})")
    elif solver == "amg-gmres":
        notes.append(f"stationary vector by GMRES preconditioned by aggregation multigrid "
                     f"(the preconditioned BiCGSTAB did not converge: a stiff "
                     f"chain; max |pi Q| = {resid:.2g})")
    elif solver in ("ilu-bicgstab", "ilu-gmres"):
        notes.append(f"stationary vector by {how} (the preconditioned BiCGSTAB did not "
                     f"converge: a stiff chain; ILUT drop tolerance {_la.ILU_DROP:g}, fill "
                     f"capped by the memory budget; relative residual {ITERATIVE_RTOL:g}; "
                     f"max |pi Q| = {resid:.2g})")
    else:
        notes.append(f"stationary vector by sparse LU (max |pi Q| = {resid:.2g})")
    return Result(
        method="ctmc",
        network=net,
        class_throughput=Xc,
        class_response_time=Rc,
        station_throughput=X,
        station_queue_length=Q,
        station_response_time=Rst,
        station_utilization=Ust,
        notes=tuple(notes),
        info=info,
        exactness=exactness,
        assumptions=assumed,
        warnings=warned,
        error=error,
    )


def marginal(result: Result, station: str) -> np.ndarray:
    """P(n jobs present at ``station``), n = 0, 1, ..., from a
    :func:`ctmc` result (jobs blocked after service there included) or a
    :func:`~qmodels.convolution` result (all classes together; computed
    from the network when the result was made without ``marginals=True``,
    Bolch et al. 2006, eq. 8.13).

    Raises :class:`~qmodels.errors.UnsupportedModelError` for a result of
    another method and :class:`~qmodels.errors.UnknownNameError` for an
    unknown station.
    """
    result.network.station(station)  # raises UnknownNameError
    if "marginals" in result.info:
        return result.info["marginals"][station]
    if result.method == "convolution":
        from .convolution import convolution

        return convolution(result.network, marginals=True).info["marginals"][station]
    raise UnsupportedModelError(
        f"marginal distributions come from a ctmc or convolution result, got method "
        f"{result.method!r}; solve with qm.ctmc(net) or qm.convolution(net, marginals=True)")
