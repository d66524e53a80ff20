"""The exact response-time distribution of a closed class: the passage time
of a tagged job in the network's Markov chain.

Where no closed form exists (:mod:`.passage` covers open overtake-free
paths), the response time of one job of a closed class is still a
**passage time** of a finite Markov chain, and so exactly a phase-type
distribution (Neuts, *Matrix-Geometric Solutions in Stochastic Models*,
1981, ch. 2): the chain of the network with one job of the class *tagged*
(its position kept: its place in an FCFS line, or that it is at a delay),
from the instant it starts a cycle (leaves its think stage, or, without a
think time, reaches its reference station) to the instant it ends it
(reaches the think stage / the reference station again).  This is the
tagged-customer construction of Harrison & Knottenbelt ("Passage time
distributions in large Markov chains", SIGMETRICS 2002) and of Muppala &
Trivedi's response-time analysis of closed networks (Trivedi, *Probability
and Statistics with Reliability, Queuing and Computer Science
Applications*, 2nd ed., 2002, sec. 9.5).

* The **start distribution** alpha: the state just after a cycle start of
  the tagged job, in the stationary regime.  It is taken from the
  stationary distribution pi of the whole tagged chain (tagged job
  included, thinking or not) as the Palm distribution of the cycle-start
  transitions: alpha(s') proportional to sum_s pi(s) q(s, s') over the
  transitions s -> s' that start a cycle.  For a product-form network
  this is the arrival theorem (the other jobs seen as in the network with
  one job fewer: Lavenberg & Reiser, "Stationary state probabilities at
  arrival instants for closed queueing networks with multiple types of
  customers", J. Appl. Prob. 17, 1980); computed this way it needs no
  product form (FCFS with class-dependent rates included).  pi itself
  comes from the smaller chain without a tag: the jobs of a class are
  exchangeable, so the tag is equally likely on each of them.
* The **sub-generator** T: the chain's generator restricted to the states
  where the tagged job is inside its cycle, the cycle-ending transitions
  made exits.  The CDF is F(t) = 1 - alpha exp(T t) 1.
* exp(T t) 1 by **uniformisation** (Jensen 1953; Grassmann, "Transient
  solutions in Markovian queueing systems", Comput. Oper. Res. 4, 1977;
  Stewart, *Introduction to the Numerical Solution of Markov Chains*, 1994,
  ch. 8): with q >= max_i |T_ii| and P = I + T / q,
  alpha exp(T t) 1 = sum_n Poisson(n; q t) w_n, w_n = alpha P^n 1.  The
  scalars w_n are computed once (one sparse product each) and serve every
  t; the sum is cut where the Poisson tail left is below 1e-13.
* The mean alpha (-T)^-1 1 (Neuts 1981, eq. 2.2.2) by a sparse solve; by
  Little's law and the arrival theorem it equals the class's mean
  response time R = N / X - Z.
* Percentiles by bisection on F (continuous, non-decreasing; an atom at
  zero when a cycle may visit no station).

Assumptions (refused by name otherwise): closed classes only (no open
class in the network); exponential service at every visited station and
an exponential think time; single- or multi-server FCFS queues (a
priority queue whose visitors share one level serves FCFS), processor
sharing queues (each of n jobs served at min(1, c/n) of its rate; with
exponential service the tagged job's attained service need not be kept)
and delays; no priorities, LCFS-PR, load-dependent stations, finite
capacities, token pools, fork-joins or class switching; a chain of at most
``max_states`` states (counted while built, refused past it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import (
    InvalidValueError,
    ProblemTooLargeError,
    UnsupportedModelError,
)
from ..model.network import Closed, Network
from ..results import METHOD_LABELS
from . import requires
from .passage import ResponseTimeDistribution, _class_named

__all__ = ["ClosedResponseTimeDistribution", "closed_response_time_distribution",
           "DEFAULT_PASSAGE_STATES"]

#: Default bound on the number of states of the tagged chain.
DEFAULT_PASSAGE_STATES = 50_000

_TAG = -1          # the tagged job in an FCFS line
_TOL = 1e-13       # Poisson tail left out of the uniformisation sum


@dataclass(frozen=True, repr=False)
class ClosedResponseTimeDistribution(ResponseTimeDistribution):
    """The phase-type distribution (alpha, T) of a closed class's response
    time from its tagged chain (module docstring); T is a sparse matrix.
    ``cdf``, ``quantile``, ``percentile``, ``mean`` and the label, as
    :class:`~qmodels.analytic.passage.ResponseTimeDistribution`."""

    method: str = "ctmc-passage"
    assumptions: tuple = METHOD_LABELS["ctmc-passage"][1]
    states: int = 0
    _cache: dict = field(default_factory=dict, compare=False)

    @property
    def mean(self) -> float:
        """alpha (-T)^-1 1 (Neuts 1981, eq. 2.2.2)."""
        if "mean" not in self._cache:
            from scipy.sparse.linalg import spsolve

            x = spsolve((-self.T).tocsc(), np.ones(self.T.shape[0]))
            self._cache["mean"] = float(self.alpha @ np.atleast_1d(x))
        return self._cache["mean"]

    def _weights(self, n: int) -> np.ndarray:
        """w_0..w_n, w_j = alpha P^j 1 with P = I + T / q (uniformisation)."""
        c = self._cache
        if "P" not in c:
            q = float(np.max(-self.T.diagonal())) * 1.02 or 1.0
            from scipy.sparse import identity

            c["q"] = q
            c["P"] = (identity(self.T.shape[0], format="csr") + self.T / q).tocsr()
            c["v"] = np.ones(self.T.shape[0])
            c["w"] = [float(self.alpha.sum())]
        w, P = c["w"], c["P"]
        while len(w) <= n:
            c["v"] = P @ c["v"]
            # an elementwise product, not a BLAS dot: threaded BLAS stalls
            # for milliseconds per small call on a busy machine
            w.append(float((self.alpha * c["v"]).sum()))
        return np.asarray(w[:n + 1])

    def cdf(self, t) -> float:
        """P(R <= t) = 1 - sum_n Poisson(n; q t) alpha P^n 1
        (uniformisation: Stewart 1994, ch. 8)."""
        from scipy.special import gammaln

        t = float(t)
        if t < 0:
            return 0.0
        atom = 1.0 - float(self.alpha.sum())
        if t == 0:
            return max(0.0, atom)
        self._weights(0)
        qt = self._cache["q"] * t
        # terms to keep: the Poisson(qt) mass beyond n below _TOL (a normal
        # bound 10 standard deviations out, and never fewer than 30 terms)
        n = int(qt + 10.0 * math.sqrt(qt) + 30)
        k = np.arange(n + 1)
        logp = -qt + k * math.log(qt) - gammaln(k + 1)
        p = np.exp(logp)
        tail = float((p * self._weights(n)).sum())
        return min(1.0, max(0.0, 1.0 - tail))

    def quantile(self, p: float) -> float:
        """The p-quantile: the least t with cdf(t) >= p, by bisection."""
        p = float(p)
        if not 0.0 < p < 1.0:
            raise InvalidValueError(f"quantile p={p!r} must lie in (0, 1)")
        if self.cdf(0.0) >= p:
            return 0.0
        self._weights(0)
        lo, hi = 0.0, 1.0 / self._cache["q"]     # one mean holding time of the chain
        while self.cdf(hi) < p:
            lo, hi = hi, hi * 2.0
        while hi - lo > 1e-12 * hi:
            mid = 0.5 * (lo + hi)
            if self.cdf(mid) < p:
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi)

    def to_dict(self) -> dict:
        d = super().to_dict()
        d["states"] = self.states
        return d

    def __repr__(self):
        from .._format import fmt

        qs = ", ".join(f"p{q:g} {fmt(self.percentile(q))}" for q in (50, 95, 99))
        return (f"ClosedResponseTimeDistribution(class {self.cls!r}, tagged chain of "
                f"{self.states} states: mean {fmt(self.mean)}, {qs}) [{self.exactness}]")


# ---------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------

def _refusal(net: Network, spec) -> str | None:
    """What the tagged chain does not model, named; None if it does."""
    from ._ctmc_spec import _DELAY, _FCFS, _ORD_FCFS, _PS

    why = requires.numeric(net) or requires.class_switching(net)
    if why:
        return why
    if net.open_classes:
        return (f"class {net.open_classes[0].name!r} is open; the tagged-job chain covers "
                "closed networks (an open class along an overtake-free path: method "
                "'passage')")
    if net.pools:
        return f"token pool {net.pools[0].name!r}: the tagged-job chain has no pools"
    low = net.lowered
    for k, s in enumerate(net.stations):
        if not low.visited[k]:
            continue
        if low.kind[k] not in ("delay", "queue"):
            what = "load-dependent" if low.kind[k] == "ld" else repr(low.kind[k])
            return (f"station {s.name!r} is a {what} station; the tagged-job chain takes FCFS "
                    "and PS queues and delays")
        if spec.kind[k] == _FCFS and spec.order[k] != _ORD_FCFS:
            return (f"station {s.name!r}: discipline {s.discipline!r}; the tagged-job chain "
                    "takes FCFS order only")
        if spec.kind[k] not in (_DELAY, _FCFS, _PS):  # pragma: no cover - kinds above
            return f"station {s.name!r}: kind {low.kind[k]!r}"
        if not low.exponential[k]:
            d = s.distribution
            return (f"station {s.name!r}: {type(d).__name__} service (scv {d.scv:g}); the "
                    "tagged-job chain needs exponential service")
        if spec.cap[k] != math.inf and spec.cap[k] < sum(spec.pop):
            return (f"station {s.name!r}: finite capacity {spec.cap[k]}; the tagged-job "
                    "chain has no blocking")
    return None


# ---------------------------------------------------------------------------
# the tagged chain
# ---------------------------------------------------------------------------

def _tag_rows(spec, r0):
    """The tagged job's routing rows with the cycle's end explicit: row
    ``THINK`` the stations a cycle starts at; an entry to ``THINK`` ends
    the cycle.  With a think time that is the spec's routing; without one
    it is put in as a think stage of no duration: before the reference
    station for an explicit route, and for a class given by visit ratios
    (total T >= 1) the end of a cycle drawn with probability 1/T after each
    visit, as the simulator and :func:`._ctmc_spec._Spec._random_route_closed`
    route it with a think time (the next station is then drawn with
    probability V_j / T either way, so the other jobs' motion is the same)."""
    TH = spec.THINK
    if spec.Z[r0] > 0:
        return [list(row) for row in spec.route[r0]]
    c = spec.net.classes[r0]
    rows = [list(row) for row in spec.route[r0]]
    if c.routing is not None:
        ref = spec.ref[r0]
        for k in range(spec.K):
            rows[k] = [(TH if d == ref else d, p, s) for d, p, s in rows[k]]
        rows[TH] = [(ref, 1.0, r0)]
        return rows
    visited = [k for k in range(spec.K) if spec.V[r0, k] > 0]
    T = float(sum(spec.V[r0, k] for k in visited))
    if T < 1.0 - 1e-12:
        raise UnsupportedModelError(
            f"class {c.name!r}: visit ratios summing to {T:g} < 1 with no think time: a cycle "
            "has no defined end; give a route or a think time")
    rows[TH] = [(j, spec.V[r0, j] / T, r0) for j in visited]
    for k in visited:
        rows[k] = [(TH, 1.0 / T, r0)] + [(j, (1.0 - 1.0 / T) * spec.V[r0, j] / T, r0)
                                         for j in visited]
    return rows


class _Chain:
    """States of the network with one job of class r0 tagged, built
    breadth-first from one state.  A state is a tuple over the places
    (stations, then the think stage): an FCFS line is the tuple of its
    jobs' classes in arrival order (``_TAG`` the tagged job, the first
    ``c`` in service); a PS queue, a delay or the think stage is (count of class 0,
    ..., count of class C-1, tagged there or not)."""

    def __init__(self, spec, r0, max_states, tag=True):
        from ._ctmc_spec import _FCFS, _PS

        self.spec, self.r0, self.max_states, self.tag = spec, r0, max_states, tag
        self.fcfs = [spec.kind[k] == _FCFS for k in range(spec.K)] + [False]
        self.ps = [spec.kind[k] == _PS for k in range(spec.K)] + [False]
        self.tag_rows = _tag_rows(spec, r0)
        self.index: dict = {}
        self.states: list = []
        # transitions: (from, to, rate, kind) kind 0 ordinary, 1 cycle end
        # (tagged to the think stage), 2 cycle start (tagged out of it),
        # 3 end and start at once (no think time)
        self.rows, self.cols, self.rates, self.kinds = [], [], [], []
        self._build()

    def _initial(self):
        spec, C = self.spec, self.spec.C
        # every job at its class's reference station, the tagged one last
        places = [[] if self.fcfs[k] else [0] * (C + 1) for k in range(spec.K + 1)]
        for r in range(C):
            k = spec.ref[r] if spec.Z[r] <= 0 else spec.THINK
            for i in range(spec.pop[r]):
                tagged = self.tag and r == self.r0 and i == spec.pop[r] - 1
                if self.fcfs[k]:
                    places[k].append(_TAG if tagged else r)
                elif tagged:
                    places[k][C] = 1
                else:
                    places[k][r] += 1
        return tuple(tuple(p) for p in places)

    def _add(self, s):
        i = self.index.get(s)
        if i is None:
            if len(self.states) >= self.max_states:
                raise ProblemTooLargeError(
                    f"the tagged-job chain of class {self.spec.net.class_names[self.r0]!r} "
                    f"has more than max_states = {self.max_states} states; raise max_states "
                    "or simulate for percentiles")
            i = len(self.states)
            self.index[s] = i
            self.states.append(s)
        return i

    def _put(self, places, k, r, tagged):
        C = self.spec.C
        p = list(places[k])
        if self.fcfs[k]:
            p.append(_TAG if tagged else r)
        elif tagged:
            p[C] = 1
        else:
            p[r] += 1
        places[k] = tuple(p)

    def _moves(self, s):
        """(next state, rate, kind) of every event in state s."""
        spec, C, TH, r0 = self.spec, self.spec.C, self.spec.THINK, self.r0
        out = []
        for k in range(spec.K + 1):
            here = s[k]
            if self.fcfs[k]:
                for i in range(min(spec.c[k], len(here))):
                    j = here[i]
                    tagged = j == _TAG
                    r = r0 if tagged else j
                    rest = here[:i] + here[i + 1:]
                    self._leave(s, k, rest, r, tagged, spec.mu[r, k], out)
            else:
                # a delay (or the think stage): every job served at its own
                # rate; processor sharing: each of the n jobs at min(1, c/n)
                # of it (exponential service: no attained service to keep)
                n = sum(here)
                share = min(1.0, self.spec.c[k] / n) if self.ps[k] and n else 1.0
                for r in range(C):
                    if here[r]:
                        rest = here[:r] + (here[r] - 1,) + here[r + 1:]
                        rate = here[r] * (1.0 / spec.Z[r] if k == TH else spec.mu[r, k] * share)
                        self._leave(s, k, rest, r, False, rate, out)
                if here[C]:
                    rest = here[:C] + (0,)
                    rate = 1.0 / spec.Z[r0] if k == TH else spec.mu[r0, k] * share
                    self._leave(s, k, rest, r0, True, rate, out)
        return out

    def _leave(self, s, k, rest, r, tagged, rate, out):
        spec, TH = self.spec, self.spec.THINK
        row = self.tag_rows[k] if tagged else spec.route[r][k]
        for d, p, _ in row:
            places = list(s)
            places[k] = rest
            kind = 0
            if tagged and k == TH:
                kind = 2    # a cycle starts (into the think stage: none of it)
            elif tagged and d == TH and spec.Z[r] <= 0:
                # a think stage of no duration: the cycle ends and the next
                # one starts at once
                for d2, p2, _ in self.tag_rows[TH]:
                    pl = list(places)
                    self._put(pl, d2, r, True)
                    out.append((tuple(pl), rate * p * p2, 3))
                continue
            elif tagged and d == TH:
                kind = 1
            self._put(places, d, r, tagged)
            out.append((tuple(places), rate * p, kind))

    def _build(self):
        todo = [self._add(self._initial())]
        while todo:
            i = todo.pop()
            for t, rate, kind in self._moves(self.states[i]):
                if rate <= 0:
                    continue
                n = len(self.states)
                j = self._add(t)
                if j == n:
                    todo.append(j)
                self.rows.append(i)
                self.cols.append(j)
                self.rates.append(rate)
                self.kinds.append(kind)


def _stationary(n, rows, cols, rates):
    """pi Q = 0, sum pi = 1 for the generator given by its transitions
    (self-loops cancel), the chain irreducible: pi_0 pinned to 1, the
    other balance equations solved by sparse LU (a dense normalisation row
    would fill the factors in), then normalised (Stewart 1994, sec. 2.3)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.linalg import spsolve

    if n == 1:
        return np.ones(1)
    rows, cols, rates = np.asarray(rows), np.asarray(cols), np.asarray(rates)
    out = np.bincount(rows, weights=rates, minlength=n)
    Q = coo_matrix((rates, (rows, cols)), shape=(n, n)).tocsr()
    Q = Q - coo_matrix((out, (np.arange(n), np.arange(n))), shape=(n, n)).tocsr()
    At = Q.T.tocsc()
    x = np.atleast_1d(spsolve(At[1:, 1:], -At[1:, 0].toarray().ravel()))
    pi = np.clip(np.concatenate([[1.0], x]), 0.0, None)
    return pi / pi.sum()


def _untag(s, C, r0, counted):
    """The state with the tagged job as any other job of its class, and
    how many of the tagged chain's jobs it could be (its class's jobs at
    its place if that keeps counts: ``counted``, the delays, PS queues and
    the think stage; else 1, an FCFS slot)."""
    out, weight = [], 1
    for k, p in enumerate(s):
        if k in counted:
            if p[C]:
                weight = p[r0] + 1
                p = p[:r0] + (p[r0] + 1,) + p[r0 + 1:C] + (0,)
        elif _TAG in p:
            p = tuple(r0 if j == _TAG else j for j in p)
        out.append(p)
    return tuple(out), weight


def _tagged_stationary(spec, r0, ch, max_states):
    """The stationary distribution of the tagged chain from that of the
    chain without a tag, which is smaller (an FCFS line of one class is a
    count there): the jobs of a class are exchangeable (the same rates and
    routing), so the tagged job is equally likely to be each job of its
    class: pi(s) = pi_untagged(u) w / N_r, u the state with the tag taken
    off, w the number of class-r jobs s's tagged place holds (1 in an FCFS
    line, where the tag names one slot)."""
    plain = _Chain(spec, r0, max_states, tag=False)
    pu = _stationary(len(plain.states), plain.rows, plain.cols, plain.rates)
    counted = {k for k in range(spec.K + 1) if not ch.fcfs[k]}
    pi = np.empty(len(ch.states))
    for i, s in enumerate(ch.states):
        u, w = _untag(s, spec.C, r0, counted)
        pi[i] = pu[plain.index[u]] * w
    return pi / pi.sum()


def closed_response_time_distribution(net: Network, cls: str | None = None,
                                      max_states: int = DEFAULT_PASSAGE_STATES
                                      ) -> ClosedResponseTimeDistribution:
    """The exact response-time distribution (think time excluded) of one
    job of closed class ``cls`` (default: the only class), as the passage
    time of its tagged chain (module docstring).

    Raises
    ------
    UnsupportedModelError
        Naming the class or station the chain does not model (an open
        class, priorities, LCFS-PR, non-exponential service,
        load-dependent stations, capacities, pools, class switching).
    ProblemTooLargeError
        The tagged chain outgrows ``max_states``.
    """
    from scipy.sparse import coo_matrix

    from ._ctmc_spec import _Spec

    cls = _class_named(net, cls)
    r0 = net.class_names.index(cls)
    if not isinstance(net.classes[r0], Closed):
        raise UnsupportedModelError(f"class {cls!r} is open; method 'ctmc-passage' takes "
                                    "closed classes")
    if net.classes[r0].population < 1:
        raise InvalidValueError(f"class {cls!r} has no jobs (population 0): no response time")
    why = requires.numeric(net)
    if why:
        raise UnsupportedModelError(why)
    spec = _Spec(net, None)
    why = _refusal(net, spec)
    if why:
        raise UnsupportedModelError(why)
    ch = _Chain(spec, r0, int(max_states))
    n = len(ch.states)
    TH = spec.THINK
    C = spec.C
    pi = _tagged_stationary(spec, r0, ch, int(max_states))
    inside = np.array([s[TH][C] == 0 for s in ch.states])
    pos = np.cumsum(inside) - 1
    m = int(inside.sum())
    rows, cols = np.asarray(ch.rows), np.asarray(ch.cols)
    rates, kinds = np.asarray(ch.rates), np.asarray(ch.kinds)
    # the start distribution: the flow of cycle starts into each state
    start = (kinds == 2) | (kinds == 3)
    flow = pi[rows[start]] * rates[start]
    total = float(flow.sum())
    # a cycle that starts by thinking again (visit ratios below one) has
    # no response time: the flow into think states is the atom at zero
    alpha = np.zeros(m)
    into = inside[cols[start]]
    np.add.at(alpha, pos[cols[start][into]], flow[into])
    alpha /= total
    # the sub-generator: every event of an inside state leaves it; those
    # that keep the tagged job inside its cycle come back in T
    src = inside[rows]
    out = np.bincount(pos[rows[src]], weights=rates[src], minlength=m)
    keep = src & (kinds == 0) & inside[cols]
    T = coo_matrix((rates[keep], (pos[rows[keep]], pos[cols[keep]])), shape=(m, m)).tocsr()
    T = T - coo_matrix((out, (np.arange(m), np.arange(m))), shape=(m, m)).tocsr()
    visited = tuple(s.name for k, s in enumerate(net.stations) if spec.V[r0, k] > 0)
    notes = (f"passage time of a tagged job of class {cls!r} in a chain of {n} states "
             f"({m} with the job inside its cycle), started from the stationary flow of "
             "its cycle starts; the CDF by uniformisation",)
    return ClosedResponseTimeDistribution(net, cls, visited, alpha, T.tocsr(), states=n,
                                          notes=notes)
