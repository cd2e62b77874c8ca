"""Cubic Hermite and Bezier curves on vectors (``klampt.math.spline``).

A Hermite segment runs from x1 (u = 0) with tangent v1 to x2 (u = 1) with tangent v2
(tangents per unit u); its Bezier control points are x1, x1 + v1/3, x2 - v2/3, x2.
"""
from __future__ import annotations

from sim_node.math import vectorops


def _check(x1, v1, x2, v2, where):
    n = len(x1)
    if not len(v1) == len(x2) == len(v2) == n:
        raise ValueError(f"spline.{where}: x1, v1, x2, v2 must have one length, got "
                         f"{len(x1)}, {len(v1)}, {len(x2)}, {len(v2)}")


def hermite_eval(x1, v1, x2, v2, u) -> list:
    """The point at u in [0, 1]."""
    _check(x1, v1, x2, v2, "hermite_eval")
    u2, u3 = u * u, u * u * u
    cx1 = 2.0 * u3 - 3.0 * u2 + 1.0
    cx2 = -2.0 * u3 + 3.0 * u2
    cv1 = u3 - 2.0 * u2 + u
    cv2 = u3 - u2
    return [cx1 * a + cx2 * b + cv1 * c + cv2 * d for a, c, b, d in zip(x1, v1, x2, v2)]


def hermite_deriv(x1, v1, x2, v2, u, order=1) -> list:
    """The `order`-th derivative with respect to u (order 0: the point; above 3: zero)."""
    _check(x1, v1, x2, v2, "hermite_deriv")
    if order == 0:
        return hermite_eval(x1, v1, x2, v2, u)
    if order == 1:
        u2 = u * u
        k = (6.0 * u2 - 6.0 * u, -6.0 * u2 + 6.0 * u, 3.0 * u2 - 4.0 * u + 1.0, 3.0 * u2 - 2.0 * u)
    elif order == 2:
        k = (12 * u - 6.0, -12.0 * u + 6.0, 6.0 * u - 4.0, 6.0 * u - 2.0)
    elif order == 3:
        k = (12, -12.0, 6.0, 6.0)
    else:
        return [0] * len(x1)
    return [k[0] * a + k[1] * b + k[2] * c + k[3] * d for a, c, b, d in zip(x1, v1, x2, v2)]


def hermite_subdivide(x1, v1, x2, v2, u=0.5) -> list:
    """The two Hermite segments [0, u] and [u, 1], each reparametrised to [0, 1]."""
    xm = hermite_eval(x1, v1, x2, v2, u)
    vm = hermite_deriv(x1, v1, x2, v2, u)
    return [(x1, vectorops.mul(v1, u), xm, vectorops.mul(vm, u)),
            (xm, vectorops.mul(vm, 1.0 - u), x2, vectorops.mul(v2, 1.0 - u))]


def hermite_length_bound(x1, v1, x2, v2) -> float:
    """An upper bound on the arc length (its control polygon's)."""
    return bezier_length_bound(*hermite_to_bezier(x1, v1, x2, v2))


def hermite_to_bezier(x1, v1, x2, v2) -> tuple:
    """The Bezier control points (x1, x1 + v1/3, x2 - v2/3, x2)."""
    return x1, vectorops.madd(x1, v1, 1.0 / 3.0), vectorops.madd(x2, v2, -1.0 / 3.0), x2


def bezier_subdivide(x1, x2, x3, x4, u=0.5) -> list:
    """The two Bezier curves [0, u] and [u, 1] (de Casteljau)."""
    p1, p2, p3 = (vectorops.interpolate(a, b, u) for a, b in ((x1, x2), (x2, x3), (x3, x4)))
    q1, q2 = vectorops.interpolate(p1, p2, u), vectorops.interpolate(p2, p3, u)
    r1 = vectorops.interpolate(q1, q2, u)
    return [(x1, p1, q1, r1), (r1, q2, p3, x4)]


def bezier_length_bound(x1, x2, x3, x4) -> float:
    """The length of the control polygon (an upper bound on the arc length)."""
    return vectorops.distance(x1, x2) + vectorops.distance(x2, x3) + vectorops.distance(x3, x4)


def bezier_discretize(x1, x2, x3, x4, res, return_params=False):
    """Control points of pieces whose control polygons are at most `res` long, subdividing at
    halves: [x1, c1, c2, p1, c3, c4, p2, ...]; with return_params, also the parameter of each
    piece's end point ([0, ..., 1])."""
    if not res > 0:
        raise ValueError(f"spline.bezier_discretize: res must be positive, got {res}")
    stack = [((x1, x2, x3, x4), 0.0, 1.0)]
    path, params = [x1], [0.0]
    while stack:
        curve, a, b = stack.pop()
        if bezier_length_bound(*curve) > res:
            first, second = bezier_subdivide(*curve)
            m = (a + b) * 0.5
            stack.append((second, m, b))
            stack.append((first, a, m))
        else:
            path += curve[1:]
            params.append(b)
    return (path, params) if return_params else path


def bezier_to_hermite(x1, x2, x3, x4) -> tuple:
    """The Hermite form (x1, 3 (x2 - x1), x4, 3 (x4 - x3))."""
    return x1, vectorops.mul(vectorops.sub(x2, x1), 3.0), x4, vectorops.mul(vectorops.sub(x4, x3), 3.0)
