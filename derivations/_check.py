"""Shared helpers of the derivation scripts: print LaTeX, compare results,
and turn mismatches into a non-zero exit status.

Every script in this folder derives a formula with sympy, prints it as
LaTeX, and checks it against qmodels' numeric solvers (and, where useful,
against an independent numeric method).  ``main()`` returns 0 when every
check passes and 1 otherwise; run as a script, that is the exit status.
"""

from __future__ import annotations

import math

import sympy as sp


class Checker:
    """Collects named checks; :meth:`done` prints a summary and gives the
    exit status (0 all passed, 1 otherwise)."""

    def __init__(self, name: str):
        self.name = name
        self.passed = 0
        self.failures: list[str] = []

    def _record(self, ok: bool, what: str, detail: str):
        if ok:
            self.passed += 1
        else:
            self.failures.append(f"{what}: {detail}")
            print(f"  MISMATCH {what}: {detail}")

    def close(self, what: str, got, want, rel: float = 1e-9, abs_: float = 0.0) -> bool:
        """|got - want| <= max(rel |want|, abs_)."""
        g, w = float(got), float(want)
        ok = math.isclose(g, w, rel_tol=rel, abs_tol=abs_)
        self._record(ok, what, f"got {g!r}, want {w!r} (rel {rel:g}, abs {abs_:g})")
        return ok

    def same(self, what: str, a, b) -> bool:
        """Exact symbolic identity a == b (sympy.simplify of the
        difference is 0)."""
        d = sp.simplify(sp.sympify(a) - sp.sympify(b))
        ok = d == 0
        self._record(ok, what, f"{a} - ({b}) simplifies to {d}, not 0")
        return ok

    def true(self, what: str, cond: bool, detail: str = "") -> bool:
        self._record(bool(cond), what, detail or "condition is false")
        return bool(cond)

    def done(self) -> int:
        status = "OK" if not self.failures else "FAILED"
        print(f"{self.name}: {self.passed} checks passed, {len(self.failures)} failed: {status}")
        return 0 if not self.failures else 1


def show(label: str, expr_or_tex) -> None:
    """Print ``label: $LaTeX$`` (a sympy expression or a LaTeX string)."""
    tex = expr_or_tex if isinstance(expr_or_tex, str) else sp.latex(expr_or_tex)
    print(f"{label}:\n  $ {tex} $")


def stationary(Q):
    """Stationary vector of a finite CTMC generator ``Q`` (rows sum to 0):
    solve pi Q = 0, sum(pi) = 1 by replacing one balance equation with the
    normalisation (Stewart, *Introduction to the Numerical Solution of
    Markov Chains*, 1994, sec. 2.3).  An independent numeric method for
    the checks."""
    import numpy as np

    Q = np.asarray(Q, dtype=float)
    A = Q.T.copy()
    A[-1, :] = 1.0
    b = np.zeros(len(Q))
    b[-1] = 1.0
    return np.linalg.solve(A, b)
