"""The grid of a sweep: the product of the axes (first axis slowest) or
explicit rows, held as columns (:func:`grid` lists the points).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping

import numpy as np

from ..errors import InvalidValueError
from .paths import _plain

__all__ = ["grid"]


# ---------------------------------------------------------------------------
# the grid
# ---------------------------------------------------------------------------

def _column(values) -> np.ndarray:
    """Values as an array: int64 or float64 for plain numbers, else objects
    (kept as given, never broadcast: tuples of rate multipliers stay
    tuples)."""
    if values and all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                      and not hasattr(v, "free_symbols") for v in values):
        if all(isinstance(v, numbers.Integral) for v in values):
            return np.array(values, dtype=np.int64)
        return np.array(values, dtype=float)
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


class _Grid:
    """The points of a sweep held as columns (a million points are a
    million-row array per parameter, not a million dicts)."""

    def __init__(self, vary=None, rows=None):
        if (vary is None) == (rows is None):
            raise InvalidValueError(
                "give the grid as vary={param: values} or rows=[{...}, ...]")
        if vary is not None:
            if not isinstance(vary, Mapping) or not vary:
                raise InvalidValueError(
                    f"vary must be a non-empty mapping parameter -> values, got {vary!r}")
            axes = {}
            for name, values in vary.items():
                if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
                    raise InvalidValueError(
                        f"vary[{name!r}] must be a sequence of values, got {values!r}")
                vals = [_plain(v) for v in values]
                if not vals:
                    raise InvalidValueError(f"vary[{name!r}] has no values")
                axes[name] = vals
            self.names = list(axes)
            sizes = [len(v) for v in axes.values()]
            self.P = int(np.prod(sizes, dtype=np.int64))
            self.cols = {}
            stride = self.P
            at = np.arange(self.P, dtype=np.int64)
            for name, size in zip(self.names, sizes):
                stride //= size
                self.cols[name] = _column(axes[name])[(at // stride) % size]
            self.desc = ("product", [(n, axes[n]) for n in self.names])
            return
        if hasattr(rows, "to_dict") and hasattr(rows, "columns"):
            rows = rows.to_dict("records")
        rows = [{k: _plain(v) for k, v in dict(r).items()} for r in rows]
        if not rows:
            raise InvalidValueError("rows is empty: nothing to sweep")
        keys = list(rows[0])
        for i, r in enumerate(rows):
            if list(r) != keys:
                raise InvalidValueError(
                    f"rows[{i}] has parameters {list(r)}, rows[0] has {keys}: every row must "
                    "name the same parameters")
        self.names = keys
        self.P = len(rows)
        self.cols = {k: _column([r[k] for r in rows]) for k in keys}
        self.desc = ("rows", rows)

    @classmethod
    def of_columns(cls, names, cols):
        g = cls.__new__(cls)
        g.names, g.cols = list(names), dict(cols)
        g.P = len(next(iter(cols.values()))) if cols else 0
        g.desc = None
        return g

    def columns(self, lo: int, hi: int) -> dict:
        """The parameter columns of points lo..hi-1."""
        return {n: self.cols[n][lo:hi] for n in self.names}

    def __len__(self):
        return self.P

    def __getitem__(self, i) -> dict:
        return {n: _plain(self.cols[n][i]) for n in self.names}

    def __iter__(self):
        return (self[i] for i in range(self.P))


def grid(vary: Mapping[str, Iterable] | None = None, rows=None) -> list[dict]:
    """The points of a sweep, in order.

    ``vary`` maps parameter -> values; the points are their product, the
    first axis varying slowest (as :func:`itertools.product`).  ``rows`` is
    an explicit list of points (mappings, or a DataFrame whose columns are
    parameters).  Give one or the other.

    >>> grid({"a": [1, 2], "b": [0.1, 0.2]})
    [{'a': 1, 'b': 0.1}, {'a': 1, 'b': 0.2}, {'a': 2, 'b': 0.1}, {'a': 2, 'b': 0.2}]
    """
    return list(_Grid(vary, rows))
