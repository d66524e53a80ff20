"""Symbolic solvers: the same :class:`~qmodels.model.Network`, with sympy
symbols as service times, visit ratios, think times, server rates or
populations, solved as exact formulas.

What is here
------------
:func:`mva_symbolic`
    Exact single-class MVA as rational functions of the parameters, for a
    small integer population N (X(n), R(n), Q_k(n), U_k(n), n = 1..N).
:func:`symbolic_bounds`
    Asymptotic and balanced job bounds and the saturation population N* as
    formulas (the population may itself be a symbol).
:class:`SymbolicResult`, :class:`SymbolicBounds`
    Frozen results with the usual names (``X``, ``R``, ``Q``, ``U``), LaTeX
    output for notebooks (``_repr_latex_``, :meth:`SymbolicResult.latex`),
    ``lambdify`` back to fast numpy functions, and ``evaluate`` at a point,
    which gives the numbers the numeric solvers give.
:func:`substitute`, :func:`free_symbols`, :func:`symbols`
    Helpers: put numbers into a symbolic network, list its parameters,
    make positive symbols.

Exactness: the model layer stores plain numbers as floats (``1`` becomes
``1.0``); the symbolic solvers turn every float back into the rational it
was written as (``0.27`` -> ``27/100``, :func:`sympy.nsimplify` with
``rational=True``), so that results are exact rational expressions.

Modules: :mod:`.exact` (symbols, exact values, :func:`substitute`,
:func:`free_symbols`, :func:`~.exact.exact_network`), :mod:`.mva` (the exact
MVA, :func:`mva_symbolic` and :class:`SymbolicResult`), :mod:`.bounds`
(:func:`symbolic_bounds`, :class:`SymbolicBounds`) and :mod:`.shifts`
(where the bottleneck moves as a parameter varies).
"""

from .bounds import SymbolicBounds, symbolic_bounds
from .exact import exact, free_symbols, substitute, symbols
from .mva import METRICS, SymbolicResult, mva_symbolic

__all__ = ["symbols", "exact", "free_symbols", "substitute", "mva_symbolic", "symbolic_bounds",
           "SymbolicResult", "SymbolicBounds", "METRICS"]
