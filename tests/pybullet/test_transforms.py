"""sim_node.pybullet.transforms against the real PyBullet 3.2.7 on the same inputs.

Tolerances: PyBullet computes getQuaternionFromEuler, getEulerFromQuaternion and
getMatrixFromQuaternion in double (compared to 1e-12); the other helpers go through
Bullet3Common's float32 b3Quaternion / b3Transform and float32 camera code, so PyBullet's own
results carry float32 rounding (~6e-8 relative per operation): compared to 1e-6 (scaled by the
magnitude of positions). Ours are double throughout.
"""
import math

import numpy as np
import pybullet as pb
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import sim_node.pybullet as p

F32 = 1e-6           # PyBullet's float32 helpers
F64 = 1e-12          # PyBullet's double helpers

angles = st.floats(-4 * math.pi, 4 * math.pi, allow_nan=False)
coords = st.floats(-10.0, 10.0, allow_nan=False)
vec3 = st.tuples(coords, coords, coords)
# quaternions of any non-negligible length (PyBullet normalizes in some helpers only: the
# tests below compare ours with PyBullet's on the normalized quaternion where it does not)
quat = st.tuples(*[st.floats(-2.0, 2.0, allow_nan=False)] * 4).filter(
    lambda q: sum(c * c for c in q) > 1e-3)


def unit(q):
    q = np.asarray(q, dtype=float)
    return tuple(q / np.linalg.norm(q))


def close(ours, theirs, tol, scale=1.0):
    np.testing.assert_allclose(np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float),
                               rtol=tol, atol=tol * scale)


def same_rotation(q_ours, q_theirs, tol):
    """Equal as rotations: q and -q are the same rotation."""
    a, b = np.asarray(q_ours), np.asarray(q_theirs)
    assert min(np.abs(a - b).max(), np.abs(a + b).max()) <= tol


def all_python_floats(value):
    if isinstance(value, tuple):
        return all(all_python_floats(v) for v in value)
    return type(value) is float


# -- against PyBullet ----------------------------------------------------------------------------
@settings(max_examples=200)
@given(st.tuples(angles, angles, angles))
def test_quaternion_from_euler_is_pybullets_to_the_bit(rpy):
    ours = p.getQuaternionFromEuler(rpy)
    assert ours == pb.getQuaternionFromEuler(rpy)
    assert all_python_floats(ours)


@settings(max_examples=200)
@given(quat)
def test_euler_from_unit_quaternion_is_pybullets(q):
    q = unit(q)
    close(p.getEulerFromQuaternion(q), pb.getEulerFromQuaternion(q), F64)


@settings(max_examples=200)
@given(st.tuples(angles, angles, angles))
def test_euler_round_trip_reproduces_the_rotation(rpy):
    q = p.getQuaternionFromEuler(rpy)
    back = p.getEulerFromQuaternion(q)
    close(p.getMatrixFromQuaternion(p.getQuaternionFromEuler(back)),
          p.getMatrixFromQuaternion(q), 1e-9 if abs(back[1]) < 1.5 else 1e-2)
    assert -math.pi <= back[0] <= math.pi and -math.pi / 2 <= back[1] <= math.pi / 2
    # yaw: atan2's range, or 2 atan2's in the gimbal-lock band (PyBullet's formula)
    assert abs(back[2]) <= (2 * math.pi if abs(back[1]) > 1.5 else math.pi)


@settings(max_examples=200)
@given(quat)
def test_matrix_from_quaternion_is_pybullets(q):
    # PyBullet's matrix scales by 2 / |q|^2, so it normalizes too: compare on q as given
    close(p.getMatrixFromQuaternion(q), pb.getMatrixFromQuaternion(q), F64)


def test_matrix_is_row_major():
    # 90 degrees about z: x -> y, so the first column is (0, 1, 0)
    m = p.getMatrixFromQuaternion(p.getQuaternionFromEuler([0, 0, math.pi / 2]))
    close(m, [0, -1, 0, 1, 0, 0, 0, 0, 1], 1e-15)


@settings(max_examples=200)
@given(vec3.filter(lambda a: sum(c * c for c in a) > 1e-4), angles)
def test_quaternion_from_axis_angle_is_pybullets(axis, angle):
    close(p.getQuaternionFromAxisAngle(axis, angle), pb.getQuaternionFromAxisAngle(axis, angle),
          F32)


@settings(max_examples=200)
@given(quat)
def test_axis_angle_from_quaternion_is_pybullets(q):
    q = unit(q)
    # away from the float32 switch to the arbitrary x axis (sin^2(angle/2) = 10 FLT_EPSILON)
    assume(abs((1 - q[3] ** 2) - 10 * 1.1920929e-07) > 1e-6)
    axis, angle = p.getAxisAngleFromQuaternion(q)
    axis_pb, angle_pb = pb.getAxisAngleFromQuaternion(q)
    # near w = +-1 PyBullet's float32 w (error ~6e-8) moves its angle by 2 dw / sin(angle / 2)
    # and its axis (1 / sqrt(1 - w^2)) by dw / sin^2(angle / 2): compare to that
    tol = F32 + 2.4e-7 / max(1 - q[3] ** 2, 2.4e-7)
    close(angle, angle_pb, tol)
    close(axis, axis_pb, tol)


@settings(max_examples=200)
@given(vec3.filter(lambda a: sum(c * c for c in a) > 1e-2), st.floats(0.01, 2 * math.pi - 0.01))
def test_axis_angle_round_trip(axis, angle):
    q = p.getQuaternionFromAxisAngle(axis, angle)
    axis2, angle2 = p.getAxisAngleFromQuaternion(q)
    assert angle2 == pytest.approx(angle, abs=1e-9)
    close(axis2, np.asarray(axis) / np.linalg.norm(axis), 1e-9)


@settings(max_examples=200)
@given(quat, quat)
def test_difference_quaternion_is_pybullets(q0, q1):
    q0, q1 = unit(q0), unit(q1)
    # b3Quaternion::nearest picks the sign of the end quaternion by comparing |q0 - q1| with
    # |q0 + q1|: away from the tie, where float32 and double may pick differently
    assume(abs(np.dot(q0, q1)) > 1e-5)
    close(p.getDifferenceQuaternion(q0, q1), pb.getDifferenceQuaternion(q0, q1), F32)


@settings(max_examples=200)
@given(quat, quat)
def test_difference_quaternion_takes_start_to_end(q0, q1):
    dq = p.getDifferenceQuaternion(q0, q1)
    _, composed = p.multiplyTransforms([0, 0, 0], dq, [0, 0, 0], q0)
    same_rotation(composed, unit(q1), 1e-9)
    assert dq[3] >= -1e-12          # the short way round: |angle| <= pi


@settings(max_examples=200)
@given(quat, quat, st.floats(-0.5, 1.5))
def test_slerp_is_pybullets(q0, q1, t):
    q0, q1 = unit(q0), unit(q1)
    # PyBullet returns q0 once |q0 . q1| rounds to 1 in float32, and picks the short way by
    # the sign of q0 . q1: compare away from both (a float32 0 has no sign to follow)
    assume(1e-6 < abs(np.dot(q0, q1)) < 1 - 1e-5)
    close(p.getQuaternionSlerp(q0, q1, t), pb.getQuaternionSlerp(q0, q1, t),
          F32 / math.sqrt(1 - abs(np.dot(q0, q1))))


@settings(max_examples=200)
@given(quat, quat, st.floats(0.0, 1.0))
def test_slerp_moves_at_constant_rate_along_the_short_arc(q0, q1, t):
    q0, q1 = unit(q0), unit(q1)
    assume(abs(np.dot(q0, q1)) < 1 - 1e-6)
    q = p.getQuaternionSlerp(q0, q1, t)
    assert np.linalg.norm(q) == pytest.approx(1.0, abs=1e-9)
    total = 2 * math.acos(min(1.0, abs(np.dot(q0, q1))))
    done = 2 * math.acos(min(1.0, abs(np.dot(q0, q))))
    assert done == pytest.approx(t * total, abs=1e-6)


@settings(max_examples=200)
@given(quat, quat)
def test_axis_difference_is_pybullets(q0, q1):
    q0, q1 = unit(q0), unit(q1)
    ours = p.getAxisDifferenceQuaternion(q0, q1)
    theirs = pb.getAxisDifferenceQuaternion(q0, q1)
    # near |M20| = 1 (pitch +-pi/2) float32 moves asin by sqrt(eps) and can switch branches
    assume(abs(abs(ours[1]) - math.pi / 2) > 1e-2)
    # angles compare modulo 2 pi: atan2 is +-pi on its cut, where float32 and double signs of a
    # zero component differ
    wrapped = (np.subtract(ours, theirs) + math.pi) % (2 * math.pi) - math.pi
    assert np.abs(wrapped).max() <= 1e-5


@settings(max_examples=200)
@given(quat, quat, st.floats(1e-3, 10.0))
def test_velocity_quaternion_is_pybullets_and_integrates_to_the_end(q0, q1, dt):
    q0, q1 = unit(q0), unit(q1)
    assume(abs(np.dot(q0, q1)) > 1e-5)            # away from the tie of nearest()
    omega = p.calculateVelocityQuaternion(q0, q1, dt)
    # PyBullet's float32 angle 2 acos(w) near w = 1 carries dw / sin(angle / 2)
    tol = 1e-5 / dt / max(math.sqrt(max(1 - np.dot(q0, q1) ** 2, 0)), 1e-3)
    close(omega, pb.calculateVelocityQuaternion(q0, q1, dt), tol)
    # rotating q0 by |omega| dt about omega / |omega| (world frame) reaches q1
    speed = np.linalg.norm(omega)
    if speed * dt > 1e-6:
        turn = p.getQuaternionFromAxisAngle(np.asarray(omega) / speed, speed * dt)
        _, reached = p.multiplyTransforms([0, 0, 0], turn, [0, 0, 0], q0)
        same_rotation(reached, q1, 1e-9)


def test_velocity_quaternion_needs_a_positive_time():
    with pytest.raises(p.error, match="deltaTime = 0.0 s must be > 0"):
        p.calculateVelocityQuaternion([0, 0, 0, 1], [0, 0, 0, 1], 0)


@settings(max_examples=200)
@given(vec3, quat, vec3, quat)
def test_multiply_transforms_is_pybullets(pa, qa, pb_, qb):
    # b3Transform normalizes the rotation through its matrix: compare on the inputs as given
    pos, orn = p.multiplyTransforms(pa, qa, pb_, qb)
    pos_pb, orn_pb = pb.multiplyTransforms(pa, qa, pb_, qb)
    close(pos, pos_pb, F32, scale=20.0)
    # Bullet's sign choice (getRotation): compare signs where float32 cannot flip the branch
    same_rotation(orn, orn_pb, 2 * F32)
    m = p.getMatrixFromQuaternion(orn)
    if abs(m[0] + m[4] + m[8]) > 1e-3 and len({round(v, 3) for v in (m[0], m[4], m[8])}) == 3:
        close(orn, orn_pb, 2 * F32)


@settings(max_examples=200)
@given(vec3, quat)
def test_invert_transform_is_pybullets(pos, q):
    inv_pos, inv_orn = p.invertTransform(pos, q)
    pos_pb, orn_pb = pb.invertTransform(pos, q)
    close(inv_pos, pos_pb, F32, scale=20.0)
    same_rotation(inv_orn, orn_pb, 2 * F32)


@settings(max_examples=200)
@given(vec3, quat)
def test_invert_transform_composes_to_identity(pos, q):
    inv_pos, inv_orn = p.invertTransform(pos, q)
    ident_pos, ident_orn = p.multiplyTransforms(pos, q, inv_pos, inv_orn)
    close(ident_pos, [0, 0, 0], 1e-12, scale=10.0)
    same_rotation(ident_orn, [0, 0, 0, 1], 1e-12)


@settings(max_examples=200)
@given(quat, vec3)
def test_rotate_vector_is_pybullets_for_unit_quaternions(q, v):
    q = unit(q)
    close(p.rotateVector(q, v), pb.rotateVector(q, v), F32, scale=20.0)


def test_rotate_vector_normalizes_where_pybullet_scales_by_the_squared_norm():
    # PyBullet computes q v q* without normalizing: (0, 0, 0, 2) multiplies by 4
    assert pb.rotateVector([0, 0, 0, 2], [1, 2, 3]) == (4.0, 8.0, 12.0)
    assert p.rotateVector([0, 0, 0, 2], [1, 2, 3]) == (1.0, 2.0, 3.0)


@settings(max_examples=200)
@given(vec3, vec3, vec3)
def test_view_matrix_is_pybullets(eye, target, up):
    f = np.subtract(target, eye)
    assume(np.linalg.norm(f) > 1e-2 and np.linalg.norm(np.cross(f, up)) > 1e-2 * np.linalg.norm(f))
    close(p.computeViewMatrix(eye, target, up), pb.computeViewMatrix(eye, target, up), 1e-5,
          scale=20.0)


@settings(max_examples=200)
@given(vec3, st.floats(0.05, 20.0), st.floats(-360, 360), st.floats(-89, 89),
       st.floats(-180, 180), st.sampled_from([1, 2]))
def test_view_matrix_from_yaw_pitch_roll_is_pybullets(target, distance, yaw, pitch, roll, up):
    close(p.computeViewMatrixFromYawPitchRoll(target, distance, yaw, pitch, roll, up),
          pb.computeViewMatrixFromYawPitchRoll(target, distance, yaw, pitch, roll, up), 1e-5,
          scale=40.0)


@settings(max_examples=200)
@given(st.floats(1.0, 170.0), st.floats(0.1, 10.0), st.floats(0.01, 1.0), st.floats(2.0, 1000.0))
def test_projection_fov_is_pybullets(fov, aspect, near, far):
    close(p.computeProjectionMatrixFOV(fov, aspect, near, far),
          pb.computeProjectionMatrixFOV(fov, aspect, near, far), 1e-5)


@settings(max_examples=200)
@given(st.floats(-1, -0.01), st.floats(0.01, 1), st.floats(-1, -0.01), st.floats(0.01, 1),
       st.floats(0.01, 1.0), st.floats(2.0, 1000.0))
def test_projection_is_pybullets(left, right, bottom, top, near, far):
    close(p.computeProjectionMatrix(left, right, bottom, top, near, far),
          pb.computeProjectionMatrix(left, right, bottom, top, near, far), 1e-5)


# -- PyBullet's signatures -----------------------------------------------------------------------
def test_keyword_arguments_are_pybullets():
    q = list(unit([0.1, 0.2, 0.3, 0.9]))
    cases = [
        ("getQuaternionFromEuler", dict(eulerAngles=[0.1, 0.2, 0.3])),
        ("getEulerFromQuaternion", dict(quaternion=q)),
        ("getMatrixFromQuaternion", dict(quaternion=q)),
        ("getQuaternionFromAxisAngle", dict(axis=[1, 2, 3], angle=0.4)),
        ("getAxisAngleFromQuaternion", dict(quaternion=q)),
        ("getDifferenceQuaternion", dict(quaternionStart=[0, 0, 0, 1],
                                         quaternionEnd=q)),
        ("getQuaternionSlerp", dict(quaternionStart=[0, 0, 0, 1],
                                    quaternionEnd=q, interpolationFraction=0.3)),
        ("getAxisDifferenceQuaternion", dict(quaternionStart=[0, 0, 0, 1], quaternionEnd=q)),
        ("calculateVelocityQuaternion", dict(quaternionStart=[0, 0, 0, 1], quaternionEnd=q,
                                             deltaTime=0.1)),
        ("multiplyTransforms", dict(positionA=[1, 2, 3], orientationA=[0, 0, 0, 1],
                                    positionB=[1, 0, 0], orientationB=q)),
        ("invertTransform", dict(position=[1, 2, 3], orientation=q)),
        ("rotateVector", dict(quaternion=q, vector=[1, 2, 3])),
        ("computeViewMatrix", dict(cameraEyePosition=[1, 2, 3], cameraTargetPosition=[0, 0, 0],
                                   cameraUpVector=[0, 0, 1])),
        ("computeViewMatrixFromYawPitchRoll", dict(cameraTargetPosition=[0, 1, 0], distance=2,
                                                   yaw=30, pitch=-20, roll=0, upAxisIndex=2)),
        ("computeProjectionMatrix", dict(left=-1, right=1, bottom=-0.5, top=0.5, nearVal=0.1,
                                         farVal=10)),
        ("computeProjectionMatrixFOV", dict(fov=60, aspect=1.5, nearVal=0.1, farVal=10)),
    ]
    for name, kwargs in cases:
        ours = getattr(p, name)(**kwargs, physicsClientId=0)
        theirs = getattr(pb, name)(**kwargs, physicsClientId=0)
        assert type(ours) is tuple and all_python_floats(ours) or name.startswith(
            "getAxisAngle"), name
        if name == "getAxisAngleFromQuaternion":
            close(ours[0], theirs[0], F32)
            close(ours[1], theirs[1], F32)
        elif name in ("multiplyTransforms", "invertTransform"):
            close(ours[0], theirs[0], F32, scale=10)
            same_rotation(ours[1], theirs[1], F32)
        else:
            close(ours, theirs, F32)
        # and positionally, in PyBullet's order
        assert getattr(p, name)(*kwargs.values()) == ours


def test_no_connection_is_needed():
    # pure helpers: PyBullet answers them with no physics server, for any physicsClientId
    assert p.getQuaternionFromEuler([0, 0, 0], physicsClientId=7) == (0.0, 0.0, 0.0, 1.0)


def test_returns_accept_numpy_inputs():
    q = np.array([0.1, 0.2, 0.3, 0.9], dtype=np.float32)
    assert all_python_floats(p.getMatrixFromQuaternion(q))
    assert all_python_floats(p.rotateVector(q, np.arange(3)))


# -- edge cases and decisions -------------------------------------------------------------------
@pytest.mark.parametrize("pitch", [math.pi / 2, -math.pi / 2])
@pytest.mark.parametrize("roll, yaw", [(0.3, 0.2), (-1.0, 2.5), (0.0, 0.0)])
def test_gimbal_lock_is_pybullets_and_keeps_the_rotation(pitch, roll, yaw):
    q = pb.getQuaternionFromEuler([roll, pitch, yaw])
    ours = p.getEulerFromQuaternion(q)
    close(ours, pb.getEulerFromQuaternion(q), F64)
    assert ours[0] == 0.0 and ours[1] == pytest.approx(pitch, abs=0)
    # roll folded into yaw: same rotation
    close(p.getMatrixFromQuaternion(p.getQuaternionFromEuler(ours)),
          p.getMatrixFromQuaternion(q), 1e-9)


def test_gimbal_lock_band_edges_are_pybullets():
    # sin(pitch) just inside and just outside PyBullet's 0.99999 band
    for pitch in (math.asin(0.99999) - 1e-7, math.asin(0.99999) + 1e-7):
        q = pb.getQuaternionFromEuler([0.2, pitch, -0.4])
        close(p.getEulerFromQuaternion(q), pb.getEulerFromQuaternion(q), F64)


@pytest.mark.parametrize("call", [
    lambda q: p.getEulerFromQuaternion(q), lambda q: p.getMatrixFromQuaternion(q),
    lambda q: p.getAxisAngleFromQuaternion(q), lambda q: p.rotateVector(q, [1, 0, 0]),
    lambda q: p.getDifferenceQuaternion(q, [0, 0, 0, 1]),
    lambda q: p.getQuaternionSlerp([0, 0, 0, 1], q, 0.5),
    lambda q: p.multiplyTransforms([0, 0, 0], q, [0, 0, 0], [0, 0, 0, 1]),
    lambda q: p.invertTransform([0, 0, 0], q)])
def test_zero_quaternion_is_an_error_where_pybullet_returns_nan(call):
    # PyBullet: getMatrixFromQuaternion([0,0,0,0]) is 9 NaN, invertTransform NaN, ...
    assert any(math.isnan(v) for v in pb.getMatrixFromQuaternion([0, 0, 0, 0]))
    with pytest.raises(p.error, match="zero length"):
        call([0.0, 0.0, 0.0, 0.0])


def test_zero_axis_is_an_error():
    with pytest.raises(p.error, match="getQuaternionFromAxisAngle: axis .* zero length"):
        p.getQuaternionFromAxisAngle([0, 0, 0], 0.5)


def test_identity_and_half_turn_axis_angle_are_pybullets():
    for q in ([0, 0, 0, 1], [0, 0, 0, -1], [0, 0, 1, 0], [1, 0, 0, 0]):
        axis, angle = p.getAxisAngleFromQuaternion(q)
        axis_pb, angle_pb = pb.getAxisAngleFromQuaternion(q)
        close(axis, axis_pb, F32)
        assert angle == pytest.approx(angle_pb, abs=1e-6)


def test_slerp_of_equal_and_opposite_quaternions_returns_start():
    q = unit([0.1, 0.2, 0.3, 0.9])
    assert p.getQuaternionSlerp(q, q, 0.4) == q
    assert p.getQuaternionSlerp(q, tuple(-c for c in q), 0.4) == q
    close(pb.getQuaternionSlerp(q, tuple(-c for c in q), 0.4), q, F32)


# -- hostile input ---------------------------------------------------------------------------
hostile = st.one_of(
    st.none(), st.text(max_size=4), st.binary(max_size=4), st.integers(), st.floats(),
    st.lists(st.one_of(st.floats(), st.text(max_size=2), st.none(), st.booleans()), max_size=6),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2))


@settings(max_examples=200)
@given(st.sampled_from([
    lambda a: p.getQuaternionFromEuler(a), lambda a: p.getEulerFromQuaternion(a),
    lambda a: p.getMatrixFromQuaternion(a), lambda a: p.getQuaternionFromAxisAngle(a, 1.0),
    lambda a: p.getQuaternionFromAxisAngle([1, 0, 0], a),
    lambda a: p.getAxisAngleFromQuaternion(a), lambda a: p.getDifferenceQuaternion(a, a),
    lambda a: p.getQuaternionSlerp([0, 0, 0, 1], [0, 0, 0, 1], a),
    lambda a: p.getAxisDifferenceQuaternion(a, [0, 0, 0, 1]),
    lambda a: p.calculateVelocityQuaternion([0, 0, 0, 1], [0, 0, 0, 1], a),
    lambda a: p.multiplyTransforms(a, [0, 0, 0, 1], [0, 0, 0], [0, 0, 0, 1]),
    lambda a: p.invertTransform([0, 0, 0], a), lambda a: p.rotateVector(a, [1, 0, 0]),
    lambda a: p.computeViewMatrix(a, [0, 0, 0], [0, 0, 1]),
    lambda a: p.computeViewMatrixFromYawPitchRoll([0, 0, 0], a, 0, 0, 0, 2),
    lambda a: p.computeViewMatrixFromYawPitchRoll([0, 0, 0], 1, 0, 0, 0, a),
    lambda a: p.computeProjectionMatrix(-1, 1, -1, 1, a, 10),
    lambda a: p.computeProjectionMatrixFOV(a, 1, 0.1, 10),
    lambda a: p.getQuaternionFromEuler([0, 0, 0], physicsClientId=a)]), hostile)
def test_hostile_input_raises_pybullet_error_or_returns_finite_floats(call, argument):
    try:
        result = call(argument)
    except p.error as e:
        assert str(e).split(":")[0] in {
            "getQuaternionFromEuler", "getEulerFromQuaternion", "getMatrixFromQuaternion",
            "getQuaternionFromAxisAngle", "getAxisAngleFromQuaternion",
            "getDifferenceQuaternion", "getQuaternionSlerp", "getAxisDifferenceQuaternion",
            "calculateVelocityQuaternion", "multiplyTransforms",
            "invertTransform", "rotateVector", "computeViewMatrix",
            "computeViewMatrixFromYawPitchRoll", "computeProjectionMatrix",
            "computeProjectionMatrixFOV"}
        return
    flat = np.hstack([np.ravel(np.asarray(r, dtype=float)) for r in
                      (result if isinstance(result[0], tuple) else (result,))])
    assert np.all(np.isfinite(flat))


@pytest.mark.parametrize("bad", [[0, 0, float("nan")], [0, float("inf"), 0], [1, 2], [1, 2, 3, 4],
                                 "abc", None, [True, 0, 0], [[0], 0, 0]])
def test_bad_euler_angles_name_the_argument(bad):
    with pytest.raises(p.error, match=r"getQuaternionFromEuler: eulerAngles"):
        p.getQuaternionFromEuler(bad)


@pytest.mark.parametrize("args, message", [
    (([0, 0, 0], [0, 0, 0], [0, 0, 1]), "same point"),
    (([0, 0, 0], [0, 0, 1], [0, 0, 2]), "along the view"),
    (([0, 0, 0], [0, 0, 1], [0, 0, 0]), "zero or along"),
])
def test_degenerate_view_is_an_error(args, message):
    with pytest.raises(p.error, match=message):
        p.computeViewMatrix(*args)


@pytest.mark.parametrize("args", [(-1, -1, -1, 1, 0.1, 10), (-1, 1, 1, 1, 0.1, 10),
                                  (-1, 1, -1, 1, 0.0, 10), (-1, 1, -1, 1, 1.0, 1.0)])
def test_degenerate_frustum_is_an_error(args):
    with pytest.raises(p.error, match="computeProjectionMatrix:"):
        p.computeProjectionMatrix(*args)


@pytest.mark.parametrize("args", [(0, 1, 0.1, 10), (180, 1, 0.1, 10), (60, 0, 0.1, 10),
                                  (60, -1, 0.1, 10), (60, 1, 10, 0.1), (60, 1, -0.1, 10)])
def test_degenerate_fov_projection_is_an_error(args):
    with pytest.raises(p.error, match="computeProjectionMatrixFOV:"):
        p.computeProjectionMatrixFOV(*args)
