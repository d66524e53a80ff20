"""Value checks shared by every layer: numbers or sympy expressions, counts,
names, fractions; and the immutable mapping models are made of.

Symbolic values fail a check only when the condition is provably false (a
symbol declared ``positive=True`` passes a non-negativity check), as in
SymPy's own assumptions system.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Mapping
from typing import Any, Union

from .errors import InvalidValueError

__all__ = ["Number", "is_symbolic", "is_exact_number", "any_symbolic", "check_real",
           "check_count", "check_name", "check_fraction", "FrozenMap", "freeze"]

Number = Union[int, float, Any]  # Any: a sympy expression


def is_symbolic(x) -> bool:
    """A sympy expression with free symbols (a sympy number such as
    Rational(1, 7) is a number: exact, but not symbolic)."""
    return (hasattr(x, "free_symbols") and not isinstance(x, numbers.Number)
            and bool(x.free_symbols))


def is_exact_number(x) -> bool:
    """Kept as given after validation: ints, fractions, sympy numbers."""
    return (isinstance(x, numbers.Rational) and not isinstance(x, bool)) or (
        hasattr(x, "free_symbols") and not x.free_symbols)


def check_real(value, what: str, *, allow_zero: bool = True, allow_inf: bool = False):
    """Return ``value`` (a float, or a sympy expression) or raise
    :class:`InvalidValueError` naming ``what``.

    Numbers must be real, not NaN, finite (unless ``allow_inf``) and
    non-negative (positive unless ``allow_zero``).  Symbolic values fail only
    when the condition is provably false.
    """
    kind = "non-negative" if allow_zero else "positive"
    if isinstance(value, bool) or value is None or isinstance(value, str):
        raise InvalidValueError(f"{what} must be a finite {kind} number, got {value!r}")
    if is_symbolic(value):
        if value.is_extended_real is False:
            raise InvalidValueError(f"{what} must be real, got {value}")
        if value.is_negative is True or (not allow_zero and value.is_zero is True):
            raise InvalidValueError(f"{what} must be {kind}, got {value}")
        if not allow_inf and value.is_finite is False:
            raise InvalidValueError(f"{what} must be finite, got {value}")
        return value
    if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
        raise InvalidValueError(f"{what} must be real, got {value!r}")
    if isinstance(value, numbers.Integral):
        # kept exact (a visit ratio of 1 stays 1 in symbolic expressions)
        if value < 0 or (value == 0 and not allow_zero):
            raise InvalidValueError(f"{what} must be a finite {kind} number, got {value!r}")
        if int(value) > _FLOAT_MAX:
            raise InvalidValueError(f"{what} is too large: {_digits(value)} exceeds the "
                                    "largest float (about 1.8e308)")
        return int(value)
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InvalidValueError(f"{what} must be a finite {kind} number, got {value!r}") from None
    except OverflowError:
        raise InvalidValueError(f"{what} is too large: {_digits(value)} exceeds the largest "
                                "float (about 1.8e308)") from None
    if v == 0 and value != 0:
        raise InvalidValueError(f"{what} underflows: {_digits(value)} is not zero but below "
                                "the smallest float (about 5e-324)")
    if math.isnan(v) or (math.isinf(v) and not allow_inf) or v < 0 or (v == 0 and not allow_zero):
        raise InvalidValueError(f"{what} must be a finite {kind} number, got {value!r}")
    # exact inputs (Fraction, sympy Rational, sqrt(2)) stay exact for the
    # symbolic solvers; numeric arrays convert them to float
    return value if is_exact_number(value) else v


#: Largest finite float, as an int: a larger exact number cannot be computed with.
_FLOAT_MAX = int(sys.float_info.max)
#: Largest count (population, servers, tokens, phases): solvers compute with
#: counts as floats, so one past the largest float cannot be honoured.
MAX_COUNT = _FLOAT_MAX


def _digits(value) -> str:
    """A short description of a (possibly huge) exact number."""
    try:
        text = str(value)
    except ValueError:  # an int beyond Python's str() digit limit
        return f"a number of about {int(value).bit_length() * 0.30103:.0f} digits"
    return text if len(text) <= 40 else f"a number of {len(text.lstrip('-'))} digits"


#: Largest count kept in 64-bit integer arrays (servers, capacity, tokens).
MAX_INT64 = 2**63 - 1


def check_count(value, what: str, *, minimum: int, error=InvalidValueError,
                maximum=MAX_COUNT):
    """An integer >= minimum; never rounded. Integral floats (10.0) are taken
    as the integer they are; 10.3, True, NaN are rejected."""
    desc = "a non-negative integer" if minimum == 0 else f"an integer >= {minimum}"

    def bad():
        return error(f"{what} must be {desc}, got {value!r}")

    if isinstance(value, bool) or value is None:
        raise bad()
    if is_symbolic(value) and value.free_symbols:
        if value.is_integer is False or (value - minimum).is_negative is True:
            raise bad()
        return value
    if isinstance(value, numbers.Integral):
        v = int(value)
    elif isinstance(value, numbers.Real) or hasattr(value, "free_symbols"):
        try:
            fv = float(value)
        except (TypeError, ValueError):
            raise bad() from None
        if not math.isfinite(fv) or not fv.is_integer():
            raise bad()
        v = int(fv)
    else:
        raise bad()
    if v < minimum:
        raise bad()
    if v > maximum:
        raise error(f"{what} is too large: {_digits(v)} exceeds "
                    + ("the largest float (about 1.8e308)" if maximum == MAX_COUNT
                       else f"{maximum} (a 64-bit integer)" if maximum == MAX_INT64
                       else f"the limit {maximum}"))
    return v


def check_name(name, what: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise InvalidValueError(f"{what} name must be a non-empty string, got {name!r}")
    if name != name.strip():
        # 'cpu' and 'cpu ' would be two stations that print alike
        raise InvalidValueError(f"{what} name {name!r} has leading or trailing white space: "
                                f"write {name.strip()!r}")
    return name



class FrozenMap(Mapping):
    """An immutable, hashable mapping (insertion ordered)."""

    __slots__ = ("_d", "_h")

    def __init__(self, data=()):
        self._d = dict(data)
        self._h = None

    def __getitem__(self, key):
        return self._d[key]

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)

    def __hash__(self):
        if self._h is None:
            self._h = hash(tuple(self._d.items()))
        return self._h

    def __eq__(self, other):
        if isinstance(other, Mapping):
            return dict(self._d) == dict(other)
        return NotImplemented

    def __repr__(self):
        return repr(self._d)


def freeze(mapping, what: str):
    if mapping is None:
        return None
    if not isinstance(mapping, Mapping):
        raise InvalidValueError(f"{what} must be a mapping, got {type(mapping).__name__}")
    return FrozenMap(mapping)


def any_symbolic(*values) -> bool:
    """True when any value (or any element of an array) is symbolic."""
    import numpy as np

    for x in values:
        try:
            if any(is_symbolic(v) for v in np.ravel(np.asarray(x, dtype=object))):
                return True
        except TypeError:
            if is_symbolic(x):
                return True
    return False


def check_fraction(value, what: str):
    """A number in [0, 1] (symbolic: unless provably outside)."""
    v = check_real(value, what)
    if is_symbolic(v):
        if (v - 1).is_positive is True:
            raise InvalidValueError(f"{what} must be in [0, 1], got {v}")
    elif v > 1:
        raise InvalidValueError(f"{what} must be in [0, 1], got {value!r}")
    return v
