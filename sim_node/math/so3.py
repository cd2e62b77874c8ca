"""3D rotations as Klamp't so3 elements (``klampt.math.so3``).

An so3 element is the rotation matrix as a flat 9-list in *column-major* order: the matrix

    [[a11, a12, a13],
     [a21, a22, a23],
     [a31, a32, a33]]

is ``[a11, a21, a31, a12, a22, a32, a13, a23, a33]``, i.e. ``R[i + 3*j] = M[i][j]``. Every
function accepting a rotation also accepts the (3, 3) matrix itself (a numpy array or nested
lists); results are always 9-lists (or what Klamp't returns: ``apply`` and ``rpy`` give tuples).
Quaternions here are (w, x, y, z), Klamp't's order (the rest of sim_node uses x, y, z, w).

Angles are radians. Conventions that make a representation unique follow Klamp't's:
``rpy`` gives (roll, pitch, yaw) with yaw and roll in [0, 2 pi) and pitch in [-pi/2, pi/2];
``quaternion`` gives w >= 0 except near a half turn (trace < -1 + 1e-5), where the largest of
x, y, z is positive; ``rotation_vector`` of a half turn (|sin| below rounding) makes its
largest component positive. Unlike Klamp't, ``angle`` (and so ``rotation_vector``) uses atan2 of sine
and cosine: exact to rounding near 0 and pi, where Klamp't's acos loses up to 2e-8 rad; ``rpy``
returns 0 where Klamp't returns 2 pi (sin exactly 0).
"""
from __future__ import annotations

import math
import random

from sim_node.math import vectorops

_TWO_PI = 2.0 * math.pi


def _rot(R, where: str, arg: str = "R") -> list:
    """R as a 9-list (column-major); ValueError naming `where` on any other shape."""
    shape = getattr(R, "shape", None)
    if shape is not None:           # numpy array
        if shape == (9,):
            return R.tolist()
        if shape == (3, 3):
            return R.T.reshape(9).tolist()
        raise ValueError(f"{where}: {arg} must be a rotation, Klamp't's column-major 9-list or "
                         f"a 3x3 matrix, got an array of shape {shape}")
    try:
        n = len(R)
    except TypeError:
        raise ValueError(f"{where}: {arg} must be a rotation, Klamp't's column-major 9-list or "
                         f"a 3x3 matrix, got {type(R).__name__}") from None
    if n == 9:
        return R if isinstance(R, list) else list(R)
    if n == 3 and all(hasattr(row, "__len__") and len(row) == 3 for row in R):
        return [R[0][0], R[1][0], R[2][0], R[0][1], R[1][1], R[2][1], R[0][2], R[1][2], R[2][2]]
    raise ValueError(f"{where}: {arg} must be a rotation, Klamp't's column-major 9-list or a "
                     f"3x3 matrix, got a sequence of length {n}")


def _vec3(v, where: str, arg: str):
    try:
        n = len(v)
    except TypeError:
        raise ValueError(f"{where}: {arg} must be 3 numbers, got {type(v).__name__}") from None
    if n != 3:
        raise ValueError(f"{where}: {arg} must be 3 numbers, got {n}")
    return v


def __str__(R) -> str:
    """The matrix, one row per line."""
    return "\n".join(" ".join(str(x) for x in row) for row in matrix(R))


def identity() -> list:
    """The identity rotation."""
    return [1., 0., 0., 0., 1., 0., 0., 0., 1.]


def inv(R) -> list:
    """The inverse (transpose)."""
    R = _rot(R, "so3.inv")
    return [R[0], R[3], R[6], R[1], R[4], R[7], R[2], R[5], R[8]]


def apply(R, point) -> tuple:
    """R point, a 3-tuple."""
    R = _rot(R, "so3.apply")
    x, y, z = _vec3(point, "so3.apply", "point")
    return (R[0] * x + R[3] * y + R[6] * z,
            R[1] * x + R[4] * y + R[7] * z,
            R[2] * x + R[5] * y + R[8] * z)


def matrix(R) -> list:
    """The 3x3 matrix as nested lists (rows)."""
    R = _rot(R, "so3.matrix")
    return [[R[0], R[3], R[6]], [R[1], R[4], R[7]], [R[2], R[5], R[8]]]


def from_matrix(mat) -> list:
    """The so3 element of a 3x3 matrix (nested lists or array)."""
    if len(mat) != 3 or any(len(row) != 3 for row in mat):
        raise ValueError(f"so3.from_matrix: mat must be 3x3, got {len(mat)} rows")
    return [mat[0][0], mat[1][0], mat[2][0], mat[0][1], mat[1][1], mat[2][1],
            mat[0][2], mat[1][2], mat[2][2]]


def ndarray(R):
    """The 3x3 numpy matrix."""
    import numpy as np
    return np.array(matrix(R))


def from_ndarray(mat) -> list:
    """The so3 element of a 3x3 numpy matrix."""
    import numpy as np
    mat = np.asarray(mat, dtype=float)
    if mat.shape != (3, 3):
        raise ValueError(f"so3.from_ndarray: mat must be 3x3, got shape {mat.shape}")
    return mat.T.reshape(9).tolist()


def mul(R1, R2) -> list:
    """The product R1 R2."""
    a = _rot(R1, "so3.mul", "R1")
    b = _rot(R2, "so3.mul", "R2 (did you mean apply()?)")
    # column j of the product = R1 applied to column j of R2
    out = [0.0] * 9
    for j in range(0, 9, 3):
        x, y, z = b[j], b[j + 1], b[j + 2]
        out[j] = a[0] * x + a[3] * y + a[6] * z
        out[j + 1] = a[1] * x + a[4] * y + a[7] * z
        out[j + 2] = a[2] * x + a[5] * y + a[8] * z
    return out


def trace(R) -> float:
    """The trace."""
    R = _rot(R, "so3.trace")
    return R[0] + R[4] + R[8]


def angle(R) -> float:
    """The rotation angle in [0, pi] (the distance from the identity)."""
    R = _rot(R, "so3.angle")
    # atan2 of sin and cos: accurate at all angles, where acos((tr - 1) / 2) loses half the
    # digits near 0 and pi
    s = math.sqrt(sum(x * x for x in deskew(R)))
    c = (R[0] + R[4] + R[8] - 1.0) * 0.5
    return math.atan2(s, c)


def _angle_in_0_2pi(y, x) -> float:
    a = math.atan2(y, x)
    if a < 0:
        a += _TWO_PI
        if a >= _TWO_PI:        # a tiny negative angle: 2 pi after rounding
            a = 0.0
    return a


def rpy(R) -> tuple:
    """(roll, pitch, yaw) with R = Rz(yaw) Ry(pitch) Rx(roll); roll, yaw in [0, 2 pi),
    pitch in [-pi/2, pi/2]. At pitch +-pi/2 (|cos pitch| <= 1e-7) roll is 0."""
    R = _rot(R, "so3.rpy")
    m20 = min(1.0, max(R[2], -1.0))
    pitch = -math.asin(m20)
    if abs(math.cos(pitch)) > 1e-7:
        yaw = _angle_in_0_2pi(R[1], R[0])        # m10 = sin(yaw) cp, m00 = cos(yaw) cp
        roll = _angle_in_0_2pi(R[5], R[8])       # m21 = cp sin(roll), m22 = cp cos(roll)
        return roll, pitch, yaw
    # gimbal lock: only yaw -+ roll is defined; roll = 0 gives m01 = -sin(yaw), m11 = cos(yaw)
    yaw = math.atan2(-R[3], R[4])
    if yaw < -0.5 * math.pi:
        yaw += _TWO_PI
    return 0.0, pitch, yaw


def from_rpy(rollpitchyaw) -> list:
    """Rz(yaw) Ry(pitch) Rx(roll) from (roll, pitch, yaw) [rad]."""
    roll, pitch, yaw = _vec3(rollpitchyaw, "so3.from_rpy", "rollpitchyaw")
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return [cy * cp, sy * cp, -sp,
            cy * sp * sr - sy * cr, sy * sp * sr + cy * cr, cp * sr,
            cy * sp * cr + sy * sr, sy * sp * cr - cy * sr, cp * cr]


def rotation_vector(R) -> list:
    """w with exp([w]) = R: axis * angle, |w| in [0, pi]."""
    R = _rot(R, "so3.rotation_vector")
    theta = angle(R)
    if theta > math.pi - 0.5:
        # near a half turn sin(theta) vanishes: the axis comes from the symmetric part,
        # (R + R^T)/2 = cos(theta) I + (1 - cos(theta)) a a^T, via its largest diagonal entry
        c = math.cos(theta)
        sym = [[(R[i + 3 * j] + R[j + 3 * i]) * 0.5 - (c if i == j else 0.0) for j in range(3)]
               for i in range(3)]
        k = max(range(3), key=lambda i: sym[i][i])
        col = sym[k]
        a = vectorops.unit(col, 0.0)
        # the sign from the skew part sin(theta) a while it stands above rounding; at the half
        # turn itself both signs are right and the largest entry stays positive (Klamp't's rule,
        # which it applies within 1e-5 rad of pi, giving there the inverse rotation's vector)
        d = vectorops.dot(a, deskew(R))
        if d < -1e-14:
            a = [-x for x in a]
        return [theta * x for x in a]
    scale = theta / math.sin(theta) if theta > 1e-5 else 1.0
    return vectorops.mul(deskew(R), scale)


def axis_angle(R) -> tuple:
    """(unit axis, angle); the axis is the zero vector at the identity (Klamp't leaves it
    unnormalised below 1e-5 rad)."""
    m = rotation_vector(R)
    n = vectorops.norm(m)
    return (vectorops.mul(m, 1.0 / n) if n > 0 else [0.0, 0.0, 0.0]), n


def from_axis_angle(aa) -> list:
    """The rotation of an (axis, angle) pair."""
    if len(aa) != 2:
        raise ValueError(f"so3.from_axis_angle: expected (axis, angle), got {len(aa)} items")
    return rotation(aa[0], aa[1])


def from_rotation_vector(w) -> list:
    """exp([w]); the identity for |w| < 1e-7."""
    length = vectorops.norm(_vec3(w, "so3.from_rotation_vector", "w"))
    if length < 1e-7:
        return identity()
    return rotation(vectorops.mul(w, 1.0 / length), length)


moment = rotation_vector
from_moment = from_rotation_vector


def from_quaternion(q) -> list:
    """The rotation of a unit quaternion (w, x, y, z)."""
    if len(q) != 4:
        raise ValueError(f"so3.from_quaternion: q must be 4 numbers (w, x, y, z), got {len(q)}")
    w, x, y, z = q
    xx, yy, zz = 2 * x * x, 2 * y * y, 2 * z * z
    xy, xz, yz = 2 * x * y, 2 * x * z, 2 * y * z
    wx, wy, wz = 2 * w * x, 2 * w * y, 2 * w * z
    return [1.0 - (yy + zz), xy + wz, xz - wy,
            xy - wz, 1.0 - (xx + zz), yz + wx,
            xz + wy, yz - wx, 1.0 - (xx + yy)]


def quaternion(R) -> list:
    """The unit quaternion [w, x, y, z] of R (sign: see the module docstring)."""
    R = _rot(R, "so3.quaternion")
    m = [[R[0], R[3], R[6]], [R[1], R[4], R[7]], [R[2], R[5], R[8]]]
    tr = m[0][0] + m[1][1] + m[2][2] + 1.0
    if tr > 1e-5:
        s = math.sqrt(tr)
        f = 0.5 / s
        q = [0.5 * s, (m[2][1] - m[1][2]) * f, (m[0][2] - m[2][0]) * f, (m[1][0] - m[0][1]) * f]
    else:
        # near a half turn w vanishes: start from the largest of x, y, z (Shepperd's method)
        i = max(range(3), key=lambda k: m[k][k])
        j, k = (i + 1) % 3, (i + 2) % 3
        s = math.sqrt(m[i][i] - m[j][j] - m[k][k] + 1.0)
        if s < 1e-7:
            raise ValueError("so3.quaternion: R is not a rotation matrix")
        f = 0.5 / s
        xyz = [0.0] * 3
        xyz[i] = 0.5 * s
        xyz[j] = (m[i][j] + m[j][i]) * f
        xyz[k] = (m[i][k] + m[k][i]) * f
        q = [(m[k][j] - m[j][k]) * f] + xyz
    return vectorops.unit(q)


def distance(R1, R2) -> float:
    """The angle [rad] of R1 R2^T: how far one must rotate to get from R2 to R1."""
    return angle(mul(R1, inv(R2)))


def error(R1, R2) -> list:
    """The rotation vector of R1 R2^T (R1 = from_moment(w) R2)."""
    return rotation_vector(mul(R1, inv(R2)))


def cross_product(w) -> list:
    """[w], the cross-product matrix of w: [w] p = w x p."""
    _vec3(w, "so3.cross_product", "w")
    return [0., w[2], -w[1], -w[2], 0., w[0], w[1], -w[0], 0.]


def diag(R) -> list:
    """The diagonal [a11, a22, a33]."""
    R = _rot(R, "so3.diag")
    return [R[0], R[4], R[8]]


def deskew(R) -> list:
    """w with [w] = (R - R^T)/2."""
    R = _rot(R, "so3.deskew")
    return [0.5 * (R[5] - R[7]), 0.5 * (R[6] - R[2]), 0.5 * (R[1] - R[3])]


def rotation(axis, angle) -> list:
    """The rotation by `angle` [rad] about the unit `axis` (Rodrigues' formula)."""
    x, y, z = _vec3(axis, "so3.rotation", "axis")
    c, s = math.cos(angle), math.sin(angle)
    v = 1.0 - c
    return [c + x * x * v, y * x * v + s * z, z * x * v - s * y,
            x * y * v - s * z, c + y * y * v, z * y * v + s * x,
            x * z * v + s * y, y * z * v - s * x, c + z * z * v]


def canonical(v) -> list:
    """A rotation whose first column is the unit vector v."""
    _vec3(v, "so3.canonical", "v")
    if abs(vectorops.normSquared(v) - 1.0) > 1e-4:
        raise ValueError(f"so3.canonical: v must be a unit vector, got norm "
                         f"{vectorops.norm(v):g}")
    x, y, z = v
    if x + 1.0 < 1e-5:
        # near -e_x the closed form divides by ~0: take that of Rz(pi) v, then turn back.
        # (Klamp't returns diag(-1, -1, 1) within 1e-5 of -e_x and the identity within 1e-5
        # of e_x, whose first column is then off v by up to 4.5e-3)
        Rp = canonical([-x, -y, z])
        return [-Rp[0], -Rp[1], Rp[2], -Rp[3], -Rp[4], Rp[5], -Rp[6], -Rp[7], Rp[8]]
    # the rotation about e_x x v taking e_x to v (closed form)
    k = 1.0 / (1.0 + x)
    return [x, y, z, -y, x + k * z * z, -k * y * z, -z, -k * y * z, x + k * y * y]


def align(a, b) -> list:
    """The smallest rotation taking the direction of a to that of b; the identity when either
    is shorter than 1e-5."""
    _vec3(a, "so3.align", "a")
    _vec3(b, "so3.align", "b")
    an, bn = vectorops.norm(a), vectorops.norm(b)
    if an < 1e-5 or bn < 1e-5:
        return identity()
    a = vectorops.mul(a, 1.0 / an)
    b = vectorops.mul(b, 1.0 / bn)
    v = vectorops.cross(a, b)
    c = vectorops.dot(a, b)
    if abs(c + 1) < 1e-5:       # opposite: a half turn about an axis normal to a
        v = vectorops.cross(a, [0, 0, 1])
        if vectorops.norm(v) < 1e-5:
            v = vectorops.cross(a, [0, 1, 0])
        return rotation(vectorops.unit(v, 0.0), math.pi)
    # I + [v] + [v]^2 / (1 + c), v = a x b, c = a . b
    vx = cross_product(v)
    return vectorops.madd(vectorops.add(identity(), vx), mul(vx, vx), 1.0 / (1.0 + c))


def interpolate(R1, R2, u) -> list:
    """The geodesic from R1 (u = 0) to R2 (u = 1): R1 exp(u log(R1^T R2))."""
    R1 = _rot(R1, "so3.interpolate", "R1")
    m = rotation_vector(mul(inv(R1), R2))
    theta = vectorops.norm(m)
    if theta == 0:
        return list(R1)
    return mul(R1, rotation(vectorops.div(m, theta), theta * u))


def interpolator(R1, R2):
    """f(u) = interpolate(R1, R2, u), with the logarithm computed once."""
    R1 = list(_rot(R1, "so3.interpolator", "R1"))
    m = rotation_vector(mul(inv(R1), R2))
    theta = vectorops.norm(m)
    axis = vectorops.div(m, theta) if theta != 0 else [1.0, 0.0, 0.0]

    def f(u):
        return mul(R1, rotation(axis, theta * u))
    return f


def det(R) -> float:
    """The determinant."""
    a = _rot(R, "so3.det")
    # columns c0 = a[0:3], c1 = a[3:6], c2 = a[6:9]: det = c0 . (c1 x c2)
    return (a[0] * (a[4] * a[8] - a[5] * a[7]) + a[1] * (a[5] * a[6] - a[3] * a[8])
            + a[2] * (a[3] * a[7] - a[4] * a[6]))


def is_rotation(R, tol=1e-5) -> bool:
    """True if R R^T = I within `tol` (each entry) and det(R) >= 0."""
    R = _rot(R, "so3.is_rotation")
    err = vectorops.sub(mul(R, inv(R)), identity())
    if any(abs(e) > tol for e in err):
        return False
    return det(R) >= 0


def sample() -> list:
    """A rotation drawn uniformly (Haar measure), from Python's `random` generator."""
    q = vectorops.unit([random.gauss(0, 1) for _ in range(4)])
    return from_quaternion(q)
