"""Whitt & You's Robust Queueing Network Analyzer (RQNA) for open
single-class networks of single-server FCFS queues (``method="rqna"``):
an APPROXIMATION, exact where every queue is fed by Poisson flows.

Sources (below: WY18 and WY22):

* W. Whitt & W. You, "Using Robust Queueing to Expose the Impact of
  Dependence in Single-Server Queues", Operations Research 66(1):184-199,
  2018 (WY18): the robust-queueing (RQ) formula for the mean steady-state
  workload from the index of dispersion for work (IDW).
* W. Whitt & W. You, "A Robust Queueing Network Analyzer Based on Indices
  of Dispersion", Naval Research Logistics 69(1), 2022; arXiv 2003.11174
  (WY22): the flows described by their rate and index of dispersion for
  counts (IDC) as a function of time, the linear equations for the IDCs of
  departures, splits and superpositions, the heavy-traffic weight of the
  departure IDC, and the elimination of immediate feedback.
* W. Whitt & W. You, "Heavy-traffic limit of the GI/GI/1 stationary
  departure process and its variance function", Stochastic Systems 8(2),
  2018 (WY18s): the weight function w* of the departure IDC.
* J. Abate & W. Whitt, "Transient behavior of regulated Brownian motion,
  I/II", Adv. Appl. Prob. 19, 1987, and "The correlation functions of RBM
  and M/M/1", Stochastic Models 4, 1988 (AW88): the correlation c*(t) of
  canonical reflected Brownian motion.

* M. F. Neuts, *Matrix-Geometric Solutions in Stochastic Models*, Johns
  Hopkins 1981, and G. Latouche & V. Ramaswami, *Introduction to Matrix
  Analytic Methods in Stochastic Modeling*, SIAM 1999 (LR99): the exact
  PH/PH/1 queue (:func:`ph_ph_1_wait`) of the refinement below.

Each function's docstring states its equations in full and names the
paper (and the part of it) they come from.  Equation numbers are not cited:
the texts at hand were the papers' abstracts and opening pages (WY22,
WY18, WY18s and Whitt & You, Oper. Res. Letters 47(2), 2019), and the
LINE solver (imperial-qore/line-solver), looked through for a reference
implementation, has none of RQNA; so the formulas were rebuilt from the
definitions the abstracts give and checked independently
(``tests/test_rqna.py``, ``tests/test_rqna_refined.py``); where this
module derives a formula itself (the IDC of a phase-type renewal process,
the weight w* from the RBM correlation, the mean wait from the mean
workload, the two refinements) the docstring shows the derivation.

Refinements (``refined=True``, the default; ``False`` gives the plain
algorithm as rebuilt from WY22), both made here and measured on the
``rqna-bursty`` catalog:

* The RQ wait of each queue is multiplied by its bias on a renewal stream
  (:func:`renewal_wait_ratio`): the exact PH/PH/1 wait over the RQ wait,
  for the balanced H2 stream of the queue's asymptotic arrival IDC and the
  queue's own service.  The RQ formula misses the clusters of a bursty
  stream at a lightly loaded queue (H2 of SCV 5 into M/1 at rho = 0.3:
  41 % low) and overshoots at moderate loads (+17 % at rho = 0.8); the
  ratio removes that bias where the flow is renewal-like and keeps the RQ
  formula's view of how a flow's IDC varies with time.
* The heavy-traffic time scale of the departure weight uses the
  variability c_x^2 = I_w(x) the queue sees at the time scale x where the
  RQ formula takes its workload for that variability, a fixed point
  (:func:`rqna_kernel`, step 3), not the asymptotic one: a bursty flow
  (large I_a(inf)) through a lightly loaded queue is no longer smoothed
  over hundreds of service times.

Assumptions (WY22's scope: its abstract and introduction)
---------------------------------------------------------
* One open class (several classes, closed or mixed: refused, ``qna``
  answers them).
* Single-server FCFS queues only (a delay, a multi-server queue, PS,
  LCFS-PR, priority, load-dependent, fork-join, token pools, finite
  capacities: refused by name, ``qna`` or the simulator answers them).
* Markovian routing: a class with ``routing`` uses its matrix; a class
  given by visits is routed at random exactly as the simulator does
  (:func:`qmodels.analytic.qna._visit_routing`).
* External arrivals: one renewal stream (``interarrival`` shape, default
  Poisson) split at random among the entry stations; service times i.i.d.
  of the station's shape.  A shape's IDC is exact for exponential, Erlang,
  hyperexponential (phase-type) and deterministic times; any other shape
  (lognormal, uniform, Pareto, empirical) enters through the IDC of a
  phase-type time of the same mean and SCV (named in the notes).  A
  Markovian arrival process (:class:`~qmodels.model.map.MAP`, correlated
  intervals) enters through its own exact IDC function (:class:`MapIDC`),
  and the answer is then approximate (no GI/M/1 exact solution applies).
* Flows between queues are treated as independent where they merge (as in
  QNA), their IDCs combined by the linear equations of WY22.

Exact (and labelled so) where every visited queue is fed by Poisson flows
(external Poisson streams through exponential queues: an M/G/1 queue by
Pollaczek-Khinchine, which the RQ formula reproduces exactly (WY18:
exact for M/GI/1), and Jackson networks of exponential queues, where
every IDC is 1).  The RQ formula is not exact for GI/M/1; a queue with
exponential service fed by the external renewal stream alone is therefore
solved exactly from the transform of the inter-arrival time, as ``qna``
does (``exact_gim1=True``, the default; ``False`` keeps the paper's RQ
value there), and its departures keep RQNA's IDC.

Measured on the 60 bursty tandems of ``rqna-bursty`` (H2 arrivals of SCV
2-8, 1-9 queues, utilisation up to 0.9) against one simulation of 10
replications of 1e5 arrivals each (``python -m validation.envelopes
--family rqna-bursty --family rqna-nonexp --family qna-ph``): refined R
within 8.71 % (mean 2.87 %; 10.91 % and 3.13 % with the time-scale fixed
point at the RBM time unit, before it moved to the RQ time scale; plain
22.6 %, 7.6 %); 5.99 % (mean 2.34 %; plain 8.4 %, 3.1 %) on the 3
networks of ``rqna-nonexp`` it answers; 7.88 % (mean 2.00 %; before 8.09 %
and 2.32 %) on the 30 phase-type networks of ``qna-ph`` against the exact
CTMC.  Suresh & Whitt's nine queues: R = 51.19 against the published 50.44
(before 49.96; plain: 49.47; QNA 28.37), the ninth queue's wait 34.4
against 29.2 (before 34.0; plain: 32.8); their first two queues against
the exact CTMC: the second queue's wait 2.09 against 2.32 (before 1.83).
Left: the flow out of a moderately loaded queue (rho about 0.6) fed by a
bursty stream is still too smooth at short time scales, so the queues at
moderate load after it come out low (Suresh & Whitt's second to eighth
queues: their waits sum to 7.7 against the published 12.2, 6.9 before;
the worst catalog network, #10, 8.7 % low, its queues at rho 0.61-0.66
17-36 % low per station), and a light queue fed by such a flow comes out
high (the renewal-bias ratio of its balanced H2 stream, burstier at short
times than the flow, over-corrects: 25-32 % on #10's two light queues).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..errors import ConvergenceWarning, UnstableError, UnsupportedModelError
from ..model.distributions import (
    Deterministic,
    Erlang,
    HyperExponential,
    is_exponential,
)
from ..model.map import MAP
from ..model.network import Network, Queue
from ..results import APPROXIMATE, EXACT, METHOD_LABELS, Result
from ._common import _refuse_held_or_bounded, _require_numeric, _result
from .contract import answers

__all__ = ["rqna", "RenewalIDC", "MapIDC", "rbm_correlation", "departure_weight", "rq_workload",
           "renewal_wait_ratio", "rqna_kernel"]

_SOLVER = "RQNA (method='rqna')"
#: rounds of the time-scale fixed point (rqna_kernel, step 3); the catalogs need <= 31
_FIXED_POINT_ROUNDS = 60


# ---------------------------------------------------------------------------
# the IDC of a renewal process
# ---------------------------------------------------------------------------

def _phase_type(shape):
    """(alpha, T, exact) of a phase-type time of mean 1 with the shape's
    SCV, or None for a deterministic time.  Exact for exponential, Erlang-k
    and the balanced-means hyperexponential (the model's own definition:
    p1 = (1 + sqrt((c2 - 1)/(c2 + 1)))/2, rates 2 p_i); for any other shape
    the two-moment phase-type surrogate: balanced H2 for SCV >= 1, the
    mixture of Erlang(k-1) and Erlang(k) of one rate for 1/k <= SCV <
    1/(k-1) (H. C. Tijms, *A First Course in Stochastic Models*, Wiley
    2003, the fit of a mixture of Erlang distributions of one scale:
    p = (k c2 - sqrt(k (1 + c2) - k^2 c2)) / (1 + c2), rate (k - p)), and a
    deterministic time below SCV 1/50."""
    if shape is None or is_exponential(shape):
        return np.ones(1), -np.ones((1, 1)), True
    if isinstance(shape, Deterministic):
        return None
    if isinstance(shape, Erlang):
        return _erlang(int(shape.k)) + (True,)
    c2 = float(shape.scv)
    if isinstance(shape, HyperExponential) and shape.probs is not None:
        ps, rs = shape.branches()      # the given branches at mean 1
        return np.array(ps), np.diag(-np.array(rs)), True
    if isinstance(shape, HyperExponential) or c2 >= 1.0:
        p1 = 0.5 * (1.0 + math.sqrt((c2 - 1.0) / (c2 + 1.0)))
        p = np.array([p1, 1.0 - p1])
        return p, np.diag(-2.0 * p), isinstance(shape, HyperExponential)
    if c2 < 1.0 / 50.0:
        return None
    k = max(2, int(math.ceil(1.0 / c2 - 1e-12)))
    p = (k * c2 - math.sqrt(k * (1.0 + c2) - k * k * c2)) / (1.0 + c2)
    r = k - p
    alpha = np.zeros(k)
    alpha[0] = 1.0 - p           # Erlang(k): all k phases
    alpha[1] = p                 # Erlang(k - 1): enter at the second phase
    T = -r * np.eye(k) + r * np.eye(k, k=1)
    return alpha, T, False


def _erlang(k: int):
    alpha = np.zeros(k)
    alpha[0] = 1.0
    return alpha, -k * np.eye(k) + k * np.eye(k, k=1)


def ph_ph_1_wait(a_alpha, a_T, s_alpha, s_T, rho: float) -> float:
    """Exact mean wait (before service) of the PH/PH/1 FCFS queue, in units
    of the mean service time: inter-arrival times of phase type (a_alpha,
    a_T) and service times (s_alpha, s_T), each of mean 1 as given, the
    arrival rate scaled to ``rho``.

    The number in system and the two phases form a quasi-birth-death
    process (M. F. Neuts, *Matrix-Geometric Solutions in Stochastic
    Models*, 1981, ch. 3; G. Latouche & V. Ramaswami, *Introduction to
    Matrix Analytic Methods in Stochastic Modeling*, SIAM 1999, ch. 6):
    level 0 keeps the arrival phase (generator T_a), levels n >= 1 the pair
    (arrival phase, service phase) with A0 = t_a a_alpha (x) I (an
    arrival), A1 = T_a (+) T_s (the Kronecker sum), A2 = I (x) t_s s_alpha
    (a departure), t = -T 1, T_a = rho a_T (arrivals at rate rho per mean
    service).  G, the minimal solution of A2 + A1 G + A0 G^2 = 0, by
    logarithmic reduction (Latouche & Ramaswami 1999, sec. 8.4),
    R = A0 (-(A1 + A0 G))^-1; the boundary pi_0 T_a + pi_1 (I (x) t_s) = 0,
    pi_0 (t_a a_alpha (x) s_alpha) + pi_1 (A1 + R A2) = 0, normalised by
    pi_0 1 + pi_1 (I - R)^-1 1 = 1; then L = pi_1 (I - R)^-2 1 and, by
    Little's law, W = L / rho - 1."""
    a_alpha = np.asarray(a_alpha, dtype=float)
    s_alpha = np.asarray(s_alpha, dtype=float)
    Ta = rho * np.asarray(a_T, dtype=float)
    Ts = np.asarray(s_T, dtype=float)
    ma, ms = len(a_alpha), len(s_alpha)
    ta = -Ta.sum(axis=1)
    ts = -Ts.sum(axis=1)
    Ia, Is = np.eye(ma), np.eye(ms)
    A0 = np.kron(np.outer(ta, a_alpha), Is)
    A1 = np.kron(Ta, Is) + np.kron(Ia, Ts)
    A2 = np.kron(Ia, np.outer(ts, s_alpha))
    # logarithmic reduction for G
    inv = np.linalg.inv(-A1)
    B0, B2 = inv @ A0, inv @ A2
    G, T = B2.copy(), B0.copy()
    one = np.ones(ma * ms)
    for _ in range(60):
        M = B0 @ B2 + B2 @ B0
        inv = np.linalg.inv(np.eye(ma * ms) - M)
        B0, B2 = inv @ (B0 @ B0), inv @ (B2 @ B2)
        G = G + T @ B2
        T = T @ B0
        if np.max(np.abs(one - G @ one)) < 1e-13:
            break
    if not np.all(np.isfinite(G)):
        raise np.linalg.LinAlgError("the logarithmic reduction for G did not stay finite")
    R = A0 @ np.linalg.inv(-(A1 + A0 @ G))
    # boundary: unknowns x = (pi_0 (ma), pi_1 (ma ms)), x Q = 0
    B10 = np.kron(Ia, ts[:, None])
    A01 = np.kron(np.outer(ta, a_alpha), s_alpha[None, :])
    Q = np.block([[Ta, A01], [B10, A1 + R @ A2]])
    n = ma + ma * ms
    IR = np.linalg.inv(np.eye(ma * ms) - R)
    norm = np.concatenate([np.ones(ma), IR @ one])
    Mx = np.vstack([Q.T, norm[None, :]])
    if not np.all(np.isfinite(Mx)):
        raise np.linalg.LinAlgError("the boundary equations are not finite")
    rhs = np.zeros(n + 1)
    rhs[-1] = 1.0
    x = np.linalg.lstsq(Mx, rhs, rcond=None)[0]
    pi1 = x[ma:]
    L = float(pi1 @ (IR @ (IR @ one)))
    if not math.isfinite(L):
        raise np.linalg.LinAlgError("the mean number in system is not finite")
    return max(L / rho - 1.0, 0.0)


class RenewalIDC:
    """The IDC I(t) = Var N(t) / E N(t) of the stationary renewal process
    whose inter-renewal times have ``shape`` scaled to mean 1 (t in units of
    that mean).  WY22 (the IDC of a flow; for a renewal process
    I(0) = 1 and I(infinity) = c^2, its SCV).

    * Phase-type (alpha, T) (:func:`_phase_type`): the renewal process is
      the Markovian arrival process D0 = T, D1 = t0 alpha, t0 = -T 1
      (Neuts, *Matrix-Geometric Solutions*, 1981, ch. 2; Lucantoni 1991).
      Derived here: with D = D0 + D1, pi D = 0, rate 1 = pi D1 1, the
      second factorial moment density of counts at lag x is
      pi D1 e^{Dx} D1 1, so Var N(t) = t + 2 int_0^t (t - x)
      pi D1 (e^{Dx} - 1 pi) D1 1 dx; with G = (1 pi - D)^{-1} - 1 pi
      (D G = 1 pi - I, pi G = 0) the integral is closed:
      Var N(t) = t + 2 t pi D1 G D1 1 - 2 pi D1 (I - e^{Dt}) G^2 D1 1, so
      I(t) = 1 + 2 a - 2 pi D1 (I - e^{Dt}) u / t, a = pi D1 G D1 1,
      u = G^2 D1 1 (Poisson: G = 0, I = 1).
    * Deterministic: N(t) = floor(t + U), U uniform, so
      Var N(t) = {t}(1 - {t}) and I(t) = {t}(1 - {t}) / t.

    ``exact`` says whether the shape is the model's own (else the
    two-moment surrogate of :func:`_phase_type`)."""

    def __init__(self, shape):
        self.scv = 1.0 if shape is None else float(shape.scv)
        ph = _phase_type(shape)
        self.deterministic = ph is None
        #: (alpha, T) of mean 1 (Erlang-50 for a deterministic time), for
        #: :func:`ph_ph_1_wait`
        self.ph = _erlang(50) if ph is None else (ph[0], ph[1])
        self.exact = self.deterministic and isinstance(shape, Deterministic) or (
            ph is not None and ph[2])
        self.poisson = shape is None or is_exponential(shape)
        if self.deterministic:
            self.scv = 0.0 if isinstance(shape, Deterministic) else self.scv
            return
        alpha, T, _ = ph
        t0 = -T.sum(axis=1)
        D1 = np.outer(t0, alpha)
        # stationary phase of the renewal PH: pi proportional to alpha (-T)^-1
        pi = np.linalg.solve((-T).T, alpha)
        self._set_map(T, D1, pi / pi.sum())

    @property
    def idc_inf(self) -> float:
        """I(infinity): the SCV for a renewal process."""
        return self.scv

    def _set_map(self, D0, D1, pi):
        """The terms of I(t) for the MAP (D0, D1) of rate 1 whose phase
        process has the stationary vector ``pi`` (the class docstring)."""
        D = D0 + D1
        n = D.shape[0]
        one = np.ones(n)
        G = np.linalg.inv(np.outer(one, pi) - D) - np.outer(one, pi)
        d1 = D1 @ one
        self._D = D
        self._r = pi @ D1
        self._a = float(self._r @ G @ d1)
        self._u = G @ (G @ d1)
        self._ru = float(self._r @ self._u)
        # r e^{Dt} u = sum_i c_i e^{l_i t} by the eigen-decomposition of D when
        # it is well conditioned (exponential, Erlang, H2 are); else expm
        self._eig = None
        try:
            lam_, Vm = np.linalg.eig(D)
            if np.linalg.cond(Vm) < 1e8:
                c = (self._r @ Vm) * np.linalg.solve(Vm, self._u)
                self._eig = (lam_, c)
        except np.linalg.LinAlgError:  # pragma: no cover - eig of a small real matrix
            self._eig = None

    def __call__(self, t):
        from scipy.linalg import expm

        t = np.atleast_1d(np.asarray(t, dtype=float))
        out = np.ones_like(t)
        if self.poisson:
            return out
        if self.deterministic:
            f = t - np.floor(t)
            pos = t > 0
            out[pos] = f[pos] * (1.0 - f[pos]) / t[pos]
            out[~pos] = 1.0
            return out
        D, r, u = self._D, self._r, self._u
        if self._eig is not None:
            lam_, c = self._eig
            tt = np.maximum(t, 1e-300)[:, None]
            # r (I - e^{Dt}) u / t = sum_i c_i (1 - e^{l_i t}) / t, with
            # -expm1 keeping the small-t limit -l_i c_i
            d = np.real((c[None, :] * -np.expm1(lam_[None, :] * tt)).sum(axis=1)) / tt[:, 0]
            out = 1.0 + 2.0 * self._a - 2.0 * d
            out[t <= 0.0] = 1.0
            return np.maximum(out, 0.0)
        for i, ti in enumerate(t):
            if ti <= 0.0:
                continue
            if ti < 1e-4:
                # (I - e^{Dt}) u = -(Dt + D^2 t^2/2 + D^3 t^3/6) u + O(t^4)
                v1 = D @ u
                v2 = D @ v1
                v3 = D @ v2
                diff = -(ti * v1 + ti * ti / 2.0 * v2 + ti**3 / 6.0 * v3)
                out[i] = 1.0 + 2.0 * self._a - 2.0 * float(r @ diff) / ti
            elif ti > 1e7:
                out[i] = 1.0 + 2.0 * self._a - 2.0 * self._ru / ti
            else:
                e = float(r @ (expm(D * ti) @ u))
                # e -> pi D1 1 pi u = 0 as t grows; a rounding blow-up keeps the limit
                e = e if math.isfinite(e) and abs(e) <= abs(self._ru) + 1.0 else 0.0
                out[i] = 1.0 + 2.0 * self._a - 2.0 * (self._ru - e) / ti
        return np.maximum(out, 0.0)


class MapIDC(RenewalIDC):
    """The IDC I(t) = Var N(t) / E N(t) of a stationary Markovian arrival
    process (:class:`~qmodels.model.map.MAP`, correlated intervals), time
    in units of its mean interval (D0 and D1 divided by its rate lambda).
    The formula of :class:`RenewalIDC` holds for any MAP (its derivation
    uses only pi D = 0 and the factorial moment density pi D1 e^{Dx} D1 1;
    Neuts 1979; Heffes & Lucantoni 1986 for the MMPP), with pi the
    stationary vector of D = D0 + D1; I(infinity) = 1 + 2 a is the MAP's
    asymptotic index of dispersion (:attr:`MAP.idc`), not its interval SCV
    (:attr:`scv`).  RQNA describes every flow by its IDC function, renewal
    or not (Whitt & You 2022), so a MAP enters it as it is; what stays
    approximate is RQNA's own (the RQ formula, the departure weights)."""

    def __init__(self, m):
        lam = float(m.rate)
        self.scv = float(m.scv)
        self.deterministic = False
        self.exact = True
        self.poisson = m.phases == 1
        D0, D1 = m.d0 / lam, m.d1 / lam
        # the stationary interval's phase-type form (initial phase phi)
        self.ph = (np.asarray(m.arrival_phases), D0)
        self._set_map(D0, D1, np.asarray(m.stationary))
        self._idc_inf = 1.0 + 2.0 * self._a

    @property
    def idc_inf(self) -> float:
        """I(infinity), the asymptotic index of dispersion 1 + 2 a."""
        return self._idc_inf


# ---------------------------------------------------------------------------
# the departure weight (heavy traffic) and the RQ workload
# ---------------------------------------------------------------------------

def rbm_correlation(t):
    """Correlation c*(t) of stationary canonical reflected Brownian motion
    (drift -1, variance 1): c*(t) = 2 (1 - 2t - t^2) Phi^c(sqrt t)
    + 2 sqrt(t) (1 + t) phi(sqrt t) (AW88; c*(0) = 1,
    c*(t) ~ 1 - 2t near 0).  ``tests/test_rqna.py`` checks it against the
    queue-length correlation of M/M/1 near rho = 1, computed from its
    Markov chain."""
    from scipy.special import erfc

    t = np.maximum(np.asarray(t, dtype=float), 0.0)
    r = np.sqrt(t)
    sf = 0.5 * erfc(r / math.sqrt(2.0))                   # Phi^c(sqrt t)
    pdf = np.exp(-0.5 * t) / math.sqrt(2.0 * math.pi)     # phi(sqrt t)
    return 2.0 * (1.0 - 2.0 * t - t * t) * sf + 2.0 * r * (1.0 + t) * pdf


def departure_weight(t):
    """The heavy-traffic weight w*(t) = 1 - (1 - c*(t)) / (2t) of the
    departure IDC (WY18s, the heavy-traffic limit of the departure variance
    function; WY22, the departure IDC).  Derived here from the RBM
    limit: with Q the canonical RBM of Z = sqrt(a) B_a - sqrt(b) B_s - t
    (a + b = 1), the centred departures are sqrt(a) B_a(t) - (Q(t) - Q(0)),
    whose variance is a t + V(t) - 2 a C(t) with V = Var(Q(t) - Q(0))
    = 2 Var Q (1 - c*(t)) = (1 - c*(t)) / 2 and C = Cov(Z(t), Q(t) - Q(0));
    Burke's theorem (a = b: departures as variable as arrivals) gives
    C = V, so Var D(t) / t = w*(t) a + (1 - w*(t)) b.  w*(0) = 0
    (departures follow the service process), w*(inf) = 1 (the arrivals)."""
    t = np.asarray(t, dtype=float)
    small = t < 1e-6
    ts = np.where(small, 1.0, t)
    w = 1.0 - (1.0 - rbm_correlation(ts)) / (2.0 * ts)
    # near 0 the quotient cancels; its series (sympy, from c* above):
    # w = (4/3) sqrt(2/pi) r - r^2/2 + (2/15) sqrt(2/pi) r^3 + O(r^5), r = sqrt t
    r = np.sqrt(np.maximum(t, 0.0))
    k = math.sqrt(2.0 / math.pi)
    near = (4.0 / 3.0) * k * r - 0.5 * r * r + (2.0 / 15.0) * k * r**3
    return np.clip(np.where(small, near, w), 0.0, 1.0)


def rq_workload(rho: float, tau: float, iw_grid, x_grid, idw) -> tuple[float, float]:
    """The RQ approximation of the mean steady-state workload of a
    single-server queue (WY18, the functional RQ formula):

        E[Z] ~ Z* = sup_{x >= 0} { -(1 - rho) x + sqrt(2 rho tau x I_w(x)) },

    x in time units, tau the mean service time and I_w(x) =
    Var Y(x) / (tau E Y(x)) the index of dispersion for work of the work
    Y(x) arriving in an interval of length x; with i.i.d. service times of
    SCV c_s^2 independent of the arrivals, I_w(x) = I_a(x) + c_s^2 (WY18,
    the IDW; WY22).  The constant sqrt 2 makes Z* exact for M/GI/1
    (I_w = 1 + c_s^2 constant: Z* = rho tau (1 + c_s^2) / (2 (1 - rho)),
    Pollaczek-Khinchine); as rho -> 1 the maximising x grows like
    rho / (1 - rho)^2, so Z* takes I_w at the heavy-traffic time scale and
    is asymptotically correct (the heavy-traffic interpolation of WY18:
    the same sup written as rho/(1 - rho) sup_y {-y + sqrt(2 y tau
    I_w(rho y / (1 - rho)^2))}).

    ``iw_grid`` holds I_w on the log-spaced ``x_grid``, where the sup is
    first located; it is then refined by bounded Brent on log x between
    the neighbours of the best grid point, ``idw(x)`` evaluating I_w at
    one x.  Returns (Z*, the maximising x)."""
    from scipy.optimize import minimize_scalar

    def val(x, iw):
        return -(1.0 - rho) * x + np.sqrt(np.maximum(2.0 * rho * tau * x * iw, 0.0))

    vals = val(np.asarray(x_grid), np.asarray(iw_grid))
    i = int(np.argmax(vals))
    lo = math.log(x_grid[max(i - 1, 0)])
    hi = math.log(x_grid[min(i + 1, len(x_grid) - 1)])
    best_x, best = float(x_grid[i]), float(vals[i])
    if hi > lo:
        res = minimize_scalar(lambda y: -float(val(math.exp(y), idw(math.exp(y)))),
                              bounds=(lo, hi), method="bounded", options={"xatol": 1e-9})
        if -res.fun > best:
            best, best_x = float(-res.fun), float(math.exp(res.x))
    return max(best, 0.0), best_x


def renewal_wait_ratio(rho: float, tau: float, cs2: float, c2: float, service,
                       grid_points: int = 240) -> float:
    """The bias of the RQ mean wait on a renewal stream: the ratio
    W_ref / W_RQ for a single-server FCFS queue at utilisation ``rho``,
    mean service ``tau``, service SCV ``cs2`` and service phase type
    ``service`` = (alpha, T) of mean 1, fed by a renewal stream of
    balanced-means H2 inter-arrival times of SCV ``c2`` (1.0 for ``c2`` <=
    1, where the stream is Poisson or smoother and no correction is made).

    * W_RQ: the RQ mean wait of :func:`rq_workload` with the stream's own
      IDC (:class:`RenewalIDC`), E[W] = Z*/rho - tau (1 + c_s^2)/2 as in
      :func:`rqna_kernel` (step 4).
    * W_ref: the exact wait of that H2/PH/1 queue, :func:`ph_ph_1_wait`
      (Neuts 1981; LR99).

    Why (measured here, ``tests/test_rqna_refined.py``): the RQ formula
    takes the arrival IDC near time 0, where every renewal IDC is close to
    1, when the queue is lightly loaded (the maximising x is of the order
    of a service time), so it misses the clusters of short inter-arrival
    times of a bursty stream: H2 of SCV 5 into an exponential queue at
    rho = 0.3 comes out 41 % low, H2/D/1 at rho = 0.4 the same; at
    moderate loads it overshoots (H2 of SCV 7.84 into M/1 at rho = 0.8:
    +17 %).  WY18 state the RQ formula exact for M/GI/1 and asymptotically
    correct in heavy traffic; away from both it is an approximation, and
    this ratio is its error on the renewal stream nearest the queue's
    flow.  :func:`rqna_kernel` multiplies each queue's RQ wait by the ratio
    for the stream of SCV I_a(inf) (the queue's c_a^2 in QNA): exact on a
    queue fed by the balanced H2 stream alone, and the RQ formula still
    says how a flow's IDC varying with time changes the wait."""
    if not c2 > 1.0 + 1e-9 or rho <= 0.0:
        return 1.0
    ref = _renewal_idc(float(c2))
    lam = rho / tau
    Ihi = c2 + cs2 + 1.0
    hi = 1e3 * max(2.0 * rho * tau * Ihi / (1.0 - rho) ** 2, tau)
    grid = np.geomspace(1e-6 * tau, hi, grid_points)
    z, _ = rq_workload(rho, tau, ref(lam * grid) + cs2, grid,
                       lambda x: float(ref(lam * x)[0]) + cs2)
    w_rq = z / rho - tau * (1.0 + cs2) / 2.0
    if w_rq <= 0.0:
        return 1.0
    a_alpha, a_T, _ = _phase_type(HyperExponential(float(c2)))
    w_ref = ph_ph_1_wait(a_alpha, a_T, service[0], service[1], rho) * tau
    return w_ref / w_rq


_IDC_CACHE: dict = {}


def _renewal_idc(c2: float) -> RenewalIDC:
    """:class:`RenewalIDC` of the balanced H2 of SCV ``c2``, kept per c2."""
    key = round(c2, 12)
    if key not in _IDC_CACHE:
        if len(_IDC_CACHE) > 256:
            _IDC_CACHE.clear()
        _IDC_CACHE[key] = RenewalIDC(HyperExponential(key))
    return _IDC_CACHE[key]


# ---------------------------------------------------------------------------
# the network
# ---------------------------------------------------------------------------

def _inputs(net: Network):
    """(lam, ext shape, p0 (K,), P (K, K), S (K,), shapes (K,)), or a typed
    refusal naming what lies outside WY22's scope."""
    from .qna import _routing_arrays, _visit_routing

    if net.is_symbolic:
        raise UnsupportedModelError(
            f"{_SOLVER} is numeric; this network has sympy symbols: substitute numbers, "
            "or use qmodels.symbolic")
    if not net.is_open:
        which = "mixed" if net.is_mixed else "closed"
        raise UnsupportedModelError(
            f"{_SOLVER} handles one open class (Whitt & You 2022); this network is {which}: "
            f"use method={'mva-residual' if not net.is_mixed else 'sim'!r}")
    if len(net.classes) != 1:
        raise UnsupportedModelError(
            f"{_SOLVER} is single-class (Whitt & You 2022); this network has "
            f"{len(net.classes)} classes ({', '.join(repr(c.name) for c in net.classes)}): "
            "use method='qna'")
    _require_numeric(net, _SOLVER)
    _refuse_held_or_bounded(net, _SOLVER)
    low = net.lowered
    K = len(net.stations)
    for k, s in enumerate(net.stations):
        if not low.visited[k]:
            continue
        if not isinstance(s, Queue) or low.kind[k] != "queue":
            raise UnsupportedModelError(
                f"station {s.name!r} is a {low.kind[k]!r} station: {_SOLVER} models single-server "
                "FCFS queues only (Whitt & You 2022): use method='qna'")
        if int(s.servers) != 1:
            raise UnsupportedModelError(
                f"station {s.name!r} has {int(s.servers)} servers: {_SOLVER} models "
                "single-server queues only (Whitt & You 2022): use method='qna'")
        if low.discipline[k] != "fcfs":
            raise UnsupportedModelError(
                f"station {s.name!r}: discipline {low.discipline[k]!r}: {_SOLVER} models FCFS "
                "queues only (Whitt & You 2022): use method='qna'")
    cls = net.classes[0]
    index = {s.name: k for k, s in enumerate(net.stations)}
    V = np.asarray(net.visits, dtype=float)[0]
    S = np.asarray(net.service_times, dtype=float)[0]
    if cls.routing is not None:
        p0, P = _routing_arrays(cls, index, K)
    else:
        p0, P = _visit_routing(V)
    shapes = list(low.shapes[0])     # the class's own shape where it gives one
    return float(cls.arrival_rate), cls.interarrival, p0, P, S, shapes


def rqna_kernel(lam, ext: RenewalIDC, p0, P, S, svc: list, names, grid_points: int = 240,
                renewal_correction: bool = True, time_scale_fixed_point: bool = True):
    """RQNA on arrays (WY22, the algorithm).  ``lam`` the external
    rate, ``ext`` the IDC of the external renewal stream (unit mean),
    ``p0`` (K,) its split among the stations, ``P`` (K, K) the routing
    matrix per visit, ``S`` (K,) the mean service per visit, ``svc`` the
    :class:`RenewalIDC` of each station's service shape (unit mean).

    1. Rates (WY22, the traffic rate equations): lambda = lam p0 (I - P)^-1,
       rho_j = lambda_j S_j < 1 (else :class:`~qmodels.errors.UnstableError`).
    2. Immediate feedback eliminated (WY22, feedback elimination,
       as Whitt 1983 for QNA): with q = P_jj a stay is a geometric number
       of visits, served consecutively: rate lambda_j (1 - q), mean
       tau_j = S_j / (1 - q), SCV q + (1 - q) c_s^2; its service renewal
       process is the original one thinned by 1 - q, so its IDC is
       I_s(t) = (1 - q) I_s0(t / S_j) + q (Bernoulli thinning, below); the
       routing out of j is renormalised by 1 - q.
    3. The IDC equations (WY22), for each t, linear in the IDCs:
       splitting a flow of IDC I with probability p gives p I(t) + 1 - p
       (Var = p^2 Var N + p (1 - p) E N); superposing independent flows
       gives the rate-weighted mean sum_i (lambda_i / lambda) I_i(t); the
       departures of j have I_d,j(t) = w_j(t) I_a,j(t) + (1 - w_j(t))
       I_s,j(t), with w_j(t) = w*((1 - rho_j)^2 t / (rho_j tau_j c_x,j^2))
       (:func:`departure_weight`; the heavy-traffic time scale of queue j,
       c_x,j^2 = I_a,j(inf) + c_s,j^2 in the plain algorithm).  With
       ``time_scale_fixed_point`` c_x,j^2 is instead the variability seen
       over the time scale at which the RQ formula of step 4 takes the
       queue's workload: c_x,j^2 = I_a,j(x_j) + c_s,j^2 = I_w,j(x_j) with
       x_j = rho_j tau_j c_x,j^2 / (2 (1 - rho_j)^2), found by fixed-point
       iteration from the asymptotic value (at most 60 rounds, else a
       :class:`~qmodels.errors.ConvergenceWarning`; as rho_j -> 1,
       x_j -> inf and the plain value is recovered).  Our
       derivation: for a constant I_w = c^2 the sup of
       -(1 - rho) x + sqrt(2 rho tau c^2 x) is attained where its
       derivative -(1 - rho) + sqrt(2 rho tau c^2) / (2 sqrt x) vanishes,
       at x = rho tau c^2 / (2 (1 - rho)^2), half the RBM's time unit
       rho tau c^2 / (1 - rho)^2; so the fixed point picks the Brownian
       net input (of variance rate rho tau c_x^2 per unit time) whose own
       RQ time scale sees exactly that variance, the Brownian model of the
       queue behind both w* and the RQ formula.  (An earlier version took
       the fixed point at the RBM time unit itself, twice as long, and
       said the RQ sup lies there: it lies at half of it.  The maximiser
       of the RQ formula for the flow's own varying I_w, a third choice,
       lies beyond x_j where I_w rises; it measured 10.1 % on
       ``rqna-bursty`` against 8.7 % here and 10.9 % before.)  So
       the arrival IDCs solve
       I_a,k(t) - sum_j (f_jk p_jk / lambda_k) w_j(t) I_a,j(t) =
       [lambda_0k I_0k(t) + sum_j f_jk (p_jk (1 - w_j(t)) I_s,j(t) + 1 - p_jk)]
       / lambda_k, f_jk = lambda_j p_jk the flow from j to k, lambda_0k
       I_0k(t) = lam (p0_k I_ext(lam t) + 1 - p0_k).  At t = inf (w = 1) the
       same system gives I_a(inf), the asymptotic method's c_a^2.
    4. Each queue by the RQ formula (:func:`rq_workload`) with
       I_w,j(x) = I_a,j(x) + c_s,j^2, then the mean wait from the mean
       workload by Brumelle's law for FCFS with service independent of the
       wait, E[Z] = rho E[W] + lambda E[S^2] / 2 (S. L. Brumelle, "On the
       relation between customer and time averages in queues", J. Appl.
       Prob. 8, 1971): E[W] = Z*/rho - tau (1 + c_s^2) / 2; with
       ``renewal_correction`` multiplied by :func:`renewal_wait_ratio`
       for the renewal stream of SCV I_a,j(inf) and the stay's service
       (phase type: a geometric number of visits' services is the visit's
       PH (alpha, T) with T + q t alpha, of mean 1 / (1 - q); the
       generator divided by 1 - q scales it to mean 1).
    5. Per visit: W_visit = (1 - q) W_stay (the stay's wait spread over its
       1 / (1 - q) visits, exact for M/M/1 with feedback), R = S + W_visit.

    Returns (lamv (K,) visit rates, R (K,) per visit, rho (K,), Ia_inf (K,)
    asymptotic arrival IDC, W (K,) wait per visit, x* (K,) the maximising
    x of each RQ sup)."""
    K = len(S)
    lamv = np.maximum(lam * np.linalg.solve((np.eye(K) - P).T, p0), 0.0)
    act = lamv > 0
    rho = lamv * S
    for k in range(K):
        if act[k] and rho[k] >= 1.0:
            raise UnstableError(
                f"station {names[k]!r} is unstable: rho = lambda S = {lamv[k]:.6g} * {S[k]:.6g}"
                f" = {rho[k]:.6g} >= 1 ({_SOLVER} needs every queue below saturation)",
                station=names[k], rho=float(rho[k]))
    q = np.where(act, np.diag(P), 0.0)
    ls = lamv * (1.0 - q)
    taus = np.where(act, S / np.where(q < 1, 1.0 - q, 1.0), 0.0)
    cs2 = np.array([s.scv for s in svc])
    cs2s = q + (1.0 - q) * cs2
    Po = P - np.diag(np.diag(P))
    with np.errstate(divide="ignore", invalid="ignore"):
        Pq = np.where(act[:, None], Po / np.where(q < 1, 1.0 - q, 1.0)[:, None], 0.0)
    f = ls[:, None] * Pq                 # flow j -> k
    l0 = lam * p0
    ia = np.flatnonzero(act)
    n = len(ia)
    fa = f[np.ix_(ia, ia)]
    Pa = Pq[np.ix_(ia, ia)]
    lsa = ls[ia]
    l0a, p0a = l0[ia], p0[ia]
    rhoa, tausa, cs2a, qa = rho[ia], taus[ia], cs2s[ia], q[ia]
    # the asymptotic (t = inf) arrival IDC: w = 1
    A = np.eye(n) - (fa * Pa).T / lsa[:, None]
    ext_inf = np.where(p0a > 0, p0a * ext.idc_inf + 1.0 - p0a, 1.0)
    b = (l0a * ext_inf + (fa * (1.0 - Pa)).sum(axis=0)) / lsa
    Ia_inf = np.linalg.solve(A, b)
    cx2 = Ia_inf + cs2a
    hts = np.where(rhoa > 0, (1.0 - rhoa) ** 2 / (rhoa * tausa * np.maximum(cx2, 1e-12)), 1.0)
    svca = [svc[k] for k in ia]
    Sa = S[ia]

    def arrival_idc(t) -> np.ndarray:
        """I_a(t) (len(t), n) at the active stations: the system of step 3,
        solved for every t at once."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        w = departure_weight(hts[None, :] * t[:, None])                     # (T, n)
        Is = np.column_stack([(1.0 - qa[i]) * svca[i](t / Sa[i]) + qa[i] for i in range(n)])
        Ie = ext(lam * t)
        I0 = np.where(p0a[None, :] > 0, p0a[None, :] * Ie[:, None] + 1.0 - p0a[None, :], 1.0)
        fp = fa * Pa                                                          # (n, n) j -> k
        M = np.eye(n)[None, :, :] - np.swapaxes(fp[None, :, :] * w[:, :, None], 1, 2) \
            / lsa[None, :, None]
        rhs = (l0a[None, :] * I0
               + np.einsum("jk,tj->tk", fp, (1.0 - w) * Is)
               + (fa * (1.0 - Pa)).sum(axis=0)[None, :]) / lsa[None, :]
        return np.linalg.solve(M, rhs[:, :, None])[:, :, 0]

    if time_scale_fixed_point:
        # c_x^2 = I_w seen at the Brownian RQ time scale
        # x = rho tau c_x^2 / (2 (1 - rho)^2) (step 3), by fixed-point iteration
        done = False
        for _ in range(_FIXED_POINT_ROUNDS):
            xq = rhoa * tausa * cx2 / (2.0 * (1.0 - rhoa) ** 2)
            new = np.diagonal(arrival_idc(xq)).copy() + cs2a
            done = bool(np.all(np.abs(new - cx2) <= 1e-6 * np.maximum(cx2, 1.0)))
            cx2 = new
            hts[:] = (1.0 - rhoa) ** 2 / (rhoa * tausa * np.maximum(cx2, 1e-12))
            if done:
                break
        if not done:
            warnings.warn(
                f"{_SOLVER}: the time-scale fixed point of the departure weights (step 3) "
                f"stopped after {_FIXED_POINT_ROUNDS} rounds before reaching its tolerance "
                "1e-6; the answer is approximate beyond its method", ConvergenceWarning,
                stacklevel=3)
    W = np.zeros(K)
    xs = np.zeros(K)
    Ihi = float(max(np.max(Ia_inf), ext.idc_inf, 1.0)) + float(np.max(cs2a)) + 1.0
    lo = 1e-6 * float(np.min(tausa))
    hi = 1e3 * float(np.max(np.maximum(2.0 * rhoa * tausa * Ihi / (1.0 - rhoa) ** 2, tausa)))
    grid = np.geomspace(lo, hi, grid_points)
    on_grid = arrival_idc(grid)
    for i in range(n):
        k = ia[i]
        z, xs[k] = rq_workload(float(rhoa[i]), float(tausa[i]), on_grid[:, i] + cs2a[i], grid,
                               lambda x, i=i: float(arrival_idc(x)[0, i]) + cs2a[i])
        wstay = max(z / rhoa[i] - tausa[i] * (1.0 + cs2a[i]) / 2.0, 0.0)
        if renewal_correction:
            # the stay's service: a geometric sum of the visit's, phase type
            # again: T + q t alpha, of mean 1 / (1 - q); scaled to mean 1
            al, Tm = svca[i].ph
            Tst = (Tm + qa[i] * np.outer(-Tm.sum(axis=1), al)) / (1.0 - qa[i])
            try:
                with np.errstate(all="ignore"):     # finiteness is checked instead
                    ratio = renewal_wait_ratio(float(rhoa[i]), float(tausa[i]), float(cs2a[i]),
                                               float(Ia_inf[i]), (al, Tst), grid_points)
            except (np.linalg.LinAlgError, FloatingPointError) as e:
                raise UnsupportedModelError(
                    f"station {names[k]!r}: the refined RQNA's exact PH/PH/1 reference at "
                    f"rho = {float(rhoa[i]):.6g} (service SCV {float(cs2a[i]):.4g}, arrival "
                    f"IDC {float(Ia_inf[i]):.4g}) is numerically singular ({e}); use "
                    "refined=False (the plain analyzer) or method='qna'") from None
            wstay *= ratio
        W[k] = (1.0 - qa[i]) * wstay
    R = S + W
    Iinf = np.ones(K)
    Iinf[ia] = Ia_inf
    return lamv, R, rho, Iinf, W, xs


def _poisson_fed(p0, P, act, ext_poisson: bool, exp_shape) -> np.ndarray:
    """Stations fed by Poisson flows only, in the sense of
    :func:`qmodels.analytic.qna.station_solutions`: no non-Poisson external
    stream reaches them and no non-exponential queue lies upstream (Kelly
    1979, sec. 2.2; Melamed 1979); on those every IDC is 1 in RQNA too."""
    from .qna import _propagate

    adj = (P > 0) & act[:, None] & act[None, :]
    np.fill_diagonal(adj, False)
    seed = (p0 > 0) & act & (not ext_poisson)
    rough = _propagate(adj, seed, act & ~exp_shape)
    return act & ~rough


def _exact_gim1(net, shape, lamv, p0, P, S, exp_shape, fed, W) -> np.ndarray:
    """Stations solved exactly as GI/M/1 queues, their wait written into
    ``W``: exponential service, fed by the class's external renewal stream
    alone (randomly split or not), no other station routing to it and no
    feedback (:func:`qmodels.analytic.qna.station_solutions`, whose exact
    GI/M/c solution :func:`qmodels.analytic.qna.gi_m_c_wait` is used with
    c = 1: sigma = A*(mu (1 - sigma)), W = sigma / (mu (1 - sigma));
    Kleinrock 1975, sec. 6.4).  The flows out of such a station keep
    RQNA's departure IDC."""
    from .qna import gi_m_c_wait
    from .queues.transforms import thinned, unit_transform

    K = len(S)
    adj = P > 0
    fed_inside = (adj & (lamv > 0)[:, None]).any(axis=0)
    out = np.zeros(K, dtype=bool)
    if shape is None or is_exponential(shape):
        return out
    who = f"class {net.classes[0].name!r}"
    for k in range(K):
        if lamv[k] <= 0 or fed[k] or fed_inside[k] or not exp_shape[k] or p0[k] <= 0:
            continue
        try:
            tr = thinned(unit_transform(shape, f"{who} at station {net.stations[k].name!r}"),
                         float(p0[k]))
            w, _, _ = gi_m_c_wait(tr, float(lamv[k] * S[k]), 1)
        except UnsupportedModelError:
            continue            # the RQ value stays, labelled approximate
        W[k] = w * float(S[k])
        out[k] = True
    return out


@answers()
def rqna(net: Network, exact_gim1: bool = True, refined: bool = True) -> Result:
    """Whitt & You's Robust Queueing Network Analyzer (``method="rqna"``;
    APPROXIMATE, or EXACT where every visited queue is fed by Poisson
    flows: M/G/1 and Jackson networks).

    Parameters
    ----------
    net : Network
        One open class; single-server FCFS queues of any service shape;
        Markovian routing (``routing``) or visits (random routing).
    exact_gim1 : bool
        True (default): a queue with exponential service fed by the
        external renewal stream alone is solved exactly as a GI/M/1 queue
        (:func:`_exact_gim1`), as ``qna`` does, in place of the RQ
        formula (which is not exact there); False: the RQ formula at every
        queue, as in Whitt & You (2022).
    refined : bool
        True (default): the two refinements of the module docstring (the
        renewal-bias ratio of each queue's RQ wait, the time-scale fixed
        point of the departure weight); False: the plain algorithm.

    Returns
    -------
    Result
        method ``"rqna"``; ``info`` holds per station the asymptotic arrival
        IDC (``"arrival_idc_inf"``), the mean wait per visit (``"wait"``),
        rho, and the time scale x* at which the RQ sup was attained
        (``"rq_time"``).

    Raises
    ------
    UnsupportedModelError
        Several classes, closed or mixed classes, a delay, a multi-server,
        PS, LCFS-PR, priority or load-dependent station, token pools,
        finite capacities, symbolic input (each named; ``qna`` or the
        simulator answers them).
    UnstableError
        A queue with rho >= 1.

    Notes
    -----
    :func:`rqna_kernel` gives every equation.  Unlike QNA's two moments,
    each flow carries its IDC as a function of time, so a bursty stream
    that light queues smooth at short time scales but pass on at long ones
    still loads a heavily loaded queue downstream (the heavy-traffic
    bottleneck phenomenon; S. Suresh & W. Whitt, Oper. Res. Letters 9(6),
    1990; WY22, the nine-queue example).

    Examples
    --------
    Suresh & Whitt's nine queues in series (H2 arrivals of SCV 8, rate 1;
    mean service 0.6 at eight queues and 0.9 at the ninth): the simulated
    mean wait at the ninth is 29.2 (Whitt & You 2019, Table 2); QNA gives
    about 5, RQNA 34.

    >>> import qmodels as qm
    >>> names = [f"q{i}" for i in range(1, 10)]
    >>> rows = {"source": {"q1": 1.0}, **{a: {b: 1.0} for a, b in zip(names, names[1:])},
    ...         "q9": {"sink": 1.0}}
    >>> net = qm.Network([qm.Queue(n, 0.6) for n in names[:8]] + [qm.Queue("q9", 0.9)],
    ...                  [qm.Open("o", 1.0, routing=rows,
    ...                           interarrival=qm.HyperExponential(8))])
    >>> r = qm.rqna(net)
    >>> 25 < r.info["wait"][8] < 36
    True
    """
    for flag, val in (("exact_gim1", exact_gim1), ("refined", refined)):
        if not isinstance(val, (bool, np.bool_)):
            from ..errors import InvalidValueError

            raise InvalidValueError(f"{flag} must be True or False, got {val!r}")
    lam, shape, p0, P, S, shapes = _inputs(net)
    names = [s.name for s in net.stations]
    who = f"class {net.classes[0].name!r}"
    if shape is not None and not math.isfinite(float(shape.scv)):
        raise UnsupportedModelError(f"{who}: inter-arrival SCV {shape.scv!r} is not finite")
    correlated = isinstance(shape, MAP)
    ext = MapIDC(shape) if correlated else RenewalIDC(shape)
    svc = [RenewalIDC(sh) for sh in shapes]
    lamv, R, rho, Iinf, W, xs = rqna_kernel(lam, ext, p0, P, S, svc, names,
                                            renewal_correction=bool(refined),
                                            time_scale_fixed_point=bool(refined))
    act = lamv > 0
    exp_shape = np.array([sv.poisson for sv in svc], dtype=bool)
    fed = _poisson_fed(p0, P, act, ext.poisson, exp_shape)
    gim1 = np.zeros(len(names), dtype=bool)
    if exact_gim1 and not correlated:      # (a MAP stream is no GI renewal stream)
        gim1 = _exact_gim1(net, shape, lamv, p0, P, S, exp_shape, fed, W)
        R = S + W
    exact = bool(np.all((fed | gim1)[act]))
    surrogate = [names[k] for k in range(len(names)) if act[k] and not svc[k].exact]
    if not ext.exact:
        surrogate.insert(0, f"the arrivals of {who}")
    V = np.asarray(net.visits, dtype=float)
    Rres = V * R[None, :]
    U = (lamv * S)[None, :]
    X = np.array([lam])
    if exact:
        notes = ["EXACT: Whitt & You's robust queueing network analyzer (RQNA, 2022) on a "
                 "network whose queues are all fed by Poisson flows (M/G/1 by the RQ formula, "
                 "which is Pollaczek-Khinchine there; Jackson networks) or are GI/M/1 queues "
                 "fed by the renewal stream alone (solved exactly)"]
        assumptions = ("one open class; single-server FCFS queues fed by Poisson flows, or "
                       "exponential ones fed by one renewal stream alone",)
    else:
        notes = ["APPROXIMATION: Whitt & You's robust queueing network analyzer (RQNA, 2022): "
                 "each flow described by its rate and index of dispersion for counts (IDC) "
                 "as a function of time; each queue's mean workload by the robust-queueing "
                 "formula from its index of dispersion for work"]
        assumptions = tuple(METHOD_LABELS["rqna"][1])
        if refined:
            notes.append("refined: each queue's RQ wait scaled by the RQ formula's error on "
                         "the balanced-H2 renewal stream of the queue's asymptotic arrival IDC "
                         "(against the exact H2/PH/1 queue), and each departure weight on the "
                         "time scale of the variability the queue sees (refined=False: the "
                         "plain algorithm)")
        if surrogate:
            notes.append("IDC of a two-moment phase-type surrogate (same mean and SCV) for the "
                         "shape of " + ", ".join(repr(s) if s in names else s
                                                 for s in surrogate[:8]))
    if correlated and not ext.poisson:
        notes.append(f"correlated arrivals: {who} arrives as a Markovian arrival process "
                     "(MAP); its exact IDC function I(t) (Neuts 1979; Heffes & Lucantoni 1986) "
                     f"enters RQNA, asymptotic IDC {ext.idc_inf:.4g} against an interval SCV of "
                     f"{ext.scv:.4g}; method='ctmc' holds the MAP exactly where its chain fits")
    info = {"algorithm": "RQNA (Whitt & You 2022)", "arrival_idc_inf": Iinf.tolist(),
            "wait": W.tolist(), "rho": rho.tolist(), "rq_time": xs.tolist(),
            "poisson_fed": [names[k] for k in range(len(names)) if fed[k]],
            "exact_gim1": [names[k] for k in range(len(names)) if gim1[k]]}
    r = _result(net, "rqna", X, Rres, U, notes, info, visit_time=R[None, :])
    object.__setattr__(r, "exactness", EXACT if exact else APPROXIMATE)
    object.__setattr__(r, "assumptions", assumptions)
    return r

