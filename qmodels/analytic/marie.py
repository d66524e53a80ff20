"""Marie's method for closed networks with FCFS queues of general service
(``method="marie"``): an APPROXIMATION, exact where the network is product
form and for one general station fed by delays.

The method (R. Marie, "An approximate analytical method for general
queueing networks", IEEE Trans. Software Eng. SE-5(5):530-538, 1979;
R. Marie, "Calculating equilibrium probabilities for lambda(n)/C_k/1/N
queues", ACM SIGMETRICS Perf. Eval. Review 9(2), 1980; Bolch, Greiner,
de Meer & Trivedi, *Queueing Networks and Markov Chains*, 2nd ed., Wiley
2006, sec. 10.1.4, "Marie's method"):

1. Replace every FCFS queue with non-exponential service (and, with several
   classes, every FCFS queue whose mean service differs by class) by a
   load-dependent station, and solve the resulting product-form network
   exactly.  In a product-form network the stationary probability of
   n = (n_1, ..., n_K) is prod_k F_k(n_k) / G(N) (the BCMP theorem; Bolch
   et al. 2006, sec. 7.3.6, eq. 7.80), with, for a station of per-class
   demands D_c and rate multipliers a(j) (a(j) = min(j, c) for c servers,
   j for a delay), F(n) = |n|! / prod_{j<=|n|} a(j) prod_c D_c^{n_c} / n_c!
   (Bolch et al. 2006, eqs. 7.62-7.66, written for a multi-class
   load-dependent station), and G the convolution of the F_k
   (Buzen 1973; multi-class: Reiser & Kobayashi 1975; Bolch et al. 2006,
   sec. 8.1).  The initial F of a general station is the exponential one.
2. For each general station i, the rest of the network is a flow-equivalent
   server: with m = N - n jobs outside station i the complement network
   delivers class c to station i at rate

       lambda_ic(n) = V_ic G_{-i}(N - n - e_c) / G_{-i}(N - n)           (1)

   (the throughput of the complement network G_{-i} with the population
   N - n, times the visits; Chandy, Herzog & Woo 1975, "Parametric
   analysis of queueing networks", IBM J. Res. Dev. 19(1); Bolch et al.
   2006, sec. 8.4, flow-equivalent servers).
3. Station i in isolation, fed by these Poisson arrivals, is a
   lambda(n)/PH/c/N queue: its Markov chain
   (:mod:`qmodels.analytic._marie_station`) gives its equilibrium
   probabilities pi_i(n).  Marie's conditional throughputs
   nu_i(n) = lambda_i(n-1) pi_i(n-1) / pi_i(n) become the load-dependent
   rates of station i in the product-form network of step 1; equivalently
   (and so for several classes, where the station function of a
   product-form station is F and not a list of rates) the new station
   function is

       F_i(n) = pi_i(n) / G_{-i}(N - n)                                  (2)

   which, with (1), is F_i(n) = prod_{j<=n} V_i / nu_i(j) for one class
   (Marie 1979, sec. III; the birth-death process of Marie 1980 with the
   same equilibrium distribution as the queue).  Then the product-form
   network's marginal of station i, F_i(n) G_{-i}(N - n) / G(N), is the
   queue's own pi_i(n).
4. Iterate 1-3 until every general station's product-form marginal and its
   chain's distribution agree within ``tol`` (total variation distance).
   Bolch et al. (2006, sec. 10.1.4) stop Marie's iteration on his two
   consistency conditions: the stations' mean numbers add up to N, and
   the stations' throughputs sum_n pi_i(n) nu_i(n) agree (up to the
   visits); both follow from the marginals agreeing, which is the stricter
   test.  Each sweep updates every general station from the same
   product-form network (Jacobi order).  A station
   function is defined up to a constant factor, and (2) maps the others'
   factors a_j to 1 / prod_{j != i} a_j, whose logs grow (M - 1)-fold per
   sweep with M general stations: F_i(0) = 1 is held after each update.

Renewal arrivals.  Marie's Poisson source is exact when the
rest of the network delivers jobs at exponential intervals; where it does
not (a deterministic station upstream, a hyperexponential one), its
state-dependent Poisson arrivals are the largest error left: two Erlang-8
stations in a cycle with 2 jobs lose 8.6 % of X.  Here the source of
each class is a renewal process of phase-type intervals sped up in each
level (with several classes, at each point of the population lattice, the
phases of every class's interval in the chain's state, at most 3 phases
each and :data:`RENEWAL_STATES` states in all, else Poisson; Poisson too
where the planned work passes :data:`RENEWAL_WORK`): the interval
is fitted to the first two moments of the
*passage time* from a departure of station i to the next arrival there
when that job is alone outside i (an absorbing chain over the other
places, Neuts 1981, ch. 2; the moments by first-step analysis, Kulkarni,
*Modeling and Analysis of Stochastic Systems*, 1995, sec. 4.8; with the
fits of :func:`qmodels.analytic._marie_station.arrival_fit`), and the speed
r(n) of level n is set so that the chain's conditional arrival rate there,
r(n) E[exit rate of the interval's phase | n], is Marie's lambda_i(n) of
(1): the flow balance pi_i(n) lambda_i(n) = pi_i(n + 1) nu_i(n + 1) of
Marie's conditions holds as before, and (2) still makes the product-form
marginal the chain's.  This is the two-moment renewal input of Whitt's QNA
(W. Whitt, "The queueing network analyzer", Bell System Tech. J. 62(9),
1983, sec. 4) put in Marie's isolated station, in the spirit of the
subsystem analyses of Baynat & Dallery's unified view (1993, below), where
the complement of a station may be any process with the right conditional
throughputs.  With two stations in a cycle the complement's passage time is
the other station's service itself, and the answer is exact (checked
against the CTMC in ``tests/test_marie_renewal.py``).  Elsewhere it is an
approximation: the interval's shape is the one-job passage at every level,
and successive intervals are independent.  An SCV within 5 % of 1 keeps
Poisson arrivals.  Marie's Poisson source is not exact behind several
exponential stations either (an Erlang-8 queue and two exponential ones in
a cycle, 3 jobs: X -1.9 % against the CTMC, -1.0 % with the renewal
source); it is exact for a product-form network (Norton's theorem, Chandy,
Herzog & Woo 1975), which never reaches these chains: its exponential
queues are product-form stations (step 1).  A renewal chain that cannot
be solved (a singular level) falls back to Poisson arrivals at that
station, named in the notes.  The speeds are found by
secant steps on log r(n), level by level, warm-started from the previous
sweep's.

Several classes.  Marie's papers treat one class; the extension to several
classes with class-dependent state-dependent arrival rates lambda_ic(n) fed
to a multi-class station solved in isolation, and a multi-class
product-form substitute, is B. Baynat & Y. Dallery, "A product-form
approximation method for general closed queueing networks with several
classes of customers", Performance Evaluation 24(3):165-188, 1996 (and
their unified view of these methods, "A unified view of product-form
approximation techniques for general closed queueing networks",
Performance Evaluation 18(3):205-224, 1993).  Here the substitute's
station function is (2) on the population lattice, which makes its
marginal the chain's distribution exactly as with one class; the
multi-class FCFS chain keeps the numbers of waiting jobs per class, not
their order (:mod:`qmodels.analytic._marie_station`).  Keeping the order
(the sequence of classes, as in the BCMP state of a type-1 station) was
tried and is worse on exponential FCFS queues with class-dependent means
(the ``fcfs-classdep-closed`` catalog: mean X error 4.7 % against 4.0 %,
94 networks worse, 33 better): the flow-equivalent source draws the class
of each arrival afresh whatever the order, so an ordered station only
sharpens a mismatch.  The largest errors left there were convoys (a fast
class stuck behind a slow job that travels its way, network 101: X 41 %),
a correlation between stations that no station analysed alone can see:
hence the subsystems below.

Subsystems of several stations.  The single-server FCFS queues with
general service (or class-dependent means), and beside them the stations
of product form whose service is exponential (single-server FCFS and PS
queues, delays: :func:`_place_kind`), are joined in subsystems, each
analysed in isolation as one joint chain that keeps every FCFS queue's
order (and the phase of the job in service) and the numbers per class at
a PS queue or a delay, fed by the flow-equivalent of the rest of the
network
(:mod:`qmodels.analytic._marie_subsystem`, eqs. (3)-(4) there): the
multi-station subsystems of B. Baynat & Y. Dallery, "A unified view of
product-form approximation techniques for general closed queueing
networks", Performance Evaluation 18(3):205-224, 1993.  Eq. (2) holds with
the subsystem in place of a station, F_S(n) = pi_S(n) / G_{-S}(N - n), on
the population lattice of the jobs in S, and steps 1-4 iterate over the
subsystems and the stations left alone.  Which subsystems: all those
queues in one where its chain, FCFS order kept, has at most
:data:`~qmodels.analytic._marie_subsystem.SUBSYSTEM_STATES` states
(350,000; enumerated by a compiled breadth-first search,
:mod:`~qmodels.analytic._subsystem_bfs`; solved by sparse LU up to 6,000
states, past them by a compiled ILU(0)-preconditioned BiCGSTAB or the
CTMC's aggregation-multigrid-preconditioned GMRES, each sweep started
from the last one's answer: a subsystem of 315,000 states and a pair
answered in 12.5 s).  Else subsystems are grown by merging,
from every queue alone, the two most strongly linked (the largest flow
between them) whose joint chain fits the same budget, until no merge
fits (``group_max`` caps their size: 2 pairs at most, 1 none); a station
left out is analysed alone as before; a subsystem of product-form stations alone is
not formed (it is their product form).  The product-form stations join
because the flow-equivalent of a complement forgets which way a job left
the subsystem and what the stations outside hold: with the exponential
delay of ``fcfs-classdep-closed`` network 35 in the subsystem, the
complement is the think times and the answer the network's own chain
(X 5.65 % off before); with the two PS queues of ``marie-fewjobs``
network 96, X -5.9 % -> -3.1 % against the simulator
(``tests/test_marie.py``).  A PS queue or a delay of another shape stays
outside as its product-form station function: its insensitivity to the
shape holds in a product-form network only (``marie-nonexp`` network 44,
a deterministic PS queue beside an H2 FCFS queue: with it exponential the
CTMC's X is 4.4 % above the simulator's).  With one class the same
subsystems form (a chain of one class keeps only the numbers at each
queue and the phase in service; every station alone before, Marie's own
decomposition).  A chain too large with the whole
FCFS order keeps the order of the first L jobs of each queue only and
counts the rest (at L = 1, the job in service and the numbers waiting per
class; the next to enter the window drawn in proportion to them:
:mod:`~qmodels.analytic._marie_subsystem`), L = 1 where that fits the
budget, longer while the chain stays within :data:`WINDOW_STATES`: most
networks of 12 jobs or more count millions of FCFS orders in a pair, and
fewer than 350,000 states with a short window in three queues.
``info["subsystems_ordered"]`` says, per subsystem, whether its whole
order was kept.  Measured on ``marie-classdep-large`` (40 networks of 8-20
jobs, 2-3 classes, against the simulator): with the order only (the pairs
of this method before the windows), 27 networks were answered by
stations alone, worst X 9.0 %, R 12.6 %, mean X 1.6 %; with the windows
and merging, every network by subsystems, worst X 3.0 %, R 9.6 % (19 by
one subsystem of all its queues, X 3.0 %, R 4.0 %; 21 by smaller ones,
X 2.7 %, R 9.6 %; ``python -m validation.envelopes --family
marie-classdep-large``, 575 s with five other catalogs on two workers,
the slowest network 28 s, the first one of each worker 60 s with numba's
first compile); with the delays of 15 of its networks joining the
subsystems (the product-form stations above; the same command, 901 s with
five other catalogs), 15 by one subsystem, X 1.3 %, R 2.7 %, and 25 by
smaller ones, X 3.2 %, R 7.8 % (five networks better by more than 0.05
points of X, five worse, network 22 the most: 1.7 -> 3.0 %). The window
loses most behind a near-deterministic head on a cycle that one class
never leaves: two queues of Erlang-16 and Erlang-8 service, 3 + 2 jobs, X
0.0 % with the order, 0.8 % with L = 2, 10.3 % with L = 1 (every station
alone: 4.4 %; ``tests/test_marie_subsystem.py``).
``info["approximation"]`` names the form that answered, and the measured
error envelopes are recorded per form: "subsystem of all its FCFS queues" (one subsystem holds every
candidate station, the product-form ones of :func:`_place_kind` too),
"smaller subsystems" (some, not one of all), "stations alone (Marie's
decomposition)" (none: one candidate station, or every chain past the
budget).  Every chain's size is counted before its
enumeration (:func:`_placements`).
Where a subsystem keeping the whole order forms, the class aggregation of
the next paragraph is not used (the joint chain keeps the order itself).
What remains approximate is the complement: its flow-equivalent returns a
class-r job to S at the rate Lambda_r(n) whatever the other jobs outside
are doing, split over S's entry stations by the class's flows, so it
forgets which way a job left S (``fcfs-classdep-closed`` network 35: a
class leaving S at s1 for a delay and back at s0, and at s2 for its think
time and back at s1, X 5.7 % off while the delay stayed outside; with it
inside, the network's own chain).  Where the complement is one
exponential think stage per class, entered and left at one point (or
nothing), the joint chain is the whole network's and the answer is the
CTMC's (``tests/test_marie_subsystem.py``).  Measured on
``fcfs-classdep-closed`` (150 networks, exact CTMC) with subsystems of
FCFS queues only: the worst X error 41.2 % -> 5.65 % (network 35), mean
3.36 % -> 0.37 %; with pairs only (``group_max=2``) 31.0 % and 1.8 %.  On
``marie-ph`` (80 networks, phase-type service, exact CTMC): X 9.5 % ->
3.8 %, R 10.1 % -> 6.9 %.  With the product-form stations joining (and
one class forming subsystems), the same command: every
``fcfs-classdep-closed`` network is one subsystem with the think times
alone outside, exact (0.00 %); ``marie-ph`` X 1.7 %, R 6.9 % (R at a
network answered by stations alone, a multi-server queue); the worst X
of ``marie-fewjobs`` 5.89 % -> 4.64 % and of ``marie-nonexp`` 5.42 % ->
4.36 % against the simulator (``python -m validation.envelopes --family
marie-ph --family marie-fewjobs --family marie-nonexp``, 360 s on two
workers).  The envelopes recorded per form
(:mod:`qmodels.analytic.envelopes`) are those of this version.

Several classes on one cycle.  Classes that follow the same cycle of
single-server FCFS queues with no think time never overtake one another (a
later arrival at a single-server FCFS queue leaves later, whoever else is
there): their cyclic order never changes, every job of such a group
completes its cycles at the same rate, and X_c = X_g N_c / N_g exactly.
Marie's decomposition per class lets a fast class overtake (a two-queue
cycle of 2 + 1 jobs: X 29 % off).  Each such group is aggregated into one
class of N_g jobs whose service at each queue is the mixture of its
classes' (probability N_c / N_g; the class aggregation of Baynat & Dallery
1996, above), the other classes kept, and its throughput split by N_c
(:func:`_group_answer`; the same network: X 2.5 % off).

The answer is the product-form network's at the fixed point: throughputs
X_c = G(N - e_c) / G(N), mean numbers from the marginals, response times by
Little's law.  Every station's throughput there is its chain's, a real
queue's, whose utilisation 1 - pi_i(0) is at most one per server: so
U <= 1 and X <= c / D_max hold by construction (the remaining inconsistency
of the fixed point, below ``tol``, is removed by holding X to the
utilisation law and rescaling the queue lengths to job conservation).

Where it is exact: a subsystem (above) whose complement is one
exponential think stage per class entered at one station (or nothing);
a product-form network (every general station
exponential with one mean for all classes: no chain is built, the answer
is exact MVA's); one general station whose complement is delays only (a
finite-source lambda(n)/G/c queue: the complement's throughput is exactly
(1), so the chain is the exact model) when the service is represented
exactly (exponential, Erlang, the balanced-means hyperexponential).
Elsewhere two approximations remain: the complement is replaced by a
flow-equivalent Poisson source whose rate depends only on station i's
own population, and (several classes) the waiting jobs start in random
order (:mod:`qmodels.analytic._marie_station`).  Service shapes that are
not phase-type are represented by a fit named in the notes: the exact
CTMC's (a lognormal of SCV > 1 as its closest H3 or mixture of two
Erlang-2, a shape of SCV < 1 by
three moments) where the station's phase budget holds it, else two
moments (Marie's Coxian-2, Tijms' mixed Erlang); deterministic as
Erlang-32.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidValueError, ProblemTooLargeError, UnsupportedModelError
from ..model.distributions import is_exponential
from ..model.network import Delay, LoadDependent, Network, Queue
from ..results import APPROXIMATE, Result
from . import requires
from ._common import _check_options, _require_numeric
from ._marie_station import (
    MultiClassChain,
    RenewalMultiClassChain,
    SingleClassChain,
    _configs,
    arrival_fit,
    max_phases,
    phase_type,
)
from .contract import answers

__all__ = ["marie", "MAX_WORK", "MAX_STATES", "MAX_LATTICE", "PHASE_STATES", "FORMS"]

_SOLVER = "Marie's method (method='marie')"

#: the most elementary steps one solve may take (estimated before any
#: allocation, for :data:`_PLANNED_SWEEPS` sweeps): about a minute on one core
MAX_WORK = 5e9
#: the most states of one station's multi-class chain
MAX_STATES = 200_000
#: the states a multi-class station's chain is held to by fitting its
#: service with fewer phases (down to two; the chain is solved by sparse LU
#: at every sweep: 11,000 states with 2 servers and 2 classes took 3.6 s)
PHASE_STATES = 3_000
#: the most points of the population lattice prod_c (N_c + 1)
MAX_LATTICE = 2_000_000
#: one dense floating-point operation (BLAS), in elementary steps
_FLOP = 0.05
#: sweeps the work estimate plans for (most networks converge in fewer)
_PLANNED_SWEEPS = 30
#: renewal arrivals at one-class stations (module docstring)
RENEWAL = True
#: subsystems of several stations in one joint chain (module docstring)
SUBSYSTEMS = True

ASSUMPTIONS = (
    "closed classes; each FCFS queue with general service analysed alone as a "
    "lambda(n)/PH/c queue fed by the flow-equivalent of the rest of the network, whose "
    "conditional throughputs make a product-form network (Marie 1979, 1980)",
    "service shapes that are not phase-type represented by a fit: a lognormal of SCV > 1 "
    "as its closest H3 or mixture of two Erlang-2 with its mean and SCV, a shape of "
    "SCV < 1 by its first three moments, where the station's phase budget holds them, "
    "else by the first two (Marie's Coxian-2, Tijms' mixed Erlang); deterministic as Erlang-32",
    "one class: arrivals to a general station a renewal process whose interval has the "
    "first two moments of a job's passage through the rest of the network when alone "
    "there, sped up to Marie's conditional arrival rates",
    "several classes: single-server FCFS queues with general service joined in subsystems "
    "(all of them, else the most strongly linked, within a state budget), each one joint "
    "chain keeping the FCFS order (or, past the budget, the order of the first jobs of each "
    "queue and the numbers of the rest), fed by Poisson arrivals at the flow-equivalent "
    "rates of the rest of the network, which forget where a job left the subsystem "
    "(Baynat & Dallery 1993)",
)


# ---------------------------------------------------------------------------
# log-space arrays on the population lattice
# ---------------------------------------------------------------------------

def _lconv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log of h(n) = sum_{j <= n} e^{a(j)} e^{b(n - j)} on the lattice
    (componentwise j <= n; the multi-class convolution of Reiser & Kobayashi
    1975, Bolch et al. 2006, eq. 8.15), every term positive, summed with
    ``logaddexp``."""
    dims = a.shape
    out = np.full(dims, -np.inf)
    if a.ndim == 1:
        for j in np.flatnonzero(np.isfinite(a)).tolist():
            seg = out[j:]
            np.logaddexp(seg, a[j] + b[: dims[0] - j], out=seg)
        return out
    for flat in np.flatnonzero(np.isfinite(a)).tolist():
        j = np.unravel_index(flat, dims)
        dst = tuple(slice(x, None) for x in j)
        src = tuple(slice(0, n - x) for n, x in zip(dims, j))
        seg = out[dst]
        np.logaddexp(seg, a[j] + b[src], out=seg)
    return out


def _conv_steps(dims) -> float:
    """Elementary steps of one :func:`_lconv` on ``dims``."""
    return float(np.prod([d * (d + 1) / 2.0 for d in dims]))


def _identity(dims) -> np.ndarray:
    out = np.full(dims, -np.inf)
    out[(0,) * len(dims)] = 0.0
    return out


def _flip(a: np.ndarray) -> np.ndarray:
    """a(N - n) as an array over n."""
    return a[(slice(None, None, -1),) * a.ndim]


class _Lattice:
    """The population lattice 0..N_c per class: per-class counts ``grid``
    (C, *dims), total counts ``tot``, log n_c! summed (``lfact``)."""

    def __init__(self, N):
        self.N = tuple(int(x) for x in N)
        self.dims = tuple(x + 1 for x in self.N)
        self.C = len(self.dims)
        self.grid = np.indices(self.dims, dtype=float)
        self.tot = self.grid.sum(axis=0)
        self.top = int(sum(self.N))
        lg = np.array([math.lgamma(j + 1.0) for j in range(self.top + 1)])
        self.lgamma = lg
        self.lfact = sum(lg[self.grid[c].astype(np.int64)] for c in range(self.C))

    def factor(self, D, log_a) -> np.ndarray:
        """log F(n) of a product-form station of per-class (scaled) demands
        ``D`` and log prod_{j<=t} a(j) = ``log_a[t]`` (module docstring,
        step 1): log |n|! - sum_c log n_c! + sum_c n_c log D_c - log_a(|n|)."""
        out = self.lgamma[self.tot.astype(np.int64)] - self.lfact \
            - log_a[self.tot.astype(np.int64)]
        for c in range(self.C):
            if D[c] > 0:
                out = out + self.grid[c] * math.log(D[c])
            else:
                out = np.where(self.grid[c] > 0, -np.inf, out)
        return out

    def delay(self, D) -> np.ndarray:
        """log F(n) of a delay (or a think time): sum_c n_c log D_c - log n_c!."""
        out = -self.lfact.copy()
        for c in range(self.C):
            if D[c] > 0:
                out = out + self.grid[c] * math.log(D[c])
            else:
                out = np.where(self.grid[c] > 0, -np.inf, out)
        return out

    def shift(self, a: np.ndarray, c: int) -> np.ndarray:
        """a(n + e_c), -inf where n_c = N_c."""
        out = np.full(self.dims, -np.inf)
        src = [slice(None)] * self.C
        dst = [slice(None)] * self.C
        src[c] = slice(1, None)
        dst[c] = slice(0, -1)
        out[tuple(dst)] = a[tuple(src)]
        return out


def _log_rates(multipliers, top: int) -> np.ndarray:
    """log prod_{j<=t} a(j) for t = 0..top (the last multiplier holds
    beyond the list)."""
    a = np.empty(top)
    if top:
        m = np.asarray(multipliers, dtype=float)
        L = min(len(m), top)
        a[:L] = m[:L]
        a[L:] = m[L - 1] if L else 1.0
    return np.concatenate([[0.0], np.cumsum(np.log(a))])


# ---------------------------------------------------------------------------
# the model: which stations are general, their fits, the scaled demands
# ---------------------------------------------------------------------------

class _Plan:
    """What one network needs (built once per network, kept in its lowered
    form's memo): scaled demands, station kinds, general stations and their
    phase-type fits, the lattice, the work estimate."""

    def __init__(self, net: Network, renewal: bool = True, per_class: bool = False):
        low = net.lowered
        self.renewal = bool(renewal) and RENEWAL
        # per_class: a shape per class at an FCFS queue (the aggregated
        # classes of _group_answer; the public solver refuses them by name)
        self.per_class = bool(per_class)
        self.net = net
        C, K = len(net.classes), len(net.stations)
        self.N = [int(c.population) for c in net.classes]
        points = float(np.prod([n + 1.0 for n in self.N]))
        if points > MAX_LATTICE:
            # before anything is built: the lattice's arrays and the chains'
            # state counts grow with it
            name = ", ".join(repr(c.name) for c in net.classes)
            raise ProblemTooLargeError(
                f"class(es) {name}: {_SOLVER} works on the population lattice of "
                f"{points:.3g} points (limit {MAX_LATTICE:.0e}): use method='mva-residual' "
                "(approximate, any population) or 'sim'")
        V = np.asarray(net.visits, dtype=float)
        S = np.asarray(net.service_times, dtype=float)
        D = V * S
        Z = np.array([float(c.think_time) for c in net.classes])
        # a visit of zero service time holds no one (the product-form solvers'
        # rule): the class does not count at that station
        live = (D > 0) & (np.asarray(self.N)[:, None] > 0)
        self.live = live
        servers = [float(low.servers[k]) if low.kind[k] == "queue" else 1.0 for k in range(K)]
        per_server = [D[:, k].max() / servers[k] for k in range(K)
                      if low.kind[k] != "delay" and live[:, k].any()]
        self.alpha = max(per_server) if per_server else max(float(D.max()), float(Z.max()), 1.0)
        a = self.alpha
        self.V, self.S, self.D, self.Z = V, S / a, D / a, Z / a
        self.kinds = []        # per station: "off", "delay", "fixed", "general"
        self.rates = {}        # station -> log prod a(j) (fixed and general)
        self.ph = {}           # general station -> PhaseType (class 0's)
        self.phs = {}          # general station -> [PhaseType per class]
        self.fits = {}         # general station -> words
        for k, s in enumerate(net.stations):
            self.kinds.append(self._kind(net, k, s, C))
        self.general = [k for k in range(K) if self.kinds[k] == "general"]
        self.lattice = _Lattice(self.N)
        # one class: the renewal arrivals of each general station (module
        # docstring), None where Poisson is kept
        self.arrival = {}
        self.arrivals = {}     # several classes: station -> [PhaseType or None per class]
        if C > 1 and self.renewal:
            self._multi_arrivals(net)
        if C == 1 and self.renewal and sum(self.N) > 1:
            for k in self.general:
                c = int(min(low.servers[k], max(sum(self.N), 1)))
                width = _configs(min(c, sum(self.N)), self.ph[k].phases)
                arr = arrival_fit(_passage_scv(net, self, 0, k),
                                  RENEWAL_WIDTH // max(width, 1))
                if arr is not None:
                    self.arrival[k] = arr
        self._check_size()

    def _kind(self, net, k, s, C) -> str:
        low = net.lowered
        if not self.live[:, k].any():
            return "off"
        if isinstance(s, Delay):
            return "delay"
        top = int(sum(self.N))
        if isinstance(s, LoadDependent):
            self.rates[k] = _log_rates(low.multipliers[k], top)
            return "fixed"
        c = int(min(low.servers[k], max(top, 1)))
        self.rates[k] = _log_rates(range(1, c + 1), top)
        if not low.acts_fcfs[k]:
            return "fixed"      # PS, LCFS-PR: insensitive to the shape (BCMP types 2, 4)
        who = np.flatnonzero(self.live[:, k])
        times = self.S[who, k]
        same = float(times.max() - times.min()) <= 1e-12 * float(times.max())
        if self.per_class and low.class_shaped is not None and low.class_shaped[k]:
            shapes = [low.shapes[r][k] for r in range(C)]
        else:
            shapes = [low.one_shape(k, _SOLVER)] * C    # refused where it differs by class
        if same and all(is_exponential(x) for x in shapes):
            return "fixed"      # BCMP type 1

        def fit(kmax):
            one = phase_type(shapes[0], kmax)
            return [one if x is shapes[0] else phase_type(x, kmax) for x in shapes]

        kmax = max_phases(c, len(who) if len(self.N) > 1 else 1, top + 1)
        phs = fit(kmax)
        if len(self.N) > 1:
            # several classes: the chain is solved by sparse LU at every
            # sweep; fewer phases (a coarser fit, named in the note) keep it
            # within PHASE_STATES states
            dims = tuple(n + 1 for n in self.N)
            points = int(np.prod(dims))
            if points > MAX_STATES:
                # every lattice point is at least one state of the chain
                raise ProblemTooLargeError(
                    f"station {s.name!r}: {_SOLVER} needs a chain of more than "
                    f"{points:,} states there (limit {MAX_STATES:,}): use "
                    "method='mva-residual' (approximate) or 'sim'")
            if points > PHASE_STATES:
                kmax = 2
                phs = fit(kmax)
            S = self.S[:, k] * self.live[:, k]
            most = max(ph.phases for ph in phs)
            while kmax > 2 and most > 2 and \
                    MultiClassChain.count(phs, S, c, dims) > PHASE_STATES:
                kmax = min(kmax, most) - 1
                phs = fit(kmax)
                most = max(ph.phases for ph in phs)
        self.ph[k] = phs[0]
        self.phs[k] = phs
        words = {ph.words for r, ph in enumerate(phs) if self.live[r, k]}
        self.fits[k] = phs[0].words if len(words) <= 1 else "; ".join(
            f"class {net.classes[r].name!r}: {ph.words}" for r, ph in enumerate(phs)
            if self.live[r, k])
        return "general"

    def _multi_arrivals(self, net) -> None:
        """Several classes: each class's renewal arrivals at each general
        station (module docstring), with at most 3 phases (c2 < 1) and
        within :data:`RENEWAL_STATES` states of the larger chain (else 2
        phases, else Poisson).  A class of one job gets its renewal
        interval too: its arrivals at station k are its returns, one
        passage through the rest of the network apart, whose shape (not
        exponential) a Poisson source loses (marie-ph network 40, a class
        of one job against one of three: X 10.3 % from the CTMC with
        Poisson arrivals for it, 9.5 % with the renewal interval)."""
        low = net.lowered
        dims = self.lattice.dims
        for k in self.general:
            c = int(min(low.servers[k], max(self.lattice.top, 1)))
            S = self.S[:, k] * self.live[:, k]
            base = MultiClassChain.count(self.phs[k], S, c, dims)
            c2 = [_passage_scv(net, self, r, k) if self.live[r, k] else 1.0
                  for r in range(len(self.N))]
            for kmax in (3, 2):
                arrs = [arrival_fit(x, kmax) for x in c2]
                P = int(np.prod([a.phases if a is not None else 1 for a in arrs]))
                if P > 1 and base * P <= RENEWAL_STATES:
                    self.arrivals[k] = arrs
                    break

    def _check_size(self) -> None:
        lat = self.lattice
        L = float(np.prod(lat.dims))
        name = ", ".join(repr(c.name) for c in self.net.classes)
        if L > MAX_LATTICE:
            raise ProblemTooLargeError(
                f"class(es) {name}: {_SOLVER} works on the population lattice of "
                f"{L:.3g} points (limit {MAX_LATTICE:.0e}): use method='mva-residual' "
                "(approximate, any population) or 'sim'")
        conv = _conv_steps(lat.dims)
        M = len(self.general)
        K = sum(1 for x in self.kinds if x != "off")
        chains = 0.0
        self.states = {}
        for k in self.general:
            c = int(min(self.net.lowered.servers[k], max(lat.top, 1)))
            if lat.C == 1:
                chains += _FLOP * SingleClassChain.work(self.ph[k], c, lat.top)
                if k in self.arrival:
                    # about 10 solves of the larger chain per sweep (the speeds'
                    # secant steps, warm-started)
                    w = _configs(min(c, lat.top), self.ph[k].phases) * self.arrival[k].phases
                    chains += _FLOP * 10.0 * (lat.top + 1) * 3.0 * w ** 3
                continue
            phs = self.phs[k]
            n = MultiClassChain.count(phs, self.S[:, k] * self.live[:, k], c, lat.dims)
            if n > MAX_STATES:
                raise ProblemTooLargeError(
                    f"station {self.net.stations[k].name!r}: {_SOLVER} needs a chain of "
                    f"{n:,} states there (limit {MAX_STATES:,}): use method='mva-residual' "
                    "(approximate) or 'sim'")
            if k in self.arrivals:
                # the larger chain, about 10 solves per sweep
                n *= int(np.prod([a.phases if a is not None else 1
                                  for a in self.arrivals[k]]))
                chains += 9.0 * 60.0 * n ** 1.5
            self.states[k] = n
            chains += 60.0 * n ** 1.5
        per_sweep = 3.0 * M * conv * 3.0 + chains
        work = _PLANNED_SWEEPS * per_sweep + 3.0 * K * conv * 3.0
        self.work = work
        if work > RENEWAL_WORK and (self.arrival or self.arrivals):
            # the renewal chains are a refinement: where they would cost
            # more than RENEWAL_WORK, Poisson arrivals (Marie's own) instead
            self.arrival, self.arrivals = {}, {}
            self._check_size()
            return
        if work > MAX_WORK:
            raise ProblemTooLargeError(
                f"class(es) {name}: {_SOLVER} needs about {work:.3g} steps here (limit "
                f"{MAX_WORK:.0e}: population {lat.top}, {M} general station(s)): use "
                "method='mva-residual' (approximate, any population) or 'sim'")


def _plan(net: Network, per_class: bool = False) -> _Plan:
    return net.lowered.memo(("marie.plan", bool(per_class)),
                            lambda: _Plan(net, per_class=per_class))


def _subsystems(net: Network, plan: _Plan, group_max=None) -> dict:
    """:func:`_groups` of the plan, built once per plan and ``group_max``
    (the chains are reused), {} with :data:`SUBSYSTEMS` off."""
    if not SUBSYSTEMS:
        return {}
    gmax = _group_max(group_max)
    key = (gmax, _subsystem_budget())
    got = getattr(plan, "_groups", None)
    if got is None or got[0] != key:
        got = (key, _groups(net, plan, gmax))
        plan._groups = got
    return dict(got[1])


def _group_max(group_max):
    """The effective most stations of one subsystem: ``group_max`` of the
    call, else :data:`GROUP_MAX`."""
    return GROUP_MAX if group_max is None else int(group_max)


def _forms_subsystems(net: Network, group_max=None) -> bool:
    """Whether the network solved per class forms a subsystem that keeps
    the FCFS order (False where it cannot be planned per class: the
    aggregated classes may still be).  A subsystem without the order
    draws the next class to start at random, as the class aggregation
    does, which keeps a cycle's classes from overtaking one another."""
    try:
        return any(ch.ordered for ch in _subsystems(net, _plan(net), group_max).values())
    except (ProblemTooLargeError, UnsupportedModelError):
        return False


def _subsystem_budget() -> int:
    from ._marie_subsystem import SUBSYSTEM_STATES

    return int(SUBSYSTEM_STATES)


def _refuse(net: Network) -> None:
    """The model checks (numbers, closed classes, stations the method
    models, no pools or binding capacity), by name."""
    if net.is_symbolic:
        raise UnsupportedModelError(
            f"{_SOLVER} is numeric; this network has sympy symbols: substitute numbers")
    _require_numeric(net, _SOLVER)
    why = (requires.closed_only(net) or requires.pools(net)
           or requires.capacities(net, requires.closed_population(net))
           or requires._general_stations(net, ld=True))
    if why:
        raise UnsupportedModelError(f"{_SOLVER}: {why}; use method='sim'")
    D = np.asarray(net.demands, dtype=float)
    for c, cls in enumerate(net.classes):
        if int(cls.population) > 0 and D[c].sum() + float(cls.think_time) <= 0:
            raise InvalidValueError(
                f"class {cls.name!r}: all demands and the think time are zero, so the "
                "throughput is unbounded")


# ---------------------------------------------------------------------------
# the iteration
# ---------------------------------------------------------------------------

class _Network:
    """The product-form substitute: the fixed stations' product (``base``),
    the general stations' log station functions ``F``, and after
    :meth:`solve` the complements G_{-i} and G."""

    def __init__(self, plan: _Plan):
        self.plan = plan
        lat = plan.lattice
        self.factors = {}
        base = lat.delay(plan.Z)
        for k, kind in enumerate(plan.kinds):
            if kind == "off":
                continue
            f = self._pf_factor(k)
            self.factors[k] = f
            if kind != "general":
                base = _lconv(base, f)
        self.base = base
        self.F = {k: self.factors[k].copy() for k in plan.general}

    def base_without(self, stations) -> np.ndarray:
        """The fixed stations' product (and the think time) without
        ``stations`` (those a subsystem holds)."""
        if not any(self.plan.kinds[k] not in ("off", "general") for k in stations):
            return self.base
        base = self.plan.lattice.delay(self.plan.Z)
        for k, kind in enumerate(self.plan.kinds):
            if kind not in ("off", "general") and k not in stations:
                base = _lconv(base, self.factors[k])
        return base

    def _pf_factor(self, k: int) -> np.ndarray:
        plan, lat = self.plan, self.plan.lattice
        D = plan.D[:, k] * plan.live[:, k]
        if plan.kinds[k] == "delay":
            return lat.delay(D)
        return lat.factor(D, plan.rates[k])

    def solve(self):
        """log G and the complement of every general station."""
        gen = self.plan.general
        if not gen:
            self.G, self.comp = self.base, {}
            return
        prefix = [self.base]
        for k in gen:
            prefix.append(_lconv(prefix[-1], self.F[k]))
        dims = self.plan.lattice.dims
        suffix = [_identity(dims)]
        for k in reversed(gen[1:]):
            suffix.append(_lconv(self.F[k], suffix[-1]))
        suffix.reverse()            # suffix[j] = product of F over gen[j+1:]
        self.G = prefix[-1]
        self.comp = {}
        for j, k in enumerate(gen):
            s = suffix[j]
            self.comp[k] = prefix[j] if j == len(gen) - 1 else _lconv(prefix[j], s)

    def marginal(self, k: int, comp: np.ndarray) -> np.ndarray:
        """P_k(n) = F_k(n) G_{-k}(N - n) / G(N)."""
        f = self.F.get(k, self.factors.get(k))
        top = self.G[tuple(x - 1 for x in self.plan.lattice.dims)]
        with np.errstate(invalid="ignore"):
            lp = f + _flip(comp) - top
        return np.exp(np.where(np.isnan(lp), -np.inf, lp))


def _arrival_rates(plan: _Plan, k: int, comp: np.ndarray) -> np.ndarray:
    """lambda_kc(n) of eq. (1), (C, *dims): zero where class c is all at
    station k or does not visit it."""
    lat = plan.lattice
    lr = _flip(comp)                       # log G_{-k}(N - n)
    out = np.zeros((lat.C,) + lat.dims)
    for c in range(lat.C):
        if not plan.live[c, k]:
            continue
        up = lat.shift(lr, c)              # log G_{-k}(N - n - e_c)
        ok = np.isfinite(up) & np.isfinite(lr)
        with np.errstate(invalid="ignore", over="ignore"):
            out[c] = np.where(ok, plan.V[c, k] * np.exp(np.where(ok, up - lr, 0.0)), 0.0)
    return out


def _routing_rows(net: Network, r: int):
    """Per place (stations 0..K-1, the think stage K) the list of (next
    place, p) of class ``r``, as the simulator and the CTMC route it
    (:mod:`qmodels.analytic._ctmc_spec`: explicit routing with the think
    stage just before the reference station; a class given by visits routed
    at random in proportion to its visit ratios); None where the class
    switches or the rows cannot be read."""
    from ..model.stations import SINK, SOURCE

    low = net.lowered
    K = len(net.stations)
    THINK = K
    V = np.asarray(net.visits, dtype=float)
    Z = float(net.classes[r].think_time)
    c = net.classes[r]
    names = list(net.station_names)
    rows = [[] for _ in range(K + 1)]
    visited = [k for k in range(K) if V[r, k] > 0]
    if c.routing is not None:
        first = None
        for a, row in c.routing.items():
            if a in (SOURCE, SINK):
                return None
            if first is None:
                first = a
            for b, p in row.items():
                if isinstance(b, tuple) or b in (SOURCE, SINK) or float(p) <= 0:
                    if isinstance(b, tuple) or b in (SOURCE, SINK):
                        return None
                    continue
                rows[names.index(a)].append((names.index(b), float(p)))
        ref = names.index(c.reference if c.reference is not None else first)
        if Z > 0:
            for k in range(K):
                rows[k] = [(THINK if d == ref else d, p) for d, p in rows[k]]
            rows[THINK] = [(ref, 1.0)]
        return rows
    if not low.routed[r] and visited:
        T = float(V[r, visited].sum())
        if Z > 0:
            if T >= 1:
                rows[THINK] = [(j, V[r, j] / T) for j in visited]
                row = [(THINK, 1.0 / T)] + [(j, (1.0 - 1.0 / T) * V[r, j] / T)
                                            for j in visited]
            else:
                rows[THINK] = [(j, V[r, j]) for j in visited] + [(THINK, 1.0 - T)]
                row = [(THINK, 1.0)]
            for k in visited:
                rows[k] = [(d, p) for d, p in row if p > 0]
        else:
            row = [(j, V[r, j] / T) for j in visited]
            for k in visited:
                rows[k] = row
        return rows
    return None


def _passage_scv(net: Network, plan: _Plan, r: int, k: int, exponential: bool = False) -> float:
    """The SCV of the time from a class-``r`` departure from station ``k``
    to the next arrival there when that job is alone outside ``k`` (every
    other station then serves it at once): the passage time of an
    absorbing Markov chain over the other places (Neuts 1981, ch. 2: a
    phase-type time; its first two moments by the first-step equations
    M1 = t1 + P M1, M2 = t2 + 2 t1 (P M1) + P M2, Kulkarni, *Modeling and
    Analysis of Stochastic Systems*, 1995, sec. 4.8), each visit to a
    station j a time of mean S_j and second moment S_j^2 (1 + c_j^2), the
    think stage exponential.  A return straight to k is a zero time.
    1.0 (Poisson) where the routing cannot be read."""
    rows = _routing_rows(net, r)
    if rows is None or not rows[k]:
        return 1.0
    K = len(net.stations)
    low = net.lowered
    S = np.asarray(net.service_times, dtype=float)[r]
    t1 = np.zeros(K + 1)
    t2 = np.zeros(K + 1)
    for j in range(K):
        if exponential:
            c2 = 1.0
        elif np.isfinite(low.scv[j]):
            c2 = float(low.scv[j])
        else:       # the shape differs by class (the aggregated classes): class r's fit
            c2 = float(plan.phs[j][r].scv) if j in plan.phs else 1.0
        t1[j] = S[j]
        if isinstance(net.stations[j], LoadDependent) and low.multipliers[j]:
            t1[j] = S[j] / float(low.multipliers[j][0])     # alone: rate a(1)
        t2[j] = t1[j] ** 2 * (1.0 + c2)
    Z = float(net.classes[r].think_time)
    t1[K], t2[K] = Z, 2.0 * Z * Z
    P = np.zeros((K + 1, K + 1))
    for a in range(K + 1):
        if a == k:
            continue
        for b, p in rows[a]:
            if b != k:
                P[a, b] += p
    try:
        M = np.eye(K + 1) - P
        M1 = np.linalg.solve(M, t1)
        M2 = np.linalg.solve(M, t2 + 2.0 * t1 * (P @ M1))
    except np.linalg.LinAlgError:
        return 1.0
    alpha = np.zeros(K + 1)
    for b, p in rows[k]:
        if b != k:
            alpha[b] += p
    m1, m2 = float(alpha @ M1), float(alpha @ M2)
    if not (m1 > 0 and math.isfinite(m2)):
        return 1.0
    return m2 / (m1 * m1) - 1.0


#: the most arrival phases times service configurations of one level of a
#: one-class station's chain with renewal arrivals (dense level reduction)
RENEWAL_WIDTH = 96
#: the most states of a multi-class station's chain with renewal arrivals
RENEWAL_STATES = 3_000
#: the most work (as :data:`MAX_WORK`) a solve with renewal arrivals may
#: plan for; beyond, the arrivals are Poisson (about ten seconds on one core)
RENEWAL_WORK = 2e9
#: the most sweeps with renewal chains before Poisson arrivals are used
RENEWAL_SWEEPS = 200


class _Chains:
    """The general stations' chains (built once per network)."""

    def __init__(self, plan: _Plan, stations=None):
        self.plan = plan
        lat = plan.lattice
        self.chain = {}
        self.arrival = dict(plan.arrival)
        self.fallback = set()
        for k in (plan.general if stations is None else stations):
            c = int(min(plan.net.lowered.servers[k], max(lat.top, 1)))
            if lat.C == 1:
                self.chain[k] = SingleClassChain(plan.ph[k], float(plan.S[0, k]), c, lat.top)
            else:
                S = plan.S[:, k] * plan.live[:, k]
                self.chain[k] = MultiClassChain(plan.phs[k], S, c, lat.dims,
                                                MAX_STATES)
                if k in plan.arrivals:
                    self.chain[k] = RenewalMultiClassChain(self.chain[k], plan.arrivals[k])

    def solve(self, k: int, lam: np.ndarray) -> np.ndarray:
        """log pi_k(n) of station k's chain fed by ``lam``."""
        ch = self.chain[k]
        if self.plan.lattice.C == 1:
            if k in self.arrival:
                try:
                    out = ch.solve_renewal(lam[0], self.arrival[k])[0]
                    if np.isfinite(out).any():
                        return out
                except np.linalg.LinAlgError:
                    pass
                self.fallback.add(k)
                del self.arrival[k]
            return ch.solve(lam[0, :-1])[0]
        if isinstance(ch, RenewalMultiClassChain):
            try:
                out = ch.solve(lam)
                if np.isfinite(out).any():
                    return out
            except (np.linalg.LinAlgError, RuntimeError, ValueError):
                pass
            self.fallback.add(k)
            self.chain[k] = ch = ch.base
        return ch.solve(lam)


def _degenerate(plan: _Plan, k: int) -> list:
    """The classes that spend all their time at station ``k`` (no think
    time, no demand elsewhere): the complement cannot hold them."""
    D = plan.D
    out = []
    for c in range(plan.lattice.C):
        if plan.live[c, k] and plan.Z[c] + D[c].sum() - D[c, k] <= 0:
            out.append(c)
    return out


def _iterate(plan: _Plan, tol: float, max_iter: int):
    """Steps 1-4 of the module docstring; returns (the product-form network
    at the fixed point, sweeps, converged, last error, the chains)."""
    pf = _Network(plan)
    chains = _Chains(plan)
    skip = set()
    for k in plan.general:
        stuck = _degenerate(plan, k)
        if stuck and plan.lattice.C > 1:
            names = ", ".join(repr(plan.net.classes[c].name) for c in stuck)
            raise UnsupportedModelError(
                f"{_SOLVER}: class(es) {names} spend all their time at station "
                f"{plan.net.stations[k].name!r} (no think time, no other station), which the "
                "flow-equivalent source cannot feed: use method='ctmc' or 'sim'")
        if stuck:
            skip.add(k)         # one class, one station: every job there, always
    err = math.inf
    for sweep in range(1, max_iter + 1):
        pf.solve()
        err = 0.0
        new = {}
        for k in plan.general:
            if k in skip:
                continue
            comp = pf.comp[k]
            lp = chains.solve(k, _arrival_rates(plan, k, comp))
            P = pf.marginal(k, comp)
            err = max(err, 0.5 * float(np.abs(np.exp(lp) - P).sum()))
            with np.errstate(invalid="ignore"):
                f = lp - _flip(comp)
            f = np.where(np.isfinite(lp) & np.isfinite(_flip(comp)), f, -np.inf)
            # a station function is defined up to a constant factor; eq. (2)
            # maps the others' constants a_j to 1 / prod_{j != k} a_j, a map
            # whose logs grow (M - 1)-fold per sweep with M general stations
            # (past float precision within tens of sweeps): hold F_k(0) = 1
            new[k] = f - f[(0,) * f.ndim]
        pf.F.update(new)
        if err <= tol:
            pf.solve()
            return pf, sweep, True, err, chains
    pf.solve()
    return pf, max_iter, False, err, chains


# ---------------------------------------------------------------------------
# subsystems of several stations (module docstring)
# ---------------------------------------------------------------------------

#: the most stations one subsystem joins, where a call does not say
#: (``group_max`` of :func:`marie`; None: every candidate station where
#: their joint chain fits the state budget, else the most strongly linked
#: merged while their chains fit; 2: pairs at most;
#: 1: no subsystem)
GROUP_MAX = None

#: ``info["approximation"]``: the form that answered (module docstring,
#: "Subsystems of several stations"): one subsystem holding every candidate
#: station, smaller subsystems (not one of all), or none
FORM_ALL = "subsystem of all its FCFS queues"
FORM_SOME = "smaller subsystems"
FORM_ALONE = "stations alone (Marie's decomposition)"
FORMS = (FORM_ALL, FORM_SOME, FORM_ALONE)


def _place_kind(net: Network, plan: _Plan, k: int):
    """How station ``k`` may be a place of a subsystem's chain
    (:class:`~qmodels.analytic._marie_subsystem.SubsystemChain`): 0 a
    single-server FCFS queue (not load-dependent) with a phase-type fit
    per class, or exponential of one mean for all classes (BCMP type 1);
    1 a single-server processor-sharing queue, 2 a delay, both with
    exponential service (any mean per class: BCMP types 2 and 3); None
    otherwise (several servers, load-dependent, LCFS-PR, or a PS queue or
    delay of another shape, whose insensitivity holds in a product-form
    network only: there it stays in the complement as its product-form
    station function)."""
    low = net.lowered
    s = net.stations[k]
    kind = plan.kinds[k]
    if kind == "off" or isinstance(s, LoadDependent):
        return None
    if kind == "general":
        ok = isinstance(s, Queue) and int(low.servers[k]) == 1 and low.acts_fcfs[k] \
            and k in plan.phs
        return 0 if ok else None
    if not low.exponential[k]:
        return None
    if kind == "delay":
        return 2
    if isinstance(s, Queue) and int(low.servers[k]) == 1:
        if low.acts_fcfs[k]:
            return 0
        if low.discipline[k] == "ps":
            return 1
    return None


def _phs_at(plan: _Plan, k: int) -> list:
    """The PhaseType per class at station ``k``: a general station's fits,
    else exponential (:func:`_place_kind`)."""
    if k in plan.phs:
        return plan.phs[k]
    return [phase_type(None)] * plan.lattice.C


def _group_candidates(net: Network, plan: _Plan) -> list:
    """The stations a subsystem may join (:func:`_place_kind`): the
    general single-server FCFS queues and the exponential stations of
    product form beside them; [] where there is no general one or some
    class's routing cannot be read."""
    for r in range(plan.lattice.C):
        if plan.N[r] > 0 and _routing_rows(net, r) is None:
            return []
    out = [k for k in range(len(net.stations)) if _place_kind(net, plan, k) is not None]
    if not any(plan.kinds[k] == "general" for k in out):
        return []
    return out


def _group_chain(net: Network, plan: _Plan, places: tuple, budget: int):
    """The :class:`~qmodels.analytic._marie_subsystem.SubsystemChain` of
    the stations ``places``: routing between them and the flows (4) from
    the class's routing rows and visit ratios; FCFS order kept where its
    chain fits ``budget`` states, else the numbers of waiting jobs only
    (:func:`_chain_form`); :class:`_PastBudget` where neither fits."""
    from ._marie_subsystem import SubsystemChain

    C = plan.lattice.C
    m = len(places)
    pos = {k: i for i, k in enumerate(places)}
    V = plan.V
    P = [np.zeros((m, m)) for _ in range(C)]
    f = [np.zeros(m) for _ in range(C)]
    for r in range(C):
        if plan.N[r] <= 0:
            continue
        rows = _routing_rows(net, r)
        for k in places:
            if not plan.live[r, k]:
                continue
            for b, p in rows[k]:
                if b in pos and plan.live[r, b]:
                    P[r][pos[k], pos[b]] += p
        for j, k in enumerate(places):
            if plan.live[r, k]:
                f[r][j] = max(V[r, k] - sum(V[r, i] * P[r][pos[i], j] for i in places), 0.0)
    inside = _inside(net, plan, places)
    fits, window = _chain_form(plan, places, inside, budget)
    if not fits:
        # counted before the enumeration
        raise _PastBudget(f"more than {budget} states")
    phs = [[_phs_at(plan, k)[r] if plan.live[r, k] else None for r in range(C)]
           for k in places]
    S = [[float(plan.S[r, k]) for k in places] for r in range(C)]
    kinds = [_place_kind(net, plan, k) for k in places]
    if window is None:
        try:
            return SubsystemChain(phs, S, P, f, plan.N, inside, budget,
                                  expect=_placements(plan, places, inside, ordered=True),
                                  kinds=kinds)
        except OverflowError:
            # the orders the routing allows passed the budget after all
            window = _window(plan, places, inside, budget)
            if window is None:
                raise
    return SubsystemChain(phs, S, P, f, plan.N, inside, budget, window=window,
                          expect=_placements(plan, places, inside, window=window),
                          kinds=kinds)


def _inside(net: Network, plan: _Plan, places: tuple) -> list:
    """The classes with no place outside ``places`` (no think time, every
    station they visit among them): they never leave the subsystem."""
    K = len(net.stations)
    out = []
    for r in range(plan.lattice.C):
        if plan.N[r] <= 0:
            continue
        outside = plan.Z[r] > 0 or any(plan.live[r, k] for k in range(K) if k not in places)
        if not outside and plan.live[r, list(places)].any():
            out.append(r)
    return out


def _chain_form(plan: _Plan, places: tuple, inside: list, budget: int):
    """How the subsystem ``places`` is analysed, by counting its states
    before any enumeration: (True, None), the FCFS order kept, where its
    placements fit ``budget`` and its count of FCFS orders and phases
    passes it by at most :data:`ORDERS_MARGIN` (the routing may rule orders
    out); else (True, L), the first L jobs of each queue in order and the
    rest counted, L by :func:`_window` (shorter than the longest queue:
    a window that long would count the whole order's states); (False,
    None) where even L = 1 does not fit."""
    if not _fits(plan, places, inside, budget):
        return False, None
    if _placements(plan, places, inside, ordered=True) <= _margin(plan) * budget:
        return True, None
    return True, _window(plan, places, inside, budget)


def _fits(plan: _Plan, places: tuple, inside: list, budget: int) -> bool:
    """Whether :func:`_chain_form` finds a form for ``places`` (the
    shortest window is enough to say so)."""
    if _placements(plan, places, inside) > budget:
        return False
    return (_placements(plan, places, inside, window=1) <= budget
            or _placements(plan, places, inside, ordered=True) <= _margin(plan) * budget)


def _margin(plan: _Plan) -> float:
    """How far the count of FCFS orders may pass the budget before the
    chain is enumerated: :data:`ORDERS_MARGIN` with several classes (the
    routing may rule orders out), 1 with one (the count is the chain's
    size: a one-class chain of 691,951 states counted was enumerated to
    the 350,000-state budget before it was refused)."""
    return ORDERS_MARGIN if plan.lattice.C > 1 else 1.0


#: the longest FCFS window tried (:func:`_window`): past it, the whole order
WINDOW_MAX = 12
#: a window longer than one job only while its chain has at most this many
#: states (:func:`_window`).  Measured on ``marie-classdep-large`` (40
#: networks of 8-20 jobs, against the catalog's reference simulations;
#: ``qm.marie`` on each in turn with this constant set, its CPU time
#: summed, a scratch loop): windows as long as the 350,000-state budget
#: allowed took 451 s for X at most 4.18 % (mean 0.95 %), R 9.59 % (mean
#: 2.40 %); L = 1 everywhere 207 s for X 2.99 % (0.90 %), R 9.59 %
#: (2.54 %); this limit 202 s, the same answers as L = 1 there.  On
#: network 23 the X error grew with the window, 4.6 % (L = 1, 12,498
#: states a pair) to 6.2 % (L = 2, 42,280) and 7.7 % (L = 3, 116,622), at
#: the 200,000-state budget of the time: the random order past the window
#: offsets part of the error of the flow-equivalent there.  A short window
#: where it is cheap keeps the order that matters behind a
#: near-deterministic head (two Erlang queues in a cycle: X 10.3 % off at
#: L = 1, 0.8 % at L = 2; ``tests/test_marie_subsystem.py``)
WINDOW_STATES = 20_000


def _window(plan: _Plan, places: tuple, inside: list, budget: int):
    """The window L of the chain keeping the first L jobs of each queue in
    order (the rest counted): 1 where that chain has at most ``budget``
    states by :func:`_placements` (an upper bound there), longer (up to
    :data:`WINDOW_MAX`) while it has at most :data:`WINDOW_STATES` and
    ``budget``; None where even L = 1 does not fit."""
    if _placements(plan, places, inside, window=1) > budget:
        return None
    best = 1
    cap = min(budget, WINDOW_STATES)
    for L in range(2, WINDOW_MAX + 1):
        if _placements(plan, places, inside, window=L) > cap:
            break
        best = L
    return best


class _PastBudget(OverflowError):
    """A subsystem's chain past the state budget, found by counting
    (:func:`_placements`) before any enumeration."""


#: a subsystem whose FCFS orders alone (:func:`_placements` with
#: ``ordered``) pass this many times the state budget is not enumerated:
#: margin for orders the routing rules out
ORDERS_MARGIN = 2.0


def _sequences(lat, r: int, L: int) -> np.ndarray:
    """On the lattice: where n_r >= 1, the number of distinct sequences of
    min(|n|, L) - 1 classes drawn from n - e_r (the jobs behind a class-r
    head in a window of L), k! [x^k] prod_s sum_{j <= c_s} x^j / j!
    (:func:`_placements`); 0 where n_r = 0."""
    C = lat.C
    c = [lat.grid[s] - (1 if s == r else 0) for s in range(C)]
    inv = [1.0 / math.factorial(j) for j in range(L)]
    coef = [np.ones(lat.dims)] + [np.zeros(lat.dims) for _ in range(L - 1)]
    for s in range(C):
        coef = [sum(coef[m - j] * (c[s] >= j) * inv[j] for j in range(m + 1))
                for m in range(L)]
    kk = np.clip(np.minimum(lat.tot.astype(np.int64), L) - 1, 0, L - 1)
    out = np.choose(kk, coef) * np.array([math.factorial(j) for j in range(L)])[kk]
    return np.where(lat.grid[r] >= 1, out, 0.0)


def _placements(plan: _Plan, places: tuple, inside: list, ordered: bool = False,
                window: int | None = None) -> float:
    """The number of ways the stations ``places`` can hold jobs, counted by
    class and station only (at most N_r of class r in all, all N_r of a
    class that stays inside, none of a class where it does not go): the
    sum over the lattice of the convolution of one per station.  Every
    such placement is a state of the subsystem's chain (with one order
    and phase or more), so it bounds the states from below before the
    chain is built.  With ``ordered``, each placement counted once per
    FCFS order of its jobs at each station and phase of the job in service
    (the chain's states, :mod:`~qmodels.analytic._marie_subsystem`): with
    n_r jobs of class r there (n in all) and class r's fit of m_r phases,
    sum_r m_r (n - 1)! / ((n_r - 1)! prod_{s != r} n_s!), the sequences
    headed by a class-r job times its phases: the chain's size where every
    order and phase is reached, an estimate rather than a bound where the
    routing rules some order out.  With ``window`` L, each placement
    counted once per sequence of its first min(n, L) jobs and phase of the
    job in service (the chain keeping that much of the order, the rest
    counted): sum_r m_r s(n - e_r, min(n, L) - 1), with s(c, k) =
    k! [x^k] prod_s sum_{j <= c_s} x^j / j! the number of distinct
    sequences of k items drawn from the multiset c (the exponential
    generating function of arrangements with bounded repetition; Stanley,
    *Enumerative Combinatorics* 1, 2nd ed., 2012, sec. 1.4); an upper
    bound on the states."""
    lat = plan.lattice
    tot = None
    idx = lat.tot.astype(np.int64)
    for k in places:
        phs = _phs_at(plan, k)
        if _place_kind(plan.net, plan, k) != 0:
            # processor sharing, a delay: the numbers per class only
            f = np.zeros(lat.dims)
        elif window is not None:
            heads = np.zeros(lat.dims)
            for r in range(lat.C):
                if plan.live[r, k]:
                    heads += phs[r].phases * _sequences(lat, r, int(window))
            with np.errstate(divide="ignore"):
                f = np.where(idx > 0, np.log(np.maximum(heads, 1e-300)), 0.0)
        elif ordered:
            heads = sum(lat.grid[r] * (phs[r].phases if plan.live[r, k] else 0)
                        for r in range(lat.C))
            with np.errstate(divide="ignore"):
                f = np.where(idx > 0, np.log(np.maximum(heads, 1.0))
                             + lat.lgamma[np.maximum(idx - 1, 0)] - lat.lfact, 0.0)
        else:
            f = np.zeros(lat.dims)
        for r in range(lat.C):
            if not plan.live[r, k]:
                f = np.where(lat.grid[r] > 0, -np.inf, f)
        tot = f if tot is None else _lconv(tot, f)
    ok = np.ones(lat.dims, dtype=bool)
    for r in inside:
        ok &= lat.grid[r] == lat.N[r]
    vals = tot[ok & np.isfinite(tot)]
    return float(np.exp(vals).sum()) if vals.size else 0.0


def _groups(net: Network, plan: _Plan, gmax=None) -> dict:
    """The subsystems (module docstring): every candidate station
    (:func:`_group_candidates`) in one subsystem where their joint chain
    with FCFS order fits
    :data:`~qmodels.analytic._marie_subsystem.SUBSYSTEM_STATES` (and
    ``gmax``, the effective ``group_max`` of :func:`marie`); else
    subsystems grown by merging, the most strongly linked first (the
    largest flow sum_r V_ri P_r(i, j) + V_rj P_r(j, i) between their
    stations), from every candidate alone, while the merged chain fits the
    budget in one of its two forms (:func:`_chain_form`) and ``gmax``;
    none with ``gmax`` 1.  Every size is counted, not enumerated
    (:func:`_placements`): only the chains formed are built.
    {tuple of stations: chain}."""
    from ._marie_subsystem import SUBSYSTEM_STATES

    cand = _group_candidates(net, plan)
    if len(cand) < 2 or (gmax is not None and gmax < 2):
        return {}
    general = set(plan.general)
    C = plan.lattice.C
    rows = [_routing_rows(net, r) if plan.N[r] > 0 else None for r in range(C)]

    def flow(i, j):
        tot = 0.0
        for r in range(C):
            if rows[r] is None:
                continue
            for a, b in ((i, j), (j, i)):
                tot += plan.V[r, a] * sum(p for d, p in rows[r][a] if d == b)
        return tot

    if len(cand) > 2 and (gmax is None or len(cand) <= gmax):
        try:
            whole = tuple(cand)
            if _chain_form(plan, whole, _inside(net, plan, whole),
                           SUBSYSTEM_STATES) == (True, None):
                return {whole: _group_chain(net, plan, whole, SUBSYSTEM_STATES)}
        except OverflowError:
            pass
    link = {(i, j): flow(i, j) for a, i in enumerate(cand) for j in cand[a + 1:]}
    parts = [(k,) for k in cand]
    while True:
        best = None
        for a, g in enumerate(parts):
            for h in parts[a + 1:]:
                if gmax is not None and len(g) + len(h) > gmax:
                    continue
                w = sum(link[(min(i, j), max(i, j))] for i in g for j in h)
                if w <= 0 or (best is not None and w <= best[0]):
                    continue
                merged = tuple(sorted(g + h))
                if _fits(plan, merged, _inside(net, plan, merged), SUBSYSTEM_STATES):
                    best = (w, g, h, merged)
        if best is None:
            break
        _w, g, h, merged = best
        parts = [x for x in parts if x not in (g, h)] + [merged]
    out = {}
    for g in parts:
        # a subsystem of product-form stations alone is their product form
        if len(g) > 1 and general.intersection(g):
            try:
                out[g] = _group_chain(net, plan, g, SUBSYSTEM_STATES)
            except OverflowError:
                continue
    return out


def _complements(rest: np.ndarray, facs: list, dims) -> list:
    """G_{-x} for each factor of ``facs``: the convolution of ``rest`` and
    the others (prefix and suffix products)."""
    prefix = [rest]
    for f in facs:
        prefix.append(_lconv(prefix[-1], f))
    suffix = [_identity(dims)]
    for f in reversed(facs[1:]):
        suffix.append(_lconv(f, suffix[-1]))
    suffix.reverse()
    n = len(facs)
    return [prefix[j] if j == n - 1 else _lconv(prefix[j], suffix[j]) for j in range(n)], \
        prefix[-1]


def _norm(f: np.ndarray) -> np.ndarray:
    """A log station function held to max 0 (defined up to a factor; a
    subsystem holding a class that never leaves it has F(0) = 0)."""
    ok = np.isfinite(f)
    return f - float(f[ok].max()) if ok.any() else f


def _iterate_groups(plan: _Plan, groups: dict, tol: float, max_iter: int):
    """Steps 1-4 of the module docstring with each subsystem of ``groups``
    one unit (its joint chain, eq. (3)) and every other general station
    alone; returns (X, Q, P0, sweeps, converged, error, chains)."""
    pf = _Network(plan)
    lat = plan.lattice
    grouped = {k for g in groups for k in g}
    base = pf.base_without(grouped)
    singles = [k for k in plan.general if k not in grouped]
    chains = _Chains(plan, singles)
    for k in singles:
        stuck = _degenerate(plan, k)
        if stuck:
            names = ", ".join(repr(plan.net.classes[c].name) for c in stuck)
            raise UnsupportedModelError(
                f"{_SOLVER}: class(es) {names} spend all their time at station "
                f"{plan.net.stations[k].name!r} (no think time, no other station), which the "
                "flow-equivalent source cannot feed: use method='ctmc' or 'sim'")
    units = singles + list(groups)
    for ch in groups.values():
        ch.restart()            # each answer from the same start
    F = {}
    for u in units:
        if isinstance(u, tuple):
            f = pf.factors[u[0]]
            for k in u[1:]:
                f = _lconv(f, pf.factors[k])
            F[u] = f
        else:
            F[u] = pf.F[u]
    corner = tuple(x - 1 for x in lat.dims)
    err = math.inf
    conv = False
    sweeps = max_iter
    for sweep in range(1, max_iter + 1):
        comps, G = _complements(base, [F[u] for u in units], lat.dims)
        err = 0.0
        new = {}
        for u, comp in zip(units, comps):
            lr = _flip(comp)
            if isinstance(u, tuple):
                lam = np.zeros((lat.C,) + lat.dims)
                for c in range(lat.C):
                    up = lat.shift(lr, c)
                    ok = np.isfinite(up) & np.isfinite(lr)
                    lam[c] = np.where(ok, np.exp(np.where(ok, up - lr, 0.0)), 0.0)
                lp = groups[u].solve(lam)
            else:
                lp = chains.solve(u, _arrival_rates(plan, u, comp))
            with np.errstate(invalid="ignore"):
                P = np.exp(np.where(np.isfinite(F[u]) & np.isfinite(lr), F[u] + lr - G[corner],
                                    -np.inf))
            err = max(err, 0.5 * float(np.abs(np.exp(lp) - P).sum()))
            with np.errstate(invalid="ignore"):
                f = np.where(np.isfinite(lp) & np.isfinite(lr), lp - lr, -np.inf)
            new[u] = _norm(f)
        F.update(new)
        if err <= tol:
            conv, sweeps = True, sweep
            break
    X, Q, P0 = _group_figures(plan, pf, groups, units, F)
    return X, Q, P0, sweeps, conv, err, chains


def _group_figures(plan: _Plan, pf: _Network, groups: dict, units: list, F: dict):
    """X from G, Q from the marginals (a subsystem's stations from its
    chain's conditional means given its population), as :func:`_figures`;
    a class that never leaves a subsystem has G(N - e_c) = 0, its X from
    the chain (the utilisation law at its first place there)."""
    lat = plan.lattice
    corner = tuple(x - 1 for x in lat.dims)
    C, K = lat.C, len(plan.kinds)
    grouped = {k for g in groups for k in g}
    rest = lat.delay(plan.Z)
    for k, kind in enumerate(plan.kinds):
        if kind == "delay" and k not in grouped:
            rest = _lconv(rest, pf.factors[k])
    fixed = [k for k in range(K) if plan.kinds[k] not in ("off", "delay", "general")
             and k not in grouped]
    items = fixed + units
    facs = [pf.factors[k] for k in fixed] + [F[u] for u in units]
    comps, G = _complements(rest, facs, lat.dims)
    lG = G[corner]
    X = _throughputs(plan, G)
    Q = np.zeros((C, K))
    P0 = {}
    for u, f, comp in zip(items, facs, comps):
        with np.errstate(invalid="ignore"):
            lp = f + _flip(comp) - lG
        P = np.exp(np.where(np.isnan(lp), -np.inf, lp))
        if isinstance(u, tuple):
            cm = groups[u].conditional_means()
            for j, k in enumerate(u):
                for c in range(C):
                    Q[c, k] = float((cm[j, c] * P).sum())
            cb = groups[u].conditional_means(busy=True)
            for c in groups[u].inside:
                j = next(i for i, k in enumerate(u) if plan.live[c, k])
                k = u[j]
                X[c] = float((cb[j, c] * P).sum()) / (plan.D[c, k] * plan.alpha)
            continue
        _station_figures(plan, u, P, Q, P0)
    _delay_queues(plan, X, Q)
    return X, Q, P0


# ---------------------------------------------------------------------------
# the answer
# ---------------------------------------------------------------------------

def _figures(plan: _Plan, pf: _Network):
    """Class throughputs X (C,) and mean numbers Q (C, K) of the
    product-form network at the fixed point (real time units), and the
    probability that each load-dependent station is empty."""
    C, K = plan.lattice.C, len(plan.kinds)
    X = _throughputs(plan, pf.G)
    Q = np.zeros((C, K))
    present = [k for k in range(K) if plan.kinds[k] not in ("off", "delay")]
    comps = _all_complements(plan, pf, present)
    P0 = {}
    for k in present:
        _station_figures(plan, k, pf.marginal(k, comps[k]), Q, P0)
    _delay_queues(plan, X, Q)
    return X, Q, P0


def _throughputs(plan: _Plan, G) -> np.ndarray:
    """X_c = G(N - e_c) / G(N) (log G given on the lattice; Buzen 1973),
    in real time units (0 for a class without jobs)."""
    lat = plan.lattice
    corner = tuple(x - 1 for x in lat.dims)
    X = np.zeros(lat.C)
    for c in range(lat.C):
        if lat.N[c] > 0:
            idx = list(corner)
            idx[c] -= 1
            X[c] = math.exp(G[tuple(idx)] - G[corner]) / plan.alpha
    return X


def _station_figures(plan: _Plan, k: int, P, Q, P0: dict) -> None:
    """Station ``k``'s mean numbers per class from its marginal ``P`` on
    the lattice into ``Q``, and P(empty) into ``P0`` for a load-dependent
    station."""
    lat = plan.lattice
    for c in range(lat.C):
        Q[c, k] = float((lat.grid[c] * P).sum())
    if isinstance(plan.net.stations[k], LoadDependent):
        P0[k] = float(P[(0,) * lat.C])


def _delay_queues(plan: _Plan, X, Q) -> None:
    """A delay's mean numbers, Q = X D (Little), into ``Q``."""
    for k, kind in enumerate(plan.kinds):
        if kind == "delay":
            Q[:, k] = X * plan.D[:, k] * plan.alpha * plan.live[:, k]


def _all_complements(plan: _Plan, pf: _Network, stations) -> dict:
    """G_{-k} for each of ``stations``, every queueing station the classes
    visit (prefix and suffix products over them, the think time and the
    delays folded into the first)."""
    lat = plan.lattice
    facs = []
    for k in stations:
        facs.append(pf.F[k] if k in pf.F else pf.factors[k])
    rest = lat.delay(plan.Z)
    for k, kind in enumerate(plan.kinds):
        if kind == "delay":
            rest = _lconv(rest, pf.factors[k])
    prefix = [rest]
    for f in facs:
        prefix.append(_lconv(prefix[-1], f))
    suffix = [_identity(lat.dims)]
    for f in reversed(facs[1:]):
        suffix.append(_lconv(f, suffix[-1]))
    suffix.reverse()
    out = {}
    for j, k in enumerate(stations):
        out[k] = prefix[j] if j == len(stations) - 1 else _lconv(prefix[j], suffix[j])
    return out


def _lawful(net: Network, plan: _Plan, X, Q):
    """Hold the answer to the utilisation law and job conservation (the
    module docstring): scale X down if a queue is loaded past one per
    server (by at most the fixed point's residual), then rescale each
    class's queue lengths at the queueing stations so that
    sum_k Q_ck + X_c (Z_c + delays) = N_c."""
    low = net.lowered
    D = np.asarray(net.demands, dtype=float) * plan.live
    worst = 1.0
    for k, s in enumerate(net.stations):
        if isinstance(s, Queue) and plan.kinds[k] != "off":
            worst = max(worst, float(X @ D[:, k]) / float(low.servers[k]))
    if worst > 1.0:
        X = X / worst
    Z = np.array([float(c.think_time) for c in net.classes])
    delay = np.array([plan.kinds[k] == "delay" for k in range(len(net.stations))])
    for c, n in enumerate(plan.N):
        if n <= 0:
            continue
        Q[c, delay] = X[c] * D[c, delay]
        held = Q[c, ~delay].sum()
        room = n - X[c] * (Z[c] + D[c, delay].sum())
        if held > 0 and room > 0:
            Q[c, ~delay] *= room / held
    return X, Q, worst


def _utilisation(net: Network, plan: _Plan, X, pf_P0) -> np.ndarray:
    """U per class and station: X_c D_ck / c at a queue, X_c D_ck at a
    delay; at a load-dependent station 1 - P(empty) shared in proportion to
    X_c D_ck."""
    D = np.asarray(net.demands, dtype=float) * plan.live
    U = X[:, None] * D / net.lowered.divisors()[None, :]
    for k, p0 in pf_P0.items():
        w = X * D[:, k]
        tot = w.sum()
        U[:, k] = (1.0 - p0) * w / tot if tot > 0 else 0.0
    return U


# ---------------------------------------------------------------------------
# several classes on one cycle of single-server FCFS queues
# ---------------------------------------------------------------------------

def _cycle_groups(net: Network) -> list:
    """The groups of at least two classes that follow one cycle of
    single-server FCFS queues where no job of the group can overtake
    another: each class of the group of at least one job, no think time,
    routed explicitly (a class given by visits is routed at random), every
    station it visits a single-server FCFS queue (not load-dependent) with
    a positive service time, visited once per cycle, and every class of the
    group the same successor at each.  Lists of (class indices, stations in
    cycle order)."""
    C, K = len(net.classes), len(net.stations)
    if C < 2:
        return []
    low = net.lowered
    S = np.asarray(net.service_times, dtype=float)
    V = np.asarray(net.visits, dtype=float)
    found = {}
    for r, cls in enumerate(net.classes):
        if int(cls.population) < 1 or float(cls.think_time) > 0 or cls.routing is None:
            continue
        rows = _routing_rows(net, r)
        if rows is None:
            continue
        succ = {}
        for k in range(K):
            if V[r, k] <= 0:
                continue
            nxt = [(b, p) for b, p in rows[k] if p > 0]
            if len(nxt) != 1 or not 0 <= nxt[0][0] < K or abs(V[r, k] - 1.0) > 1e-9 \
                    or S[r, k] <= 0:
                succ = None
                break
            succ[k] = nxt[0][0]
        if not succ or any(
                not isinstance(net.stations[k], Queue) or isinstance(net.stations[k], LoadDependent)
                or int(low.servers[k]) != 1 or not low.acts_fcfs[k] for k in succ):
            continue
        order = [min(succ)]
        while succ[order[-1]] != order[0] and len(order) <= len(succ):
            order.append(succ[order[-1]])
        if len(order) != len(succ):
            continue
        found.setdefault(tuple(sorted(succ.items())), (order, []))[1].append(r)
    return [(members, order) for order, members in found.values() if len(members) > 1]


def _mixture(shape, S: np.ndarray, p: np.ndarray):
    """The service shape (and its mean) of a job of class c with
    probability p_c at a queue whose class-c service has mean S_c and the
    station's one shape: the shape itself where the means agree; a
    hyperexponential of one branch per class (exact) where the shape is
    exponential; else a shape of the mixture's first two moments,
    m1 = sum_c p_c S_c and m2 = sum_c p_c S_c^2 (1 + c^2) (the Lognormal
    form carries its SCV to :func:`~qmodels.analytic._marie_station.phase_type`,
    which fits two moments), and a word on it."""
    from ..model.distributions import HyperExponential, Lognormal

    m = float(p @ S)
    if float(S.max() - S.min()) <= 1e-12 * float(S.max()):
        return shape, m, None
    if is_exponential(shape):
        return HyperExponential(probs=tuple(float(x) for x in p),
                                rates=tuple(float(x) for x in m / S)), m, None
    c2 = float(shape.scv)
    m2 = float(p @ (S * S * (1.0 + c2)))
    return Lognormal(m2 / (m * m) - 1.0), m, "its first two moments"


def _group_answer(net: Network, groups, tol: float, max_iter: int, group_max=None):
    """Several classes on one cycle of single-server FCFS queues
    (:func:`_cycle_groups`).  No job of such a group overtakes another (a
    later arrival at a single-server FCFS queue leaves later, whoever else
    is there), so their cyclic order never changes and every job of the
    group completes its cycles at the same rate: X_c = X_g N_c / N_g
    exactly, N_g = sum of the group's N_c, and every class of the group
    has the same cycle time N_g / X_g (Little's law per class).  Each group
    is aggregated into one class of N_g jobs whose service at each queue is
    the mixture of its classes' services with probabilities N_c / N_g (the
    class aggregation of B. Baynat & Y. Dallery, "A product-form
    approximation method for general closed queueing networks with several
    classes of customers", Performance Evaluation 24(3), 1996, here for the
    whole cycle), the other classes kept, and the network solved by
    Marie's method (a single class where one group holds every class:
    exact for two queues, module docstring).  The approximation: the
    mixture draws the class of each service afresh, where the cycle
    repeats one order.  Per class c of a group, at queue k: U_ck = X_c
    S_ck; the residence time is R_ck = S_ck + g_c W_k, W_k the aggregated
    class's wait there and g_c = (N_g / X_g - D_c) / sum_k W_k, the one
    scaling that gives class c the cycle time N_g / X_g (and
    sum_c X_c R_ck the aggregated queue's length).  None where some g_c
    would be negative (the cycle time below a class's own demand): Marie's
    method per class instead."""
    from ..model.network import Closed

    low = net.lowered
    for k, st in enumerate(net.stations):
        # a shape per class at an FCFS queue is refused by name (as on the
        # per-class path), though the aggregated network could take it
        if low.class_shaped is not None and low.class_shaped[k] and isinstance(st, Queue) \
                and not isinstance(st, LoadDependent) and low.acts_fcfs[k]:
            low.one_shape(k, _SOLVER)
    S = np.asarray(net.service_times, dtype=float)
    names = list(net.station_names)
    taken = set(net.class_names)
    grouped = {r for members, _o in groups for r in members}
    classes, rows, words, info_groups = [], [], [], []
    for r, cls in enumerate(net.classes):
        if r not in grouped:
            classes.append(cls)
            rows.append(("one", r))
    for members, order in groups:
        N = np.array([float(net.classes[r].population) for r in members])
        p = N / N.sum()
        service, shapes, Sm = {}, {}, {}
        for k in order:
            shape, m, how = _mixture(low.one_shape(k, _SOLVER), S[members, k], p)
            service[names[k]], Sm[k] = m, m
            if shape is not None:           # None: the exponential default
                shapes[names[k]] = shape
            if how:
                words.append(f"station {names[k]!r}: the mixture of the services of classes "
                             f"{', '.join(repr(net.classes[r].name) for r in members)} by {how}")
        route = {names[a]: {names[b]: 1.0} for a, b in zip(order, order[1:] + order[:1])}
        label = "+".join(net.classes[r].name for r in members)
        while label in taken:
            label += "'"
        taken.add(label)
        classes.append(Closed(label, int(N.sum()), routing=route, service=service,
                              distribution=shapes or None))
        rows.append(("group", members, order, p, Sm))
        info_groups.append({"classes": [net.classes[r].name for r in members],
                            "stations": [names[k] for k in order],
                            "probabilities": [float(x) for x in p]})
    agg = Network(list(net.stations), classes)
    r = _marie(agg, tol, max_iter, per_class=True, group_max=group_max)
    aX = np.asarray(r.class_throughput, dtype=float)
    aQ = np.asarray(r.station_queue_length, dtype=float)
    aXk = np.asarray(r.station_throughput, dtype=float)
    aRk = np.asarray(r.station_response_time, dtype=float)
    aU = np.asarray(r.station_utilization, dtype=float)
    C, K = len(net.classes), len(net.stations)
    X, Xk, Rk, Q, U = (np.zeros(C), np.zeros((C, K)), np.zeros((C, K)), np.zeros((C, K)),
                       np.zeros((C, K)))
    for j, row in enumerate(rows):
        if row[0] == "one":
            c = row[1]
            X[c], Xk[c], Rk[c], Q[c], U[c] = aX[j], aXk[j], aRk[j], aQ[j], aU[j]
            continue
        _t, members, order, p, Sm = row
        Xg = float(aX[j])
        if not (Xg > 0 and math.isfinite(Xg)):
            return None
        T = float(sum(net.classes[c].population for c in members)) / Xg     # cycle time
        W = np.array([max(float(aQ[j, k]) / Xg - Sm[k], 0.0) for k in order])
        D = S[np.ix_(members, order)].sum(axis=1)
        if W.sum() <= 0 or (T - D < -1e-12 * T).any():
            return None
        g = np.maximum(T - D, 0.0) / W.sum()
        for i, c in enumerate(members):
            X[c] = Xg * p[i]
            Xk[c, order] = X[c]
            Rk[c, order] = S[c, order] + g[i] * W
            Q[c, order] = X[c] * Rk[c, order]
            U[c, order] = X[c] * S[c, order]
    notes = ["APPROXIMATION: Marie's method (Marie 1979, 1980; Bolch et al. 2006, sec. "
             "10.1.4) with classes aggregated: classes that follow one cycle of single-server "
             "FCFS queues with no think time never overtake one another, so their X_c is "
             "their group's X in proportion to N_c and they share one cycle time; each such "
             "group solved as one class whose service at each queue is its classes' mixture "
             "(probability N_c / N; Baynat & Dallery 1996), which draws the class of each "
             "service afresh where the cycle repeats one order",
             "per class of a group at each queue: its own service plus the group's wait "
             "scaled to the group's cycle time"]
    notes += words
    notes += [n for n in r.notes if not n.startswith("APPROXIMATION")]
    info = dict(r.info)
    info["aggregated"] = info_groups
    return Result(method="marie", network=net, class_throughput=X,
                  class_response_time=(Rk * np.asarray(net.visits, dtype=float)).sum(axis=1),
                  station_throughput=Xk, station_queue_length=Q, station_response_time=Rk,
                  station_utilization=U, notes=tuple(notes), info=info,
                  exactness=APPROXIMATE,
                  assumptions=ASSUMPTIONS + (
                      "classes on one cycle of single-server FCFS queues with no think time: "
                      "aggregated into one class of their mixed service",))


@answers()
def marie(net: Network, *, tol: float = 1e-8, max_iter: int = 500,
          group_max: int | None = None) -> Result:
    """Marie's method for closed networks with FCFS queues of general
    service (``method="marie"``; APPROXIMATE).

    Parameters
    ----------
    net : Network
        Closed classes; FCFS queues of any service shape and any number of
        servers (a priority queue visited by one level counts as FCFS), PS
        and LCFS-PR queues, delays, load-dependent stations with
        exponential service.
    tol : float
        Stop when, at every general station, the product-form marginal and
        the station's chain differ by at most ``tol`` in total variation.
    max_iter : int
        Sweep limit; reaching it emits
        :class:`~qmodels.errors.ConvergenceWarning` and sets
        ``info["converged"] = False``.
    group_max : int or None
        The most stations one subsystem joins (module docstring,
        "Subsystems of several stations"): None every candidate station
        (the general single-server FCFS queues and the exponential
        product-form stations beside them) in one subsystem where its
        chain fits the state budget, else the most
        strongly linked merged while their chains fit; 2 pairs at most; 1
        no subsystem (every station alone, Marie's
        decomposition).

    Returns
    -------
    Result
        method ``"marie"``, labelled approximate; ``info["iterations"]``,
        ``info["fits"]`` (the phase-type form of each general station's
        service), ``info["tv_distance"]`` (the last sweep's residual);
        ``info["approximation"]`` the form that answered, one of
        :data:`FORMS`: "subsystem of all its FCFS queues" (one subsystem
        holds every candidate queue), "smaller subsystems" (some
        subsystems, not one of all), "stations alone (Marie's
        decomposition)" (none).  The measured error
        envelopes are recorded per form.

    Raises
    ------
    UnsupportedModelError
        Open or mixed classes, token pools, a capacity that can bind, a
        load-dependent station with non-exponential service, a priority
        queue with several levels, other station kinds, sympy symbols;
        several classes of which one spends all its time at one general
        station.
    InvalidValueError
        ``tol``, ``max_iter`` or ``group_max`` (not None nor an integer >= 1).
    ProblemTooLargeError
        A population lattice, a station's chain or an estimated work past
        :data:`MAX_LATTICE`, :data:`MAX_STATES`, :data:`MAX_WORK` (refused
        before any allocation).

    Notes
    -----
    Equations (1) and (2) and their sources in the module docstring.
    Single-server FCFS queues of general service, with the exponential
    FCFS and PS queues and delays beside them, are joined in subsystems
    solved as one joint chain each (module docstring, "Subsystems of
    several stations"); ``info["subsystems"]`` lists them
    and ``info["subsystems_ordered"]`` says whether each kept its queues'
    whole FCFS order (else the order of the first jobs of each queue and
    the numbers of the rest, named in the notes).
    Where none forms, classes that share one cycle of single-server FCFS
    queues with no think time are solved as one aggregated class (module
    docstring, "Several classes on one cycle"); ``info["aggregated"]``
    lists them.
    Exact for product-form networks (equal to exact MVA) and for one
    general station whose complement is delays (a finite-source queue)
    when its service shape is phase-type.

    References
    ----------
    R. Marie, "An approximate analytical method for general queueing
    networks", IEEE Trans. Software Eng. SE-5(5), 1979.
    R. Marie, "Calculating equilibrium probabilities for lambda(n)/C_k/1/N
    queues", ACM SIGMETRICS 1980.
    G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, Queueing Networks and
    Markov Chains, 2nd ed., Wiley 2006, sec. 10.1.4.
    """
    _check_options(tol, max_iter)
    if group_max is not None and (isinstance(group_max, bool) or not isinstance(
            group_max, (int, np.integer)) or group_max < 1):
        raise InvalidValueError(
            f"group_max must be None or an integer >= 1 (the most stations in one "
            f"subsystem; 1: none), got {group_max!r}")
    _refuse(net)
    gmax = None if group_max is None else int(group_max)
    groups = _cycle_groups(net)
    if groups and not _forms_subsystems(net, gmax):
        # where subsystems keeping the FCFS order form, their chains keep the
        # classes' order and the class aggregation (which draws the class of
        # each service afresh) is not used
        out = _group_answer(net, groups, float(tol), int(max_iter), gmax)
        if out is not None:
            return out
    return _marie(net, float(tol), int(max_iter), group_max=gmax)


def _form(net: Network, plan: _Plan, groups: dict) -> str:
    """The form that answered (:data:`FORMS`): one subsystem of every
    candidate queue, some subsystems, or none."""
    if not groups:
        return FORM_ALONE
    if len(groups) == 1 and set(next(iter(groups))) == set(_group_candidates(net, plan)):
        return FORM_ALL
    return FORM_SOME


def _marie(net: Network, tol: float, max_iter: int, per_class: bool = False,
           group_max=None) -> Result:
    """Steps 1-4 (module docstring) and the answer; ``per_class``: the
    aggregated network of :func:`_group_answer`, a shape per class;
    ``group_max`` as in :func:`marie`."""
    import warnings

    from ..errors import ConvergenceWarning

    plan = _plan(net, per_class)
    renewal_failed = False
    groups = _subsystems(net, plan, group_max)
    group_failed = False
    # with renewal chains, at most RENEWAL_SWEEPS before falling back
    cap = int(max_iter) if not (plan.arrival or plan.arrivals) else \
        min(int(max_iter), RENEWAL_SWEEPS)
    if groups:
        try:
            with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
                X, Q, P0, sweeps, conv, err, chains = _iterate_groups(
                    plan, groups, float(tol), cap)
            if not (conv and np.isfinite(X).all() and np.isfinite(Q).all()):
                groups, group_failed = {}, True
        except (np.linalg.LinAlgError, RuntimeError, ValueError):
            groups, group_failed = {}, True
    if not groups:
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            pf, sweeps, conv, err, chains = _iterate(plan, float(tol), cap)
            X, Q, P0 = _figures(plan, pf)
    if not groups and (plan.arrival or plan.arrivals) and not (
            conv and np.isfinite(X).all() and np.isfinite(Q).all()):
        # the renewal refinement did not settle: Marie's own Poisson
        # arrivals (the plan without renewal chains), named in the notes
        renewal_failed = True
        plan = _Plan(net, renewal=False, per_class=per_class)
        pf, sweeps, conv, err, chains = _iterate(plan, float(tol), int(max_iter))
        X, Q, P0 = _figures(plan, pf)
    X, Q, worst = _lawful(net, plan, X, Q)
    V = np.asarray(net.visits, dtype=float) * plan.live
    S = np.asarray(net.service_times, dtype=float)
    Xk = X[:, None] * V
    with np.errstate(divide="ignore", invalid="ignore"):
        Rk = np.where(Xk > 0, Q / np.where(Xk > 0, Xk, 1.0), np.where(V > 0, S, 0.0))
    Rres = Rk * V
    Rc = Rres.sum(axis=1)
    U = _utilisation(net, plan, X, P0)
    notes = ["APPROXIMATION: Marie's method (Marie 1979, 1980; Bolch et al. 2006, sec. "
             "10.1.4): each FCFS queue with general service solved as a lambda(n)/PH/c queue "
             "fed by the flow-equivalent of the rest of the network, iterated to consistency "
             "with a product-form network"]
    for k in plan.general:
        notes.append(f"station {net.stations[k].name!r}: service as {plan.fits[k]}")
    for k, arr in chains.arrival.items():
        notes.append(f"station {net.stations[k].name!r}: arrivals as a renewal process of "
                     f"{arr.words} intervals (the passage through the rest of the network)")
    if renewal_failed:
        notes.append("the renewal arrivals did not converge here; Poisson arrivals (Marie's "
                     "own) at every station")
    for k in sorted(chains.fallback):
        notes.append(f"station {net.stations[k].name!r}: the renewal chain could not be "
                     "solved; Poisson arrivals (Marie's own) there")
    joint = {k for g in groups for k in g}
    for k, arrs in plan.arrivals.items():
        if k in chains.fallback or k in joint:
            continue
        words = "; ".join(f"class {net.classes[r].name!r}: {a.words}"
                          for r, a in enumerate(arrs) if a is not None)
        notes.append(f"station {net.stations[k].name!r}: arrivals as renewal processes "
                     f"({words}; the others Poisson)")
    for g in groups:
        kept = ("the FCFS order kept" if groups[g].ordered else
                "the numbers of waiting jobs per class kept, not their order: the next to "
                "start drawn in proportion to them")
        notes.append("stations " + ", ".join(repr(net.stations[k].name) for k in g)
                     + f": one subsystem, their joint chain ({groups[g].size:,} states, {kept}) "
                     "fed by the flow-equivalent of the rest (Baynat & Dallery 1993)")
    if group_failed:
        notes.append("the subsystems' iteration did not settle; every station alone")
    if plan.lattice.C > 1 and any(k not in joint for k in plan.general):
        notes.append("several classes: at a general station the waiting jobs start in random "
                     "order (the chain keeps their numbers, not their order)")
    info = {"algorithm": "Marie's method (product-form substitute by log-space convolution, "
                         "station chains by level reduction / sparse LU, subsystems' chains "
                         "by sparse LU / multigrid-preconditioned GMRES)",
            "iterations": int(sweeps), "converged": bool(conv), "tol": float(tol),
            "tv_distance": float(err), "fits": {net.stations[k].name: plan.fits[k]
                                                for k in plan.general},
            "capacity_scale": float(worst),
            "subsystems": [[net.stations[k].name for k in g] for g in groups],
            "subsystems_ordered": [bool(groups[g].ordered) for g in groups],
            "approximation": _form(net, plan, groups),
            "arrivals": {**{net.stations[k].name: arr.words for k, arr in chains.arrival.items()},
                         **{net.stations[k].name: "; ".join(
                             f"class {net.classes[r].name!r}: {a.words}"
                             for r, a in enumerate(arrs) if a is not None)
                            for k, arrs in plan.arrivals.items()
                            if k not in chains.fallback and k not in joint}}}
    if not conv:
        warnings.warn(f"{_SOLVER} stopped at max_iter={max_iter} before reaching tol "
                      f"(residual {err:.3g}); the answer is approximate beyond its method",
                      ConvergenceWarning, stacklevel=4)
    whole = _whole_network(net, plan, groups, conv)
    if whole:
        notes[0] = ("EXACT here: Marie's method (Marie 1979, 1980) with one subsystem holding "
                    "every station of the network, all of its service shapes phase-type as "
                    "given (no fit); the rest of the network is each class's think time, an "
                    "exponential stage whose flow-equivalent rate (N_c - n_c) / Z_c is exact, so "
                    "the subsystem's chain is the network's own")
    return Result(method="marie", network=net, class_throughput=X, class_response_time=Rc,
                  station_throughput=Xk, station_queue_length=Q, station_response_time=Rk,
                  station_utilization=U, notes=tuple(notes), info=info,
                  exactness="exact" if whole else APPROXIMATE,
                  assumptions=_WHOLE_ASSUMPTIONS if whole else ASSUMPTIONS)


#: the assumptions of an answer whose one subsystem is the whole network
_WHOLE_ASSUMPTIONS = (
    "closed classes; one subsystem holding every station of the network, solved as one joint "
    "Markov chain keeping the FCFS order (Baynat & Dallery 1993), fed by each class's "
    "exponential think time (N_c - n_c) / Z_c: the network's own chain",
    "service shapes phase-type as given (exponential, Erlang, hyperexponential): no fit",
)


def _whole_network(net: Network, plan, groups: dict, converged: bool) -> bool:
    """Whether Marie's answer is the network's own chain: one subsystem
    holding every station, its FCFS order kept, every service shape in it
    phase-type as given (no fit), converged.  Then the complement is each class's think time
    alone, an exponential stage (the think time of this package, in the
    simulator and the CTMC alike) whose rate with n_c class-c jobs in the
    subsystem is exactly (N_c - n_c) / Z_c, so Marie's state-dependent
    Poisson arrivals are the network's own (Marie 1980; the module
    docstring's "where it is exact").  Measured (a loop over the catalogs'
    networks comparing with ``qm.ctmc``): the 91 networks of ``marie-ph``,
    ``fcfs-classdep-closed`` and ``marie-fewjobs`` so answered within
    1.8e-13 in X; those whose one subsystem left a station outside (a
    delay, an FCFS queue) 3e-5 to 3.5e-2 off."""
    if not converged or len(groups) != 1:
        return False
    (members,) = groups
    if set(members) != set(range(len(net.stations))) or not groups[members].ordered:
        return False
    return all(ph.exact for k in members if k in plan.phs for ph in plan.phs[k])
