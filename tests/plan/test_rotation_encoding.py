"""Rotation encodings of KlamptVariable: decode inverts encode, the forms match Klamp't's so3
conventions (checked against scipy's Rotation and closed forms), constraint Jacobians match
finite differences."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from sim_node.plan import rotation_encoding as enc

rotations = st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(
    lambda v: np.linalg.norm(v) > 1e-3).map(lambda v: Rotation.from_quat(v).as_matrix())


@settings(max_examples=100, deadline=None)
@given(R=rotations, encoding=st.sampled_from(enc.ENCODINGS))
def test_decode_inverts_encode(R, encoding):
    p = enc.encode(encoding, R)
    assert p.size == enc.SIZES[encoding][0]
    # rpy within 1e-8 of the lock determines roll and yaw from entries of size 1e-8: R comes
    # back to ~1e-9 there (the angles' conditioning, not the formula)
    np.testing.assert_allclose(enc.decode_matrix(encoding, p), R, atol=1e-8)
    np.testing.assert_allclose(enc.constraint(encoding, p), 0, atol=1e-12)


@pytest.mark.parametrize("pitch", [math.pi / 2, -math.pi / 2, math.pi / 2 - 1e-8,
                                   -math.pi / 2 + 1e-9])
def test_rpy_is_exact_at_and_near_the_gimbal_lock(pitch):
    R = Rotation.from_euler("xyz", [0.4, pitch, -1.1]).as_matrix()
    np.testing.assert_allclose(enc.decode_matrix("rpy", enc.encode("rpy", R)), R, atol=1e-14)


def test_klampt_conventions():
    Rz = np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])          # +90 deg about z
    assert enc.decode("rotation_vector", [0, 0, math.pi / 2]) == pytest.approx(
        [0, 1, 0, -1, 0, 0, 0, 0, 1], abs=1e-12)                # column-major 9-list
    w, x, y, z = enc.encode("quaternion", Rz)
    assert (w, x, y, z) == pytest.approx((math.sqrt(0.5), 0, 0, math.sqrt(0.5)))
    roll, pitch, yaw = 0.1, -0.2, 0.3                           # R = Rz(yaw) Ry(pitch) Rx(roll)
    c, s = math.cos, math.sin
    Rx = np.array([[1, 0, 0], [0, c(roll), -s(roll)], [0, s(roll), c(roll)]])
    Ry = np.array([[c(pitch), 0, s(pitch)], [0, 1, 0], [-s(pitch), 0, c(pitch)]])
    Rz = np.array([[c(yaw), -s(yaw), 0], [s(yaw), c(yaw), 0], [0, 0, 1]])
    np.testing.assert_allclose(enc.decode_matrix("rpy", [roll, pitch, yaw]), Rz @ Ry @ Rx,
                               atol=1e-14)
    np.testing.assert_allclose(enc.encode(None, Rz @ Ry @ Rx),
                               (Rz @ Ry @ Rx).T.reshape(9), atol=1e-14)


@pytest.mark.parametrize("encoding", ["quaternion", None])
def test_constraint_jacobian_matches_finite_differences(encoding):
    p = np.random.default_rng(1).normal(size=enc.SIZES[encoding][0])
    J = enc.constraint_jacobian(encoding, p)
    h = 1e-6
    J_fd = np.array([(enc.constraint(encoding, p + h * e) - enc.constraint(encoding, p - h * e))
                     / (2 * h) for e in np.eye(p.size)]).T
    np.testing.assert_allclose(J, J_fd, atol=1e-8)


def test_invalid_input_is_refused():
    with pytest.raises(ValueError, match="not a rotation encoding"):
        enc.check_encoding("euler")
    with pytest.raises(ValueError, match="not a rotation"):
        enc.encode("rpy", np.diag([1.0, 1.0, -1.0]))            # a reflection
    with pytest.raises(ValueError, match="NaN"):
        enc.encode("rpy", np.full((3, 3), np.nan))
    with pytest.raises(ValueError, match="quaternion parameters are zero"):
        enc.decode("quaternion", [0, 0, 0, 0])
