"""Parameterisations of a rotation for optimisation (Klamp't's KlamptVariable encodings).

A rotation variable is optimised through a parameter vector p; ``decode(p)`` gives the rotation
as Klamp't's so3 element (a column-major 9-list), ``encode(R)`` the parameters of a rotation R
(a (3, 3) matrix or a column-major 9-list), ``constraint(p)`` the equalities p must satisfy
(empty for the minimal encodings):

| encoding          | parameters                              | constraints              |
|-------------------|-----------------------------------------|--------------------------|
| 'rotation_vector' | w (3): axis * angle [rad], R = exp([w]) | none                     |
| 'quaternion'      | (w, x, y, z) (4), Klamp't's order       | |p|^2 - 1 = 0 (1)        |
| 'rpy'             | (roll, pitch, yaw) [rad], R = Rz Ry Rx  | none                     |
| None              | the 9 entries of R, column-major        | R^T R - I = 0 (6: upper) |

Klamp't's so3.quaternion order (w first) is kept here because KlamptVariable parameters are
Klamp't's; DESIGN.md's (x, y, z, w) order belongs to the simulator's own API.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.spatial.transform import Rotation

from sim_node.math.rotation_input import as_klampt, as_matrix

ENCODINGS = ("rotation_vector", "quaternion", "rpy", None)
# number of parameters and of equality constraints per encoding
SIZES = {"rotation_vector": (3, 0), "quaternion": (4, 1), "rpy": (3, 0), None: (9, 6)}
_UPPER = np.triu_indices(3)


def check_encoding(encoding, what: str = "encoding"):
    """The canonical encoding name ('auto' means 'rotation_vector'); ValueError otherwise."""
    if encoding == "auto":
        return "rotation_vector"
    if encoding not in ENCODINGS:
        raise ValueError(f"{what}: {encoding!r} is not a rotation encoding; valid: 'auto', "
                         "'rotation_vector', 'quaternion', 'rpy', None (full matrix)")
    return encoding


def rotation_matrix(R, what: str = "rotation") -> np.ndarray:
    """R (3x3 or Klamp't 9-list) as a checked (3, 3) rotation: finite, orthonormal to 1e-6,
    determinant +1; ValueError naming ``what`` otherwise."""
    M = as_matrix(R, what)
    if not np.all(np.isfinite(M)):
        raise ValueError(f"{what}: contains NaN or infinity")
    if np.abs(M.T @ M - np.eye(3)).max() > 1e-6 or np.linalg.det(M) < 0:
        raise ValueError(f"{what}: not a rotation (R^T R must be I to 1e-6 and det R = +1)")
    return M


def encode(encoding, R) -> np.ndarray:
    """Parameters (see the module table) of the rotation R (3x3 or Klamp't 9-list)."""
    M = rotation_matrix(R)
    if encoding == "rotation_vector":
        return Rotation.from_matrix(M).as_rotvec()
    if encoding == "quaternion":
        x, y, z, w = Rotation.from_matrix(M).as_quat()
        return np.array([w, x, y, z])
    if encoding == "rpy":
        return _rpy(M)
    return np.array(as_klampt(M))


def _rpy(M) -> np.ndarray:
    """(roll, pitch, yaw) with M = Rz(yaw) Ry(pitch) Rx(roll), pitch in [-pi/2, pi/2]. All
    by atan2, so exact near the gimbal lock too (scipy's as_euler loses 1e-8 there); at the
    lock itself (cos pitch = 0) yaw is 0 and roll carries the rotation about the axis."""
    cos_pitch = math.hypot(M[0, 0], M[1, 0])
    pitch = math.atan2(-M[2, 0], cos_pitch)
    if cos_pitch > 1e-12:
        return np.array([math.atan2(M[2, 1], M[2, 2]), pitch, math.atan2(M[1, 0], M[0, 0])])
    # M = Ry(pitch) Rx(roll): M[1, 1] = cos roll, M[1, 2] = -sin roll
    return np.array([math.atan2(-M[1, 2], M[1, 1]), pitch, 0.0])


def decode_matrix(encoding, p) -> np.ndarray:
    """The (3, 3) matrix the parameters p denote. A quaternion is normalised first and the
    full-matrix encoding is returned as is (its constraints make it a rotation at a solution)."""
    p = np.asarray(p, dtype=float)
    if encoding == "rotation_vector":
        return Rotation.from_rotvec(p).as_matrix()
    if encoding == "quaternion":
        norm = np.linalg.norm(p)
        if not norm > 1e-12:
            raise ValueError("quaternion parameters are zero: no rotation")
        w, x, y, z = p / norm
        return Rotation.from_quat([x, y, z, w]).as_matrix()
    if encoding == "rpy":
        return Rotation.from_euler("xyz", p).as_matrix()
    return p.reshape(3, 3).T.copy()


def decode(encoding, p) -> list:
    """Klamp't's so3 element (column-major 9-list) of the parameters p."""
    return as_klampt(decode_matrix(encoding, p))


def constraint(encoding, p) -> np.ndarray:
    """Equality residual of the parameters (0 at a valid encoding; see the module table)."""
    p = np.asarray(p, dtype=float)
    if encoding == "quaternion":
        return np.array([p @ p - 1.0])
    if encoding is None:
        M = p.reshape(3, 3).T
        return (M.T @ M - np.eye(3))[_UPPER]
    return np.zeros(0)


def constraint_jacobian(encoding, p) -> np.ndarray:
    """d constraint / d p, shape (number of constraints, number of parameters)."""
    p = np.asarray(p, dtype=float)
    if encoding == "quaternion":
        return 2.0 * p[None, :]
    if encoding is None:
        # p holds the columns c_0, c_1, c_2 of M; (M^T M)_ij = c_i . c_j
        columns = p.reshape(3, 3)
        J = np.zeros((6, 9))
        for row, (i, j) in enumerate(zip(*_UPPER)):
            J[row, 3 * i:3 * i + 3] += columns[j]
            J[row, 3 * j:3 * j + 3] += columns[i]
        return J
    return np.zeros((0, p.size))
