"""Symbolic solvers: exact single-class MVA and bounds as rational
expressions of the model's sympy symbols (:mod:`.mva`), and where the
bottleneck sits as a parameter moves (:mod:`.shifts`)."""

from .mva import (
    METRICS,
    SymbolicBounds,
    SymbolicResult,
    exact,
    free_symbols,
    mva_symbolic,
    substitute,
    symbolic_bounds,
    symbols,
)

__all__ = ["symbols", "exact", "free_symbols", "substitute", "mva_symbolic", "symbolic_bounds",
           "SymbolicResult", "SymbolicBounds", "METRICS"]
