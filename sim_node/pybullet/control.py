"""Joint motors, external forces and dynamics settings: setJointMotorControl2 and its array and
multi-DOF forms, applyExternalForce / Torque, changeDynamics / getDynamicsInfo.

PyBullet's joint motors, reproduced (README "The PyBullet API: bodies, joints, control"):
  * every revolute and prismatic joint has one motor. VELOCITY_CONTROL and POSITION_CONTROL
    are Bullet's velocity-level motor: at each step it asks for the joint velocity
        v* = qd + positionGain (q_target - q) / dt + velocityGain (qd_target - qd)
    (positionGain = 0 in VELOCITY_CONTROL; |v*| within maxVelocity when given), with a torque
    of at most `force`. A new body's motors are VELOCITY_CONTROL towards 0 with Bullet's
    default maximum impulse of 1 N s per step (force 1 / dt: the joints hold under moderate
    loads, as in PyBullet); VELOCITY_CONTROL with force=0 makes a joint limp.
    sim_node realises the motor with the engine's actuator: a PID with velocity target v*
    and an implicit damping K = MOTOR_STIFFNESS * M_jj / dt (M_jj the joint's diagonal
    mass-matrix entry), which reaches v* to within 1 / (1 + MOTOR_STIFFNESS) in a step
    together with gravity, contacts and joint limits in the same solve; when the torque that
    takes would exceed `force`, the joint gets the constant torque +-force instead (Bullet's
    clamped impulse).
  * spherical joints have such a motor on each axis of their angular velocity (child axes),
    the position error the rotation vector of q^-1 q_target; the engine damps a ball joint's
    axes together, so a saturated spherical motor becomes explicit torques on all three axes
    (solved through the joint's 3 x 3 inertia block, the saturated axes at +-force).
  * TORQUE_CONTROL applies its torque for the next step only (PyBullet clears it after a
    step), on top of the motor: as in PyBullet, disable the motor first (VELOCITY_CONTROL,
    force=0) for pure torque control.
  * PD_CONTROL is an explicit PD torque kp (q_target - q) + kd (qd_target - qd) clipped to
    +-force, applied at every step until the joint gets another motor mode.
appliedJointMotorTorque (getJointState) is the motor's torque over the last step (the
implicit one as realised: K (v* - qd_new)) plus the TORQUE / PD torques applied in it.
"""
from __future__ import annotations

import copy
import math

import numpy as np

from sim_node.engine.api import motors as motor_kernels
from sim_node.pybullet.client import (finite_float, finite_vector, get_client, vec, warn_once,
                                      xyzw)
from sim_node.pybullet.errors import error
from sim_node.sim import bounds
from sim_node.sim.controller import ACTUATOR_PID, ACTUATOR_TORQUE

__all__ = ["setJointMotorControl2", "setJointMotorControlArray", "setJointMotorControlMultiDof",
           "setJointMotorControlMultiDofArray", "applyExternalForce", "applyExternalTorque",
           "changeDynamics", "getDynamicsInfo"]

# PyBullet's control modes and frames
VELOCITY_CONTROL, TORQUE_CONTROL, POSITION_CONTROL, PD_CONTROL = 0, 1, 2, 3
LINK_FRAME, WORLD_FRAME = 1, 2
_MODES = {VELOCITY_CONTROL: "VELOCITY_CONTROL", TORQUE_CONTROL: "TORQUE_CONTROL",
          POSITION_CONTROL: "POSITION_CONTROL", PD_CONTROL: "PD_CONTROL"}

DEFAULT_MAX_IMPULSE = 1.0           # [N s or N m s] Bullet's default motor, per step
DEFAULT_FORCE = 100000.0            # [N m or N] pybullet's setJointMotorControl2 default force
DEFAULT_POSITION_GAIN = 0.1         # pybullet's positionGain default (POSITION_CONTROL)
DEFAULT_VELOCITY_GAIN = 1.0         # pybullet's velocityGain default
MOTOR_STIFFNESS = 100.0             # the motor's implicit damping in units of M_jj / dt
DEFAULT_LINK_DAMPING = 0.04         # btMultiBody's linearDamping = angularDamping default


class Motors:
    """The motor table of one body, per PyBullet joint (entries of non-scalar joints unused).
    The scalar motors' numbers are one table (sim_node.engine.motors: a row per quantity, a
    column per joint) that the engine's motor kernels read and write each step; the named
    rows below are views of it."""

    def __init__(self, n: int):
        self.table = np.zeros((motor_kernels.NROW, n))
        self.table[motor_kernels.MODE] = VELOCITY_CONTROL   # the motor: VELOCITY or POSITION
        self.table[motor_kernels.KD] = DEFAULT_VELOCITY_GAIN
        self.table[motor_kernels.FORCE] = np.nan            # nan: the default impulse
        self.table[motor_kernels.MAX_VELOCITY] = np.inf
        # spherical joints: joint -> (quaternion target, velocity target (3), forces (3), kp,
        # kd, max velocity); TORQUE_CONTROL torques (3) for the next step
        self.spherical = {}
        self.spherical_torque = {}
        self.spherical_last = None      # (v indices, gain, v* or clamp, known) of the last step
        self.spherical_applied = {}     # v index -> torque applied over the last step
        self.external = None            # (nv) the last step's other generalized forces
        # (nv + 2, nv): M, C + G - external and v of the step being taken; stepping: between
        # the pre-step and post-step hooks
        self.step = None
        self.stepping = False
        self.kernel = None              # sim_node.engine.motors.RobotMotors on these arrays
        # the body's link damping (changeDynamics linearDamping, angularDamping: Bullet's
        # per-body coefficients; sim_node.engine.motors states the forces)
        self.damping = (DEFAULT_LINK_DAMPING, DEFAULT_LINK_DAMPING)

    def copy_state(self) -> dict:
        return copy.deepcopy({k: v for k, v in self.__dict__.items() if k != "kernel"})

    def set_state(self, state: dict):
        state = copy.deepcopy(state)
        if "table" not in state:
            state = _named_rows_to_table(state)
        self.__dict__.update(state)
        self.kernel = None

    mode = property(lambda self: self.table[motor_kernels.MODE])
    q_target = property(lambda self: self.table[motor_kernels.Q_TARGET])
    v_target = property(lambda self: self.table[motor_kernels.V_TARGET])
    kp = property(lambda self: self.table[motor_kernels.KP])
    kd = property(lambda self: self.table[motor_kernels.KD])
    force = property(lambda self: self.table[motor_kernels.FORCE])
    max_velocity = property(lambda self: self.table[motor_kernels.MAX_VELOCITY])
    torque = property(lambda self: self.table[motor_kernels.TORQUE])      # for the next step
    applied = property(lambda self: self.table[motor_kernels.APPLIED])    # of the last step


def _named_rows_to_table(state: dict) -> dict:
    """A motor state of the format before the table (saveBullet files written before it: one
    array per quantity, PD_CONTROL in a dict, M, bias and v as a tuple) in today's format."""
    K = motor_kernels
    n = len(state["mode"])
    table = np.zeros((K.NROW, n))
    for row, name in ((K.MODE, "mode"), (K.Q_TARGET, "q_target"), (K.V_TARGET, "v_target"),
                      (K.KP, "kp"), (K.KD, "kd"), (K.FORCE, "force"),
                      (K.MAX_VELOCITY, "max_velocity"), (K.TORQUE, "torque"),
                      (K.APPLIED, "applied"), (K.LAST_GAIN, "last_gain"),
                      (K.LAST_TARGET, "last_target"), (K.LAST_KNOWN, "last_known")):
        table[row] = state.pop(name)
    for j, values in state.pop("pd").items():
        table[K.PD_ON:K.PD_FORCE + 1, j] = (1.0, *values)
    step = state.pop("step")
    state["step"] = None if step is None else np.vstack([step[0], step[1], step[2]])
    state["stepping"] = step is not None
    state["table"] = table
    return state


def motors(body) -> Motors:
    """The body's motor table; a new one has PyBullet's default motors: VELOCITY_CONTROL
    towards 0 with the default impulse on every scalar and (per axis) spherical joint."""
    if body.motors is None:
        m = Motors(body.num_joints)
        if body.info.get("maximal_coordinates"):
            # PyBullet makes such a body a btRigidBody, undamped (measured; its
            # changeDynamics damping follows btRigidBody's formula, not implemented here)
            m.damping = (0.0, 0.0)
        for j in range(body.num_joints):
            if body.joint_coords(j)[0].stop - body.joint_coords(j)[0].start == 4:
                m.spherical[j] = (np.array([0.0, 0.0, 0.0, 1.0]), np.zeros(3),
                                  np.full(3, np.nan), 0.0, DEFAULT_VELOCITY_GAIN, math.inf)
        body.motors = m
    return body.motors


def _scalar_joint(body, j: int, function: str):
    qs, vs = body.joint_coords(j)
    if qs.stop - qs.start != 1:
        kind = body.joint_type(j)
        raise error(f"{function}: joint {j} of body {body.uid} is {kind}"
                    + ("; use setJointMotorControlMultiDof" if kind == "spherical" else
                       ": it has no motor"))
    return qs.start, vs.start


# -- setJointMotorControl* ---------------------------------------------------------------------
def setJointMotorControl2(bodyIndex=None, jointIndex=None, controlMode=None, targetPosition=None,
                          targetVelocity=None, force=None, positionGain=None,
                          velocityGain=None, maxVelocity=None, physicsClientId=0,
                          bodyUniqueId=None):
    """Set one joint's motor (module docstring). Validated whole before anything applies."""
    fn = "setJointMotorControl2"
    uid = bodyUniqueId if bodyIndex is None else bodyIndex
    if uid is None or jointIndex is None or controlMode is None:
        raise error(f"{fn}: bodyUniqueId, jointIndex and controlMode are required")
    body = get_client(physicsClientId).body(uid)
    j = body.check_joint(jointIndex, fn)
    command = _command(body, j, controlMode, targetPosition, targetVelocity, force,
                       positionGain, velocityGain, maxVelocity, fn)
    _apply_commands(body, [command])


def setJointMotorControlArray(bodyUniqueId=None, jointIndices=None, controlMode=None,
                              targetPositions=None, targetVelocities=None, forces=None,
                              positionGains=None, velocityGains=None, physicsClientId=0,
                              bodyIndex=None):
    """setJointMotorControl2 for several joints: lists of one entry per joint (forces in
    TORQUE_CONTROL are the torques)."""
    fn = "setJointMotorControlArray"
    uid = bodyUniqueId if bodyIndex is None else bodyIndex
    if uid is None or jointIndices is None or controlMode is None:
        raise error(f"{fn}: bodyUniqueId, jointIndices and controlMode are required")
    body = get_client(physicsClientId).body(uid)
    joints = _index_list(body, jointIndices, fn)
    n = len(joints)
    lists = {}
    for name, value in (("targetPositions", targetPositions),
                        ("targetVelocities", targetVelocities), ("forces", forces),
                        ("positionGains", positionGains), ("velocityGains", velocityGains)):
        if value is not None:
            arr = _float_list(value, fn, name)
            if len(arr) != n:
                raise error(f"{fn}: {name} has {len(arr)} entries, jointIndices {n}")
            lists[name] = arr
    commands = []
    for i, j in enumerate(joints):
        def pick(name):
            return lists[name][i] if name in lists else None
        commands.append(_command(body, j, controlMode, pick("targetPositions"),
                                 pick("targetVelocities"), pick("forces"),
                                 pick("positionGains"), pick("velocityGains"), None, fn))
    _apply_commands(body, commands)


def setJointMotorControlMultiDof(bodyUniqueId, jointIndex, controlMode, targetPosition=None,
                                 targetVelocity=None, force=None, positionGain=None,
                                 velocityGain=None, maxVelocity=None, damping=None,
                                 physicsClientId=0):
    """setJointMotorControl2 with vector arguments: one entry for scalar joints (a list of one
    number or the number); for a spherical joint a quaternion (x, y, z, w) target and 3
    velocities and forces (child axes): POSITION_CONTROL / VELOCITY_CONTROL as Bullet's
    spherical motor (per axis, the error the rotation vector of q^-1 q_target), TORQUE_CONTROL
    three torques for the next step. Spherical joints have no motor until given one.
    damping (Bullet's per-axis damping of the spherical motor, a list of numbers) is checked and
    ignored with a one-time warning: sim_node's motor is the velocity-level one above."""
    fn = "setJointMotorControlMultiDof"
    client = get_client(physicsClientId)
    body = client.body(bodyUniqueId)
    if damping is not None:
        values = damping if isinstance(damping, (list, tuple, np.ndarray)) else [damping]
        for x in values:
            finite_float(x, fn, "damping entry")
        warn_once(client, f"{fn}:damping", f"{fn}: damping is accepted and ignored by sim_node "
                  "(README 'The PyBullet API: bodies, joints, control')")
    j = body.check_joint(jointIndex, fn)
    qs, _ = body.joint_coords(j)
    if qs.stop - qs.start > 1:
        _apply_spherical(body, [_spherical_command(
            body, j, controlMode, targetPosition, targetVelocity, force, positionGain,
            velocityGain, maxVelocity, fn)])
        return
    command = _command(body, j, controlMode, _one(targetPosition, fn, "targetPosition"),
                       _one(targetVelocity, fn, "targetVelocity"), _one(force, fn, "force"),
                       positionGain, velocityGain, maxVelocity, fn)
    _apply_commands(body, [command])


def setJointMotorControlMultiDofArray(bodyUniqueId, jointIndices, controlMode,
                                      targetPositions=None, targetVelocities=None, forces=None,
                                      positionGains=None, velocityGains=None,
                                      maxVelocities=None, physicsClientId=0):
    fn = "setJointMotorControlMultiDofArray"
    body = get_client(physicsClientId).body(bodyUniqueId)
    joints = _index_list(body, jointIndices, fn)
    commands, spherical = [], []
    for i, j in enumerate(joints):
        qs, _ = body.joint_coords(j)

        def pick(values, name, single=True):
            if values is None:
                return None
            if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
                raise error(f"{fn}: {name} must be a list of one entry per joint, got "
                            f"{values!r}")
            if len(values) != len(joints):
                raise error(f"{fn}: {name} has {len(values)} entries, jointIndices "
                            f"{len(joints)}")
            return _one(values[i], fn, name) if single else values[i]
        if qs.stop - qs.start > 1:
            spherical.append(_spherical_command(
                body, j, controlMode, pick(targetPositions, "targetPositions", False),
                pick(targetVelocities, "targetVelocities", False),
                pick(forces, "forces", False), pick(positionGains, "positionGains"),
                pick(velocityGains, "velocityGains"), pick(maxVelocities, "maxVelocities"), fn))
            continue
        commands.append(_command(body, j, controlMode, pick(targetPositions, "targetPositions"),
                                 pick(targetVelocities, "targetVelocities"),
                                 pick(forces, "forces"), pick(positionGains, "positionGains"),
                                 pick(velocityGains, "velocityGains"),
                                 pick(maxVelocities, "maxVelocities"), fn))
    _apply_commands(body, commands)
    _apply_spherical(body, spherical)


def _one(value, fn, name):
    if value is None:
        return None
    if isinstance(value, (list, tuple, np.ndarray)):
        if len(value) == 0:
            return None
        if len(value) != 1:
            raise error(f"{fn}: {name} must have 1 entry for a scalar joint, got {len(value)}")
        return value[0]
    return value


def _index_list(body, indices, fn) -> list:
    if isinstance(indices, (str, bytes)) or not hasattr(indices, "__len__"):
        raise error(f"{fn}: jointIndices must be a list of joint indices, got {indices!r}")
    return [body.check_joint(j, fn, "jointIndices entry") for j in indices]


def _float_list(values, fn, name) -> list:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise error(f"{fn}: {name} must be a list of numbers, got {values!r}")
    return [finite_float(x, fn, f"{name} entry") for x in values]


def _number(value, default, fn, what, bound, nonnegative=False) -> float:
    """value (None: default) as a float within +-bound (and >= 0 when nonnegative); p.error
    naming fn and what otherwise."""
    if value is None:
        return default
    # a float in range passes at once (NaN fails the comparison and takes the full check)
    if type(value) is float and (0.0 if nonnegative else -bound) <= value <= bound:
        return value
    x = finite_float(value, fn, what)
    if abs(x) > bound:
        raise error(f"{fn}: |{what}| must be <= {bound:g}, got {x}")
    if nonnegative and x < 0:
        raise error(f"{fn}: {what} must be >= 0, got {x}")
    return x


def _command(body, j, mode, q_target, v_target, force, kp, kd, max_velocity, fn) -> tuple:
    try:
        mode = int(mode)
    except (TypeError, ValueError, OverflowError):
        raise error(f"{fn}: controlMode must be one of VELOCITY_CONTROL (0), TORQUE_CONTROL (1), "
                    f"POSITION_CONTROL (2), PD_CONTROL (3); got {mode!r}") from None
    if mode not in _MODES:
        raise error(f"{fn}: controlMode {mode} is not supported; valid: "
                    + ", ".join(f"{n} ({m})" for m, n in _MODES.items()))
    # a scalar joint (the common case) is known to the body; else fixed (no motor) or an error
    fixed = False
    if j not in body.scalar_position:
        qs, _ = body.joint_coords(j)
        fixed = qs.stop == qs.start
        if not fixed:
            _scalar_joint(body, j, fn)
    q = _number(q_target, 0.0, fn, "targetPosition", bounds.MAX_JOINT_POSITION)
    v = _number(v_target, 0.0, fn, "targetVelocity", bounds.MAX_ANGULAR_SPEED)
    if mode == TORQUE_CONTROL:
        f = _number(force, 0.0, fn, "force", bounds.MAX_TORQUE)
    else:
        f = _number(force, DEFAULT_FORCE, fn, "force", bounds.MAX_TORQUE, True)
    gain_p = _number(kp, DEFAULT_POSITION_GAIN if mode == POSITION_CONTROL else 0.0, fn,
                     "positionGain", bounds.MAX_GAIN, True)
    gain_d = _number(kd, DEFAULT_VELOCITY_GAIN, fn, "velocityGain", bounds.MAX_GAIN, True)
    vmax = math.inf if max_velocity is None else _number(
        max_velocity, 0.0, fn, "maxVelocity", bounds.MAX_ANGULAR_SPEED, True)
    if mode == PD_CONTROL and kp is None:
        gain_p = 0.0
    if fixed:
        # PyBullet 3.2.7 accepts a motor command on a fixed joint and does nothing with it
        # (mini_cheetah_test.py, jacobian.py command every joint index)
        return None
    return (j, mode, q, v, f, gain_p, gain_d, vmax)


def _spherical_command(body, j, mode, q_target, v_target, force, kp, kd, max_velocity, fn):
    """(j, mode, quaternion target, velocity target (3), force (3), kp, kd, vmax) of a
    spherical joint's motor command, validated."""
    try:
        mode = int(mode)
    except (TypeError, ValueError, OverflowError):
        mode = None
    if mode not in (VELOCITY_CONTROL, POSITION_CONTROL, TORQUE_CONTROL):
        raise error(f"{fn}: joint {j} is spherical: controlMode must be POSITION_CONTROL, "
                    f"VELOCITY_CONTROL or TORQUE_CONTROL, got {mode!r}")
    from sim_node.pybullet.client import unit_quaternion

    def triple(value, default, what, nonnegative=False):
        if value is None or (hasattr(value, "__len__") and len(value) == 0):
            return np.full(3, default)
        x = finite_vector(value, 3, fn, what)
        if np.abs(x).max() > bounds.MAX_TORQUE or (nonnegative and np.any(x < 0)):
            raise error(f"{fn}: {what} must be {'>= 0 and ' if nonnegative else ''}within "
                        f"{bounds.MAX_TORQUE:g}, got {x.tolist()}")
        return x
    quat = np.array([0.0, 0.0, 0.0, 1.0]) if q_target is None or (
        hasattr(q_target, "__len__") and len(q_target) == 0) else unit_quaternion(
        q_target, fn, "targetPosition")
    velocity = triple(v_target, 0.0, "targetVelocity")
    if np.abs(velocity).max() > bounds.MAX_ANGULAR_SPEED:
        raise error(f"{fn}: targetVelocity must be within {bounds.MAX_ANGULAR_SPEED:g} rad/s")
    forces = triple(force, 0.0 if mode == TORQUE_CONTROL else DEFAULT_FORCE, "force",
                    mode != TORQUE_CONTROL)

    def gain(value, default, what):
        if value is None:
            return default
        x = finite_float(_one(value, fn, what), fn, what)
        if not 0.0 <= x <= bounds.MAX_GAIN:
            raise error(f"{fn}: {what} must be in [0, {bounds.MAX_GAIN:g}], got {x}")
        return x
    gain_p = gain(kp, DEFAULT_POSITION_GAIN if mode == POSITION_CONTROL else 0.0,
                  "positionGain")
    gain_d = gain(kd, DEFAULT_VELOCITY_GAIN, "velocityGain")
    vmax = math.inf if max_velocity is None else gain(max_velocity, math.inf, "maxVelocity")
    return (j, mode, quat, velocity, forces, gain_p, gain_d, vmax)


def _apply_spherical(body, commands):
    m = motors(body)
    for j, mode, quat, velocity, forces, kp, kd, vmax in commands:
        if mode == TORQUE_CONTROL:
            previous = m.spherical_torque.get(j, np.zeros(3))
            m.spherical_torque[j] = previous + forces
        else:
            m.spherical[j] = (quat, velocity, forces, kp if mode == POSITION_CONTROL else 0.0,
                              kd, vmax)


def _rotation_vector(q_from, q_to) -> np.ndarray:
    """log(q_from^-1 q_to) (x, y, z, w quaternions): the rotation vector in q_from's axes."""
    x1, y1, z1, w1 = q_from
    x2, y2, z2, w2 = q_to
    # conj(q1) * q2
    w = w1 * w2 + x1 * x2 + y1 * y2 + z1 * z2
    x = w1 * x2 - x1 * w2 - y1 * z2 + z1 * y2
    y = w1 * y2 + x1 * z2 - y1 * w2 - z1 * x2
    z = w1 * z2 - x1 * y2 + y1 * x2 - z1 * w2
    if w < 0:
        w, x, y, z = -w, -x, -y, -z
    s = math.sqrt(x * x + y * y + z * z)
    if s < 1e-12:
        return np.array([2.0 * x, 2.0 * y, 2.0 * z])
    angle = 2.0 * math.atan2(s, w)
    return np.array([x, y, z]) * (angle / s)


def _apply_commands(body, commands):
    table = motors(body).table
    K = motor_kernels
    for j, mode, q, v, f, kp, kd, vmax in filter(None, commands):
        if mode == TORQUE_CONTROL:
            table[K.TORQUE, j] += f
        elif mode == PD_CONTROL:
            table[K.PD_ON:K.PD_FORCE + 1, j] = (1.0, q, v, kp, kd, f)
        else:
            table[K.PD_ON, j] = 0.0
            # rows MODE .. MAX_VELOCITY are consecutive
            table[K.MODE:K.MAX_VELOCITY + 1, j] = (
                mode, q, v, kp if mode == POSITION_CONTROL else 0.0, kd, f, vmax)


# -- the step hooks (installed by connect) ---------------------------------------------------
def apply_motors(client):
    """Pre-step: turn every body's motors into engine actuator commands for this step (the
    per-step arithmetic is sim_node.engine.motors': one call per body)."""
    dt = client.time_step
    scene = client.sim.engine
    gx, gy, gz = client.gravity
    for body in client.bodies.values():
        js = body.scalar_joints[0]
        m = motors(body)
        if not len(js) and not m.spherical and not m.spherical_torque:
            if m.damping != (0.0, 0.0) and len(scene.robot_v[body.robot_index()]):
                _kernel(client, scene, body, m).damp()     # a free body: its damping only
            continue
        kernel = _kernel(client, scene, body, m)
        nv = len(m.external) if m.external is not None else -1
        external = m.external if nv == m.step.shape[1] else None
        # M, C + G - the other generalized forces the last step met (contacts, joint limits,
        # friction: the motors' prediction lags them by a step), v; then the scalar motors
        spherical = bool(m.spherical or m.spherical_torque)
        kernel.pre(gx, gy, gz, external, not spherical, dt, MOTOR_STIFFNESS,
                   DEFAULT_MAX_IMPULSE / dt)
        if spherical:
            n = m.step.shape[1]
            _apply_spherical_motors(client, body, m, dt, MOTOR_STIFFNESS / (1.0 + MOTOR_STIFFNESS),
                                    m.step[:n], m.step[n])
            if len(js):
                kernel.commands(dt, MOTOR_STIFFNESS, DEFAULT_MAX_IMPULSE / dt)
        m.stepping = True


def _kernel(client, scene, body, m):
    """The body's RobotMotors, rebuilt when the scene (a world change), the motor table or the
    step rows (a restored state) are other arrays than it was built on."""
    r = body.robot_index()
    q, v = scene.robot_q[r], scene.robot_v[r]
    nv = len(v)
    if m.step is None or m.step.shape != (nv + 2, nv):
        m.step = np.empty((nv + 2, nv))
    kernel = m.kernel
    if kernel is None or kernel.arrays[0] is not q or kernel.arrays[2] is not m.table \
            or kernel.arrays[3] is not m.step or kernel.arrays[1] is not v:
        model, data, _ = client.sim.robot_query(r)
        js, qis, vis = body.scalar_joints
        kernel = m.kernel = motor_kernels.RobotMotors(
            model, data, q, v, js, qis, vis, m.table, m.step, scene.robot_mode[r],
            scene.robot_kp[r], scene.robot_ki[r], scene.robot_kd[r], scene.robot_v_des[r],
            scene.robot_tau_ff[r], scene.robot_advance[r])
        kernel.set_damping(*_damping_links(body, model), *m.damping, scene.robot_tau_ext[r])
        # (the Simulator keeps it under the wrenches applyExternalForce holds)
        client.sim.hold_robot_forces(r, kernel.damping_forces)
    return kernel


def _damping_links(body, model):
    """(bodies (L), links (L, DAMP_NCOL)): the engine body, mass, COM and rotational inertia in
    that body's frame of each URDF link that moves (sim_node.engine.motors' damping table)."""
    link_body = model.arrays["link_body"]
    K = motor_kernels
    bodies, rows = [], []
    for k in range(body.entity.numLinks()):
        b = int(link_body[k])
        mass = body.entity.link(k).getMass()
        if b < 0 or mass.getMass() <= 0.0:
            continue            # welded to the world, or massless: no damping force
        R = model.arrays["link_R"][k].reshape(3, 3)     # the link's axes in its body's frame
        row = np.zeros(K.DAMP_NCOL)
        row[K.DAMP_MASS] = mass.getMass()
        row[K.DAMP_COM:K.DAMP_COM + 3] = model.arrays["link_p"][k].reshape(3) \
            + R @ mass.getCom()
        row[K.DAMP_INERTIA:K.DAMP_INERTIA + 9] = (R @ mass.inertiaMatrix() @ R.T).ravel()
        bodies.append(b)
        rows.append(row)
    return (np.array(bodies, dtype=np.intp),
            np.array(rows).reshape(len(rows), K.DAMP_NCOL))


def _apply_spherical_motors(client, body, m, dt, share, M, bias):
    """Spherical joints' motors (as the scalar ones, per axis of the angular velocity), and
    their one-step torques."""
    scene = client.sim.engine
    r = body.robot_index()
    q, v = scene.robot_q[r], scene.robot_v[r]
    nv = len(v)
    dofs, targets, forces, known = [], [], [], []
    for j in set(m.spherical) | set(m.spherical_torque):
        qs, vs = body.joint_coords(j)
        torque = m.spherical_torque.get(j, np.zeros(3))
        dof = list(range(vs.start, vs.stop))
        if j in m.spherical:
            quat, velocity, force, kp, kd, vmax = m.spherical[j]
            force = np.where(np.isnan(force), DEFAULT_MAX_IMPULSE / dt, force)
            w = v[vs]
            target = w + kp * _rotation_vector(q[qs], quat) / dt + kd * (velocity - w)
            target = np.minimum(np.maximum(target, -vmax), vmax)
        else:
            target, force = np.zeros(3), np.zeros(3)
        dofs += dof
        targets += list(target)
        forces += list(force)
        known += list(torque)
    m.spherical_torque = {}
    dofs = np.array(dofs, dtype=np.intp)
    targets, forces, known = np.array(targets), np.array(forces), np.array(known)
    active = forces > 0.0
    dv = np.zeros(nv)
    dv[dofs[active]] = share * (targets - v[dofs])[active]
    needed = (M @ dv / dt + bias)[dofs] - known
    # the engine damps a ball joint's three DOFs together: a joint is implicit (PID towards v*)
    # on all three axes, or, when an axis would need more than its force, explicit torques
    # clamped to +-force on all three (Bullet's clamped impulses)
    within = (np.abs(needed) <= forces) | ~active
    free = np.repeat(within.reshape(-1, 3).all(axis=1), 3) & active.reshape(-1, 3).any(
        axis=1).repeat(3)
    gain = np.where(free, MOTOR_STIFFNESS * np.maximum(M.diagonal()[dofs], 1e-12) / dt, 0.0)
    gain = np.where(free & ~active, 0.0, gain)
    clamped = np.zeros(len(dofs))
    for start in range(0, len(dofs), 3):
        block = slice(start, start + 3)
        if not free[start] and active[block].any():
            # the joint's axes solved together through its 3 x 3 inertia block
            idx = dofs[block]
            clamped[block] = _spherical_torques(M[np.ix_(idx, idx)], bias[idx] - known[block],
                                                (targets[block] - v[idx]) / dt, forces[block],
                                                active[block])
    scene.robot_mode[r][dofs] = np.where(free, ACTUATOR_PID, ACTUATOR_TORQUE)
    for name in ("robot_kp", "robot_ki", "robot_advance"):
        getattr(scene, name)[r][dofs] = 0.0
    scene.robot_kd[r][dofs] = gain
    scene.robot_v_des[r][dofs] = np.where(free, targets, 0.0)
    scene.robot_tau_ff[r][dofs] = known + clamped
    m.spherical_last = (dofs, gain, np.where(free, targets, clamped), known)


def record_motors(client):
    """Post-step: appliedJointMotorTorque of the step just taken, and the other generalized
    forces it met (for the next step's prediction)."""
    scene = client.sim.engine
    for body in client.bodies.values():
        m = body.motors
        if m is None or not m.stepping:
            continue
        m.stepping = False
        extra = None
        if m.spherical_last is not None:
            v_all = scene.robot_v[body.robot_index()]
            dofs, gain, target, known = m.spherical_last
            applied = np.where(gain > 0.0, gain * (target - v_all[dofs]), target) + known
            m.spherical_applied = dict(zip(dofs.tolist(), applied.tolist()))
            extra = np.zeros(len(v_all))
            extra[dofs] = applied
        nv = m.step.shape[1]
        external = m.external if m.external is not None and len(m.external) == nv else None
        # what else acted over the step: M a + C + G - actuator torques (contacts, limits)
        m.external = m.kernel.post(client.time_step, external, extra)


# -- external forces ----------------------------------------------------------------------------
def applyExternalForce(objectUniqueId, linkIndex, forceObj, posObj, flags, physicsClientId=0):
    """A force [N] at a point [m] on a link (-1: the base) for the next step only (as PyBullet).
    flags WORLD_FRAME: force and point in world coordinates; LINK_FRAME: both in the link's
    inertial (COM) frame, PyBullet's link frame. On a static base (and the links welded to it)
    it has no effect."""
    body = get_client(physicsClientId).body(objectUniqueId)
    fn = "applyExternalForce"
    link = body.check_link(linkIndex, fn)
    force = finite_vector(forceObj, 3, fn, "forceObj")
    point = finite_vector(posObj, 3, fn, "posObj")
    frame = _frame_flag(flags, fn)
    if np.abs(force).max() > bounds.MAX_FORCE:
        raise error(f"{fn}: |forceObj| must be <= {bounds.MAX_FORCE:g} N")
    R_c, p_c = _com_frame(body, link)
    if frame == LINK_FRAME:
        force, point = R_c @ force, p_c + R_c @ point
    # the engine's wrench: force and torque about the body's COM (the merged body's, which may
    # differ from the link's when links are welded together)
    sim_body = body.client.sim.body(body.world_id(link))
    try:
        sim_body.applyForceAtPoint(force, point)
    except ValueError:
        pass            # a static base or a link welded to it: no effect, as in PyBullet


def applyExternalTorque(objectUniqueId, linkIndex, torqueObj, flags, physicsClientId=0):
    """A torque [N m] on a link for the next step only; WORLD_FRAME or LINK_FRAME axes."""
    body = get_client(physicsClientId).body(objectUniqueId)
    fn = "applyExternalTorque"
    link = body.check_link(linkIndex, fn)
    torque = finite_vector(torqueObj, 3, fn, "torqueObj")
    frame = _frame_flag(flags, fn)
    if np.abs(torque).max() > bounds.MAX_TORQUE:
        raise error(f"{fn}: |torqueObj| must be <= {bounds.MAX_TORQUE:g} N m")
    if frame == LINK_FRAME:
        torque = _com_frame(body, link)[0] @ torque
    try:
        body.client.sim.body(body.world_id(link)).applyWrench(np.zeros(3), torque)
    except ValueError:
        pass            # a static base or a link welded to it: no effect, as in PyBullet


def _frame_flag(flags, fn) -> int:
    try:
        frame = int(flags)
    except (TypeError, ValueError, OverflowError):
        frame = None
    if frame not in (LINK_FRAME, WORLD_FRAME):
        raise error(f"{fn}: flags must be LINK_FRAME ({LINK_FRAME}) or WORLD_FRAME "
                    f"({WORLD_FRAME}), got {flags!r}")
    return frame


def _com_frame(body, link):
    k = body.robot_link(link)
    R_l, p_l = body.client.sim.link_transform(body.robot_index(), k)
    return body.com_frame(k, R_l, p_l)


# -- dynamics info --------------------------------------------------------------------------------
def getDynamicsInfo(bodyUniqueId, linkIndex, flags=0, physicsClientId=0) -> tuple:
    """PyBullet's 12-tuple (mass, lateral_friction, local inertia diagonal, local inertial pos,
    local inertial orn, restitution, rolling friction, spinning friction, contact damping,
    contact stiffness, body type (2: multibody), collision margin)."""
    body = get_client(physicsClientId).body(bodyUniqueId)
    link = body.check_link(linkIndex, "getDynamicsInfo")
    k = body.robot_link(link)
    robot_link = body.entity.link(k)
    p_lc, R_lc = body.inertial_frames[k]
    reported = body.info.get("bullet_inertias")
    if reported is not None:
        # loadURDF's masses and inertias as Bullet's importer makes them, also where the engine
        # simulates a repaired inertia (a zero or singular one: README "The PyBullet API")
        mass, diagonal = reported[k]
    else:
        m = robot_link.getMass()
        mass, diagonal = m.getMass(), np.diag(R_lc.T @ m.inertiaMatrix() @ R_lc)
    surface = _surface(body, link)
    extra = body.info.setdefault("dynamics", {}).get(link, {})
    return (float(mass), float(surface[1]), vec(diagonal), vec(p_lc),
            xyzw(R_lc), float(surface[0]), float(extra.get("rollingFriction", 0.0)),
            float(extra.get("spinningFriction", 0.0)), float(extra.get("contactDamping", -1.0)),
            float(extra.get("contactStiffness", -1.0)), 2, 0.0)


def _surface(body, link):
    """(restitution, friction, stiffness, damping) of the link's collision body, or
    PyBullet's defaults (0, 0.5) for a link without one."""
    sim = body.client.sim
    try:
        s = sim.body(body.world_id(link)).getSurface()
    except ValueError:
        return (0.0, 0.5, math.inf, math.inf)
    return (s.kRestitution, s.kFriction, s.kStiffness, s.kDamping)


def changeDynamics(bodyUniqueId, linkIndex, mass=None, lateralFriction=None,
                   spinningFriction=None, rollingFriction=None, restitution=None,
                   linearDamping=None, angularDamping=None, contactStiffness=None,
                   contactDamping=None, frictionAnchor=None, localInertiaDiagonal=None,
                   ccdSweptSphereRadius=None, contactProcessingThreshold=None,
                   activationState=None, jointDamping=None, anisotropicFriction=None,
                   maxJointVelocity=None, collisionMargin=None, jointLowerLimit=None,
                   jointUpperLimit=None, jointLimitForce=None, sleepThreshold=None,
                   physicsClientId=0):
    """Change a link's dynamics. Mapped: mass, localInertiaDiagonal (the link's inertia about its
    COM in its inertial frame), lateralFriction, restitution, contactStiffness and
    contactDamping (together, the engine's contact spring and damper), linearDamping and
    angularDamping (the whole body's link damping, as Bullet's), jointDamping (the
    engine's viscous joint damping on every DOF of the link's joint) and jointLowerLimit +
    jointUpperLimit (together, lower <= upper: the engine's position limits of the link's
    scalar joint). Kept for getDynamicsInfo only: spinningFriction, rollingFriction. Accepted
    and ignored with a one-time warning: the rest (README). getJointInfo keeps reporting the
    file's damping and limits, as PyBullet's does. Validated whole before anything applies."""
    client = get_client(physicsClientId)
    body = client.body(bodyUniqueId)
    fn = "changeDynamics"
    link = body.check_link(linkIndex, fn)

    def positive(value, what, allow_zero=True):
        if value is None:
            return None
        x = finite_float(value, fn, what)
        if x < 0 or (x == 0 and not allow_zero):
            raise error(f"{fn}: {what} must be {'>=' if allow_zero else '>'} 0, got {x}")
        return x
    new_mass = positive(mass, "mass")
    friction = positive(lateralFriction, "lateralFriction")
    if friction is not None and friction > bounds.MAX_FRICTION:
        raise error(f"{fn}: lateralFriction must be <= {bounds.MAX_FRICTION:g}")
    rest = positive(restitution, "restitution")
    if rest is not None and rest > 1:
        raise error(f"{fn}: restitution must be in [0, 1], got {rest}")
    stiffness = positive(contactStiffness, "contactStiffness", False)
    damping = positive(contactDamping, "contactDamping", False)
    if (stiffness is None) != (damping is None):
        raise error(f"{fn}: contactStiffness and contactDamping go together (give both)")
    diag = None
    if localInertiaDiagonal is not None:
        diag = finite_vector(localInertiaDiagonal, 3, fn, "localInertiaDiagonal")
        if np.any(diag < 0):
            raise error(f"{fn}: localInertiaDiagonal must be >= 0, got {diag.tolist()}")
    joint_damping = positive(jointDamping, "jointDamping")
    if joint_damping is not None and joint_damping > bounds.MAX_GAIN:
        # (as the PID's kd: beyond it the implicit term swamps the mass matrix)
        raise error(f"{fn}: jointDamping must be <= {bounds.MAX_GAIN:g} N m s/rad, got "
                    f"{joint_damping}")
    limits = _joint_limits(body, link, jointLowerLimit, jointUpperLimit, fn)
    kept = {k: positive(v, k) for k, v in (("spinningFriction", spinningFriction),
                                           ("rollingFriction", rollingFriction))
            if v is not None}
    linear_damping = positive(linearDamping, "linearDamping")
    angular_damping = positive(angularDamping, "angularDamping")
    ignored = {k: v for k, v in (("frictionAnchor", frictionAnchor),
                                 ("ccdSweptSphereRadius", ccdSweptSphereRadius),
                                 ("contactProcessingThreshold", contactProcessingThreshold),
                                 ("activationState", activationState),
                                 ("anisotropicFriction", anisotropicFriction),
                                 ("maxJointVelocity", maxJointVelocity),
                                 ("collisionMargin", collisionMargin),
                                 ("jointLimitForce", jointLimitForce),
                                 ("sleepThreshold", sleepThreshold)) if v is not None}
    if body.info.get("maximal_coordinates"):
        # (PyBullet's btRigidBody damping is another formula: not implemented, README)
        ignored.update({k: v for k, v in (("linearDamping", linear_damping),
                                          ("angularDamping", angular_damping)) if v is not None})
        linear_damping = angular_damping = None
    for k, v in ignored.items():
        if k != "anisotropicFriction":
            finite_float(v, fn, k)
    has_surface = True
    try:
        client.sim.body(body.world_id(link))
    except ValueError:
        has_surface = False
    if not has_surface and (friction is not None or rest is not None or stiffness is not None):
        raise error(f"{fn}: link {link} of body {body.uid} has no collision shape: no contact "
                    "parameters to change")
    # -- apply
    k = body.robot_link(link)
    robot_link = body.entity.link(k)
    if new_mass is not None or diag is not None:
        from sim_node.model.robot import Mass
        old = robot_link.getMass()
        p_lc, R_lc = body.inertial_frames[k]
        inertia = old.inertiaMatrix()
        if diag is not None:
            inertia = R_lc @ np.diag(diag) @ R_lc.T
        com = old.getCom() if old.getMass() > 0 or new_mass is None else p_lc
        # (the engine's scene shares the robot's model: the step sees the new inertia)
        robot_link.setMass(Mass(old.getMass() if new_mass is None else new_mass, com, inertia))
        reported = body.info.get("bullet_inertias")
        if reported is not None:
            was_mass, was_diagonal = reported[k]
            reported[k] = (was_mass if new_mass is None else new_mass,
                           was_diagonal if diag is None else np.array(diag, dtype=float))
    if friction is not None or rest is not None or stiffness is not None:
        sim_body = client.sim.body(body.world_id(link))
        s = sim_body.getSurface()
        if friction is not None:
            s.kFriction = friction
        if rest is not None:
            s.kRestitution = rest
        if stiffness is not None:
            s.kStiffness, s.kDamping = stiffness, damping
        sim_body.setSurface(s)
        extra = body.info.setdefault("dynamics", {}).setdefault(link, {})
        if stiffness is not None:
            extra["contactStiffness"], extra["contactDamping"] = stiffness, damping
    if joint_damping is not None or limits is not None:
        _set_joint_parameters(body, link, joint_damping, limits)
    body.info.setdefault("dynamics", {}).setdefault(link, {}).update(kept)
    if linear_damping is not None or angular_damping is not None:
        # Bullet's damping is the body's, whichever link is named
        m = motors(body)
        lin, ang = m.damping
        m.damping = (lin if linear_damping is None else linear_damping,
                     ang if angular_damping is None else angular_damping)
    if body.motors is not None and body.motors.kernel is not None:
        # its damping table: the new masses and coefficients (the next step's kernel); no
        # damping force until then (a body without motors and without damping gets none)
        body.motors.kernel = None
        r = body.robot_index()
        client.sim.hold_robot_forces(r, None)
        client.sim.engine.robot_tau_ext[r][:] = 0.0
    for name in ignored:
        warn_once(client, f"changeDynamics:{name}", f"{fn}: {name} is accepted and ignored "
                  "by sim_node (README 'The PyBullet API: bodies, joints, control')")


def _joint_limits(body, link: int, lower, upper, fn: str):
    """(lower, upper) of changeDynamics' jointLowerLimit / jointUpperLimit, checked, or None.
    PyBullet applies them when lower <= upper only (defaults 1 / -1: a call with one of them
    alone sets [1, upper] or nothing); sim_node wants both, lower <= upper, on a revolute,
    continuous or prismatic joint, and says so otherwise. +-inf leaves that side free."""
    if lower is None and upper is None:
        return None
    if lower is None or upper is None:
        raise error(f"{fn}: jointLowerLimit and jointUpperLimit go together (give both, lower "
                    "<= upper; PyBullet would take 1 / -1 for the missing one)")
    values = []
    for value, what in ((lower, "jointLowerLimit"), (upper, "jointUpperLimit")):
        try:
            x = float(value)
        except (TypeError, ValueError, OverflowError):
            raise error(f"{fn}: {what} must be a number, got {value!r}") from None
        if math.isnan(x):
            raise error(f"{fn}: {what} is NaN")
        values.append(x)
    lo, hi = values
    if not (lo <= hi and lo < math.inf and hi > -math.inf):
        raise error(f"{fn}: jointLowerLimit {lo} and jointUpperLimit {hi}: the limits need "
                    "lower <= upper, lower < inf, upper > -inf (PyBullet ignores other pairs)")
    if link < 0:
        raise error(f"{fn}: joint limits need a joint: linkIndex -1 is the base")
    qs, _ = body.joint_coords(link)
    kind = body.entity.urdf.joints[body.joint_name(link)].type
    if qs.stop - qs.start != 1 or kind not in ("revolute", "continuous", "prismatic"):
        raise error(f"{fn}: joint {link} of body {body.uid} is a {kind} joint: joint limits "
                    "apply to revolute, continuous and prismatic joints")
    return lo, hi


def _set_joint_parameters(body, link: int, damping, limits):
    """Joint damping (every DOF of the link's joint; none for the base or a fixed joint, as in
    PyBullet) and position limits into the robot's model (kept over rebuilds of the scene)
    and the engine's scene (the next step uses them)."""
    if link < 0:
        return
    st = body.entity.structure
    scene = body.client.sim.engine
    r = body.robot_index()
    qs, vs = body.joint_coords(link)
    if damping is not None:
        for k in range(vs.start, vs.stop):
            st.damping[k] = damping
            scene.set_joint_damping(r, k, damping)
    if limits is not None:
        st.q_lower[qs.start], st.q_upper[qs.start] = limits
        scene.set_joint_limits(r, vs.start, *limits)


def _link_twists(body):
    """Per robot link: (COM position, COM velocity, angular velocity, R, I_C in world axes,
    mass)."""
    from sim_node.engine.api import kinematics
    r = body.robot_index()
    model, data, q = body.client.sim.robot_query(r)
    v = body.client.sim.engine.robot_v[r]
    R_all, p_all = body.link_frames()
    out = []
    for k in range(body.entity.numLinks()):
        mass = body.entity.link(k).getMass()
        com = mass.getCom()
        twist = kinematics.jacobian(model, data, q, k, com) @ v
        R = R_all[k]
        out.append((p_all[k] + R @ com, twist[3:], twist[:3], R,
                    R @ mass.inertiaMatrix() @ R.T, mass.getMass()))
    return out


def sensors_before(client):
    """Pre-step: the links' velocities of the bodies with joint force-torque sensors."""
    for body in client.bodies.values():
        if body.sensors:
            body.twists_before = _link_twists(body)


def sensors_after(client):
    """Post-step: each sensed joint's reaction, from Newton's law on its child subtree. The force
    the parent exerts through the joint balances the subtree's momentum change over the step
    (finite difference of the links' COM velocities), gravity and the contact forces of the
    step's last substep on the subtree's bodies: F = sum m (a - g) - f_contact. The moment is
    PyBullet's (measured on a pendulum held, hanging and falling): minus the moment of those
    same forces about the joint, without the links' rotational inertia terms. Both in the
    child's (URDF link) axes."""
    bodies = [b for b in client.bodies.values() if b.sensors and hasattr(b, "twists_before")]
    if not bodies:
        return
    dt = client.time_step
    g = np.asarray(client.gravity, dtype=float)
    sim = client.sim
    contacts = sim.getAllContacts()
    for body in bodies:
        before, after = body.twists_before, _link_twists(body)
        parent = body.entity.structure.link_parent
        frames_p = body.link_frames()[1]
        reactions = {}
        for j in body.sensors:
            c = body.robot_link(j)
            subtree = {c}
            for k in range(c + 1, len(parent)):
                if parent[k] in subtree:
                    subtree.add(k)
            p_joint = frames_p[c]
            R_c = after[c][3]
            force, moment = np.zeros(3), np.zeros(3)
            for k in subtree:
                x, v1, _, _, _, m = after[k]
                f_k = m * ((v1 - before[k][1]) / dt - g)
                force += f_k
                moment += np.cross(x - p_joint, f_k)
            ids = {sim.getBodyID(body.entity.link(k).getID()) for k in subtree
                   if _has_body(sim, body.entity.link(k).getID())}
            for id1, id2, point, f in zip(contacts["id1"], contacts["id2"], contacts["point"],
                                          contacts["force"]):
                sign = (id1 in ids) - (id2 in ids)
                if sign:
                    force -= sign * f
                    moment -= sign * np.cross(point - p_joint, f)
            reactions[j] = np.concatenate([R_c.T @ force, -(R_c.T @ moment)])
        body.reactions = reactions


def _has_body(sim, world_id) -> bool:
    try:
        sim.getBodyID(world_id)
    except ValueError:
        return False
    return True


def _spherical_torques(B, b, a_target, force, active) -> np.ndarray:
    """Motor torques tau (3) of a saturated spherical joint, B a = tau - b: a = a_target on
    the motor axes whose torque stays within +-force, the others at their bound (0 when
    inactive), solved again after each axis reaches its bound."""
    fixed = ~active
    tau = np.zeros(3)
    for _ in range(4):
        U, O = ~fixed, fixed
        if not U.any():
            break
        a = np.zeros(3)
        a[U] = a_target[U]
        if O.any():
            a[O] = np.linalg.solve(B[np.ix_(O, O)], tau[O] - b[O] - B[np.ix_(O, U)] @ a[U])
        tau[U] = B[U] @ a + b[U]
        over = U & (np.abs(tau) > force)
        if not over.any():
            break
        tau[over] = np.copysign(force[over], tau[over])
        fixed = fixed | over
    return tau
