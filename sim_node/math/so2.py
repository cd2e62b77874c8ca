"""2D rotations as angles [rad] (``klampt.math.so2``)."""
from __future__ import annotations

import math

twopi = math.pi * 2


def identity() -> float:
    """The identity rotation (0)."""
    return 0


def inv(a: float) -> float:
    """The inverse rotation."""
    return -a


def apply(a: float, pt) -> list:
    """The point pt (2) rotated by a about the origin."""
    if len(pt) != 2:
        raise ValueError(f"so2.apply: pt must be 2 numbers, got {len(pt)}")
    c, s = math.cos(a), math.sin(a)
    return [c * pt[0] - s * pt[1], s * pt[0] + c * pt[1]]


def normalize(a: float) -> float:
    """a wrapped into [0, 2 pi)."""
    return a % twopi


def diff(a: float, b: float) -> float:
    """The counter-clockwise rotation from b to a, in [-pi, pi]."""
    d = normalize(a) - normalize(b)
    if d < -math.pi:
        return d + twopi
    if d > math.pi:
        return d - twopi
    return d


def interp(a: float, b: float, u: float) -> float:
    """The shorter arc from a (u = 0) to b (u = 1); not wrapped."""
    return a + diff(b, a) * u


def compose(a: float, b: float) -> float:
    """The rotation by a then b."""
    return a + b


def matrix(a: float) -> list:
    """The 2x2 rotation matrix (nested lists)."""
    c, s = math.cos(a), math.sin(a)
    return [[c, -s], [s, c]]


def from_matrix(R) -> float:
    """The angle of a 2x2 rotation matrix."""
    return math.atan2(R[1][0], R[0][0])


def ndarray(a: float):
    """The 2x2 numpy rotation matrix."""
    import numpy as np
    return np.array(matrix(a))


def from_ndarray(R) -> float:
    """The angle of a 2x2 numpy rotation matrix."""
    return from_matrix(R)
