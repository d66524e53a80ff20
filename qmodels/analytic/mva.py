"""Mean-value analysis: exact single-class MVA for closed networks and the
exact product-form solution of open single-class (Jackson) networks.

Assumptions (product form; Baskett, Chandy, Muntz & Palacios 1975): FCFS
stations with exponential service (or PS / delay with general service),
service rate depending at most on the number present at the station,
probabilistic routing, no finite capacity that can bind, no simultaneous
resource possession.  Input outside these assumptions raises
:class:`~qmodels.errors.UnsupportedModelError` naming the station; the
simulator (``method="sim"``) handles it.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import lazyjit
from .._validate import FrozenMap
from ..errors import InvalidValueError, UnsupportedModelError
from ..model.lowered import LD
from ..model.network import Closed, Network
from ..results import Curve, Result
from ._common import (
    _check_capacities,
    _check_size,
    _not_finite,
    _ps_notes,
    _require_numeric,
    _run,
)
from ._kernels import mva_step
from ._logconv import log_g_add_fixed, log_g_add_ld, log_g_delay, log_ld_factors
from .contract import answers
from .open import open_single

__all__ = ["mva", "mva_single"]


# ---------------------------------------------------------------------------
# checks shared by the product-form solvers
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# fixed-rate and delay stations: the Reiser-Lavenberg recursion
# ---------------------------------------------------------------------------

@lazyjit()
def _mva_fixed_kernel(D, is_delay, Z, N, want_curve):
    """Exact MVA (Reiser & Lavenberg 1980; Lazowska et al. 1984, sec. 6.3,
    Algorithm 6.1):  R_k(n) = D_k (1 + Q_k(n-1))  (delay: D_k),
    X(n) = n / (Z + sum_k R_k(n)),  Q_k(n) = X(n) R_k(n)."""
    K = D.shape[0]
    Q = np.zeros(K)
    R = np.zeros(K)
    rows = N + 1 if want_curve else 1
    Xc = np.zeros(rows)
    Qc = np.zeros((rows, K))
    X = 0.0
    for n in range(1, N + 1):
        X = mva_step(D, is_delay, Z, n, Q, R)
        if want_curve:
            Xc[n] = X
            for k in range(K):
                Qc[n, k] = Q[k]
    if not want_curve:
        Xc[0] = X
        for k in range(K):
            Qc[0, k] = Q[k]
    return Xc, Qc


#: Steps (n x stations) of one call of the resumable kernel
#: :func:`_mva_fixed_span`: about 0.05 s of machine code on the 2-core
#: reference machine (N = 2 x 10^7 at two stations in 0.98 s), so that a
#: long recursion returns to Python (where Ctrl-C is seen) within a second.
#: Recursions up to this size run in one call of :func:`_mva_fixed_kernel`.
INTERRUPT_WORK = 2_000_000


@lazyjit()
def _mva_fixed_span(D, is_delay, Z, n0, n1, Q, R, want_curve, Xc, Qc):
    """Steps n = n0..n1 of :func:`_mva_fixed_kernel`, resuming from
    ``Q`` = Q(n0 - 1) (updated in place); returns X(n1)."""
    K = D.shape[0]
    X = 0.0
    for n in range(n0, n1 + 1):
        X = mva_step(D, is_delay, Z, n, Q, R)
        if want_curve:
            Xc[n] = X
            for k in range(K):
                Qc[n, k] = Q[k]
    return X


def _mva_fixed(D, is_delay, Z, N, want_curve):
    """:func:`_mva_fixed_kernel`'s (Xc, Qc); a recursion past
    :data:`INTERRUPT_WORK` runs as spans of that many steps (the same steps
    in the same order, so the same numbers), so Ctrl-C stops it promptly."""
    K = D.shape[0]
    if N * K <= INTERRUPT_WORK:
        return _run(_mva_fixed_kernel, N * K, D, is_delay, Z, N, want_curve)
    Q = np.zeros(K)
    R = np.zeros(K)
    rows = N + 1 if want_curve else 1
    Xc = np.zeros(rows)
    Qc = np.zeros((rows, K))
    step = max(1, INTERRUPT_WORK // max(K, 1))
    X = 0.0
    for n0 in range(1, N + 1, step):
        n1 = min(N, n0 + step - 1)
        X = _run(_mva_fixed_span, (n1 - n0 + 1) * K, D, is_delay, Z, n0, n1, Q, R,
                 bool(want_curve), Xc, Qc)
    if not want_curve:
        Xc[0] = X
        Qc[0] = Q
    return Xc, Qc


# ---------------------------------------------------------------------------
# with load-dependent / multi-server stations: log-space convolution
# ---------------------------------------------------------------------------

@lazyjit(lists=True)
def _ld_queue_kernel(lX, lf, lg_minus, lg, mult, D):
    """Mean queue length at a load-dependent station for n = 0..N.

    Arrival theorem (Reiser & Lavenberg 1980; Bolch et al. 2006, eq. 8.35):
    R(n) = D sum_{i>=0} (i+1)/a(i+1) p(i | n-1), with the marginals from
    normalising constants, p(i | m) = f(i) G_{-k}(m-i) / G(m) (Bolch et al.
    eq. 8.13), never by subtraction.  The head i < L-1 is summed term by
    term; the tail i >= L-1, where a(i+1) = a_L and f(i) = f(L-1) rho^(i-L+1)
    with rho = d / a_L, is

        tail(m) = f(L-1) / (a_L G(m)) [L H(u) + H1(u)],   u = m - L + 1,
        H(u)  = sum_t rho^t G_{-k}(u-t)   = G_{-k}(u) + rho H(u-1),
        H1(u) = sum_t t rho^t G_{-k}(u-t) = rho (H1(u-1) + H(u-1)),

    two recursions of positive terms kept in log space.  So R(n) is a sum
    of positive terms whatever the multipliers: rates spanning 1e-300..1
    cost no precision (the textbook form D/a_L (1 + Q(n-1)) minus a head
    correction cancels catastrophically there).  ``lX`` is log X(n); the
    product X(n) R(n) is taken in log space too.  O(N L).
    """
    N = len(lg) - 1
    L = len(mult)
    aL = mult[L - 1]
    lD = math.log(D) if D > 0 else -np.inf
    # log rho = log d - log a_L, with log d = lf[1] + log a(1)
    lrho = lf[1] + math.log(mult[0]) - math.log(aL) if len(lf) > 1 else -np.inf
    Q = np.zeros(N + 1)
    p0 = np.ones(N + 1)
    lH = -np.inf
    lH1 = -np.inf
    for n in range(1, N + 1):
        m = n - 1
        head = 0.0
        for i in range(min(L - 2, m) + 1):
            head += (i + 1) / mult[i] * math.exp(lf[i] + lg_minus[m - i] - lg[m])
        q = 0.0
        if head > 0.0:
            q = math.exp(lX[n] + lD + math.log(head))
        u = m - L + 1
        if u >= 0:
            # advance H, H1 from u - 1 to u (u grows by one per n)
            prev_h = lH
            a = lg_minus[u]
            b = lrho + prev_h
            hi = a if a > b else b
            lH = -np.inf if hi == -np.inf else hi + math.log(math.exp(a - hi) + math.exp(b - hi))
            hi = lH1 if lH1 > prev_h else prev_h
            lH1 = -np.inf if hi == -np.inf else (
                lrho + hi + math.log(math.exp(lH1 - hi) + math.exp(prev_h - hi)))
            a = math.log(L) + lH
            hi = a if a > lH1 else lH1
            if hi > -np.inf:
                lsum = hi + math.log(math.exp(a - hi) + math.exp(lH1 - hi))
                q += math.exp(lX[n] + lD + lf[L - 1] - math.log(aL) + lsum - lg[m])
        Q[n] = q
        p0[n] = math.exp(lg_minus[n] - lg[n])
    return Q, p0


@lazyjit(lists=True)
def _log_convolve(a, b):
    """log of h(n) = sum_{j<=n} e^a(j) e^b(n-j), n = 0..N (max-shifted sums of
    positive terms; -inf entries are empty)."""
    N = len(a) - 1
    out = np.full(N + 1, -np.inf)
    for n in range(N + 1):
        m = -np.inf
        for j in range(n + 1):
            v = a[j] + b[n - j]
            if v > m:
                m = v
        if m == -np.inf:
            continue
        acc = 0.0
        for j in range(n + 1):
            acc += math.exp(a[j] + b[n - j] - m)
        out[n] = m + math.log(acc)
    return out


def _scaled_demands(D, shapes, Z):
    """(alpha, scaled demands d = D/alpha, scaled total delay): alpha is the
    largest per-server demand of a queueing station, so the log-space
    constants stay near 0 whatever the time unit.  Any alpha > 0 gives the
    same figures (X = exp(log G(n-1) - log G(n)) / alpha); where the delay is
    more than 1e300 times the queueing demands (a subnormal demand), alpha
    is raised to delay / 1e300 so that the scaled delay stays a float (the
    queueing stations' scaled demands then shrink towards 0, which is what
    they are next to the delay)."""
    K = len(D)
    alpha = 0.0
    for k, (kind, a) in enumerate(shapes):
        if kind == "fixed":
            alpha = max(alpha, D[k])
        elif kind == "ld":
            alpha = max(alpha, D[k] / max(a))
    delta = Z + sum(D[k] for k in range(K) if shapes[k][0] == "delay")
    if alpha <= 0:
        alpha = delta if delta > 0 else 1.0
    elif delta / 1e300 > alpha:
        alpha = delta / 1e300
    return alpha, [D[k] / alpha for k in range(K)], delta / alpha


class _LDConvolution:
    """log G of the network and of its complement networks G_{-k} (each
    load-dependent station k left out), built from the fixed-rate and delay
    part ``base`` by adding the load-dependent stations in log space."""

    def __init__(self, base, ld, factors, ratios, N):
        self.base, self.ld, self.factors, self.ratios, self.N = base, ld, factors, ratios, N
        direct, split = _complement_costs(N, [len(factors[k]) - 1 for k in ld])
        self.complements = self._split() if len(ld) > 2 and split < direct else None
        self.lg = self.prefix_all if self.complements is not None else self.without(None)

    def add(self, lg, k):
        return _run(log_g_add_ld, self.N * len(self.factors[k]), lg, self.factors[k],
                    self.ratios[k])

    def without(self, skip):
        lg = self.base
        for k in self.ld:
            if k != skip:
                lg = self.add(lg, k)
        return lg

    def _split(self):
        """G_{-k} = (base * ld[:i]) (*) (ld[i+1:]): prefix and suffix
        products joined by one log-space convolution each, instead of
        convolving M - 1 stations per k."""
        N = self.N
        ident = np.full(N + 1, -np.inf)
        ident[0] = 0.0
        prefix = [self.base]
        for k in self.ld:
            prefix.append(self.add(prefix[-1], k))
        suffix = [ident]
        for k in reversed(self.ld):
            suffix.append(self.add(suffix[-1], k))
        suffix.reverse()  # suffix[i] = stations ld[i:]
        self.prefix_all = prefix[-1]
        return {k: _run(_log_convolve, N * N, prefix[i], suffix[i + 1])
                for i, k in enumerate(self.ld)}

    def complement(self, k):
        return self.complements[k] if self.complements is not None else self.without(k)


def _ld_solution(D, shapes, Z, N, net=None):
    """X(n), Q_k(n), P_k(empty | n) for n = 0..N by log-space convolution."""
    K = len(D)
    alpha, d, delta = _scaled_demands(D, shapes, Z)
    base = log_g_delay(delta, N)
    for k, (kind, _) in enumerate(shapes):
        if kind == "fixed":
            base = _run(log_g_add_fixed, N, base, d[k])
    ld = [k for k, (kind, _) in enumerate(shapes) if kind == "ld"]
    factors = {k: log_ld_factors(d[k], shapes[k][1], N) for k in ld}
    conv = _LDConvolution(base, ld, factors, {k: d[k] / shapes[k][1][-1] for k in ld}, N)
    lg = conv.lg
    if not np.all(np.isfinite(lg)):
        if net is not None:
            raise _not_finite(net)
        raise InvalidValueError("normalising constant is not finite: check the demands")
    lX = np.full(N + 1, -np.inf)
    lX[1:] = lg[:-1] - lg[1:] - math.log(alpha)
    X = np.exp(lX)
    Q = np.zeros((N + 1, K))
    P0 = np.ones((N + 1, K))
    for k, (kind, _) in enumerate(shapes):
        if kind == "delay":
            Q[:, k] = X * D[k]
        elif kind == "fixed":
            q = 0.0
            for n in range(1, N + 1):
                q = D[k] * X[n] * (1.0 + q)
                Q[n, k] = q
    for k in ld:
        # multipliers beyond N are never used (lf has the same truncation)
        mult = np.asarray(shapes[k][1][: max(1, min(len(shapes[k][1]), N))], dtype=float)
        Q[:, k], P0[:, k] = _run(_ld_queue_kernel, N * len(mult), lX, factors[k],
                                 conv.complement(k), lg, mult, float(D[k]))
    return X, Q, P0


#: Largest estimated work, and number of stored floats, that exact
#: single-class MVA accepts (about a minute on one core, and 1.6 GB); beyond,
#: it refuses before starting and names the methods that can answer.  Work
#: counts one per fixed-rate step and ten per log-space convolution step
#: (an exp and a log): measured, N = 10^5 at c = 10^4 servers (2e10) took
#: 71 s and N = 10^6 at c = 10^3 took 58 s on the 2-core reference machine.
MAX_WORK = 2e10
_LOG_STEP = 10.0
MAX_FLOATS = 2e8


def _ld_lengths(net: Network, N: int) -> list[int]:
    """Rate-multiplier lengths L_k of the stations solved by convolution
    (load-dependent, and c-server queues with 1 < c < N)."""
    low = net.lowered
    servers = low.servers.tolist()
    L = []
    for k, kind in enumerate(low.kind):
        if kind == "ld":
            L.append(min(len(net.stations[k].rate_multipliers), max(N, 1)))
        elif kind == "queue" and 1 < servers[k] < N:
            L.append(int(servers[k]))
    return L


def _complement_costs(N: int, L: list[int]) -> tuple[float, float]:
    """Steps to build the M complement networks G_{-k}: convolving every
    other station into each (direct, ~(M+1) N sum L), or from prefix and
    suffix products joined by one O(N^2/2) log-space convolution each."""
    M = len(L)
    direct = float(M + 1) * N * sum(L)
    split = 2.0 * N * sum(L) + M * (N + 1.0) ** 2 / 2
    return direct, split


def _check_budget(net: Network, N: int, curve: bool) -> None:
    """Refuse, before any allocation, a population the exact recursion
    cannot finish in reasonable time or memory: O(N K) for delay and
    fixed-rate stations plus the complement networks of
    :func:`_complement_costs`; (N+1) floats per array kept."""
    L = _ld_lengths(net, N)
    K, M = len(net.stations), len(L)
    work = float(N) * K + (_LOG_STEP * min(_complement_costs(N, L)) if M else 0.0)
    floats = float(N + 1) * (4 + 3 * M + (3 * K if curve else 0))
    _check_size(f"class {net.classes[0].name!r}: exact MVA at N = {N}", work, floats,
                MAX_WORK, MAX_FLOATS)


def _single_plan(net: Network, curve: bool, algorithm: str) -> tuple:
    """The checks of :func:`mva_single` and the per-network tables it
    reads, for one network, curve flag and algorithm (the population is the
    network's): kept in the lowered form's memo, so a repeated solve pays
    for them once.  Raises what :func:`mva_single` refuses, in its order.

    Returns ``(D, V, DV, Z, N, K, shapes, servers, lone, is_delay, has_ld,
    notes, info, vmin, r0)``: demands and visits (float arrays) and both
    stacked (2, K), think time,
    population, number of stations; station shapes (the plain rule of
    :meth:`~qmodels.model.lowered.Lowered.shape`, or none with
    ``algorithm="convolution"``); servers per station (None when every
    divisor is 1: X D / 1 is X D to the bit); the response time a lone job
    sees (S / a(1)); delay flags; whether a station needs the convolution;
    the notes (a tuple); the result's info (a FrozenMap); the smallest
    visit count; and R(0) = sum_k V_k S_k / a_k(1), what a lone job sees
    per cycle.  None of these arrays ever reaches a Result."""
    _require_numeric(net, "exact MVA")
    if len(net.classes) != 1 or not isinstance(net.classes[0], Closed):
        raise UnsupportedModelError(
            "mva_single needs exactly one closed class; use qmodels.analytic.mva for others"
        )
    cls = net.classes[0]
    N = int(cls.population)
    _check_capacities(net, N, "exact MVA")
    D = np.asarray(net.demands[0], dtype=float)
    V = np.asarray(net.visits[0], dtype=float)
    Z = float(cls.think_time)
    K = len(net.stations)
    if N > 0 and D.sum() + Z <= 0:
        raise InvalidValueError(
            f"class {cls.name!r}: all demands and the think time are zero, "
            "so the throughput is unbounded"
        )
    if algorithm not in ("auto", "recursion", "convolution"):
        raise InvalidValueError(
            f"algorithm must be 'auto', 'recursion' or 'convolution', got {algorithm!r}"
        )
    _check_budget(net, N, curve)
    low = net.lowered
    n, reduce = max(N, 1), algorithm != "convolution"
    shapes = []
    c = low.servers.tolist()
    for k, kind in enumerate(low.kind):
        if reduce and (kind == "delay" or (kind == "queue" and c[k] == 1)):
            # what shape() answers for these, without its general rule
            shapes.append(("delay", None) if kind == "delay" else ("fixed", None))
            continue
        code, a = low.shape(k, n, reduce=reduce)
        shapes.append((low.shape_name(code), a if code == LD else None))
    is_queue = np.array([kind == "queue" for kind in low.kind], dtype=bool)
    servers = np.where(is_queue, low.servers, 1.0)
    # with no flow, the response time a lone arriving job would see: S / a(1)
    # (a(1) = 1 but at a load-dependent station)
    a1 = np.ones(K)
    for k, kind in enumerate(low.kind):
        if kind == "ld":
            a1[k] = float(low.rate_multiplier(k, 1))
    lone = np.asarray(net.service_times[0], dtype=float) / a1
    is_delay = np.array([kind == "delay" for kind, _ in shapes])
    has_ld = any(kind == "ld" for kind, _ in shapes)
    if algorithm == "recursion" and has_ld:
        bad = next(s.name for s, (kind, _) in zip(net.stations, shapes) if kind == "ld")
        raise UnsupportedModelError(
            f"station {bad!r} is multi-server or load-dependent: the plain MVA recursion "
            "is exact only for single-server and delay stations (use algorithm='auto')"
        )
    notes = tuple(_ps_notes(net))  # one class: only a priority queue's note
    algo = ("log-space convolution (multi-server / load-dependent)" if has_ld
            else "MVA recursion")
    info = FrozenMap({"algorithm": algo, "population": N})
    DV = np.stack([D, V])
    # (D stays the read-only view of net.demands and is_delay writeable: the
    # kernel's argument types, so the same compiled specialisation serves)
    for arr in (V, DV, servers, lone):
        arr.flags.writeable = False
    return (D, V, DV, Z, N, K, shapes, None if np.all(servers == 1.0) else servers, lone,
            is_delay, has_ld, notes, info, float(V.min()) if K else 0.0,
            float(np.dot(V, lone)))


# ---------------------------------------------------------------------------
# public solvers
# ---------------------------------------------------------------------------

@answers()
def mva_single(net: Network, *, curve: bool = False, algorithm: str = "auto") -> Result:
    """Exact MVA of a closed single-class product-form network.

    Parameters
    ----------
    net : Network
        One closed class; delay, queue (any number of servers) and
        load-dependent stations.
    curve : bool
        Also return figures for every population n = 0..N in
        ``result.curve`` (a :class:`~qmodels.results.Curve`).
    algorithm : {"auto", "recursion", "convolution"}
        ``auto`` uses the MVA recursion when every station is a delay or a
        single server and the log-space convolution otherwise;
        ``convolution`` forces the latter for every queueing station (no
        shortcut for c >= N), which makes an independent cross-check.

    Returns
    -------
    Result
        method ``"exact"``.

    Notes
    -----
    With only delay and single-server stations this is the MVA recursion
    (Reiser & Lavenberg, "Mean-value analysis of closed multichain queuing
    networks", JACM 27(2), 1980; Lazowska et al., QSP, 1984, Algorithm 6.1),
    O(N K).  Multi-server and load-dependent stations make the textbook
    recursion for the marginal probabilities numerically unstable (the
    probability of an empty station is obtained as one minus the rest and
    cancels catastrophically near saturation).  Here the marginals are
    instead ratios of normalising constants, p_k(j|n) = f_k(j)
    G_{-k}(n-j)/G(n) (Bolch et al., 2nd ed. 2006, eq. 8.13; the
    complement-network form of Casale, "A note on stable flow-equivalent
    aggregation in closed networks", Queueing Systems 60, 2008), with every
    G computed by convolution in log space: positive terms only, no
    cancellation, no overflow for N up to 10^6.  Cost O(N sum_k c_k) per
    multi-server station (O(N L) for L rate multipliers), times the number
    of such stations.

    A c-server station with c >= N can never queue and is solved as a
    delay (exactly).

    Accuracy: the MVA recursion keeps sum_k Q_k = N - X Z to rounding.  The
    log-space convolution computes X(n) from the normalising constants and
    each fixed-rate station's Q(n) = D X(n) (1 + Q(n-1)) from that X; at a
    bottleneck D X(n) -> 1, so a systematic relative error of order 2^-53
    in X(n) is never damped and adds up: the bottleneck's Q, and sum_k Q_k,
    are off by about N 2^-53 relative (measured, a 4-server station before
    a saturated single server: 1.1e-12 at N = 10^4, 1.0e-11 at 10^5,
    1.1e-10 at 10^6, i.e. sum Q = N - 1.1e-4; X, U and the multi-server
    station's Q stay within 1e-12).  Carrying that recursion in
    double-double arithmetic does not help (the error is X's); taking X(n)
    = n / (Z + sum_k R_k(n)) from the residence times, as the recursion
    does, would.

    Examples
    --------
    >>> import qmodels as qm
    >>> net = qm.Network([qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08)],
    ...                  [qm.Closed("tx", 3, visits={"cpu": 1, "disk": 1})])
    >>> round(qm.mva(net).X["tx"], 4)   # by hand: R(3) = .084884 + .184186
    11.1495
    """
    if net.is_symbolic:
        _require_numeric(net, "exact MVA")  # raises, naming qmodels.symbolic
    # every check and table below depends on the network, N, the curve and the
    # algorithm only: a repeated solve of one network finds them in its memo
    # (checked and built once; a check that fails is not kept, so it raises
    # again on every call)
    plan = net.lowered.memo(("mva_single_plan", bool(curve), algorithm),
                            lambda: _single_plan(net, bool(curve), algorithm))
    D, V, DV, Z, N, K, shapes, servers, lone, is_delay, has_ld, notes, info, vmin, r0 = plan
    cls = net.classes[0]
    if not has_ld and not curve:
        # the lean path of a repeated solve: the kernel's fresh (1,)- and
        # (1, K)-arrays become the Result's without a copy; the same
        # operations, in the same order, as the general path below (bit for
        # bit: tests/test_mva_overhead.py)
        Xc, Qc = _mva_fixed(D, is_delay, Z, N, False)
        X = float(Xc[0])
        if not math.isfinite(X):
            raise _not_finite(net, "throughput")
        XDV = X * DV  # rows X D_k and X V_k: one operation, two (1, K) views
        Uc = XDV[0:1] if servers is None else XDV[0:1] / servers
        Xk = XDV[1:2]
        R = float(np.add.reduce(Qc, axis=1)[0]) / X if X > 0 else r0
        if N > 0 and not R > 0.0:
            R = float(np.maximum(R, 0.0))
        if X * vmin > 0:  # every station visited with X V_k > 0 (rounding is monotone)
            Rk = Qc / Xk
        else:
            flow = Xk > 0
            Rk = np.where(flow, Qc / np.where(flow, Xk, 1.0), lone)
        return Result._owned("exact", net, Xc, np.array([R]), Xk, Qc, Rk, Uc, notes, None, info)
    notes = list(notes)
    low = net.lowered
    if has_ld:
        Xc, Qc, P0 = _ld_solution(D, shapes, Z, N, net)
        if not curve:
            Xc, Qc, P0 = Xc[-1:], Qc[-1:], P0[-1:]
    else:
        Xc, Qc = _mva_fixed(D, is_delay, Z, N, curve)
        P0 = None
    # utilisation per server
    Uc = Xc[:, None] * D[None, :]
    if servers is not None:
        Uc = Uc / servers[None, :]
    if P0 is not None:
        for k in range(K):
            # (an all-ones load-dependent station is solved as a fixed-rate
            # queue: its U = X D = 1 - P(empty) is already right)
            if low.kind[k] == "ld" and shapes[k][0] == "ld":
                Uc[:, k] = 1.0 - P0[:, k]
    if not np.all(np.isfinite(Xc)):
        raise _not_finite(net, "throughput")
    # class response time per cycle, R(n) = sum_k Q_k(n) / X(n) (Little's
    # law at the stations; equal to n/X(n) - Z, which cancels catastrophically
    # when Z >> R), and at n = 0 what a lone job sees, sum_k V_k S_k / a_k(1)
    # (the limit n -> 0)
    Rc = np.where(Xc > 0, Qc.sum(axis=1) / np.where(Xc > 0, Xc, 1.0), r0)
    if N > 0:
        Rc = np.maximum(Rc, 0.0)
    X, Q, U, R = Xc[-1], Qc[-1], Uc[-1], Rc[-1]
    Xk = X * V
    flow = Xk > 0
    Rk = np.where(flow, Q / np.where(flow, Xk, 1.0), lone)
    cur = None
    if curve:
        cur = Curve(
            population=np.arange(N + 1),
            throughput=Xc,
            response_time=Rc,
            queue_length=Qc,
            utilization=Uc,
            station_names=net.station_names,
            class_name=cls.name,
            network=net,
        )
    return Result(
        method="exact",
        network=net,
        class_throughput=[X],
        class_response_time=[R],
        station_throughput=[Xk],
        station_queue_length=[Q],
        station_response_time=[Rk],
        station_utilization=[U],
        notes=tuple(notes),
        curve=cur,
        info=info,
    )


@answers(fcfs_as_ps=True, switching=True)
def mva(net: Network, *, curve: bool = False, progress: bool | None = None) -> Result:
    """Exact product-form solution of ``net`` (``method="exact"``).

    Dispatches on the workload: one closed class -> :func:`mva_single`; one
    open class -> :func:`~qmodels.analytic.open.open_single`; several
    classes -> :func:`~qmodels.analytic.multiclass.solve_exact` (closed, open
    or mixed), whose population lattice can be large: ``progress`` (None:
    in a terminal or Jupyter, not in CI) shows a bar over it.
    """
    if not isinstance(net, Network):
        raise InvalidValueError(f"mva needs a qmodels Network, got {type(net).__name__}")
    if len(net.classes) == 1:
        if isinstance(net.classes[0], Closed):
            return mva_single(net, curve=curve)
        return open_single(net)
    from .multiclass import solve_exact  # first multi-class solve: loads numba

    return solve_exact(net, curve=curve, progress=progress)
