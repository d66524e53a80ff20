"""The safe expression grammar of model files: text <-> sympy, never eval.

:func:`parse_expression` reads an expression string of a model file
(numbers, declared symbols, ``+ - * / **``, unary minus and a few
functions) into a sympy object by walking Python's syntax tree, so nothing
in a file is ever run as code; :func:`_expr_printer` writes a sympy value
back as text that reads back the same (floats as their shortest repr).
"""

from __future__ import annotations

import ast

__all__ = ["parse_expression", "MAX_EXPRESSION"]

#: Longest expression string.
MAX_EXPRESSION = 2000


def _sympy_funcs():
    import sympy as sp

    return {"sqrt": sp.sqrt, "exp": sp.exp, "log": sp.log, "Min": sp.Min, "Max": sp.Max,
            "Abs": sp.Abs, "floor": sp.floor, "ceiling": sp.ceiling}


class _Converter:
    """Syntax tree -> sympy, allowing only the grammar's nodes."""

    def __init__(self, symbols: dict):
        import sympy as sp

        self.symbols = symbols
        self.funcs = _sympy_funcs()
        self.consts = {"pi": sp.pi, "E": sp.E}

    def conv(self, node):
        if isinstance(node, ast.Expression):
            return self.conv(node.body)
        if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
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
        return _Converter(symbols).conv(tree)
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
