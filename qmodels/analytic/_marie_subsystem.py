"""A subsystem of several stations analysed in one joint chain, fed by
the flow-equivalent of the rest of the network (:mod:`qmodels.analytic.marie`,
"Subsystems of several stations").

The chain
---------
A subsystem S is a set of single-server FCFS queues whose service of class
r at station j is phase-type (alpha_rj, T_rj) of mean S_rj
(:func:`qmodels.analytic._marie_station.phase_type`), and of
processor-sharing queues and delays of exponential service (mean S_rj per
class; at a PS queue holding n_r jobs of class r, n in all, class r
completes at the rate n_r / (n S_rj), at a delay at n_r / S_rj).  Its
state is, per FCFS queue of S, the *sequence* of the classes of the jobs
there in order of arrival (the head in service) and the phase of the
head's service, and per PS queue or delay the numbers per class: the
FCFS state of a type-1 station of the BCMP theorem (Baskett, Chandy, Muntz
& Palacios, "Open, closed, and mixed networks of queues with different
classes of customers", J. ACM 22(2), 1975, sec. 3), with the service phase
of the job in service added (and the state of a BCMP type-2 or type-3
station, its numbers per class, for the others).  Because the order is
kept and the stations
are linked directly (a job leaving station i of S for station j of S
joins j's queue at once), a fast class queued behind a slow job at one
station arrives behind it at the next: the convoy, which no station
analysed alone can see.

Where that chain is too large, the same chain keeping the order of the
first L jobs of each queue only (``window=L``): per station, the classes
of its first min(n, L) jobs in order of arrival, the phase of the head's
service, and the *numbers* of the jobs behind them per class.  When the
head leaves, the job that moves up into the window is drawn among those
behind in proportion to their numbers: random order of service among
them, as in the multi-class station of :mod:`qmodels.analytic._marie_station`
(which keeps the mean figures of a Poisson-fed queue by Kleinrock's
conservation law, Kleinrock 1976, *Queueing Systems* 2, sec. 3.4; here an
approximation).  L = 1 keeps the job in service and the numbers waiting;
L at least the number of jobs is the whole order.  The chain still keeps
the stations' joint state, so a job that leaves one for the next finds
there whatever the others left, the part of the convoy that a station
alone cannot see; what it loses is which of the jobs past the window came
first.  Its states number at most the placements of the jobs by class and
station times the sequences of the first L
(:func:`qmodels.analytic.marie._placements`), orders of magnitude fewer
than the orders: a pair of queues holding 11 + 9 jobs of two classes,
12,200 states at L = 1 against 1.2 * 10^7 orders.

The rest of the network (the complement, its stations replaced by their
product-form station functions) is a flow-equivalent server (Chandy,
Herzog & Woo, "Parametric analysis of queueing networks", IBM J. Res.
Dev. 19(1), 1975; Bolch, Greiner, de Meer & Trivedi, *Queueing Networks
and Markov Chains*, 2nd ed., Wiley 2006, sec. 8.4): with n jobs in S (n
per class) it returns class r to S at the rate

    Lambda_r(n) = G_{-S}(N - n - e_r) / G_{-S}(N - n)                   (3)

(its throughput, in cycles of the class), split over the stations j of S
in proportion to the class's flow into j from outside S per cycle,

    f_rj = V_rj - sum_{i in S} V_ri P_r(i, j),                          (4)

(the visit ratios V and routing probabilities P of class r; the traffic
equations V_rj = sum_i V_ri P_r(i, j) split into the part from S and the
part from the complement).  A class-r job completing at i in S goes to j
in S with probability P_r(i, j) and to the complement with the rest.  A
class with no place outside S (no think time, every station it visits in
S) stays in S: its jobs start there and Lambda_r plays no role.

This is the subsystem analysis of B. Baynat & Y. Dallery, "A unified view
of product-form approximation techniques for general closed queueing
networks", Performance Evaluation 18(3):205-224, 1993, with a subsystem
of several stations (their multi-station subsystems), and its several
classes as in Baynat & Dallery, "A product-form approximation method for
general closed queueing networks with several classes of customers",
Performance Evaluation 24(3):165-188, 1996.  The chain is solved exactly
(to the CTMC's residual): by sparse LU up to :data:`LU_STATES` states (as
:func:`qmodels.analytic._marie_station._pinned_stationary`), past them by
the CTMC's compiled ILU(0)-preconditioned BiCGSTAB, else its
aggregation-multigrid-preconditioned GMRES
(:func:`qmodels.analytic._ctmc_solve.amg_gmres`), whose costs grow about
linearly with the states where the LU's fill does not (below); its
marginal on the population lattice, pi_S(n), gives S's product-form
station function F_S(n) = pi_S(n) / G_{-S}(N - n), eq. (2) of
:mod:`qmodels.analytic.marie` with the subsystem in place of a station.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SubsystemChain", "SUBSYSTEM_STATES"]

#: the most states of one subsystem's chain.  Its enumeration is compiled
#: (:mod:`qmodels.analytic._subsystem_bfs`: 42,280 states in 0.1 s, where
#: the plain-Python one it replaced took 3.4 s, a scratch comparison of
#: the two before the Python one was removed), so what grows with the
#: states is the solves of each sweep (ILU(0)-preconditioned BiCGSTAB or
#: the multigrid, warm-started from the last sweep's answer).  Measured by
#: ``python -m validation.envelopes --family marie-classdep-large
#: --workers 2`` (each network's seconds include its reference
#: simulation), network 18: a subsystem of three queues (315,000 states at
#: L = 1) and a pair, 11.8 s, R 10.2 -> 5.8 % against the simulator (with
#: the 200,000 states this budget was before, the three queues were a pair
#: and one alone); networks 14 and 23: 16.7 s and 14.6 s, X 4.4 -> 3.0 %
#: and 4.6 -> 2.0 %.  The same run at 500,000 states answered 4 of the 40
#: networks otherwise (network 15: R 0.05 % against 1.5 % here; network
#: 10: X 2.6 % against 1.2 %, 48.5 s against 7.7 s), the 40 networks'
#: seconds summed to 491 against 374, and ``marie-nonexp`` network 2 kept
#: its whole order in 399,349 states (52 s against 16 s of CPU for ``qm.marie`` alone, in a
#: scratch timing; X error 0.5 % against
#: 2.1 %).  (Before the windows and the compiled
#: enumeration: 193,921 states of two queues of Erlang-32 service answered
#: in 7-15 s and 235 MB; the sparse LU had taken 12 s at 21,693 states,
#: 26 s at 39,417, and 322 s at 27,064 states of four queues: its fill,
#: not the states, sets its cost.)
SUBSYSTEM_STATES = 350_000


#: up to this many states the chain is solved by sparse LU (and later
#: sweeps by GMRES preconditioned by it), past them by the multigrid
#: (:meth:`SubsystemChain._stationary`): the LU's first factorisation took
#: 0.1-0.3 s at 3,000-8,000 states (1.5 s at 5,500 states of three queues
#: and three classes), the multigrid's first solve 0.1-0.4 s there; the
#: chains the LU solved before the multigrid was added stay with it
LU_STATES = 6_000
#: the largest chain whose LU is tried where the multigrid's solve fails
#: (its factorisation can take minutes past this: 26 s at 39,417 states)
LU_FALLBACK = 40_000


class SubsystemChain:
    """The joint chain of the stations ``places`` (indices into the
    network) with FCFS order kept, or (``window`` L) the order of the
    first L jobs of each queue and the numbers of the rest (module
    docstring).

    ``phs[j][r]``: the PhaseType (mean 1) of class r at place j (None where
    the class does not visit it); ``S[r][j]``: the mean service (scaled
    time); ``P[r]``: a (m, m) array of the routing probabilities between
    the places of class r; ``f[r]``: (m,) the class's flow into each place
    from outside per cycle, eq. (4) (the shares of Lambda_r); ``inside``:
    the classes with no place outside (they start at their first place);
    ``N``: the populations; ``budget``: raise :class:`OverflowError` past
    this many states; ``expect`` the caller's count of them (a small chain
    is enumerated in plain Python, without waiting for the compiled
    kernel).  A station's state: the classes there in order of arrival
    (or with ``window`` L, of the first L, and the numbers of the others)
    and the phase in service (:mod:`qmodels.analytic._subsystem_bfs`)."""

    def __init__(self, phs, S, P, f, N, inside, budget: int = SUBSYSTEM_STATES,
                 window: int | None = None, expect: float | None = None, kinds=None):
        #: the first ``window`` jobs of each queue kept in order, the rest
        #: counted (None: all in order)
        self.window = None if window is None else int(window)
        self.m = m = len(phs)
        self.C = C = len(N)
        #: per place: 0 FCFS queue, 1 processor sharing, 2 infinite servers
        #: (both exponential: numbers per class only)
        self.kinds = tuple(int(x) for x in (kinds if kinds is not None else [0] * m))
        self.N = tuple(int(x) for x in N)
        self.dims = tuple(x + 1 for x in self.N)
        self.inside = tuple(inside)
        self._P = [np.asarray(x, dtype=float) for x in P]
        self._f = [np.asarray(x, dtype=float) for x in f]
        # scaled PH per (place, class): alpha, T / S, t / S
        ph = [[None] * C for _ in range(m)]
        for j in range(m):
            for r in range(C):
                p = phs[j][r]
                if p is not None and S[r][j] > 0:
                    ph[j][r] = (p.alpha, p.T / S[r][j], p.t / S[r][j])
        self._ph = ph
        # the phases a class-r service at place j may start in
        self._starts = [[np.flatnonzero(x[0] > 0).tolist() if x is not None else []
                         for x in row] for row in ph]
        self._exit = np.array([1.0 - self._P[r].sum(axis=1) for r in range(C)])
        rows = self._enumerate(budget, expect)
        self.size = n = len(rows)
        B = 2 + self._L + C
        per = np.zeros((n, m, C))
        busy = np.zeros((n, m, C))
        for j in range(m):
            o = j * B
            slots = rows[:, o + 2:o + 2 + self._L]
            for r in range(C):
                per[:, j, r] = (slots == r).sum(axis=1) + rows[:, o + 2 + self._L + r]
                if self.kinds[j] == 0:
                    busy[:, j, r] = (rows[:, o] > 0) & (rows[:, o + 2] == r)
                elif self.kinds[j] == 1:
                    # processor sharing: the share of the server
                    busy[:, j, r] = per[:, j, r] / np.maximum(rows[:, o], 1)
                else:
                    busy[:, j, r] = per[:, j, r]
        cnt = per.sum(axis=1).astype(np.int64)
        self.lattice_of = np.ravel_multi_index(cnt.T, self.dims)
        self.per = per
        self.busy = busy
        self.pi = None
        #: how the last solve went: "lu", "ilu0-bicgstab" or "amg-gmres"
        self.solver = "lu"

    @property
    def ordered(self) -> bool:
        """Whether the chain keeps every queue's whole FCFS order."""
        return self.window is None

    def _enumerate(self, budget: int, expect) -> np.ndarray:
        """The states reachable from the start (the classes that stay
        inside at their first place, in class order; the others outside),
        breadth first, as rows (:mod:`qmodels.analytic._subsystem_bfs`),
        and the transitions: ``fixed`` (rows, cols, rates) and ``arr``
        (rows, cols, coefficient f_rj times a start-phase probability,
        class r) to be multiplied by Lambda_r(n).  The compiled kernel,
        plain Python where ``expect`` (the caller's count of the states) is
        small; :class:`OverflowError` past ``budget`` states."""
        from ._subsystem_bfs import subsystem_bfs

        m, C = self.m, self.C
        # the whole order: a window as long as the most jobs one FCFS queue
        # visited by two classes or more can hold (at a queue of one class
        # the order is its number: a window of one job keeps it, the next
        # into the window being of that class; rows of N + 3 integers per
        # queue made a one-class chain of 348,551 states take 22 s, where
        # rows of 4 take well under 1 s)
        L = self.window if self.window is not None else max(
            [sum(self.N[r] for r in range(C) if self._ph[j][r] is not None) for j in range(m)
             if self.kinds[j] == 0
             and sum(1 for r in range(C) if self._ph[j][r] is not None) > 1] + [1])
        self._L = L
        pmax = max([len(x[0]) for row in self._ph for x in row if x is not None] + [1])
        nph = np.zeros((m, C), dtype=np.int64)
        alpha = np.zeros((m, C, pmax))
        T = np.zeros((m, C, pmax, pmax))
        tex = np.zeros((m, C, pmax))
        nstart = np.zeros((m, C), dtype=np.int64)
        starts = np.zeros((m, C, pmax), dtype=np.int64)
        for j in range(m):
            for r in range(C):
                x = self._ph[j][r]
                if x is None:
                    continue
                k = len(x[0])
                nph[j, r] = k
                alpha[j, r, :k] = x[0]
                T[j, r, :k, :k] = x[1]
                tex[j, r, :k] = x[2]
                st = self._starts[j][r]
                nstart[j, r] = len(st)
                starts[j, r, :len(st)] = st
        B = 2 + L + C
        seed = np.full(m * B, -1, dtype=np.int16)
        for j in range(m):
            seed[j * B] = 0
            seed[j * B + 2 + L:(j + 1) * B] = 0
        for r in self.inside:
            j = next(j for j in range(m) if self._ph[j][r] is not None)
            o = j * B
            for _ in range(self.N[r]):
                if self.kinds[j] != 0:
                    seed[o + 2 + L + r] += 1
                    seed[o] += 1
                    continue
                if seed[o] == 0:
                    seed[o + 1] = self._starts[j][r][0]
                n = int(seed[o])
                if n < L:
                    seed[o + 2 + n] = r
                else:
                    seed[o + 2 + L + r] += 1
                seed[o] = n + 1
        P = np.array([self._P[r] for r in range(C)]).reshape(C, m, m)
        f = np.array([self._f[r] for r in range(C)]).reshape(C, m)
        exitp = np.asarray(self._exit, dtype=float).reshape(C, m)
        inside = np.zeros(C, dtype=np.bool_)
        inside[list(self.inside)] = True
        kind = np.asarray(self.kinds, dtype=np.int64)
        args = (seed, m, C, L, np.asarray(self.N, dtype=np.int64), inside, kind, nph, alpha, T,
                tex, nstart, starts, P, f, exitp, int(budget))
        out = subsystem_bfs.run(budget if expect is None else expect, *args)
        rows, fr, fc, fv, ar, ac, av, acl, over = out
        if over:
            raise OverflowError(f"more than {budget} states")
        self.fixed = (fr, fc, fv)
        self.arr = (ar, ac, av, acl)
        return rows

    def restart(self) -> None:
        """Forget what the last solves left for the next (the pin, the
        start vector, the LU or the multigrid hierarchy): a chain is kept
        with its network's plan, and without this a second ``qm.marie`` of
        one network started from the first one's answer and could differ
        from it in the last bits (same input, same answer)."""
        for name in ("_pin", "_ml", "_xa", "_lu", "_x", "_reuse"):
            self.__dict__.pop(name, None)

    def solve(self, lam):
        """log pi_S(n) on the lattice, given Lambda_r(n) of eq. (3) as
        ``lam`` (C, *dims)."""
        fr, fc, fv = self.fixed
        ar, ac, av, acl = self.arr
        lam = np.asarray(lam, dtype=float).reshape(self.C, -1)
        vals = np.concatenate([fv, av * lam[acl, self.lattice_of[ar]]])
        keep = vals > 0
        pi = self._stationary(np.concatenate([fr, ar])[keep], np.concatenate([fc, ac])[keep],
                              vals[keep])
        tot = pi.sum()
        if not (np.isfinite(tot) and tot > 0):
            raise np.linalg.LinAlgError("the subsystem's chain could not be solved")
        pi = pi / tot
        self.pi = pi
        P = np.bincount(self.lattice_of, weights=pi, minlength=int(np.prod(self.dims)))
        with np.errstate(divide="ignore"):
            return np.log(P).reshape(self.dims)

    def _stationary(self, rows, cols, vals):
        """The unnormalised stationary vector of the chain of off-diagonal
        rates (rows, cols, vals): by sparse LU up to :data:`LU_STATES`
        states (:meth:`_stationary_lu`), past them by multigrid-
        preconditioned GMRES (:meth:`_stationary_amg`)."""
        if self.size == 1:
            return np.ones(1)
        if self.size <= LU_STATES:
            return self._stationary_lu(rows, cols, vals)
        return self._stationary_amg(rows, cols, vals)

    def _stationary_lu(self, rows, cols, vals):
        """pi with pi(0) = 1 (state 0, the first enumerated,
        is recurrent: every job can return to where it starts): the balance
        equations of the other states, state 0's column on the right-hand
        side (as :func:`qmodels.analytic._marie_station._pinned_stationary`;
        Stewart, *Introduction to the Numerical Solution of Markov Chains*,
        1994, sec. 2.3), by SuperLU with its COLAMD column order (the
        states are in breadth-first order, for which the natural order
        fills: a 5,500-state chain took 8 s natural, 1.5 s COLAMD).  The
        chain changes only through Lambda_r(n) from one sweep to the next:
        later solves are GMRES iterations (Y. Saad & M. H. Schultz, "GMRES:
        a generalized minimal residual algorithm for solving nonsymmetric
        linear systems", SIAM J. Sci. Stat. Comput. 7(3), 1986) started
        from the last answer and preconditioned by the last LU factors, a
        new factorisation where they do not converge (and at every later
        sweep once they have failed)."""
        from scipy.sparse.linalg import LinearOperator, gmres, splu

        from ._marie_station import pinned_system

        n = self.size
        pi = np.ones(n)
        sub, rhs = pinned_system(rows, cols, vals, n)
        x = None
        lu = getattr(self, "_lu", None)
        if lu is not None and getattr(self, "_reuse", True):
            M = LinearOperator(sub.shape, lu.solve)
            y, info = gmres(sub, rhs, x0=self._x, M=M, rtol=1e-12, atol=0.0, restart=50,
                            maxiter=20)
            if info == 0 and np.isfinite(y).all():
                x = y
            else:
                # the last factors do not take this chain to the tolerance
                # (a stiff one: marie-nonexp network 49, an H2 queue and an
                # Erlang-32 one, 3,895 states, stalled at 1,000 iterations
                # in each of 14 sweeps, 26 s of its 27): a new
                # factorisation every sweep from here on
                self._reuse = False
        if x is None:
            self._lu = lu = splu(sub)
            x = lu.solve(rhs)
        self._x = x
        pi[1:] = x
        return np.maximum(pi, 0.0)

    def _stationary_amg(self, rows, cols, vals):
        """pi of a chain past :data:`LU_STATES` states, by the CTMC's
        compiled ILU(0)-preconditioned BiCGSTAB
        (:func:`qmodels.analytic._ctmc_solve.ilu0_bicgstab`; Saad 2003,
        alg. 10.4 and 7.7) started from the last sweep's answer, else its
        aggregation-multigrid-preconditioned GMRES
        (:func:`qmodels.analytic._ctmc_solve.amg_gmres`: Horton &
        Leutenegger, ACM SIGMETRICS 1994; De Sterck et al., SIAM J. Sci.
        Comput. 30(5), 2008; Saad 2003, alg. 6.9) on the system pinned at
        state 0, as :meth:`_stationary_lu` (pinned again at the most
        probable state where that one is improbable, as the CTMC does;
        Stewart 1994, ch. 2, on the scaling: the CTMC's first pin, the
        state of longest holding time,
        :func:`~qmodels.analytic._ctmc_solve.pin_first`, had 1.4e-7 of the
        largest probability on a 150,723-state pair where state 0 had
        6e-3, and its solve took 17 s against 4.6 s), accepted by the
        CTMC's residual check (max |pi Q| at most
        :data:`~qmodels.analytic._ctmc_solve.RESID_TOL` times the largest
        rate, :func:`~qmodels.analytic._ctmc_solve.finish`).  The chain
        changes only through Lambda_r(n) from one sweep to the next: later
        solves start from the last answer, preconditioned by the last
        hierarchy, which is built again only where that fails.  Where no
        solve passes the check, the sparse LU of :meth:`_stationary_lu`;
        :class:`numpy.linalg.LinAlgError` where that fails too or the chain
        has more than :data:`LU_FALLBACK` states (the
        caller then analyses every station alone)."""
        import scipy.sparse as sp

        from . import _ctmc_solve as la

        n = self.size
        ii = np.arange(n)
        out = np.bincount(rows, weights=vals, minlength=n)
        Q = sp.csc_matrix((np.concatenate([vals, -out]),
                           (np.concatenate([rows, ii]), np.concatenate([cols, ii]))),
                          shape=(n, n))
        QT = Q.T
        budget = la.budget()
        p = getattr(self, "_pin", None)
        fresh = p is None           # the chain's first solve: no pin known
        if p is None:
            p = 0
        ml, x0 = getattr(self, "_ml", None), getattr(self, "_xa", None)
        first = None
        tried: set = set()
        with la.one_blas_thread():
            while True:
                A, b, _ = la.pinned_system(Q, p)
                # first the compiled ILU(0)-preconditioned BiCGSTAB from the
                # last sweep's answer: on marie-classdep-large network 3 (two
                # pairs of some 10^5 states, 8 sweeps) the whole answer took
                # 34 s of CPU against 51 s with the multigrid alone
                pi = None
                if la.ilu0_bytes(A) <= budget:
                    x = la.ilu0_bicgstab(A, b, x0)
                    if x is not None and np.isfinite(x).all():
                        pi = la.finish(Q, QT, p, x)
                        got, how = ml, "ilu0-bicgstab"
                if pi is None and fresh:
                    # the first solve, where state 0 is a poor pin: the same
                    # solver once at the CTMC's first pin before the
                    # multigrid (:meth:`_pin_elsewhere`)
                    fresh = False
                    moved = self._pin_elsewhere(Q, QT, p, budget)
                    if moved is not None:
                        p, x, pi = moved
                        got, how = ml, "ilu0-bicgstab"
                if pi is None:
                    # the last short cycle towards RTOL only where the
                    # residual check fails without it (it cost a quarter of
                    # the iterations of each sweep on a 150,723-state pair,
                    # whose answers passed the check without it)
                    x, got = la.amg_gmres(A, b, budget, x0=x0, ml=ml, polish=False)
                    pi = None if x is None else la.finish(Q, QT, p, x)
                    how = "amg-gmres"
                if pi is None and x is not None:
                    x, got = la.amg_gmres(A, b, budget, x0=x, ml=got)
                    pi = None if x is None else la.finish(Q, QT, p, x)
                if pi is None and ml is not None:
                    # the last sweep's hierarchy did not do: a new one
                    x, got = la.amg_gmres(A, b, budget, x0=x0, ml=None)
                    pi = None if x is None else la.finish(Q, QT, p, x)
                if pi is not None:
                    first = first or (pi, p, got, x)
                    best = int(np.argmax(pi))
                    if pi[p] < la.REPIN * pi[best] and first[1] == p:
                        # an improbable pin costs digits: once more at
                        # the most probable state
                        p, ml, x0 = best, None, None
                        continue
                    first = (pi, p, got, x)
                elif first is None and p not in tried:
                    # no solve at this pin: once more at the CTMC's first
                    # pin (the longest-held state), a new hierarchy
                    tried.add(p)
                    alt = la.pin_first(Q)
                    if alt not in tried:
                        p, ml, x0 = alt, None, None
                        continue
                break
        if first is not None:
            pi, self._pin, self._ml, self._xa = first
            self.solver = how
            return pi
        self._pin = self._ml = self._xa = None
        if n > LU_FALLBACK:
            raise np.linalg.LinAlgError(
                f"the subsystem's chain of {n:,} states: the multigrid-preconditioned GMRES "
                f"did not reach its residual, and its LU (past {LU_FALLBACK:,} states) is not "
                "tried")
        self.solver = "lu"
        return self._stationary_lu(rows, cols, vals)

    @staticmethod
    def _pin_elsewhere(Q, QT, p, budget):
        """(pin, x, pi) of the compiled ILU(0)-preconditioned
        BiCGSTAB pinned at a better-scaled state than ``p``: the most
        probable after Jacobi sweeps of the balance equations
        (:func:`~qmodels.analytic._ctmc_solve._sweep_pin`), then the CTMC's
        first pin (:func:`~qmodels.analytic._ctmc_solve.pin_first`: the
        longest-held state, or its own sweeps' most probable one); None
        where neither solve passes the residual check.  State 0 (every job
        outside the subsystem) is improbable where the subsystem holds a
        saturated queue or most of the jobs:

        - one class of 300 jobs, an exponential queue and an Erlang-4 one
          at saturation, the whole network in 180,901 states: 74 s pinned
          at state 0 (the BiCGSTAB failed there, the multigrid's GMRES
          took 64 s), 9.3 s at the CTMC's first pin;
        - one class of 250 jobs, an H2 queue (SCV 4) and a delay in one
          subsystem beside two 3-server queues, 63,001 states: state 0
          holds nothing a double can show, the CTMC's first pin 1.4e-10
          of the most probable, and the BiCGSTAB fails at both (3.8 and
          2.9 s); the sweeps' state holds 5.6e-4 of it (0.3 s to find),
          where the BiCGSTAB converges in 0.9 s."""
        from . import _ctmc_solve as la

        tried = [p]
        for find in (la._sweep_pin, lambda Q, _t: la.pin_first(Q)):
            alt = find(Q, tried)
            if alt is None or alt in tried:
                continue
            tried.append(alt)
            A, b, _ = la.pinned_system(Q, alt)
            if la.ilu0_bytes(A) > budget:
                return None
            x = la.ilu0_bicgstab(A, b, None)
            if x is None or not np.isfinite(x).all():
                continue
            pi = la.finish(Q, QT, alt, x)
            if pi is not None:
                return alt, x, pi
        return None

    def conditional_means(self, busy: bool = False):
        """E[jobs of class r at place j | n] on the lattice: (m, C, *dims)
        (zero where P(n) = 0), from the last :meth:`solve`; with ``busy``,
        P(a class-r job in service at place j | n)."""
        L = int(np.prod(self.dims))
        P = np.bincount(self.lattice_of, weights=self.pi, minlength=L)
        out = np.zeros((self.m, self.C, L))
        per = self.busy if busy else self.per
        for j in range(self.m):
            for r in range(self.C):
                w = np.bincount(self.lattice_of, weights=self.pi * per[:, j, r], minlength=L)
                with np.errstate(divide="ignore", invalid="ignore"):
                    out[j, r] = np.where(P > 0, w / np.where(P > 0, P, 1.0), 0.0)
        return out.reshape((self.m, self.C) + self.dims)

