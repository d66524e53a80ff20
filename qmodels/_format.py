"""Formatting shared by every result's ``table()`` and notebook display
(``_repr_html_``): one number format, and one table layout in plain text and
in HTML, so figures read the same from every solver and in a notebook as in
``repr``.

Every name that comes from a model (station, class, pool, network) goes
through :func:`esc` in HTML: a station called ``<b>`` shows as the text
``<b>``.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["fmt", "format_table", "note_lines", "esc", "Raw", "cell", "html_table", "para",
           "title", "notes"]

#: widest line a note takes in a text table (``table()``, ``repr``)
NOTE_WIDTH = 100


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
        line = "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(r, widths, strict=False)))
        out.append(line.rstrip())
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def note_lines(notes: Iterable[str], prefix: str = "note: ",
               width: int = NOTE_WIDTH) -> list[str]:
    """Each note as ``prefix`` + text, wrapped at spaces to ``width``
    characters, the continuation lines indented under the text (a word
    longer than the width, a path or a formula, stays whole)."""
    out = []
    for n in notes:
        out += textwrap.wrap(str(n), width, initial_indent=prefix,
                             subsequent_indent=" " * len(prefix), break_long_words=False,
                             break_on_hyphens=False) or [prefix.rstrip()]
    return out


# -- HTML (the notebook displays) ------------------------------------------------

def esc(x) -> str:
    """``str(x)`` with ``& < > " '`` escaped."""
    import html  # on first use: only the notebook displays need it

    return html.escape(str(x))


class Raw(str):
    """Markup that :func:`cell` passes through unescaped (already built from
    escaped parts)."""


def cell(v) -> str:
    """A table cell's content: numbers as :func:`fmt` prints them, ``None``
    as a dash, :class:`Raw` markup as is, anything else escaped text."""
    if isinstance(v, Raw):
        return str(v)
    if v is None:
        return "-"
    if isinstance(v, str):
        return esc(v)
    return esc(fmt(v))


def html_table(header: Sequence[str], rows: Iterable[Sequence[Any]], caption: str = "") -> str:
    """An HTML table: ``header`` (plain text, escaped) over ``rows``; the
    first column is a row label (``<th>``), the others are right-aligned."""
    out = ['<table class="qmodels">']
    if caption:
        out.append(f"<caption>{esc(caption)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr></thead>")
    out.append("<tbody>")
    for r in rows:
        r = list(r)
        first = f'<th style="text-align:left">{cell(r[0])}</th>' if r else ""
        rest = "".join(f'<td style="text-align:right">{cell(v)}</td>' for v in r[1:])
        out.append(f"<tr>{first}{rest}</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def para(text: str, *, bold: str = "") -> str:
    """``<p>text</p>`` (escaped); ``bold`` appended in ``<b>`` (escaped)."""
    return f"<p>{esc(text)}" + (f"<b>{esc(bold)}</b>" if bold else "") + "</p>"


def title(what: str, name: str = "") -> str:
    """The heading line of a display: ``what`` in bold, then the model's
    name in italics when it has one."""
    return f"<p><b>{esc(what)}</b>" + (f" of <i>{esc(name)}</i>" if name else "") + "</p>"


def notes(lines: Iterable[str]) -> list[str]:
    """One italic paragraph per note."""
    return [f"<p><i>note: {esc(n)}</i></p>" for n in lines]
