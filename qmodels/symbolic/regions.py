"""The results of :mod:`.shifts`: the regions of a parameter in which one
station (or bound term) binds, the switch points between them, and their
displays (table, HTML, LaTeX, matplotlib).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp

from .._format import format_table
from ..errors import InvalidValueError, UnknownNameError
from ..model.network import Network
from .exact import _latex_name

__all__ = ["Region", "SwitchPoint", "Envelope", "BottleneckRegions", "ResponseTimeAsymptote"]


# ---------------------------------------------------------------------------
# result pieces
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Region:
    """An interval of the parameter and the label(s) that win on it.

    ``lower``/``upper`` are exact sympy values (``-oo``/``oo`` when open
    ended); ``labels`` the winning station name(s) (several on a tie
    interval); ``value`` the winning function of the parameter.
    """

    lower: Any
    upper: Any
    labels: tuple
    value: Any

    def contains(self, x) -> bool:
        """lower <= x <= upper (the end points belong to both neighbours)."""
        x = sp.sympify(x)
        return bool(self.lower <= x) and bool(x <= self.upper)

    def __repr__(self):
        return f"Region([{self.lower}, {self.upper}]: {', '.join(self.labels)})"


@dataclass(frozen=True)
class SwitchPoint:
    """A parameter value at which the winner changes from ``before`` to
    ``after``.  ``value`` is exact (sympy) for the symbolic results and a
    float for :func:`bottleneck_sweep`."""

    value: Any
    before: tuple
    after: tuple

    def __float__(self):
        return float(self.value)

    def __repr__(self):
        return (f"SwitchPoint({self.value} ~ {float(self.value):.6g}: "
                f"{', '.join(self.before)} -> {', '.join(self.after)})")


def _fmt_val(v) -> str:
    v = sp.sympify(v)
    if v.is_infinite or v.is_Integer:
        return str(v)
    return f"{v} (~{float(v):.6g})"


def _tex_bound(v) -> str:
    return sp.latex(v)


def _html_bound(v, lead: str = "") -> str:
    """A bound as HTML: its LaTeX in ``$...$`` (``lead`` LaTeX before it),
    and ``&asymp;`` a 6-digit decimal beside it unless it is an integer or
    infinite (what :func:`_fmt_val` does in the text table)."""
    import html

    v = sp.sympify(v)
    tex = f"${html.escape(lead + sp.latex(v))}$"
    if v.is_infinite or v.is_Integer:
        return tex
    try:
        return f"{tex} &asymp; {float(v):.6g}"
    except TypeError:  # still has a symbol in it
        return tex


@dataclass(frozen=True, repr=False)
class Envelope:
    """The upper envelope max_l f_l(theta) of labelled functions of one
    parameter, as a piecewise result.

    Attributes
    ----------
    parameter : sympy.Symbol
    functions : mapping label -> expression in ``parameter``
    regions : tuple of Region
        In increasing order of the parameter, adjacent regions with the same
        winner merged.
    switch_points : tuple of SwitchPoint
        The boundaries between regions with different winners.
    domain : (lower, upper)
    quantity : str
        LaTeX of what is maximised (for labels and plots).
    curves : str
        LaTeX naming the functions themselves, the plot's y label (default
        the quantity's).
    """

    parameter: Any
    functions: Mapping
    regions: tuple
    switch_points: tuple
    domain: tuple
    quantity: str = r"f"
    title: str = "envelope"
    curves: str = ""

    # -- queries ----------------------------------------------------------------
    def at(self, x) -> tuple:
        """The winning label(s) at parameter value ``x`` (both at a switch
        point)."""
        x = sp.sympify(x)
        lo, hi = self.domain
        if bool(x < lo) or bool(x > hi):
            raise InvalidValueError(
                f"{self.parameter} = {x} is outside the domain [{lo}, {hi}]"
            )
        for sp_ in self.switch_points:
            if sp.simplify(sp_.value - x) == 0:
                return tuple(dict.fromkeys(sp_.before + sp_.after))
        for r in self.regions:
            if r.contains(x):
                return r.labels
        raise InvalidValueError(f"{self.parameter} = {x} is in no region")  # pragma: no cover

    def piecewise(self):
        """max_l f_l(theta) as a :class:`sympy.Piecewise`."""
        pieces = []
        t = self.parameter
        for r in self.regions[:-1]:
            pieces.append((r.value, t <= r.upper))
        pieces.append((self.regions[-1].value, True))
        return sp.Piecewise(*pieces)

    @property
    def labels(self) -> tuple:
        return tuple(self.functions)

    # -- text -----------------------------------------------------------------------
    def table(self) -> str:
        rows = [[f"[{_fmt_val(r.lower)}, {_fmt_val(r.upper)}]", ", ".join(r.labels),
                 str(r.value)] for r in self.regions]
        lines = [f"{self.title} in {self.parameter}", "",
                 format_table([str(self.parameter), "winner", "value"], rows)]
        if self.switch_points:
            lines.append("")
            for s in self.switch_points:
                lines.append(f"switch at {self.parameter} = {_fmt_val(s.value)}: "
                             f"{', '.join(s.before)} -> {', '.join(s.after)}")
        return "\n".join(lines)

    def __repr__(self):
        return self.table()

    def _region_tex(self, r) -> tuple[str, str]:
        lo, hi = r.lower, r.upper
        t = sp.latex(self.parameter)
        left = "" if lo.is_infinite else f"{_tex_bound(lo)} \\leq "
        right = "" if hi.is_infinite else f" \\leq {_tex_bound(hi)}"
        cond = f"{left}{t}{right}" if (left or right) else r"\mathrm{all}\ " + t
        names = ", ".join(_latex_name(n) for n in r.labels)
        return cond, names

    def latex_lines(self) -> list:
        """One equation per region and per switch point; each renders in
        matplotlib mathtext."""
        t = sp.latex(self.parameter)
        lines = []
        for r in self.regions:
            cond, names = self._region_tex(r)
            lines.append(f"{self.quantity}({t}) = {sp.latex(r.value)}\\ ({names}),"
                         f"\\quad {cond}")
        for s in self.switch_points:
            a = ", ".join(_latex_name(n) for n in s.before)
            b = ", ".join(_latex_name(n) for n in s.after)
            lines.append(f"{t}^{{*}}_{{{a} \\to {b}}} = {sp.latex(sp.sympify(s.value))}")
        return lines

    def latex(self) -> str:
        """A ``cases`` environment (for notebooks / MathJax / LaTeX)."""
        t = sp.latex(self.parameter)
        rows = []
        for r in self.regions:
            cond, names = self._region_tex(r)
            rows.append(f"{sp.latex(r.value)} & \\text{{{', '.join(r.labels)}}},\\ {cond}")
        return f"{self.quantity}({t}) = \\begin{{cases}} " + r" \\ ".join(rows) + \
            r" \end{cases}"

    def _repr_latex_(self):
        return "$$" + self.latex() + "$$"

    def to_frame(self):
        """One row per region: lower, upper (floats), winner, value."""
        import pandas as pd

        return pd.DataFrame([
            {"lower": float(r.lower), "upper": float(r.upper), "winner": ", ".join(r.labels),
             "value": str(r.value)} for r in self.regions
        ])

    def to_dict(self) -> dict:
        """Regions and switch points as plain data (bounds and values as
        strings sympy parses back, with a float beside each bound)."""
        return {
            "parameter": str(self.parameter),
            "regions": [{"lower": str(r.lower), "upper": str(r.upper),
                         "lower_float": float(r.lower), "upper_float": float(r.upper),
                         "winner": list(r.labels), "value": str(r.value)}
                        for r in self.regions],
        }

    def _repr_html_(self) -> str:
        """The notebook display: one row per region with its bounds and the
        winning function in LaTeX (MathJax renders ``$...$``), a decimal
        beside every bound that is not an integer, then the switch points."""
        from .. import _format as h

        t = sp.latex(self.parameter)
        rows = [[h.Raw(_html_bound(r.lower)), h.Raw(_html_bound(r.upper)), ", ".join(r.labels),
                 h.Raw(f"${h.esc(sp.latex(r.value))}$")] for r in self.regions]
        out = [f"<p><b>{h.esc(self.title)}</b> in ${h.esc(t)}$</p>",
               h.html_table([f"{self.parameter} from", f"{self.parameter} to", "winner",
                        f"${self.quantity}$"], rows)]
        for sw in self.switch_points:
            out.append(f"<p>switch at {_html_bound(sw.value, f'{t}^* = ')}: "
                       f"{h.esc(', '.join(sw.before))} &rarr; {h.esc(', '.join(sw.after))}</p>")
        return "\n".join(out)

    def lambdify(self, label: str | None = None) -> Callable:
        """A numpy function of the parameter: the envelope itself
        (``label=None``) or one labelled function."""
        if label is None:
            e = self.piecewise()
        elif label in self.functions:
            e = self.functions[label]
        else:
            raise UnknownNameError(
                f"unknown label {label!r}; labels are {', '.join(self.functions)}"
            )
        f = sp.lambdify((self.parameter,), e, modules="numpy")

        def func(x):
            return np.broadcast_to(np.asarray(f(x), dtype=float), np.shape(x)).copy() \
                if np.ndim(x) else float(f(x))

        return func

    # -- plot -----------------------------------------------------------------------
    def _grid(self, span, num):
        if span is None:
            lo, hi = self.domain
            pts = [float(s.value) for s in self.switch_points]
            a = float(lo) if lo.is_finite else (min(pts) - 1 if pts else -1.0)
            if hi.is_finite:
                b = float(hi)
            else:
                b = 2 * max(pts) if pts and max(pts) > 0 else (max(pts) + 1 if pts else a + 1)
                b = max(b, a + 1e-9 + abs(a))
            span = (a, b)
        return np.linspace(span[0], span[1], num)

    def plot(self, ax=None, *, span=None, num=400, annotate=True):
        """Plot every labelled function of the parameter, the envelope in
        bold, and the switch points as dashed vertical lines.  Returns the
        matplotlib Axes."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        x = self._grid(span, num)
        for lab in self.functions:
            ax.plot(x, self.lambdify(lab)(x), label=lab)
        ax.plot(x, self.lambdify()(x), color="black", lw=2.5, alpha=0.35,
                label=f"max: ${self.quantity}$")
        for s in self.switch_points:
            v = float(s.value)
            ax.axvline(v, ls="--", color="grey")
            if annotate:
                ax.annotate(f"{self.parameter}* = {v:.4g}", (v, ax.get_ylim()[1]),
                            rotation=90, va="top", ha="right", fontsize=8)
        ax.set_xlabel(str(self.parameter))
        ax.set_ylabel(self.curves or f"${self.quantity}$")
        ax.legend()
        return ax


@dataclass(frozen=True, repr=False)
class BottleneckRegions(Envelope):
    """Where each station is the bottleneck: the envelope of D_k/c_k over
    the non-delay stations (see :func:`bottleneck_regions`).  ``network``
    is the network with every parameter but the swept one filled in."""

    network: Network | None = field(default=None)

    @property
    def max_throughput(self):
        """X_max(theta) = 1 / max_k D_k/c_k, piecewise."""
        return sp.Piecewise(*[(1 / v, c) for v, c in self.piecewise().args])

    def plot(self, ax=None, *, kind="demand", span=None, num=400, annotate=True, at=None):
        """``kind="demand"``: D_k/c_k against the parameter.
        ``kind="utilization"``: U_k from exact MVA (:func:`qmodels.mva.mva`)
        at each parameter value in ``at`` (default: ``num`` points of the
        span; pass integers when the parameter is a server count)."""
        if kind == "demand":
            return super().plot(ax, span=span, num=num, annotate=annotate)
        if kind != "utilization":
            raise InvalidValueError(f"kind must be 'demand' or 'utilization', got {kind!r}")
        import matplotlib.pyplot as plt

        from ..analytic.mva import mva
        from .exact import substitute

        if ax is None:
            _, ax = plt.subplots()
        xs = self._grid(span, min(num, 60)) if at is None else np.asarray(at)
        U = []
        for x in xs:
            xv = int(x) if float(x).is_integer() else float(x)
            r = mva(substitute(self.network, {self.parameter: xv}))
            U.append([r.U[s] for s in self.functions])
        U = np.array(U)
        for k, s in enumerate(self.functions):
            ax.plot(xs, U[:, k], marker=".", label=s)
        for s in self.switch_points:
            ax.axvline(float(s.value), ls="--", color="grey")
        ax.set_xlabel(str(self.parameter))
        ax.set_ylabel("utilization")
        ax.legend()
        return ax


@dataclass(frozen=True, repr=False)
class ResponseTimeAsymptote(Envelope):
    """Which term of R >= max(D, N D_k/c_k - Z) binds, per interval of the
    parameter (see :func:`response_time_asymptote`).  The label
    ``"no contention"`` stands for R >= D."""
