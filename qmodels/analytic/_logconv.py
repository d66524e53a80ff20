"""Single-class normalising constants in log space (the kernels behind the
stable multi-server / load-dependent path of :func:`qmodels.analytic.mva.mva_single`).

For a single-class closed network the equilibrium probability of a state
(n_1, ..., n_K) is prod_k f_k(n_k) / G(N) with (Buzen 1973; Bolch et al.,
*Queueing Networks and Markov Chains*, 2nd ed. 2006, sec. 8.1, eq. 8.1-8.5):

* fixed-rate queue:     f_k(j) = D_k^j
* delay (and think time Z, itself a delay): f_k(j) = D_k^j / j!
* load-dependent queue: f_k(j) = D_k^j / prod_{i=1}^{j} a_k(i)

and G(N) = sum over states of prod_k f_k(n_k), computed by convolving the
f_k one station at a time.  We keep log G(n) for n = 0..N (so N = 10^6
neither overflows nor underflows) and scale all demands by a common alpha
(G'(n) = G(n) / alpha^n), which leaves every ratio G(n-1)/G(n) exact up to
the factor alpha.

Every term is positive, so unlike the load-dependent MVA recursion for the
marginal probabilities (Reiser & Lavenberg 1980), no subtraction can cancel:
this is the stable route used by :func:`qmodels.analytic.mva` for multi-server and
load-dependent stations.  The public convolution solver (single and
multi-class, marginals) is :mod:`qmodels.analytic.convolution`.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import lazyjit
from ._kernels import log_add

__all__ = ["log_g_delay", "log_g_add_fixed", "log_g_add_ld", "log_ld_factors"]


def log_g_delay(delta: float, N: int) -> np.ndarray:
    """log of f(n) = delta^n / n! for n = 0..N (a delay of total demand delta:
    several delay stations and the think time convolve into one)."""
    n = np.arange(N + 1, dtype=float)
    if delta <= 0:
        out = np.full(N + 1, -np.inf)
        out[0] = 0.0
        return out
    if N < 20_000:  # math.lgamma: no scipy import for small models
        lg = np.fromiter((math.lgamma(k + 1.0) for k in range(N + 1)), float, N + 1)
    else:
        from scipy.special import gammaln

        lg = gammaln(n + 1)
    return n * math.log(delta) - lg


@lazyjit()
def log_g_add_fixed(lg, d):
    """Convolve a fixed-rate queue of (scaled) demand ``d`` into log G.

    Buzen's recursion g(n) <- g(n) + d g(n-1) (Buzen 1973), in log space.
    """
    out = lg.copy()
    if d <= 0.0:
        return out
    ld = math.log(d)
    for n in range(1, out.shape[0]):
        out[n] = log_add(out[n], ld + out[n - 1])
    return out


def log_ld_factors(d: float, multipliers, N: int) -> np.ndarray:
    """log f(j) = j log d - sum_{i<=j} log a(i) for j = 0..L, where L is the
    number of given multipliers (a(i) = a(L) beyond)."""
    a = np.asarray(multipliers, dtype=float)
    L = min(len(a), N)
    lf = np.empty(L + 1)
    lf[0] = 0.0
    if d <= 0:
        lf[1:] = -np.inf
        return lf
    lf[1:] = np.arange(1, L + 1) * math.log(d) - np.cumsum(np.log(a[:L]))
    return lf


@lazyjit(lists=True)
def log_g_add_ld(lg, lf, d_over_aL):
    """Convolve a load-dependent station into log G.

    h(n) = sum_{j=0}^{n} f(j) g(n-j).  With ``lf`` = log f(0..L) and
    f(j) = f(L) (d/a_L)^(j-L) for j >= L, the tail
    T(n) = sum_{j>=L} f(j) g(n-j) obeys T(n) = (d/a_L) T(n-1) + f(L) g(n-L),
    so the convolution costs O(N L), not O(N^2).  All terms positive.
    """
    N = len(lg) - 1
    L = len(lf) - 1
    out = np.full(N + 1, -np.inf)
    lr = math.log(d_over_aL) if d_over_aL > 0 else -np.inf
    tail = -np.inf
    for n in range(N + 1):
        # log-sum-exp of the head terms, then of the tail recursion
        top = min(n, L - 1)
        m = -np.inf
        for j in range(top + 1):
            v = lf[j] + lg[n - j]
            if v > m:
                m = v
        if n >= L:
            a = lr + tail
            b = lf[L] + lg[n - L]
            hi = a if a > b else b
            if hi == -np.inf:
                tail = -np.inf
            else:
                tail = hi + math.log(math.exp(a - hi) + math.exp(b - hi))
            if tail > m:
                m = tail
        if m == -np.inf:
            out[n] = -np.inf
            continue
        acc = 0.0
        for j in range(top + 1):
            acc += math.exp(lf[j] + lg[n - j] - m)
        if n >= L:
            acc += math.exp(tail - m)
        out[n] = m + math.log(acc)
    return out
