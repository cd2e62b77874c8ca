"""Contact points (seed 004, Klamp't's ``klampt.model.contact``).

A ``ContactPoint`` is a point contact: a world position, the unit normal and a friction
coefficient. The normal points into the body the contact belongs to — the direction of the
normal force that body receives — as in ``Simulator.getContacts(id1, id2)``, whose rows
[px, py, pz, nx, ny, nz, kFriction] are exactly ``ContactPoint.tolist()``.
"""
from __future__ import annotations

import math

import numpy as np

from sim_node.math.rotation_input import as_rotation

UNIT_TOLERANCE = 1e-6   # |‖n‖ - 1| accepted for a unit normal


def _point(x, what: str) -> np.ndarray:
    a = np.array(x, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ValueError(f"ContactPoint: {what} must be 3 finite numbers, got {x!r}")
    return a


def _normal(n) -> np.ndarray:
    a = _point(n, "the normal n")
    if abs(float(np.linalg.norm(a)) - 1.0) > UNIT_TOLERANCE:
        raise ValueError(f"ContactPoint: the normal n must be a unit vector, got {n!r} "
                         f"(length {np.linalg.norm(a):.6g})")
    return a


def _friction(k) -> float:
    k = float(k)
    if not (math.isfinite(k) and k >= 0.0):
        raise ValueError(f"ContactPoint: kFriction must be a finite number >= 0, got {k}")
    return k


class ContactPoint:
    """A point contact.

    Attributes:
        x: (3,) contact position in world coordinates [m].
        n: (3,) unit contact normal, pointing into the body the contact belongs to.
        kFriction: Coulomb friction coefficient (0: frictionless).
    """

    def __init__(self, x=(0.0, 0.0, 0.0), n=(0.0, 0.0, 1.0), kFriction: float = 0.0):
        self.x = _point(x, "the position x")
        self.n = _normal(n)
        self.kFriction = _friction(kFriction)

    def tolist(self) -> list:
        """[x, y, z, nx, ny, nz, kFriction] as Python floats."""
        return [*map(float, self.x), *map(float, self.n), float(self.kFriction)]

    def fromlist(self, v):
        """Set from the 7 numbers [x, y, z, nx, ny, nz, kFriction] (a getContacts row).
        Invalid input raises ValueError and leaves the contact unchanged."""
        values = np.array(v, dtype=float).reshape(-1)
        if values.shape != (7,):
            raise ValueError(f"ContactPoint.fromlist: expected 7 numbers [x, y, z, nx, ny, nz, "
                             f"kFriction], got {np.shape(v)}")
        x, n, k = _point(values[0:3], "the position x"), _normal(values[3:6]), _friction(values[6])
        self.x, self.n, self.kFriction = x, n, k

    def transform(self, R, t):
        """Move the contact by the rigid transform (R 3x3 or Klamp't's column-major 9-list,
        t (3,) [m]), in place:
        x <- R x + t, n <- R n."""
        R = as_rotation(R, "ContactPoint.transform: R")
        t = _point(t, "the translation t")
        self.x, self.n = R @ self.x + t, R @ self.n

    def __repr__(self):
        return (f"ContactPoint(x={self.x.tolist()!r}, n={self.n.tolist()!r}, "
                f"kFriction={self.kFriction!r})")
