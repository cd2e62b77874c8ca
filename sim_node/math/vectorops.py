"""Vectors as plain Python sequences (Klamp't's ``klampt.math.vectorops``).

Every function takes lists, tuples or 1-D numpy arrays and returns a new list (``cross`` of two
3-vectors returns a tuple, as Klamp't's does). Arithmetic is Python float arithmetic in
Klamp't's order of operations, so results agree with Klamp't's to the last bit or nearly.

Two vectors of different lengths raise ``DimensionError``: a ValueError (our API's rule) that is
also a RuntimeError (what Klamp't raises), so code written for either catches it.
"""
from __future__ import annotations

import math


class DimensionError(ValueError, RuntimeError):
    """Two vectors that should have equal lengths do not (or a cross product of other than
    2- or 3-vectors)."""


def _same_length(a, b, fn: str):
    if len(a) != len(b):
        raise DimensionError(f"vectorops.{fn}: vector lengths differ ({len(a)} and {len(b)})")


def _is_vector(b) -> bool:
    return hasattr(b, "__iter__")


def add(*items):
    """The sum of one or more vectors of one length (0 for no vector, as Klamp't)."""
    if not items:
        return 0
    n = len(items[0])
    for v in items:
        if len(v) != n:
            raise DimensionError(f"vectorops.add: vector lengths differ ({n} and {len(v)})")
    return [sum(v[i] for v in items) for i in range(n)]


def madd(a, b, c):
    """a + c*b for vectors a, b and a scalar c."""
    _same_length(a, b, "madd")
    return [ai + c * bi for ai, bi in zip(a, b)]


def sub(a, b):
    """a - b for a vector or scalar b."""
    if _is_vector(b):
        _same_length(a, b, "sub")
        return [ai - bi for ai, bi in zip(a, b)]
    return [ai - b for ai in a]


def mul(a, b):
    """Elementwise a*b for a vector b, or a scaled by the scalar b."""
    if _is_vector(b):
        _same_length(a, b, "mul")
        return [ai * bi for ai, bi in zip(a, b)]
    return [ai * b for ai in a]


def div(a, b):
    """Elementwise a/b for a vector b, or a divided by the scalar b."""
    if _is_vector(b):
        _same_length(a, b, "div")
        return [ai / bi for ai, bi in zip(a, b)]
    return [ai / b for ai in a]


def maximum(a, b):
    """Elementwise max with a vector or a scalar."""
    if _is_vector(b):
        _same_length(a, b, "maximum")
        return [max(ai, bi) for ai, bi in zip(a, b)]
    return [max(ai, b) for ai in a]


def minimum(a, b):
    """Elementwise min with a vector or a scalar."""
    if _is_vector(b):
        _same_length(a, b, "minimum")
        return [min(ai, bi) for ai, bi in zip(a, b)]
    return [min(ai, b) for ai in a]


def dot(a, b):
    """The dot product."""
    _same_length(a, b, "dot")
    return sum([a[i] * b[i] for i in range(len(a))])


def normSquared(a):
    """|a|^2."""
    return sum(ai * ai for ai in a)


def norm(a):
    """The L2 norm |a|."""
    return math.sqrt(normSquared(a))


norm_L2 = norm


def norm_L1(a):
    """The L1 norm (sum of absolute values)."""
    return sum(abs(ai) for ai in a)


def norm_Linf(a):
    """The L-infinity norm (largest absolute value)."""
    return max(abs(ai) for ai in a)


def unit(a, epsilon=1e-5):
    """a / |a|; a copy of a unchanged when |a| <= epsilon."""
    n = norm(a)
    if n > epsilon:
        return mul(a, 1.0 / n)
    return list(a)


def distanceSquared(a, b):
    """|a - b|^2."""
    _same_length(a, b, "distanceSquared")
    total = 0
    for ai, bi in zip(a, b):
        total = total + (ai - bi) * (ai - bi)
    return total


def distance(a, b):
    """|a - b|."""
    return math.sqrt(distanceSquared(a, b))


def cross(a, b):
    """a x b: a 3-tuple for 3-vectors, the scalar a0*b1 - a1*b0 for 2-vectors."""
    _same_length(a, b, "cross")
    if len(a) == 3:
        return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])
    if len(a) == 2:
        return a[0] * b[1] - a[1] * b[0]
    raise DimensionError(f"vectorops.cross: vectors must be 2-D or 3-D, got length {len(a)}")


def interpolate(a, b, u):
    """a + u*(b - a)."""
    return madd(a, sub(b, a), u)
