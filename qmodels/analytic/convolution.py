"""Normalising constants of closed product-form networks, in log space.

A closed product-form network's state probabilities are
prod_k f_k(n_k) / G(N), with f_k the station's factor (fixed rate D_k^j,
delay D_k^j / j!, load-dependent D_k^j / prod_{i<=j} a_k(i)) and G(N) the
normalising constant (Buzen 1973; Bolch et al., *Queueing Networks and
Markov Chains*, 2nd ed. 2006, sec. 8.1, eq. 8.1-8.5).  The single-class
kernels ``log_g_*`` (in :mod:`qmodels.analytic._logconv`, where the
factors and the scaling are spelt out) keep log G, so every term stays
positive and nothing overflows or cancels: the stable route that
:func:`qmodels.analytic.mva` takes for multi-server and load-dependent
stations.

:func:`convolution` is the public solver (``method="convolution"``): the
same idea over the population lattice of several closed classes (Reiser &
Kobayashi 1975; Bolch et al. 2006, sec. 8.1.2), with throughputs, queue
lengths, utilisations and, on request, marginal queue-length
distributions.  :func:`log_normalizing_constant` returns log G itself.
Convolution and exact MVA are two routes to the same answers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._jit import jitable, lazyjit
from ..errors import InvalidValueError, ProblemTooLargeError, UnsupportedModelError
from ..model.lowered import DELAY, FIXED
from ..model.network import Closed, LoadDependent, Network, Queue
from ..results import Curve, Result
from ._common import _check_capacities, _check_size, _not_finite, _require_numeric
from ._kernels import log_add
from ._logconv import log_g_add_fixed, log_g_add_ld, log_g_delay, log_ld_factors

# The single-class kernels (also behind exact MVA's multi-server route) live
# in qmodels._logconv; they are re-exported as part of the convolution API.
from .contract import answers

__all__ = [
    "convolution",
    "log_normalizing_constant",
    "log_g_delay",
    "log_g_add_fixed",
    "log_g_add_ld",
    "log_ld_factors",
]


# ---------------------------------------------------------------------------
# the population lattice (single- and multi-class), in log space
# ---------------------------------------------------------------------------
#
# A lattice function g(n), n = (n_1..n_R) with 0 <= n_r <= N_r, is stored as
# a flat float array of log g in C order over the shape (N_1+1, ..., N_R+1);
# ``strides[r]`` is the flat distance between n and n + e_r.  A single class
# is the case R = 1.
#
# Generating functions make the convolutions short (Reiser & Kobayashi 1975;
# Bolch et al. 2006, sec. 8.1.2).  With y = sum_r d_r x_r for one station,
# a station whose rate with s jobs present is a(s)/S contributes
#     F(x) = sum_s y^s / A(s),   A(s) = prod_{i<=s} a(i)        (BCMP 1975)
# (fixed rate: A = 1, so F = 1/(1-y); delay: A(s) = s!, F = exp(y)), and
# the network's G(x) is the product of the stations' F.  Multiplying a
# lattice function by y is ``_lat_shift``; dividing by (1 - y) is the
# Buzen recursion ``_lat_geometric``.  They run as Python for small lattices
# and compile with numba for large ones (see :mod:`qmodels._jit`); the
# log-add is the shared :func:`._kernels.log_add`.


@jitable
def _lat_gather(T, i, acc, logd, dims, strides):
    """log of e^acc + sum_r d_r T(n - e_r) at flat index i (terms with
    n_r = 0 or d_r = 0 absent), added one class at a time."""
    for r in range(dims.shape[0]):
        if logd[r] == -np.inf:
            continue
        if (i // strides[r]) % dims[r] > 0:
            acc = log_add(acc, logd[r] + T[i - strides[r]])
    return acc


@lazyjit()
def _lat_shift(T, logd, dims, strides):
    """log of (y T)(n) = sum_r d_r T(n - e_r)  (terms with n_r = 0 absent)."""
    size = T.shape[0]
    out = np.full(size, -np.inf)
    for i in range(size):
        out[i] = _lat_gather(T, i, -np.inf, logd, dims, strides)
    return out


@lazyjit()
def _lat_geometric(B, logd, dims, strides):
    """log of W = B / (1 - y), i.e. W(n) = B(n) + sum_r d_r W(n - e_r).

    For R = 1 this is Buzen's recursion g(n) <- g(n) + d g(n-1) (Buzen
    1973, eq. 7); for R classes the multi-class form (Bolch et al. 2006,
    sec. 8.1.2).  Flat C order visits n - e_r before n.
    """
    size = B.shape[0]
    W = B.copy()
    for i in range(size):
        W[i] = _lat_gather(W, i, W[i], logd, dims, strides)
    return W


def _ladd(a, b):
    """Elementwise log(e^a + e^b); -inf + -inf stays -inf."""
    with np.errstate(invalid="ignore"):
        return np.logaddexp(a, b)


class _Lattice:
    """Shape bookkeeping of the population lattice 0 <= n <= N."""

    def __init__(self, N):
        self.N = tuple(int(x) for x in N)
        self.dims = np.array([n + 1 for n in self.N], dtype=np.int64)
        R = len(self.N)
        st = np.ones(R, dtype=np.int64)
        for r in range(R - 2, -1, -1):
            st[r] = st[r + 1] * self.dims[r + 1]
        self.strides = st
        self.size = int(np.prod(self.dims))
        self.total = int(sum(self.N))
        self.top = self.size - 1  # flat index of N itself

    def shift(self, T, logd):
        return _lat_shift.run(self.size * len(self.N), T, logd, self.dims, self.strides)

    def geometric(self, B, logd):
        return _lat_geometric.run(self.size * len(self.N), B, logd, self.dims, self.strides)

    def counts(self):
        """n_r at every flat index, shaped (R, size)."""
        return np.indices(tuple(self.dims)).reshape(len(self.N), -1)

    def ld(self, G, logd, logA, L):
        """log of G F for a load-dependent station: F = sum_s y^s / A(s).

        ``logA`` holds log A(s) for s = 0..L; beyond L the rate stays a(L),
        so A(s) = A(L) a(L)^(s-L) and the tail sum_{s>=L} y^s/A(s) =
        (y^L/A(L)) / (1 - y/a(L)): L shifts and one geometric recursion,
        cost O(L R |lattice|) instead of O(|lattice|^2).
        """
        T = G
        acc = T - logA[0]
        for s in range(1, L):
            T = self.shift(T, logd)
            acc = _ladd(acc, T - logA[s])
        T = self.shift(T, logd)
        laL = logA[L] - logA[L - 1]
        W = self.geometric(T - logA[L], logd - laL)
        return _ladd(acc, W)

    def ld_queue(self, Gm, logd, logA, L):
        """log of H = sum_{s>=1} s y^(s-1) G_{-k} / A(s) for a
        load-dependent station k, from its complement ``Gm`` = G_{-k}.

        E[n_rk](N) = d_rk H(N - e_r) / G(N): the derivative of log G with
        respect to d_rk.  Head s = 1..L directly; the tail s > L, with
        A(s) = A(L) a(L)^(s-L) and z = y / a(L), sums to
        T_L / (A(L) a(L)) * (L/(1-z) + 1/(1-z)^2), T_L = y^L G_{-k}: two
        geometric recursions.
        """
        T = Gm  # T_{s-1} = y^(s-1) G_{-k}, starting at s = 1
        acc = T - logA[1]
        for s in range(2, L + 1):
            T = self.shift(T, logd)
            acc = _ladd(acc, T + math.log(s) - logA[s])
        T = self.shift(T, logd)  # T_L
        laL = logA[L] - logA[L - 1]
        lz = logd - laL
        W1 = self.geometric(T - logA[L] - laL, lz)
        W2 = self.geometric(W1, lz)
        acc = _ladd(acc, W1 + math.log(L))
        return _ladd(acc, W2)


# ---------------------------------------------------------------------------
# the solver
# ---------------------------------------------------------------------------

def _lgamma_vec(x):
    from scipy.special import gammaln

    return gammaln(x)


class _Station:
    """How one station enters the product form: ``kind`` is "delay",
    "fixed" or "ld"; for "ld", ``logA[s]`` = log prod_{i<=s} a(i) for
    s = 0..L."""

    __slots__ = ("kind", "logA", "L", "mult")

    def __init__(self, kind, mult=None, total=0):
        self.kind = kind
        self.mult = mult
        if kind == "ld":
            L = max(1, min(len(mult), total + 1))
            a = np.asarray(mult[:L], dtype=float)
            self.logA = np.concatenate([[0.0], np.cumsum(np.log(a))])
            self.L = L
        else:
            self.logA = None
            self.L = 0

    def log_A(self, s):
        """log A(s) for s = 0..len(s)-1 (an array of counts)."""
        s = np.asarray(s)
        if self.kind == "fixed":
            return np.zeros(s.shape)
        if self.kind == "delay":
            return _lgamma_vec(s + 1.0)
        L = self.L
        laL = self.logA[L] - self.logA[L - 1]
        head = self.logA[np.minimum(s, L)]
        return head + np.maximum(s - L, 0) * laL


def _shape(net: Network, k: int, total: int) -> _Station:
    """Product-form factor of station ``k`` in a closed network of
    ``total`` jobs (plus, for classes of population zero, one tagged
    arrival): the plain rule of :meth:`~qmodels.model.lowered.Lowered.shape`
    at ``total + 1``, so a c-server queue with c > total is a delay."""
    code, a = net.lowered.shape(k, total + 1)
    if code == DELAY:
        return _Station("delay")
    if code == FIXED:
        return _Station("fixed")
    return _Station("ld", a, total)


def _check_closed(net: Network, solver: str):

    _require_numeric(net, solver)
    for c in net.classes:
        if not isinstance(c, Closed):
            raise UnsupportedModelError(
                f"class {c.name!r} is open (arrival rate {c.arrival_rate}); {solver} solves "
                "closed networks only: use qmodels.analytic.mva for open and mixed networks"
            )
    pops = tuple(int(c.population) for c in net.classes)
    _check_capacities(net, sum(pops), solver)
    D = np.asarray(net.demands, dtype=float)
    Z = np.array([float(c.think_time) for c in net.classes])
    for r, c in enumerate(net.classes):
        if pops[r] > 0 and D[r].sum() + Z[r] <= 0:
            raise InvalidValueError(
                f"class {c.name!r}: all demands and the think time are zero, "
                "so the throughput is unbounded"
            )
    return pops, D, Z


#: Largest stored floats (1.6 GB) and log-space steps (about a minute) the
#: lattice may take; beyond, it refuses before allocating anything.
MAX_FLOATS = 2e8
MAX_STEPS = 2e9
#: Largest number of load-dependent steps: one per lattice point, per
#: load-dependent (or c-server) station, per build of G and of each
#: complement G_-k, i.e. size x M x (M + 1).  Measured at about 1.2e-5 s
#: each on the 2-core reference machine (M two-server queues: M = 100,
#: N = 30 took 3.5 s; M = 50, N = 1000, 28 s; M = 100, N = 1000, 122 s), so
#: 5e6 is about a minute; M = 1000 at N = 30 (131 s) is refused.
MAX_LD_STEPS = 5e6


def _check_lattice_budget(net: Network, pops) -> None:
    """Refuse, before allocating, a population lattice too large: prod_r
    (N_r + 1) points, each holding a log G per class plus work arrays
    (about R + 4 floats), and one log-space step per point, class and
    station (more for load-dependent stations)."""
    size = 1
    for n in pops:
        size *= int(n) + 1
    R, K = len(pops), len(net.stations)
    floats = size * (R + 4)
    steps = size * R * K
    what = (f"convolution over the population lattice of {tuple(int(n) for n in pops)} "
            f"({size:.3g} points)")
    _check_size(what, steps, floats, MAX_STEPS, MAX_FLOATS)
    total = sum(int(n) for n in pops)
    M = sum(1 for s in net.stations
            if (isinstance(s, Queue) and 1 < int(s.servers) <= total) or (
                isinstance(s, LoadDependent) and any(x != 1 for x in s.rate_multipliers)))
    ld_steps = float(size) * M * (M + 1)
    if ld_steps > MAX_LD_STEPS:
        raise ProblemTooLargeError(
            f"{what} with {M} load-dependent or multi-server stations needs about "
            f"{ld_steps:.3g} load-dependent steps (G and one complement G_-k per such "
            f"station; limit {MAX_LD_STEPS:.0e}, about a minute): use method='exact' (MVA) "
            "for one class, 'bounds', 'schweitzer' or 'linearizer' (approximate MVA) or 'sim'")


#: log of the largest float: a throughput past it is not representable
_LOG_MAX = math.log(np.finfo(float).max)


class _Solution:
    """Log normalising constants of a closed network and what follows."""

    def __init__(self, net: Network):
        pops, D, Z = _check_closed(net, "convolution")
        _check_lattice_budget(net, pops)
        self.net = net
        self.lat = lat = _Lattice(pops)
        self.D, self.Z = D, Z
        R, K = D.shape
        total = lat.total
        self.shapes = [_shape(net, k, total) for k in range(len(net.stations))]
        # per-class scale: the largest per-server demand of a queueing station
        alpha = np.zeros(R)
        for k, sh in enumerate(self.shapes):
            if sh.kind == "fixed":
                alpha = np.maximum(alpha, D[:, k])
            elif sh.kind == "ld":
                alpha = np.maximum(alpha, D[:, k] / max(sh.mult))
        delta = Z + sum(
            (D[:, k] for k, sh in enumerate(self.shapes) if sh.kind == "delay"), np.zeros(R)
        )
        alpha = np.where(alpha > 0, alpha, np.where(delta > 0, delta, 1.0))
        self.alpha = alpha
        self.log_alpha = np.log(alpha)
        with np.errstate(divide="ignore"):
            # scaled demands, in logs (no overflow even for subnormal alpha)
            self.logd = np.log(D) - self.log_alpha[:, None]  # (R, K), -inf for zero demand
        self.cnt = lat.counts()
        self.G = self._build(skip=None)
        if not np.all(np.isfinite(self.G)):
            raise _not_finite(self.net)

    # -- building G --------------------------------------------------------
    def _delay_base(self, skip):
        D, Z = self.D, self.Z
        delta = Z.copy()
        for k, sh in enumerate(self.shapes):
            if sh.kind == "delay" and k != skip:
                delta = delta + D[:, k]
        out = np.zeros(self.lat.size)
        for r in range(len(delta)):
            n = self.cnt[r].astype(float)
            if delta[r] > 0:
                ld = math.log(delta[r]) - self.log_alpha[r]
                out += n * ld - _lgamma_vec(n + 1.0)
            else:
                out = np.where(n > 0, -np.inf, out)
        return out

    def _build(self, skip):
        lat = self.lat
        g = self._delay_base(skip)
        for k, sh in enumerate(self.shapes):
            if k != skip and sh.kind == "fixed":
                g = lat.geometric(g, self.logd[:, k])
        for k, sh in enumerate(self.shapes):
            if k != skip and sh.kind == "ld":
                g = lat.ld(g, self.logd[:, k], sh.logA, sh.L)
        return g

    def complement(self, k):
        """log G_{-k}: the network without station k."""
        cache = self.__dict__.setdefault("_comp", {})
        if k not in cache:
            cache[k] = self._build(skip=k)
        return cache[k]

    # -- measures ----------------------------------------------------------
    def log_h(self, k):
        """log of H_k / G over the lattice, where the mean response time per
        visit of a class-r job arriving to population M is S_rk H_k(M)/G(M)
        (arrival theorem; Reiser & Lavenberg 1980)."""
        sh = self.shapes[k]
        lat = self.lat
        if sh.kind == "delay":
            return np.zeros(lat.size)
        if sh.kind == "fixed":
            # H = G_{+k}: the network with station k twice (Bruell & Balbo 1980)
            return lat.geometric(self.G, self.logd[:, k]) - self.G
        return lat.ld_queue(self.complement(k), self.logd[:, k], sh.logA, sh.L) - self.G

    def log_p_empty(self, k):
        return self.complement(k) - self.G

    def marginal(self, k):
        """P(n_k = s | N), s = 0..|N|, n_k the number present at station k
        (all classes): f_k(s) [y^s G_{-k}](N) / G(N) (Bolch et al. 2006,
        eq. 8.13 and its multi-class form eq. 8.29), positive terms only."""
        lat = self.lat
        sh = self.shapes[k]
        Gm = self.complement(k)
        s = np.arange(lat.total + 1)
        logA = sh.log_A(s)
        logd = self.logd[:, k]
        if len(lat.N) == 1:
            lt = s * logd[0] + Gm[lat.top - s] if logd[0] > -np.inf else np.where(
                s == 0, Gm[lat.top], -np.inf)
        else:
            lt = np.empty(lat.total + 1)
            T = Gm
            lt[0] = T[lat.top]
            for j in range(1, lat.total + 1):
                T = lat.shift(T, logd)
                lt[j] = T[lat.top]
        with np.errstate(invalid="ignore"):
            p = np.exp(lt - logA - self.G[lat.top])
        p[~np.isfinite(p)] = 0.0
        return p


def log_normalizing_constant(net: Network) -> np.ndarray:
    """log G(n) for every population n on the lattice 0 <= n <= N.

    Parameters
    ----------
    net : Network
        Closed classes only (delay, queue with any number of servers,
        load-dependent stations); think times enter as delays.

    Returns
    -------
    ndarray
        Shaped (N_1 + 1, ..., N_R + 1): ``out[n]`` is the natural log of the
        normalising constant with population n, in the network's own units
        (demands in seconds), so that P(state) = prod_k f_k(n_k) / G(N) with
        the f_k of Bolch et al. 2006, eq. 8.5 (and eq. 8.29 for several
        classes; the think time of class r contributes Z_r^{n_r} / n_r!).

    Examples
    --------
    Jain 1991, Example 35.3 (y = 1, 3, 2; N = 3): G = 1, 6, 25, 90.

    >>> import qmodels as qm
    >>> net = qm.Network([qm.Queue("cpu", 1), qm.Queue("a", 3), qm.Queue("b", 2)],
    ...                  [qm.Closed("j", 3, visits={"cpu": 1, "a": 1, "b": 1})])
    >>> np.exp(log_normalizing_constant(net)).round(9).tolist()
    [1.0, 6.0, 25.0, 90.0]
    """
    sol = _Solution(net)
    scale = (sol.cnt * sol.log_alpha[:, None]).sum(axis=0)
    return (sol.G + scale).reshape(tuple(sol.lat.dims))


@answers(fcfs_as_ps=True)
def convolution(net: Network, *, marginals: bool = False, curve: bool = False) -> Result:
    """Exact solution of a closed product-form network by normalising
    constants (Buzen's convolution), single- or multi-class.

    Parameters
    ----------
    net : Network
        Closed classes only; delay stations, queues with one or several
        servers, load-dependent stations.  Think times are delays.
    marginals : bool
        Also return P(n_k = j | N), j = 0..sum(N), for every station k (the
        number present of all classes together) in
        ``result.info["marginals"]``: a read-only mapping station name ->
        numpy array.
    curve : bool
        Single class only: figures for every population 0..N in
        ``result.curve`` (they come free with the G(n)).

    Returns
    -------
    Result
        ``method="convolution"``; ``info["log_G"]`` is log G(N) in the
        network's units.

    Raises
    ------
    UnsupportedModelError
        Open classes, token pools, a finite capacity that can bind, sympy
        symbols, ``curve=True`` with several classes.
    InvalidValueError
        A class with jobs whose demands and think time are all zero.

    Notes
    -----
    Product form (Baskett, Chandy, Muntz & Palacios 1975): the equilibrium
    probability of a state is prod_k F_k(n_k) / G(N).  For a station with
    rate multipliers a(i) (a(i) = 1 fixed rate, min(i, c) for c servers,
    i for a delay) and A(s) = prod_{i<=s} a(i),

        F_k(n_k) = |n_k|! / A(|n_k|) prod_r D_rk^{n_rk} / n_rk!

    (Bolch et al., *Queueing Networks and Markov Chains*, 2nd ed. 2006,
    eq. 8.5 for one class, eq. 8.29 for several; Reiser & Kobayashi, "Queuing
    networks with multiple closed chains", IBM J. Res. Dev. 19(3), 1975).
    G is built station by station over the population lattice (Buzen,
    "Computational algorithms for closed queueing networks with exponential
    servers", CACM 16(9), 1973, eq. 7; Lazowska et al., QSP 1984, ch. 8 and
    sec. 20.2): a fixed-rate station by G <- G + sum_r D_rk G(n - e_r), a
    load-dependent one by its first L terms plus a geometric tail.  Then

    * X_r(N) = G(N - e_r) / G(N)                      (Bolch eq. 8.30)
    * fixed rate:  Q_rk = D_rk G_{+k}(N - e_r) / G(N), G_{+k} the network
      with station k twice (Bruell & Balbo, *Computational Algorithms for
      Closed Queueing Networks*, 1980)
    * delay:       Q_rk = D_rk X_r
    * load-dependent: Q_rk = D_rk sum_{s>=1} s/A(s) [y_k^(s-1) G_{-k}](N - e_r)
      / G(N), G_{-k} the network without station k; U_k = 1 - G_{-k}(N)/G(N)
    * marginals:   P(n_k = s) = [y_k^s G_{-k}](N) / (A(s) G(N))
      (Bolch eq. 8.13)

    Every term is positive: nothing cancels.  All of it is done in log space
    with per-class scaling (demands of class r divided by its largest
    per-server demand, Lazowska sec. 8.4 / Lam 1982), so N = 10^5 neither
    overflows nor underflows; a plain floating-point G overflows near N =
    1000 already (Octave's ``qncsconv`` does).  A class of population 0 has
    X = 0 and, as its response times, what one arriving job would see.

    Accuracy: nothing cancels, but every step of a log-space recursion
    rounds log G to the precision of its size, about 1e-16 |log G| (1e-11
    when log G ~ 1e5), and the recursions chain up to |N| steps (a
    fixed-rate station) or L steps (a station with L distinct rates, e.g.
    c servers).  The errors largely cancel in X = G(N - e)/G(N) (both carry
    them) but not in queue lengths and marginals.  Measured against a
    40-digit mpmath enumeration (tests/test_convolution.py): with c = 10^4
    servers and N = 2 10^4 jobs balanced against a single server, X is
    right to 4e-12 and Q to 3e-9 (the marginals sum to 1 - 6e-9); exact
    MVA (``method="exact"``, the default for one class) gets Q to 6e-11
    there.  With a few distinct rates (single servers, c <= 100), both are
    right to 1e-12 or better.

    Convolution and MVA (:func:`qmodels.analytic.mva.mva`) are two routes to the
    same answers; the tests hold them against each other.  The cost is
    O(|lattice| R (K + sum_k L_k)) plus, per load-dependent station, one
    more convolution of the others (and, with ``marginals``, one per
    station, and |N| shifts per station with several classes).

    Utilisation per station follows :mod:`qmodels.results`: per server for
    queues, X S for delays, 1 - P(empty) for load-dependent stations (split
    between classes in proportion to X_r D_rk).

    Examples
    --------
    >>> import qmodels as qm
    >>> net = qm.Network([qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08)],
    ...                  [qm.Closed("tx", 3, visits={"cpu": 1, "disk": 1})])
    >>> round(convolution(net).X["tx"], 4)   # = exact MVA (see qmodels.analytic.mva)
    11.1495
    """
    sol = _Solution(net)
    lat = sol.lat
    R, K = sol.D.shape
    if curve and R != 1:
        raise UnsupportedModelError(
            f"curve=True needs one class; this network has {R}: use "
            "qmodels.analytic.multiclass for results over the population lattice"
        )
    pops = np.array(lat.N)
    S = np.asarray(net.service_times, dtype=float)
    V = np.asarray(net.visits, dtype=float)
    D = sol.D
    G = sol.G
    top = lat.top

    X = np.zeros(R)
    for r in range(R):
        if pops[r] > 0:
            lx = G[top - lat.strides[r]] - G[top] - sol.log_alpha[r]
            if lx > _LOG_MAX:
                raise _not_finite(net, "throughput")
            X[r] = math.exp(lx)
    lh = [sol.log_h(k) for k in range(K)]
    h = np.empty((R, K))
    for r in range(R):
        m = top - lat.strides[r] if pops[r] > 0 else top
        for k in range(K):
            h[r, k] = math.exp(lh[k][m])
    Rk = S * h
    Xk = X[:, None] * V
    Q = Xk * Rk
    U = X[:, None] * D
    p0 = {}
    for k, st in enumerate(net.stations):
        sh = sol.shapes[k]
        if isinstance(st, Queue):
            U[:, k] /= st.servers
        elif isinstance(st, LoadDependent) and sh.kind == "ld":
            p0[k] = np.exp(sol.log_p_empty(k))
            busy = 1.0 - p0[k][top]
            tot = U[:, k].sum()
            U[:, k] = busy * U[:, k] / tot if tot > 0 else 0.0
    Rc = np.where(pops > 0, pops / np.where(X > 0, X, 1.0) - sol.Z, (V * Rk).sum(axis=1))
    Rc = np.maximum(Rc, 0.0)

    cur = None
    if curve:
        N = int(pops[0])
        Xc = np.zeros(N + 1)
        Xc[1:] = np.exp(G[:-1] - G[1:] - sol.log_alpha[0])
        hc = np.ones((N + 1, K))
        for k in range(K):
            hc[1:, k] = np.exp(lh[k][:-1])
            hc[0, k] = math.exp(lh[k][0])
        Qc = Xc[:, None] * (D[0] * hc)
        Uc = Xc[:, None] * D[0][None, :]
        for k, st in enumerate(net.stations):
            if isinstance(st, Queue):
                Uc[:, k] /= st.servers
            elif k in p0:
                Uc[:, k] = 1.0 - p0[k]
        n = np.arange(N + 1)
        Rcur = np.where(n > 0, n / np.where(Xc > 0, Xc, 1.0) - sol.Z[0],
                        (D[0] * hc[0]).sum())
        cur = Curve(population=n, throughput=Xc, response_time=np.maximum(Rcur, 0.0),
                    queue_length=Qc, utilization=Uc, station_names=net.station_names,
                    class_name=net.classes[0].name, network=net,
                    method="convolution")

    info: dict[str, Any] = {
        "algorithm": "convolution over the population lattice, log space",
        "population": int(pops[0]) if R == 1 else tuple(int(x) for x in pops),
        "log_G": float(G[top] + float(np.dot(pops, sol.log_alpha))),
    }
    if marginals:
        from ..model.network import FrozenMap

        mm = {}
        for k, st in enumerate(net.stations):
            p = sol.marginal(k)
            p.flags.writeable = False
            mm[st.name] = p
        info["marginals"] = FrozenMap(mm)
    return Result(
        method="convolution",
        network=net,
        class_throughput=X,
        class_response_time=Rc,
        station_throughput=Xk,
        station_queue_length=Q,
        station_response_time=Rk,
        station_utilization=U,
        curve=cur,
        info=info,
    )


