"""Spaces with geodesic interpolation, distances and tangents (``klampt.math.geodesic``).

A space's points are flat lists of ``extrinsicDimension()`` numbers. ``difference(a, b)`` is
the tangent at b pointing to a (a - b in Cartesian spaces) and ``integrate(x, d)`` undoes it:
``integrate(b, difference(a, b)) == a``. SO3Space points are so3 9-lists and its tangents the
cross-product matrix [w] (9-list) of the angular velocity w in world axes (a = exp([w]) b);
SE3Space points are R (9) + t (3) and its tangents [w] (9) + the linear velocity (3).

Klamp't 0.10.1 documents these tangents but computes SO3Space.difference as [R_b w] (and
SO3Space.integrate to match, SE3Space.difference likewise), so its SO3Trajectory.deriv_angvel
is R(t) w rather than w; here the tangent is w, as documented.
"""
from __future__ import annotations

import math

from sim_node.math import se3, so2, so3, vectorops


class GeodesicSpace:
    """A Cartesian space by default; subclasses override the geometry."""

    def intrinsicDimension(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} does not define its dimension")

    def extrinsicDimension(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} does not define its dimension")

    def distance(self, a, b) -> float:
        return vectorops.distance(a, b)

    def interpolate(self, a, b, u) -> list:
        return vectorops.interpolate(a, b, u)

    def difference(self, a, b) -> list:
        return vectorops.sub(a, b)

    def integrate(self, x, d) -> list:
        return vectorops.add(x, d)


class CartesianSpace(GeodesicSpace):
    """R^d."""

    def __init__(self, d: int):
        self.d = d

    def intrinsicDimension(self) -> int:
        return self.d

    def extrinsicDimension(self) -> int:
        return self.d


class MultiGeodesicSpace(GeodesicSpace):
    """The Cartesian product of spaces; the distance is the weighted L2 norm of the components'
    distances (``componentWeights``, 1 each)."""

    def __init__(self, *components):
        self.components = components
        self.componentWeights = [1] * len(components)

    def intrinsicDimension(self) -> int:
        return sum(c.intrinsicDimension() for c in self.components)

    def extrinsicDimension(self) -> int:
        return sum(c.extrinsicDimension() for c in self.components)

    def _slices(self):
        i = 0
        for c in self.components:
            d = c.extrinsicDimension()
            yield c, slice(i, i + d)
            i += d

    def split(self, x) -> list:
        return [list(x[s]) for _, s in self._slices()]

    def join(self, xs) -> list:
        return sum((list(x) for x in xs), [])

    def distance(self, a, b) -> float:
        return math.sqrt(sum(w * c.distance(a[s], b[s]) ** 2
                             for (c, s), w in zip(self._slices(), self.componentWeights)))

    def interpolate(self, a, b, u) -> list:
        return sum((list(c.interpolate(a[s], b[s], u)) for c, s in self._slices()), [])

    def difference(self, a, b) -> list:
        return sum((list(c.difference(a[s], b[s])) for c, s in self._slices()), [])

    def integrate(self, x, d) -> list:
        return sum((list(c.integrate(x[s], d[s])) for c, s in self._slices()), [])


class SO2Space(GeodesicSpace):
    """Planar rotations: points are [angle]."""

    def intrinsicDimension(self) -> int:
        return 1

    def extrinsicDimension(self) -> int:
        return 1

    def distance(self, a, b) -> float:
        return abs(so2.diff(a[0], b[0]))

    def interpolate(self, a, b, u) -> list:
        return [so2.interp(a[0], b[0], u)]

    def difference(self, a, b) -> list:
        return [so2.diff(a[0], b[0])]

    def integrate(self, x, d) -> list:
        return [so2.normalize(x[0] + d[0])]


class SO3Space(GeodesicSpace):
    """3D rotations (so3 9-lists); tangents are [w] of the world-axes angular velocity."""

    def intrinsicDimension(self) -> int:
        return 3

    def extrinsicDimension(self) -> int:
        return 9

    def distance(self, a, b) -> float:
        return vectorops.norm(so3.error(a, b))

    def interpolate(self, a, b, u) -> list:
        return so3.interpolate(a, b, u)

    def difference(self, a, b) -> list:
        return so3.cross_product(so3.error(a, b))

    def integrate(self, x, d) -> list:
        return so3.mul(so3.from_moment(so3.deskew(d)), x)


class SE3Space(GeodesicSpace):
    """Rigid transforms as R (9) + t (3); tangents [w] (9) + linear velocity (3)."""

    def intrinsicDimension(self) -> int:
        return 6

    def extrinsicDimension(self) -> int:
        return 12

    def to_se3(self, x) -> tuple:
        return list(x[:9]), list(x[9:])

    def from_se3(self, T) -> list:
        return list(T[0]) + list(T[1])

    def distance(self, a, b) -> float:
        return vectorops.norm(se3.error(self.to_se3(a), self.to_se3(b)))

    def interpolate(self, a, b, u) -> list:
        R, t = se3.interpolate(self.to_se3(a), self.to_se3(b), u)
        return R + t

    def difference(self, a, b) -> list:
        w = se3.error(self.to_se3(a), self.to_se3(b))
        return so3.cross_product(w[:3]) + w[3:]

    def integrate(self, x, d) -> list:
        if len(x) != 12 or len(d) != 12:
            raise ValueError(f"SE3Space.integrate: x and d must be 12 numbers, got {len(x)} "
                             f"and {len(d)}")
        Rx, tx = self.to_se3(x)
        return so3.mul(so3.from_moment(so3.deskew(d[:9])), Rx) + vectorops.add(tx, d[9:])
