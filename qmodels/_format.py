"""Plain-text formatting shared by every result's ``table()``: one number
format and one table layout, so figures read the same from every solver."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["fmt", "format_table"]


def fmt(v, width=None) -> str:
    """A number as tables show it: 6 significant digits between 1e-3 and
    1e6, scientific notation outside, ``inf``/``0`` spelled out; sympy
    expressions and other objects as ``str``; right-aligned to ``width``."""
    if isinstance(v, (float, int)) or type(v).__module__ == "numpy":
        try:
            v = float(v)
        except (TypeError, ValueError):
            return str(v) if width is None else str(v).rjust(width)
        if math.isinf(v):
            s = "inf" if v > 0 else "-inf"
        elif v == 0:
            s = "0"
        elif 1e-3 <= abs(v) < 1e6:
            s = f"{v:.6g}"
        else:
            s = f"{v:.4e}"
    else:
        s = str(v)
    return s if width is None else s.rjust(width)


def format_table(header: list[str], rows: list[list[Any]]) -> str:
    """A plain text table with right-aligned numbers."""
    cells = [[str(h) for h in header]] + [[fmt(c) if not isinstance(c, str) else c for c in r]
                                           for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    out = []
    for j, r in enumerate(cells):
        line = "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))
        )
        out.append(line.rstrip())
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)
