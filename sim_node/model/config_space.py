"""Geodesics of a robot's configuration space: interpolation, its derivative and distance.

The configuration space is a product of one space per coordinate group of q (layout in
sim_node.model.robot):
  * bounded scalar coordinates (revolute with limits, prismatic, planar x and y): the line,
    a + u (b - a);
  * unbounded angles (continuous joints, the theta of planar joints): the circle, along the
    shorter arc a + u wrap(b - a) with wrap into [-pi, pi) (results are not wrapped, so u = 0
    gives a exactly and u = 1 gives b up to a multiple of 2 pi);
  * quaternions (floating base, floating and spherical joints; positions of free joints are
    lines): SO(3), R(u) = R_a exp(u log(R_a^T R_b)), the shorter way round (q and -q are one
    rotation).
That is Klamp't's robot geodesic (its Interpolate / InterpolateDerivative / Distance in
Interpolate.cpp: linear, AngleInterp for spin joints, interpolateRotation for floating joints)
on our coordinates. Derivatives are velocities v (nv, the layout of setVelocity): free joints'
linear and angular rates in child (base) axes at the interpolated configuration.
"""
from __future__ import annotations

import math

import numpy as np

_TWO_PI = 2.0 * math.pi


def _wrap(d):
    """Angles into [-pi, pi)."""
    return (d + math.pi) % _TWO_PI - math.pi


class ConfigSpace:
    """The geodesic structure of one robot's q, built once from its RobotStructure."""

    def __init__(self, structure):
        self.nq, self.nv = structure.model.nq, structure.model.nv
        quats = list(structure.quaternions)
        in_quat = {k + i for k in quats for i in range(4)}
        # the v index of each quaternion's angular velocity, and for free joints the position
        # (q start) and linear velocity (v start) that rotate with it
        self.rotations = []         # (q index of the quaternion, v index of its angular rate)
        self.free = []              # (q index of position, v index of linear rate, q of quat)
        if structure.floating:
            self.rotations.append((3, 3))
            self.free.append((0, 0, 3))
        for name in structure.joint_names:
            kind = structure.joint_type[name]
            qi, vi = structure.joint_q_index[name], structure.joint_v_index[name]
            if kind == "spherical":
                self.rotations.append((qi, vi))
            elif kind == "floating":
                self.rotations.append((qi + 3, vi + 3))
                self.free.append((qi, vi, qi + 3))
        if sorted(k for k, _ in self.rotations) != sorted(quats):
            raise AssertionError("quaternion layout of the structure is not understood")
        lower, upper = structure.q_lower, structure.q_upper
        angles = []
        for name in structure.joint_names:
            kind = structure.joint_type[name]
            qi = structure.joint_q_index[name]
            if kind == "continuous" or (kind == "revolute" and not (
                    np.isfinite(lower[qi]) or np.isfinite(upper[qi]))):
                angles.append(qi)
            elif kind == "planar" and not (np.isfinite(lower[qi + 2])
                                           or np.isfinite(upper[qi + 2])):
                angles.append(qi + 2)
        self.angles = np.array(angles, dtype=np.intp)
        # q entries that are plain coordinates (not quaternion entries): their v index
        self.scalar_q = np.array([k for k in range(self.nq) if k not in in_quat], dtype=np.intp)
        in_rot_v = {vi + i for _, vi in self.rotations for i in range(3)}
        self.scalar_v = np.array([k for k in range(self.nv) if k not in in_rot_v],
                                 dtype=np.intp)
        if len(self.scalar_q) != len(self.scalar_v):
            raise AssertionError("q / v layout of the structure is not understood")

    # -- per-rotation geodesic ------------------------------------------------------------
    @staticmethod
    def _log(qa, qb) -> np.ndarray:
        """The rotation vector of R_a^T R_b (xyzw quaternions), the shorter way round."""
        rel = _quat_mul(_quat_conj(qa), qb)
        if rel[3] < 0:
            rel = -rel
        s = np.linalg.norm(rel[:3])
        if s == 0.0:
            return np.zeros(3)
        return rel[:3] * (2.0 * math.atan2(s, rel[3]) / s)

    def interpolate(self, a: np.ndarray, b: np.ndarray, u: float) -> np.ndarray:
        """The configuration u of the way from a to b (unit quaternions in a and b)."""
        out = a + u * (b - a)
        if len(self.angles):
            out[self.angles] = a[self.angles] + u * _wrap(b[self.angles] - a[self.angles])
        for k, _ in self.rotations:
            w = self._log(a[k:k + 4], b[k:k + 4])
            out[k:k + 4] = _quat_mul(a[k:k + 4], _quat_exp(u * w))
        return out

    def interpolate_deriv(self, a: np.ndarray, b: np.ndarray, u: float) -> np.ndarray:
        """d/du of interpolate(a, b, u) as a velocity (nv)."""
        v = np.empty(self.nv)
        d = b - a
        if len(self.angles):
            d[self.angles] = _wrap(d[self.angles])
        v[self.scalar_v] = d[self.scalar_q]
        for k, vi in self.rotations:
            v[vi:vi + 3] = self._log(a[k:k + 4], b[k:k + 4])    # constant in child axes
        for qp, vp, qq in self.free:
            # the position moves linearly in the parent frame; v holds it in child axes
            q_u = _quat_mul(a[qq:qq + 4], _quat_exp(u * v[vp + 3:vp + 6]))
            v[vp:vp + 3] = _quat_rotate(_quat_conj(q_u), d[qp:qp + 3])
        return v

    def distance(self, a: np.ndarray, b: np.ndarray) -> float:
        """The L2 norm of the coordinate differences, with wrapped angle differences and each
        rotation's angle for its quaternion (Klamp't's Distance, norm 2)."""
        d = b - a
        if len(self.angles):
            d[self.angles] = _wrap(d[self.angles])
        total = float(np.dot(d[self.scalar_q], d[self.scalar_q]))
        for k, _ in self.rotations:
            total += float(np.dot(w := self._log(a[k:k + 4], b[k:k + 4]), w))
        return math.sqrt(total)


def _quat_conj(q):
    return np.array([-q[0], -q[1], -q[2], q[3]])


def _quat_mul(p, q):
    """Hamilton product of xyzw quaternions."""
    px, py, pz, pw = p
    qx, qy, qz, qw = q
    return np.array([pw * qx + px * qw + py * qz - pz * qy,
                     pw * qy - px * qz + py * qw + pz * qx,
                     pw * qz + px * qy - py * qx + pz * qw,
                     pw * qw - px * qx - py * qy - pz * qz])


def _quat_exp(w) -> np.ndarray:
    """The xyzw quaternion of the rotation vector w."""
    theta = math.sqrt(float(np.dot(w, w)))
    if theta < 1e-12:
        return np.array([0.5 * w[0], 0.5 * w[1], 0.5 * w[2], 1.0]) / math.sqrt(
            1.0 + 0.25 * theta * theta)
    s = math.sin(0.5 * theta) / theta
    return np.array([s * w[0], s * w[1], s * w[2], math.cos(0.5 * theta)])


def _quat_rotate(q, p) -> np.ndarray:
    """R(q) p."""
    v = np.asarray(q[:3])
    t = 2.0 * np.cross(v, p)
    return p + q[3] * t + np.cross(v, t)
