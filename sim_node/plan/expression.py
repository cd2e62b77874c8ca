"""Named expressions: costs and constraints written as text, so that a problem can be saved.

A small, safe language: the syntax of a Python expression, parsed with ``ast`` and evaluated
by walking the tree (never ``eval``). What is allowed:

- numbers (evaluated as float64), strings (only as arguments, e.g. link names), lists and
  tuples (numpy arrays), the names the caller declares (``q``, Klamp't variables, ...) and
  ``pi``, ``e``;
- ``+ - * / ** @ %``, unary ``- +``, comparisons, ``and``/``or``/``not``, ``a if c else b``,
  indexing and slicing;
- calls, positional arguments only, to FUNCTIONS below and to the functions the caller passes
  (the robot's ``link_position``, ... in robotoptimize).

Bounded: at most MAX_LENGTH characters and MAX_NODES syntax nodes; floating overflow gives
inf (never an exception or a hang: no integers, so ``9**9**9`` is 9.0**387420489.0 = inf).
Every mistake is an ExpressionError naming the expression, the column and what is valid.
"""
from __future__ import annotations

import ast
import math
import operator

import numpy as np

MAX_LENGTH = 10_000
MAX_NODES = 2_000


class ExpressionError(ValueError):
    """An expression that cannot be parsed or evaluated (message names text and column)."""


def _norm(x):
    return float(np.linalg.norm(np.asarray(x, dtype=float)))


FUNCTIONS = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "atan2": np.arctan2, "sqrt": np.sqrt, "exp": np.exp, "log": np.log,
    "abs": np.abs, "min": np.min, "max": np.max, "sum": np.sum, "norm": _norm,
    "dot": np.dot, "cross": np.cross, "minimum": np.minimum, "maximum": np.maximum,
    "clip": np.clip, "transpose": np.transpose,
}
CONSTANTS = {"pi": math.pi, "e": math.e}

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.Pow: operator.pow, ast.MatMult: operator.matmul,
           ast.Mod: operator.mod}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}
_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
            ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne}
_ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp,
            ast.Call, ast.Constant, ast.Name, ast.Load, ast.List, ast.Tuple, ast.Subscript,
            ast.Slice, ast.And, ast.Or) + tuple(_BINARY) + tuple(_UNARY) + tuple(_COMPARE)


class Expression:
    """A parsed expression over declared names. ``Expression(text, names, functions)``:
    ``names`` the variables it may read, ``functions`` extra callables it may call (name ->
    callable). Raises ExpressionError on anything outside the language."""

    def __init__(self, text, names=(), functions=None):
        if not isinstance(text, str):
            raise ExpressionError(f"an expression is a string, got {type(text).__name__}")
        if len(text) > MAX_LENGTH:
            raise ExpressionError(f"expression of {len(text)} characters: at most "
                                  f"{MAX_LENGTH} are accepted")
        self.text = text
        self.names = frozenset(names)
        self.functions = dict(FUNCTIONS, **(functions or {}))
        try:
            self._tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError as err:
            raise ExpressionError(f"expression {text!r}: syntax error at column "
                                  f"{err.offset}: {err.msg}") from None
        except (RecursionError, MemoryError, ValueError) as err:
            raise ExpressionError(f"expression {text!r} is nested too deeply or contains "
                                  f"a null character ({type(err).__name__})") from None
        nodes = list(ast.walk(self._tree))
        if len(nodes) > MAX_NODES:
            raise ExpressionError(f"expression {text[:80]!r}...: {len(nodes)} syntax nodes, "
                                  f"at most {MAX_NODES}")
        for node in nodes:
            self._check(node)

    def _fail(self, node, message):
        column = getattr(node, "col_offset", None)
        where = f" at column {column + 1}" if column is not None else ""
        raise ExpressionError(f"expression {self.text!r}{where}: {message}")

    def _check(self, node):
        if not isinstance(node, _ALLOWED):
            self._fail(node, f"{type(node).__name__} is not allowed; an expression uses "
                       "numbers, names, + - * / ** @ %, comparisons, and/or/not, "
                       "'a if c else b', [..], indexing and function calls")
        if isinstance(node, ast.Constant) and (isinstance(node.value, bool) or
                                               not isinstance(node.value, (int, float, str))):
            self._fail(node, f"constant {node.value!r} is not a number or a string")
        if isinstance(node, ast.Name) and node.id not in self.names \
                and node.id not in CONSTANTS and node.id not in self.functions:
            self._fail(node, f"unknown name {node.id!r}; known: "
                       f"{sorted(self.names | set(CONSTANTS))}")
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in self.functions:
                name = node.func.id if isinstance(node.func, ast.Name) else "this"
                self._fail(node, f"{name!r} is not a callable function; functions: "
                           f"{sorted(self.functions)}")
            if node.keywords:
                self._fail(node, "keyword arguments are not allowed (positional only)")

    @property
    def identifiers(self) -> set:
        """The names the expression reads or calls."""
        return {n.id for n in ast.walk(self._tree) if isinstance(n, ast.Name)}

    def constantArguments(self, functions) -> list:
        """The constant first arguments of calls to the named functions (e.g. link names)."""
        return [node.args[0].value for node in ast.walk(self._tree)
                if isinstance(node, ast.Call) and node.func.id in functions and node.args
                and isinstance(node.args[0], ast.Constant)]

    def __call__(self, values: dict):
        """Value of the expression with names bound to ``values`` (name -> number/array);
        a float, a bool or an ndarray. Raises ExpressionError on an evaluation error."""
        with np.errstate(all="ignore"):
            try:
                return self._eval(self._tree.body, values)
            except ExpressionError:
                raise
            except (ArithmeticError, ValueError, TypeError, IndexError, KeyError) as err:
                raise ExpressionError(f"expression {self.text!r} cannot be evaluated: "
                                      f"{err}") from None

    def _eval(self, node, values):
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, str) else np.float64(node.value)
        if isinstance(node, ast.Name):
            if node.id in values:
                return values[node.id]
            if node.id in CONSTANTS:
                return np.float64(CONSTANTS[node.id])
            self._fail(node, f"name {node.id!r} has no value")
        if isinstance(node, (ast.List, ast.Tuple)):
            return np.array([self._eval(item, values) for item in node.elts], dtype=float)
        if isinstance(node, ast.BinOp):
            return _BINARY[type(node.op)](self._array(node.left, values),
                                          self._array(node.right, values))
        if isinstance(node, ast.UnaryOp):
            return _UNARY[type(node.op)](self._array(node.operand, values))
        if isinstance(node, ast.Compare):
            left = self._array(node.left, values)
            result = True
            for op, right_node in zip(node.ops, node.comparators):
                right = self._array(right_node, values)
                result = result and bool(np.all(_COMPARE[type(op)](left, right)))
                left = right
            return result
        if isinstance(node, ast.BoolOp):
            if isinstance(node.op, ast.And):
                return all(bool(np.all(self._eval(v, values))) for v in node.values)
            return any(bool(np.all(self._eval(v, values))) for v in node.values)
        if isinstance(node, ast.IfExp):
            branch = node.body if bool(np.all(self._eval(node.test, values))) else node.orelse
            return self._eval(branch, values)
        if isinstance(node, ast.Subscript):
            return self._array(node.value, values)[self._index(node.slice, values)]
        if isinstance(node, ast.Call):
            args = [self._eval(a, values) for a in node.args]
            return self.functions[node.func.id](*args)
        self._fail(node, f"{type(node).__name__} cannot be evaluated")

    def _array(self, node, values):
        value = self._eval(node, values)
        if isinstance(value, str):
            self._fail(node, f"string {value!r} used as a number")
        return np.asarray(value, dtype=float) if not isinstance(value, bool) else value

    def _index(self, node, values):
        if isinstance(node, ast.Slice):
            parts = [None if p is None else self._integer(p, values)
                     for p in (node.lower, node.upper, node.step)]
            return slice(*parts)
        if isinstance(node, ast.Tuple):
            return tuple(self._index(item, values) for item in node.elts)
        return self._integer(node, values)

    def _integer(self, node, values):
        value = self._array(node, values)
        if np.ndim(value) == 0 and np.isfinite(value) and float(value) == int(value):
            return int(value)
        self._fail(node, f"an index must be a whole number, got {value!r}")

    def __repr__(self):
        return f"Expression({self.text!r})"
