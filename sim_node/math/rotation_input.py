"""Reading a rotation given by a user: numpy 3x3 or Klamp't's column-major 9-list.

One rule for the whole API, so that nothing is guessed: a flat sequence of 9 numbers (list,
tuple or 1-D array) is a Klamp't so3 element, the matrix's *columns* one after another; anything
with shape (3, 3) is the matrix itself. Every other shape is refused.
"""
from __future__ import annotations

import numpy as np


def as_matrix(R, what: str = "R") -> np.ndarray:
    """The (3, 3) float matrix that ``R`` denotes (a copy). ``R``: a 3x3 array or nested
    sequence, or Klamp't's column-major 9-list. Raises ValueError naming ``what`` on any
    other shape or a non-number; finiteness and orthonormality are the caller's to check."""
    try:
        arr = np.array(R, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: a rotation is a 3x3 matrix or Klamp't's column-major "
                         f"9-list of numbers, got {type(R).__name__}") from None
    if arr.shape == (3, 3):
        return arr
    if arr.shape == (9,):
        return arr.reshape(3, 3).T.copy()
    raise ValueError(f"{what}: a rotation is a 3x3 matrix or Klamp't's column-major 9-list, "
                     f"got shape {arr.shape}")


def as_rotation(R, what: str = "R", tol: float = 1e-6) -> np.ndarray:
    """as_matrix, checked to be a rotation: finite, R R^T = I within `tol` (each entry) and
    det(R) > 0. ValueError naming ``what`` and the rule otherwise."""
    M = as_matrix(R, what)
    if not np.all(np.isfinite(M)):
        raise ValueError(f"{what}: the rotation contains NaN or infinity")
    if np.abs(M @ M.T - np.eye(3)).max() > tol or np.linalg.det(M) <= 0:
        raise ValueError(f"{what}: not a rotation matrix (orthonormal with det +1 within "
                         f"{tol:g}); a flat 9-list is read column by column (Klamp't's so3)")
    return M


def as_klampt(M) -> list:
    """Klamp't's column-major 9-list of a (3, 3) matrix."""
    return np.asarray(M, dtype=float).T.reshape(9).tolist()
