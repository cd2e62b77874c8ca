"""Rigid transforms as Klamp't se3 elements (``klampt.math.se3``).

An se3 element is a pair ``T = (R, t)``: R an so3 element (column-major 9-list; a (3, 3)
matrix is accepted too) and t a 3-list, mapping a point p to R p + t. Results are (R, t) tuples
of lists, as Klamp't's; ``apply_rotation`` gives a tuple (so3.apply's form).
"""
from __future__ import annotations

from sim_node.math import so3, vectorops


def _T(T, where: str, arg: str = "T"):
    """(R as a 9-list, t) of a transform; ValueError naming `where` on another shape."""
    try:
        n = len(T)
    except TypeError:
        raise ValueError(f"{where}: {arg} must be a transform (R, t), got "
                         f"{type(T).__name__}") from None
    if n != 2:
        raise ValueError(f"{where}: {arg} must be a transform (R, t), got {n} items"
                         + (" (did you mean apply()?)" if n == 3 else ""))
    R, t = T
    R = so3._rot(R, where, f"{arg}'s rotation")
    so3._vec3(t, where, f"{arg}'s translation")
    return R, t


def identity() -> tuple:
    """The identity transform."""
    return ([1., 0., 0., 0., 1., 0., 0., 0., 1.], [0., 0., 0.])


def inv(T) -> tuple:
    """The inverse (R^T, -R^T t)."""
    R, t = _T(T, "se3.inv")
    Rinv = so3.inv(R)
    return Rinv, [-x for x in so3.apply(Rinv, t)]


def apply(T, point) -> list:
    """R point + t."""
    R, t = _T(T, "se3.apply")
    return vectorops.add(so3.apply(R, point), t)


def apply_rotation(T, point) -> tuple:
    """R point (the rotation only: for directions)."""
    R, _ = _T(T, "se3.apply_rotation")
    return so3.apply(R, point)


def rotation(T) -> list:
    """T's rotation as a 3x3 matrix (nested lists)."""
    return so3.matrix(_T(T, "se3.rotation")[0])


def from_rotation(mat) -> tuple:
    """The pure rotation of a 3x3 matrix (nested lists or array)."""
    return so3.from_matrix(mat), [0., 0., 0.]


def translation(T) -> list:
    """T's translation."""
    return list(_T(T, "se3.translation")[1])


def from_translation(t) -> tuple:
    """The pure translation by t."""
    so3._vec3(t, "se3.from_translation", "t")
    return so3.identity(), list(t)


def homogeneous(T) -> list:
    """The 4x4 homogeneous matrix (nested lists)."""
    R, t = _T(T, "se3.homogeneous")
    return [[R[0], R[3], R[6], t[0]],
            [R[1], R[4], R[7], t[1]],
            [R[2], R[5], R[8], t[2]],
            [0., 0., 0., 1.]]


def from_homogeneous(mat) -> tuple:
    """(R, t) of a 4x4 (or 3x4) homogeneous matrix."""
    if len(mat) < 3 or any(len(mat[i]) != 4 for i in range(3)):
        raise ValueError("se3.from_homogeneous: mat must be a 4x4 homogeneous matrix")
    return ([mat[0][0], mat[1][0], mat[2][0], mat[0][1], mat[1][1], mat[2][1],
             mat[0][2], mat[1][2], mat[2][2]], [mat[0][3], mat[1][3], mat[2][3]])


def ndarray(T):
    """The 4x4 homogeneous numpy matrix."""
    import numpy as np
    return np.array(homogeneous(T))


def from_ndarray(mat) -> tuple:
    """(R, t) of a 4x4 homogeneous numpy matrix."""
    import numpy as np
    mat = np.asarray(mat, dtype=float)
    if mat.shape != (4, 4):
        raise ValueError(f"se3.from_ndarray: mat must be 4x4, got shape {mat.shape}")
    return from_homogeneous(mat.tolist())


def mul(T1, T2) -> tuple:
    """The composition T1 T2 (apply T2, then T1)."""
    R1, t1 = _T(T1, "se3.mul", "T1")
    R2, t2 = _T(T2, "se3.mul", "T2")
    return so3.mul(R1, R2), vectorops.add(so3.apply(R1, t2), t1)


def distance(T1, T2, Rweight=1.0, tweight=1.0) -> float:
    """Rweight * (rotation angle between them) + tweight * |t1 - t2|."""
    R1, t1 = _T(T1, "se3.distance", "T1")
    R2, t2 = _T(T2, "se3.distance", "T2")
    return Rweight * so3.distance(R1, R2) + tweight * vectorops.distance(t1, t2)


def error(T1, T2) -> list:
    """The 6-vector [so3.error(R1, R2), t1 - t2]."""
    R1, t1 = _T(T1, "se3.error", "T1")
    R2, t2 = _T(T2, "se3.error", "T2")
    return so3.error(R1, R2) + vectorops.sub(t1, t2)


def interpolate(T1, T2, u) -> tuple:
    """Rotation along the so3 geodesic, translation linear (u = 0: T1, u = 1: T2)."""
    R1, t1 = _T(T1, "se3.interpolate", "T1")
    R2, t2 = _T(T2, "se3.interpolate", "T2")
    return so3.interpolate(R1, R2, u), vectorops.interpolate(t1, t2, u)


def interpolator(T1, T2):
    """f(u) = interpolate(T1, T2, u), with the rotation's logarithm computed once."""
    R1, t1 = _T(T1, "se3.interpolator", "T1")
    R2, t2 = _T(T2, "se3.interpolator", "T2")
    rotation_at = so3.interpolator(R1, R2)
    dt = vectorops.sub(t2, t1)

    def f(u):
        return rotation_at(u), vectorops.madd(t1, dt, u)
    return f
