"""PyBullet's pure math helpers: quaternions, Euler angles, transforms, camera matrices.

Quaternions are (x, y, z, w); Euler angles are PyBullet's (URDF's) [roll, pitch, yaw] in
radians, R = Rz(yaw) Ry(pitch) Rx(roll); matrices are 9 floats row-major (3x3) or 16 floats
column-major (OpenGL's 4x4); positions in metres, camera angles in degrees (as PyBullet's).
Every function returns tuples of Python floats and accepts ``physicsClientId`` (ignored, as
PyBullet ignores it: none of these talks to a physics server).

Precision. We compute in double. PyBullet computes getQuaternionFromEuler,
getEulerFromQuaternion and getMatrixFromQuaternion in double too (tests compare to 1e-12) but
the rest through Bullet3Common's float32 classes (b3Quaternion, b3Transform) and float32
camera code, so its results carry float32 rounding (relative ~1e-7): tests compare those to
1e-6 relative and absolute. The formulas (branches, signs, conventions) are Bullet's.

Input rules (README "The PyBullet API: math, debug drawing, logging (decisions)"): every
number must be finite; a quaternion is normalized before use and a zero (or subnormal)
quaternion is an error, where PyBullet returns NaN or garbage; so a non-unit quaternion means
the rotation it represents in every function (PyBullet's own results for non-unit input
differ by function: rotateVector scales by |q|^2, getEulerFromQuaternion can land in its
gimbal-lock branch). A zero rotation axis is an error too.
"""
from __future__ import annotations

import math
import numbers

from sim_node.pybullet.errors import error
from sim_node.sim import camera as _camera

__all__ = [
    "getQuaternionFromEuler", "getEulerFromQuaternion", "getMatrixFromQuaternion",
    "getQuaternionFromAxisAngle", "getAxisAngleFromQuaternion", "getDifferenceQuaternion",
    "getQuaternionSlerp", "getAxisDifferenceQuaternion", "calculateVelocityQuaternion",
    "multiplyTransforms", "invertTransform", "rotateVector",
    "computeViewMatrix", "computeViewMatrixFromYawPitchRoll", "computeProjectionMatrix",
    "computeProjectionMatrixFOV",
]

# getEulerFromQuaternion's gimbal-lock band: |sin(pitch)| >= this sets roll = 0 and puts the
# whole rotation about z into yaw (PyBullet's threshold, pybullet.c)
GIMBAL_LOCK_SIN_PITCH = 0.99999
# getAxisAngleFromQuaternion returns the x axis when sin^2(angle / 2) is below this
# (b3Quaternion::getAxis: 10 * FLT_EPSILON)
AXIS_ANGLE_SMALL_SIN2 = 10.0 * 1.1920928955078125e-07
# below this squared length a quaternion or an axis has no direction to normalize to
_TINY_LENGTH2 = 1e-300


# -- argument checks (shared by debug.py and logging.py) ---------------------------------------
def _number(value, function: str, argument: str) -> float:
    """`value` as a finite float, else error naming the function and argument."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        value = float(value)
        if math.isfinite(value):
            return value
        raise error(f"{function}: {argument} must be finite, got {value!r}")
    raise error(f"{function}: {argument} must be a number, got {value!r}")


def _vector(value, size: int, function: str, argument: str, what: str = "") -> tuple:
    """`value` (any sequence: list, tuple, numpy array) as a tuple of `size` finite floats."""
    try:
        items = list(value)
    except TypeError:
        items = None
    if isinstance(value, (str, bytes)) or items is None or len(items) != size:
        raise error(f"{function}: {argument} must be a sequence of {size} numbers{what}, got "
                    f"{value!r}")
    return tuple(_number(x, function, f"{argument}[{i}]") for i, x in enumerate(items))


def _client_id(physicsClientId, function: str) -> None:
    if not isinstance(physicsClientId, numbers.Integral) or isinstance(physicsClientId, bool):
        raise error(f"{function}: physicsClientId must be an int, got {physicsClientId!r}")


def _unit_quaternion(value, function: str, argument: str) -> tuple:
    x, y, z, w = _vector(value, 4, function, argument, " [x, y, z, w]")
    length2 = x * x + y * y + z * z + w * w
    if not length2 > _TINY_LENGTH2:
        raise error(f"{function}: {argument} {[x, y, z, w]} has zero length; a rotation "
                    f"quaternion [x, y, z, w] needs x^2 + y^2 + z^2 + w^2 > 0 (it is "
                    f"normalized)")
    s = 1.0 / math.sqrt(length2)
    return x * s, y * s, z * s, w * s


# -- quaternion algebra (Bullet's conventions) --------------------------------------------------
def _multiply(a, b) -> tuple:
    """Hamilton product a * b of (x, y, z, w) quaternions: rotate by b, then by a."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by + ay * bw + az * bx - ax * bz,
            aw * bz + az * bw + ax * by - ay * bx,
            aw * bw - ax * bx - ay * by - az * bz)


def _matrix(q) -> tuple:
    """Row-major 3x3 rotation of q (b3Matrix3x3::setRotation: scaled by 2 / |q|^2, so any
    non-zero q gives a rotation)."""
    x, y, z, w = q
    s = 2.0 / (x * x + y * y + z * z + w * w)
    xs, ys, zs = x * s, y * s, z * s
    wx, wy, wz = w * xs, w * ys, w * zs
    xx, xy, xz = x * xs, x * ys, x * zs
    yy, yz, zz = y * ys, y * zs, z * zs
    return (1.0 - (yy + zz), xy - wz, xz + wy,
            xy + wz, 1.0 - (xx + zz), yz - wx,
            xz - wy, yz + wx, 1.0 - (xx + yy))


def _quaternion_of_matrix(m) -> tuple:
    """b3Matrix3x3::getRotation of a row-major rotation: w > 0 when the trace is positive,
    else the component of the largest diagonal entry is positive (Bullet's sign choice, which
    multiplyTransforms and invertTransform return)."""
    trace = m[0] + m[4] + m[8]
    if trace > 0.0:
        s = math.sqrt(trace + 1.0)
        w = 0.5 * s
        s = 0.5 / s
        return ((m[7] - m[5]) * s, (m[2] - m[6]) * s, (m[3] - m[1]) * s, w)
    d = (m[0], m[4], m[8])
    i = (2 if d[1] < d[2] else 1) if d[0] < d[1] else (2 if d[0] < d[2] else 0)
    j, k = (i + 1) % 3, (i + 2) % 3
    s = math.sqrt(m[4 * i] - m[4 * j] - m[4 * k] + 1.0)
    q = [0.0, 0.0, 0.0, 0.0]
    q[i] = 0.5 * s
    s = 0.5 / s
    q[3] = (m[3 * k + j] - m[3 * j + k]) * s
    q[j] = (m[3 * j + i] + m[3 * i + j]) * s
    q[k] = (m[3 * k + i] + m[3 * i + k]) * s
    return tuple(q)


def _rotate(m, v) -> tuple:
    return (m[0] * v[0] + m[1] * v[1] + m[2] * v[2],
            m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
            m[6] * v[0] + m[7] * v[1] + m[8] * v[2])


def _transpose(m) -> tuple:
    return (m[0], m[3], m[6], m[1], m[4], m[7], m[2], m[5], m[8])


def _matmul(a, b) -> tuple:
    return tuple(a[3 * r] * b[c] + a[3 * r + 1] * b[3 + c] + a[3 * r + 2] * b[6 + c]
                 for r in range(3) for c in range(3))


# -- Euler angles --------------------------------------------------------------------------------
def getQuaternionFromEuler(eulerAngles, physicsClientId=0) -> tuple:
    """[roll, pitch, yaw] [rad] (R = Rz(yaw) Ry(pitch) Rx(roll)) -> unit quaternion (x, y, z, w).
    PyBullet's formula (pybullet.c), so the result is the same to the last bit."""
    name = "getQuaternionFromEuler"
    _client_id(physicsClientId, name)
    roll, pitch, yaw = _vector(eulerAngles, 3, name, "eulerAngles", " [roll, pitch, yaw]")
    phi, the, psi = roll / 2.0, pitch / 2.0, yaw / 2.0
    q = (math.sin(phi) * math.cos(the) * math.cos(psi)
         - math.cos(phi) * math.sin(the) * math.sin(psi),
         math.cos(phi) * math.sin(the) * math.cos(psi)
         + math.sin(phi) * math.cos(the) * math.sin(psi),
         math.cos(phi) * math.cos(the) * math.sin(psi)
         - math.sin(phi) * math.sin(the) * math.cos(psi),
         math.cos(phi) * math.cos(the) * math.cos(psi)
         + math.sin(phi) * math.sin(the) * math.sin(psi))
    length = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    return tuple(c / length for c in q)


def getEulerFromQuaternion(quaternion, physicsClientId=0) -> tuple:
    """Quaternion (x, y, z, w) -> [roll, pitch, yaw] [rad], roll and yaw in [-pi, pi], pitch in
    [-pi/2, pi/2]. Within the gimbal-lock band |sin(pitch)| >= 0.99999 (pitch within ~0.26 deg
    of +-pi/2) pitch is +-pi/2, roll 0 and yaw = 2 atan2(...) in [-2 pi, 2 pi] carries the
    whole rotation about z, as PyBullet's."""
    name = "getEulerFromQuaternion"
    _client_id(physicsClientId, name)
    x, y, z, w = _unit_quaternion(quaternion, name, "quaternion")
    sqx, sqy, sqz, squ = x * x, y * y, z * z, w * w
    sin_pitch = -2.0 * (x * z - w * y)
    if sin_pitch <= -GIMBAL_LOCK_SIN_PITCH:
        return (0.0, -0.5 * math.pi, 2.0 * math.atan2(x, -y))
    if sin_pitch >= GIMBAL_LOCK_SIN_PITCH:
        return (0.0, 0.5 * math.pi, 2.0 * math.atan2(-x, y))
    return (math.atan2(2.0 * (y * z + w * x), squ - sqx - sqy + sqz),
            math.asin(sin_pitch),
            math.atan2(2.0 * (x * y + w * z), squ + sqx - sqy - sqz))


def getMatrixFromQuaternion(quaternion, physicsClientId=0) -> tuple:
    """Quaternion (x, y, z, w) -> the 3x3 rotation matrix as 9 floats, row-major."""
    name = "getMatrixFromQuaternion"
    _client_id(physicsClientId, name)
    return _matrix(_unit_quaternion(quaternion, name, "quaternion"))


# -- axis-angle, difference, interpolation ------------------------------------------------------
def getQuaternionFromAxisAngle(axis, angle, physicsClientId=0) -> tuple:
    """Rotation by `angle` [rad] about `axis` (any non-zero length; normalized) -> (x, y, z, w)."""
    name = "getQuaternionFromAxisAngle"
    _client_id(physicsClientId, name)
    ax, ay, az = _vector(axis, 3, name, "axis", " [x, y, z]")
    angle = _number(angle, name, "angle")
    length = math.sqrt(ax * ax + ay * ay + az * az)
    if not length * length > _TINY_LENGTH2:
        raise error(f"{name}: axis {[ax, ay, az]} has zero length; the rotation axis must be "
                    f"a non-zero vector (it is normalized)")
    s = math.sin(0.5 * angle) / length
    return (ax * s, ay * s, az * s, math.cos(0.5 * angle))


def getAxisAngleFromQuaternion(quaternion, physicsClientId=0) -> tuple:
    """Quaternion -> (axis (unit, 3 floats), angle [rad] in [0, 2 pi]) with q = (axis sin(angle
    / 2), cos(angle / 2)): w < 0 gives an angle above pi, as PyBullet's (b3Quaternion::getAxis
    / getAngle). Below sin^2(angle / 2) = 10 FLT_EPSILON the axis is (1, 0, 0)."""
    name = "getAxisAngleFromQuaternion"
    _client_id(physicsClientId, name)
    x, y, z, w = _unit_quaternion(quaternion, name, "quaternion")
    angle = 2.0 * math.acos(max(-1.0, min(1.0, w)))
    sin2 = 1.0 - w * w
    if sin2 < AXIS_ANGLE_SMALL_SIN2:
        return (1.0, 0.0, 0.0), angle
    s = 1.0 / math.sqrt(sin2)
    return (x * s, y * s, z * s), angle


def getDifferenceQuaternion(quaternionStart, quaternionEnd, physicsClientId=0) -> tuple:
    """The rotation from start to end in the world frame, dq = end' * start^-1, with end' = +-end
    whichever is nearer to start (b3GetQuaternionDifference: the short way round)."""
    name = "getDifferenceQuaternion"
    _client_id(physicsClientId, name)
    start = _unit_quaternion(quaternionStart, name, "quaternionStart")
    end = _unit_quaternion(quaternionEnd, name, "quaternionEnd")
    diff2 = sum((a - b) ** 2 for a, b in zip(start, end))
    sum2 = sum((a + b) ** 2 for a, b in zip(start, end))
    if not diff2 < sum2:             # b3Quaternion::nearest: a tie takes -end
        end = tuple(-c for c in end)
    sx, sy, sz, sw = start
    return _multiply(end, (-sx, -sy, -sz, sw))


def getQuaternionSlerp(quaternionStart, quaternionEnd, interpolationFraction,
                       physicsClientId=0) -> tuple:
    """Spherical interpolation start -> end the short way round at `interpolationFraction`
    (0: start, 1: end or -end; values outside [0, 1] extrapolate, as PyBullet's). Parallel
    quaternions (|start . end| = 1) return start."""
    name = "getQuaternionSlerp"
    _client_id(physicsClientId, name)
    start = _unit_quaternion(quaternionStart, name, "quaternionStart")
    end = _unit_quaternion(quaternionEnd, name, "quaternionEnd")
    t = _number(interpolationFraction, name, "interpolationFraction")
    product = sum(a * b for a, b in zip(start, end))
    if not abs(product) < 1.0:
        return start
    sign = -1.0 if product < 0.0 else 1.0
    theta = math.acos(sign * product)
    s1 = math.sin(sign * t * theta)
    d = 1.0 / math.sin(theta)
    s0 = math.sin((1.0 - t) * theta)
    return tuple((a * s0 + b * s1) * d for a, b in zip(start, end))


def getAxisDifferenceQuaternion(quaternionStart, quaternionEnd, physicsClientId=0) -> tuple:
    """Angles [rad] (x, y, z) of the relative rotation start^-1 * end, as Bullet's
    MyMatrixToEulerXYZ reads them off its matrix M (b3GetAxisDifferenceQuaternion): (atan2(-M21,
    M22), asin(M20), atan2(-M10, M00)); at |M20| = 1 the z angle is 0 and x takes the rest."""
    name = "getAxisDifferenceQuaternion"
    _client_id(physicsClientId, name)
    sx, sy, sz, sw = _unit_quaternion(quaternionStart, name, "quaternionStart")
    end = _unit_quaternion(quaternionEnd, name, "quaternionEnd")
    m = _matrix(_multiply((-sx, -sy, -sz, sw), end))
    m20 = max(-1.0, min(1.0, m[6]))
    if m20 >= 1.0:
        return (math.atan2(m[1], m[4]), 0.5 * math.pi, 0.0)
    if m20 <= -1.0:
        return (-math.atan2(m[1], m[4]), -0.5 * math.pi, 0.0)
    return (math.atan2(-m[7], m[8]), math.asin(m20), math.atan2(-m[3], m[0]))


def calculateVelocityQuaternion(quaternionStart, quaternionEnd, deltaTime,
                                physicsClientId=0) -> tuple:
    """The constant angular velocity [rad/s] (world frame) turning start into end in deltaTime
    [s] (> 0) the short way: axis * angle / deltaTime of getDifferenceQuaternion's rotation
    (b3TransformUtil::calculateVelocityQuaternion)."""
    name = "calculateVelocityQuaternion"
    _client_id(physicsClientId, name)
    dt = _number(deltaTime, name, "deltaTime")
    if not dt > 0.0:
        raise error(f"{name}: deltaTime = {dt} s must be > 0")
    x, y, z, w = getDifferenceQuaternion(quaternionStart, quaternionEnd)
    angle = 2.0 * math.acos(max(-1.0, min(1.0, w)))
    length2 = x * x + y * y + z * z
    if length2 < 1.1920928955078125e-07 ** 2:    # below B3_EPSILON: no axis to speak of
        return (angle / dt, 0.0, 0.0)
    length = math.sqrt(length2)
    return tuple(c / length * angle / dt for c in (x, y, z))


# -- rigid transforms ---------------------------------------------------------------------------
def multiplyTransforms(positionA, orientationA, positionB, orientationB,
                       physicsClientId=0) -> tuple:
    """T_A * T_B: (position, orientation) of frame B given in A, expressed in A's parent:
    p = R_A p_B + p_A, q from R_A R_B with Bullet's sign (see _quaternion_of_matrix)."""
    name = "multiplyTransforms"
    _client_id(physicsClientId, name)
    p_a = _vector(positionA, 3, name, "positionA", " [x, y, z]")
    R_a = _matrix(_unit_quaternion(orientationA, name, "orientationA"))
    p_b = _vector(positionB, 3, name, "positionB", " [x, y, z]")
    R_b = _matrix(_unit_quaternion(orientationB, name, "orientationB"))
    r = _rotate(R_a, p_b)
    return ((r[0] + p_a[0], r[1] + p_a[1], r[2] + p_a[2]),
            _quaternion_of_matrix(_matmul(R_a, R_b)))


def invertTransform(position, orientation, physicsClientId=0) -> tuple:
    """T^-1 of (position, orientation): (-R^T p, the quaternion of R^T with Bullet's sign)."""
    name = "invertTransform"
    _client_id(physicsClientId, name)
    p = _vector(position, 3, name, "position", " [x, y, z]")
    R_t = _transpose(_matrix(_unit_quaternion(orientation, name, "orientation")))
    r = _rotate(R_t, p)
    return (-r[0], -r[1], -r[2]), _quaternion_of_matrix(R_t)


def rotateVector(quaternion, vector, physicsClientId=0) -> tuple:
    """R(q) v for the rotation q represents (q normalized first)."""
    name = "rotateVector"
    _client_id(physicsClientId, name)
    R = _matrix(_unit_quaternion(quaternion, name, "quaternion"))
    return _rotate(R, _vector(vector, 3, name, "vector", " [x, y, z]"))


# -- camera matrices (sim_node.sim.camera holds the algebra; here the PyBullet signatures) ------
def computeViewMatrix(cameraEyePosition, cameraTargetPosition, cameraUpVector,
                      physicsClientId=0) -> tuple:
    """gluLookAt: world -> OpenGL camera (x right, y up, looking along -z), 16 floats
    column-major. Eye and target must differ and the up vector must not be along the view."""
    name = "computeViewMatrix"
    _client_id(physicsClientId, name)
    eye = _vector(cameraEyePosition, 3, name, "cameraEyePosition", " [x, y, z]")
    target = _vector(cameraTargetPosition, 3, name, "cameraTargetPosition", " [x, y, z]")
    up = _vector(cameraUpVector, 3, name, "cameraUpVector", " [x, y, z]")
    _check_look_at(name, eye, target, up)
    try:
        return _camera.view_matrix(eye, target, up)
    except ValueError:
        raise error(f"{name}: cameraTargetPosition - cameraEyePosition overflows (eye "
                    f"{list(eye)}, target {list(target)}); keep coordinates below ~1e150 "
                    f"m") from None


def computeViewMatrixFromYawPitchRoll(cameraTargetPosition, distance, yaw, pitch, roll,
                                      upAxisIndex, physicsClientId=0) -> tuple:
    """A camera `distance` m from the target, turned by yaw, pitch, roll [degrees] about the
    up axis (upAxisIndex 2: z up, 1: y up); 16 floats column-major."""
    name = "computeViewMatrixFromYawPitchRoll"
    _client_id(physicsClientId, name)
    target = _vector(cameraTargetPosition, 3, name, "cameraTargetPosition", " [x, y, z]")
    distance = _number(distance, name, "distance")
    yaw, pitch, roll = (_number(v, name, n) for v, n in ((yaw, "yaw"), (pitch, "pitch"),
                                                         (roll, "roll")))
    if upAxisIndex not in (1, 2) or isinstance(upAxisIndex, bool):
        raise error(f"{name}: upAxisIndex must be 1 (y up) or 2 (z up), got {upAxisIndex!r}")
    try:
        return _camera.view_matrix_from_yaw_pitch_roll(target, distance, yaw, pitch, roll,
                                                       int(upAxisIndex))
    except ValueError:
        # the eye lands on the target in floating point (distance 0 or negligible)
        raise error(f"{name}: distance = {distance} m puts the eye on the target "
                    f"{list(target)}; it must be non-zero and resolvable at that "
                    f"position") from None


def computeProjectionMatrix(left, right, bottom, top, nearVal, farVal,
                            physicsClientId=0) -> tuple:
    """glFrustum: the near-plane window [left, right] x [bottom, top] [m] and the clipping
    distances 0 < nearVal < farVal [m]; 16 floats column-major."""
    name = "computeProjectionMatrix"
    _client_id(physicsClientId, name)
    values = [_number(v, name, n) for v, n in ((left, "left"), (right, "right"),
                                               (bottom, "bottom"), (top, "top"),
                                               (nearVal, "nearVal"), (farVal, "farVal"))]
    left, right, bottom, top, near, far = values
    if left == right or bottom == top:
        raise error(f"{name}: the window [left, right] x [bottom, top] = [{left}, {right}] x "
                    f"[{bottom}, {top}] is empty; need left != right and bottom != top")
    _check_near_far(name, near, far)
    return _camera.projection_matrix(left, right, bottom, top, near, far)


def computeProjectionMatrixFOV(fov, aspect, nearVal, farVal, physicsClientId=0) -> tuple:
    """Perspective from the vertical field of view `fov` [degrees, in (0, 180)], aspect = width /
    height (> 0) and clipping distances 0 < nearVal < farVal [m]; 16 floats column-major."""
    name = "computeProjectionMatrixFOV"
    _client_id(physicsClientId, name)
    fov, aspect = _number(fov, name, "fov"), _number(aspect, name, "aspect")
    near, far = _number(nearVal, name, "nearVal"), _number(farVal, name, "farVal")
    if not 0.0 < fov < 180.0:
        raise error(f"{name}: fov = {fov} degrees; the vertical field of view must lie in "
                    f"(0, 180)")
    if not aspect > 0.0:
        raise error(f"{name}: aspect = {aspect}; width / height must be > 0")
    _check_near_far(name, near, far)
    return _camera.projection_matrix_fov(fov, aspect, near, far)


def _check_near_far(function: str, near: float, far: float) -> None:
    if not 0.0 < near < far:
        raise error(f"{function}: nearVal = {near}, farVal = {far} m; need 0 < nearVal < "
                    f"farVal")


def _check_look_at(function: str, eye, target, up) -> None:
    forward = [t - e for t, e in zip(target, eye)]
    side = (forward[1] * up[2] - forward[2] * up[1], forward[2] * up[0] - forward[0] * up[2],
            forward[0] * up[1] - forward[1] * up[0])
    norm_f = math.sqrt(sum(c * c for c in forward))
    norm_u = math.sqrt(sum(c * c for c in up))
    if not (math.isfinite(norm_f) and math.isfinite(norm_u)):
        raise error(f"{function}: the view direction {forward} or cameraUpVector {list(up)} "
                    f"overflows; keep coordinates below ~1e150 m")
    if norm_f == 0.0:
        raise error(f"{function}: cameraEyePosition and cameraTargetPosition are the same point "
                    f"{list(eye)}; the camera needs a direction to look along")
    if not math.sqrt(sum(c * c for c in side)) > 1e-12 * norm_f * norm_u:
        raise error(f"{function}: cameraUpVector {list(up)} is zero or along the view "
                    f"direction {forward}; it must have a component across it")
