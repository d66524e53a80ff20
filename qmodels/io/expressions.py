"""The safe expression grammar of model files: text <-> sympy, never eval.

:func:`parse_expression` reads an expression string of a model file
(numbers, declared symbols, ``+ - * / **``, unary minus and a few
functions) into a sympy object by walking Python's syntax tree, so nothing
in a file is ever run as code; :func:`_expr_printer` writes a sympy value
back as text that reads back the same (floats as their shortest repr).
"""

from __future__ import annotations

import ast
import re

__all__ = ["parse_expression", "MAX_EXPRESSION", "MAX_BITS"]

#: Longest expression string.
MAX_EXPRESSION = 2000
#: Most bits an exact integer power in an expression may have (a float
#: holds up to 1024): ``(2**64)**64`` is refused before it is computed.
MAX_BITS = 8192


#: A plain decimal number literal (no 0x/0o/0b prefix, no underscores).
_DECIMAL = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def _power_bits(a, b) -> int:
    """An upper estimate of the bits of the exact number ``a ** b``, found
    before computing it: an exact rational base p/q raised to an integer
    n has at most |n| (bits(p) + bits(q)) bits.  0 when the power stays
    unevaluated or inexact (a symbol, a float, a fractional exponent)."""
    if not (getattr(a, "is_Rational", False) and getattr(b, "is_Integer", False)):
        return 0
    return abs(int(b)) * (int(a.p).bit_length() + int(a.q).bit_length())


def _sympy_funcs():
    import sympy as sp

    return {"sqrt": sp.sqrt, "exp": sp.exp, "log": sp.log, "Min": sp.Min, "Max": sp.Max,
            "Abs": sp.Abs, "floor": sp.floor, "ceiling": sp.ceiling}


class _Converter:
    """Syntax tree -> sympy, allowing only the grammar's nodes."""

    def __init__(self, symbols: dict, text: str = ""):
        import sympy as sp

        self.symbols = symbols
        self.text = text
        self.funcs = _sympy_funcs()
        self.consts = {"pi": sp.pi, "E": sp.E}

    def conv(self, node):
        if isinstance(node, ast.Expression):
            return self.conv(node.body)
        if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
            self._decimal(node)
            v = self._constant(node)
            if v is not None:
                return v
        if isinstance(node, ast.Name):
            return self._name(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = self.conv(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            # the operands here, so one nesting level is one frame deep
            v = self._binop(node.op, self.conv(node.left), self.conv(node.right))
            if v is not None:
                return v
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in self.funcs and not node.keywords):
            return self.funcs[node.func.id](*[self.conv(a) for a in node.args])
        what = (f"function {node.func.id!r}" if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name) else type(node).__name__)
        raise ValueError(f"{what} is not allowed in an expression")

    def _decimal(self, node):
        """Refuse a number literal that is not plain decimal: ``0x10``,
        ``0o17``, ``0b101``, ``1_000`` are Python's syntax, not a model
        file's (YAML 1.1, YAML 1.2 and JSON read them differently or not
        at all), so ``'0x10'`` is an error rather than 16."""
        seg = ast.get_source_segment(self.text, node) if self.text else None
        if seg is not None and isinstance(node.value, (int, float)) \
                and not _DECIMAL.fullmatch(seg):
            raise ValueError(f"{seg!r} is not a decimal number (write numbers in decimal, "
                             "e.g. 16 rather than 0x10)")

    @staticmethod
    def _constant(node):
        """An int or float literal as sympy, else None (not allowed)."""
        import sympy as sp

        if isinstance(node.value, int):
            return sp.Integer(node.value)
        if isinstance(node.value, float):
            return sp.Float(node.value)
        return None

    def _name(self, node):
        if node.id in self.symbols:
            return self.symbols[node.id]
        if node.id in self.consts:
            return self.consts[node.id]
        raise ValueError(f"unknown name {node.id!r} (declare it under symbols)")

    @staticmethod
    def _binop(node_op, a, b):
        """``a op b`` for the five arithmetic operators, else None."""
        op = type(node_op)
        if op is ast.Add:
            return a + b
        if op is ast.Sub:
            return a - b
        if op is ast.Mult:
            return a * b
        if op is ast.Div:
            if b == 0:
                raise ValueError("division by zero")
            return a / b
        if op is ast.Pow:
            if b.is_number and (not b.is_finite or abs(b) > 64):
                raise ValueError("exponent larger than 64")
            bits = _power_bits(a, b)
            if bits > MAX_BITS:
                raise ValueError(f"a power of about {bits * 0.30103:.0f} digits (more than "
                                 f"{MAX_BITS} bits): too large to compute")
            return a ** b
        return None


def parse_expression(text: str, symbols: dict):
    """A sympy expression from ``text``, using only the declared
    ``symbols`` (name -> Symbol); raises ``ValueError`` naming what is not
    allowed.  Numbers, names, ``+ - * / **``, unary minus and the functions
    ``sqrt exp log Min Max Abs floor ceiling`` are allowed; nothing is
    evaluated as Python code."""
    if len(text) > MAX_EXPRESSION:
        raise ValueError(f"expression longer than {MAX_EXPRESSION} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):
        raise ValueError("not a number or an expression") from None
    try:
        return _Converter(symbols, text.strip()).conv(tree)
    except RecursionError:
        raise ValueError("expression nested too deeply") from None
    except (TypeError, ArithmeticError) as e:
        raise ValueError(f"cannot evaluate: {e}") from None


def _expr_printer():
    from sympy.printing.str import StrPrinter

    class _Printer(StrPrinter):
        def _print_Float(self, expr):
            # the shortest text that reads back as the same double
            return repr(float(expr))

    return _Printer()
