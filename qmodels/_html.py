"""HTML building blocks shared by the notebook displays (``_repr_html_``):
escaped text, one table layout and the number format of the text tables
(:func:`qmodels._format.fmt`), so a figure reads the same in a notebook as
in ``repr``.

Every name that comes from a model (station, class, pool, network) goes
through :func:`esc`: a station called ``<b>`` shows as the text ``<b>``.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

from ._format import fmt

__all__ = ["esc", "Raw", "cell", "table", "para", "title", "notes"]


def esc(x) -> str:
    """``str(x)`` with ``& < > " '`` escaped."""
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


def table(header: Sequence[str], rows: Iterable[Sequence[Any]], caption: str = "") -> str:
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
