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
  * TORQUE_CONTROL applies its torque for the next step only (PyBullet clears it after a
    step), on top of the motor: as in PyBullet, disable the motor first (VELOCITY_CONTROL,
    force=0) for pure torque control.
  * PD_CONTROL is an explicit PD torque kp (q_target - q) + kd (qd_target - qd) clipped to
    +-force, applied at every step until the joint gets another motor mode.
appliedJointMotorTorque (getJointState) is the motor's torque over the last step (the
implicit one as realised: K (v* - qd_new)) plus the TORQUE / PD torques applied in it.
"""
from __future__ import annotations

import math

import numpy as np

from sim_node.engine.api import crba, rnea
from sim_node.pybullet.client import finite_float, finite_vector, get_client, warn_once
from sim_node.pybullet.errors import error
from sim_node.sim import bounds
from sim_node.sim.controller import ACTUATOR_PID, ACTUATOR_TORQUE

__all__ = ["setJointMotorControl2", "setJointMotorControlArray", "setJointMotorControlMultiDof",
           "setJointMotorControlMultiDofArray", "applyExternalForce", "applyExternalTorque",
           "changeDynamics", "getDynamicsInfo"]

# PyBullet's control modes and frames
VELOCITY_CONTROL, TORQUE_CONTROL, POSITION_CONTROL, PD_CONTROL = 0, 1, 2, 3
STABLE_PD_CONTROL = 4
LINK_FRAME, WORLD_FRAME = 1, 2
_MODES = {VELOCITY_CONTROL: "VELOCITY_CONTROL", TORQUE_CONTROL: "TORQUE_CONTROL",
          POSITION_CONTROL: "POSITION_CONTROL", PD_CONTROL: "PD_CONTROL"}

DEFAULT_MAX_IMPULSE = 1.0           # [N s or N m s] Bullet's default motor, per step
DEFAULT_FORCE = 100000.0            # [N m or N] pybullet's setJointMotorControl2 default force
DEFAULT_POSITION_GAIN = 0.1         # pybullet's positionGain default (POSITION_CONTROL)
DEFAULT_VELOCITY_GAIN = 1.0         # pybullet's velocityGain default
MOTOR_STIFFNESS = 100.0             # the motor's implicit damping in units of M_jj / dt


class Motors:
    """The motor table of one body, per PyBullet joint (entries of non-scalar joints unused)."""

    def __init__(self, n: int):
        self.mode = np.full(n, VELOCITY_CONTROL)           # the motor: VELOCITY or POSITION
        self.q_target = np.zeros(n)
        self.v_target = np.zeros(n)
        self.kp = np.zeros(n)
        self.kd = np.full(n, DEFAULT_VELOCITY_GAIN)
        self.force = np.full(n, np.nan)                    # nan: the default impulse
        self.max_velocity = np.full(n, np.inf)
        self.pd = {}                    # joint -> (q_target, v_target, kp, kd, force)
        self.torque = np.zeros(n)       # TORQUE_CONTROL, for the next step
        self.applied = np.zeros(n)      # appliedJointMotorTorque of the last step
        # the last step's motor: joint -> (K, v*) for the implicit ones, (0, +-force) clamped
        self.last = {}

    def copy_state(self) -> dict:
        return {k: (v.copy() if isinstance(v, np.ndarray) else dict(v))
                for k, v in self.__dict__.items()}

    def set_state(self, state: dict):
        for k, v in state.items():
            setattr(self, k, v.copy() if isinstance(v, np.ndarray) else dict(v))


def motors(body) -> Motors:
    if body.motors is None:
        body.motors = Motors(body.num_joints)
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
                                 velocityGain=None, maxVelocity=None, physicsClientId=0):
    """setJointMotorControl2 with vector arguments: one entry for scalar joints (a list of one
    number or the number), spherical joints' motors are not supported yet (error)."""
    fn = "setJointMotorControlMultiDof"
    body = get_client(physicsClientId).body(bodyUniqueId)
    j = body.check_joint(jointIndex, fn)
    qs, _ = body.joint_coords(j)
    if qs.stop - qs.start > 1:
        raise error(f"{fn}: joint {j} is {body.joint_type(j)}: multi-DOF joint motors are not "
                    "supported by sim_node yet (scalar joints are)")
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
    commands = []
    for i, j in enumerate(joints):
        qs, _ = body.joint_coords(j)
        if qs.stop - qs.start > 1:
            raise error(f"{fn}: joint {j} is {body.joint_type(j)}: multi-DOF joint motors are "
                        "not supported by sim_node yet (scalar joints are)")

        def pick(values, name):
            if values is None:
                return None
            if len(values) != len(joints):
                raise error(f"{fn}: {name} has {len(values)} entries, jointIndices "
                            f"{len(joints)}")
            return _one(values[i], fn, name)
        commands.append(_command(body, j, controlMode, pick(targetPositions, "targetPositions"),
                                 pick(targetVelocities, "targetVelocities"),
                                 pick(forces, "forces"), pick(positionGains, "positionGains"),
                                 pick(velocityGains, "velocityGains"),
                                 pick(maxVelocities, "maxVelocities"), fn))
    _apply_commands(body, commands)


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


def _command(body, j, mode, q_target, v_target, force, kp, kd, max_velocity, fn) -> tuple:
    try:
        mode = int(mode)
    except (TypeError, ValueError):
        raise error(f"{fn}: controlMode must be one of VELOCITY_CONTROL (0), TORQUE_CONTROL (1), "
                    f"POSITION_CONTROL (2), PD_CONTROL (3); got {mode!r}") from None
    if mode not in _MODES:
        raise error(f"{fn}: controlMode {mode} is not supported; valid: "
                    + ", ".join(f"{n} ({m})" for m, n in _MODES.items()))
    _scalar_joint(body, j, fn)

    def number(value, default, what, bound, nonnegative=False):
        x = default if value is None else finite_float(value, fn, what)
        if abs(x) > bound:
            raise error(f"{fn}: |{what}| must be <= {bound:g}, got {x}")
        if nonnegative and x < 0:
            raise error(f"{fn}: {what} must be >= 0, got {x}")
        return x
    q = number(q_target, 0.0, "targetPosition", bounds.MAX_JOINT_POSITION)
    v = number(v_target, 0.0, "targetVelocity", bounds.MAX_ANGULAR_SPEED)
    if mode == TORQUE_CONTROL:
        f = number(force, 0.0, "force", bounds.MAX_TORQUE)
    else:
        f = number(force, DEFAULT_FORCE, "force", bounds.MAX_TORQUE, True)
    gain_p = number(kp, DEFAULT_POSITION_GAIN if mode == POSITION_CONTROL else 0.0,
                    "positionGain", bounds.MAX_GAIN, True)
    gain_d = number(kd, DEFAULT_VELOCITY_GAIN, "velocityGain", bounds.MAX_GAIN, True)
    vmax = math.inf if max_velocity is None else number(max_velocity, 0.0, "maxVelocity",
                                                        bounds.MAX_ANGULAR_SPEED, True)
    if mode == PD_CONTROL and kp is None:
        gain_p = 0.0
    return (j, mode, q, v, f, gain_p, gain_d, vmax)


def _apply_commands(body, commands):
    m = motors(body)
    for j, mode, q, v, f, kp, kd, vmax in commands:
        if mode == TORQUE_CONTROL:
            m.torque[j] += f
        elif mode == PD_CONTROL:
            m.pd[j] = (q, v, kp, kd, f)
        else:
            m.pd.pop(j, None)
            m.mode[j], m.q_target[j], m.v_target[j] = mode, q, v
            m.kp[j] = kp if mode == POSITION_CONTROL else 0.0
            m.kd[j], m.force[j], m.max_velocity[j] = kd, f, vmax


# -- the step hooks (installed by connect) ---------------------------------------------------
def apply_motors(client):
    """Pre-step: turn every body's motors into engine actuator commands for this step."""
    dt = client.time_step
    scene = client.sim.engine
    for body in client.bodies.values():
        if body.num_joints == 0:
            continue
        m = motors(body)
        m.last = {}
        r = body.robot_index()
        q, v = scene.robot_q[r], scene.robot_v[r]
        known = np.zeros(len(v))         # TORQUE_CONTROL and PD_CONTROL torques
        targets = {}                     # motor joint -> (v index, v*, force)
        for j in range(body.num_joints):
            qs, vs = body.joint_coords(j)
            if qs.stop - qs.start != 1:
                continue
            qi, vi = qs.start, vs.start
            known[vi] = m.torque[j]
            if j in m.pd:
                qt, vt, kp, kd, f = m.pd[j]
                known[vi] += min(f, max(-f, kp * (qt - q[qi]) + kd * (vt - v[vi])))
            force = m.force[j]
            if np.isnan(force):
                force = DEFAULT_MAX_IMPULSE / dt
            if force > 0.0:
                target = (v[vi] + m.kp[j] * (m.q_target[j] - q[qi]) / dt
                          + m.kd[j] * (m.v_target[j] - v[vi]))
                vmax = m.max_velocity[j]
                targets[j] = (vi, min(vmax, max(-vmax, target)), force)
        m.torque[:] = 0.0
        mode, kp_arr, ki_arr, kd_arr = (scene.robot_mode[r], scene.robot_kp[r],
                                        scene.robot_ki[r], scene.robot_kd[r])
        v_des, tau_ff, advance = scene.robot_v_des[r], scene.robot_tau_ff[r], scene.robot_advance[r]
        for j in range(body.num_joints):
            qs, vs = body.joint_coords(j)
            if qs.stop - qs.start == 1 and j not in targets:
                vi = vs.start
                mode[vi], kp_arr[vi], ki_arr[vi], kd_arr[vi] = ACTUATOR_TORQUE, 0.0, 0.0, 0.0
                v_des[vi], advance[vi], tau_ff[vi] = 0.0, 0.0, known[vi]
        if not targets:
            continue
        # the torque each motor needs this step with every motor reaching its v* (the
        # implicit motor gets to c / (1 + c) of the way): tau = M dv / dt + C + G - known
        model, data, q_full = client.sim.robot_query(r)
        M = crba.mass_matrix(model, data, q_full)
        bias = rnea.inverse_dynamics(model, data, q_full, v, np.zeros(len(v)), client.gravity)
        share = MOTOR_STIFFNESS / (1.0 + MOTOR_STIFFNESS)
        dv = np.zeros(len(v))
        for vi, target, _ in targets.values():
            dv[vi] = share * (target - v[vi])
        needed = M @ dv / dt + bias - known
        for j, (vi, target, force) in targets.items():
            inertia = max(M[vi, vi], 1e-12)
            kp_arr[vi] = ki_arr[vi] = 0.0
            advance[vi] = 0.0
            if abs(needed[vi]) <= force:
                gain = MOTOR_STIFFNESS * inertia / dt
                mode[vi], kd_arr[vi], v_des[vi], tau_ff[vi] = ACTUATOR_PID, gain, target, known[vi]
                m.last[j] = (gain, target, known[vi])
            else:
                clamped = math.copysign(force, needed[vi])
                mode[vi], kd_arr[vi], v_des[vi] = ACTUATOR_TORQUE, 0.0, 0.0
                tau_ff[vi] = clamped + known[vi]
                m.last[j] = (0.0, clamped, known[vi])


def record_motors(client):
    """Post-step: appliedJointMotorTorque of the step just taken."""
    scene = client.sim.engine
    for body in client.bodies.values():
        m = body.motors
        if m is None:
            continue
        r = body.robot_index()
        v = scene.robot_v[r]
        m.applied[:] = 0.0
        for j, (gain, target, torque) in m.last.items():
            vi = body.joint_coords(j)[1].start
            m.applied[j] = (gain * (target - v[vi]) if gain > 0.0 else target) + torque


# -- external forces ----------------------------------------------------------------------------
def applyExternalForce(objectUniqueId, linkIndex, forceObj, posObj, flags, physicsClientId=0):
    """A force [N] at a point [m] on a link (-1: the base) for the next step only (as PyBullet).
    flags WORLD_FRAME: force and point in world coordinates; LINK_FRAME: both in the link's
    inertial (COM) frame, PyBullet's link frame."""
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
    world_id = body.world_id(link)
    sim_body = body.client.sim.body(world_id)
    sim_body.applyForceAtPoint(force, point)


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
    body.client.sim.body(body.world_id(link)).applyWrench(np.zeros(3), torque)


def _frame_flag(flags, fn) -> int:
    try:
        frame = int(flags)
    except (TypeError, ValueError):
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
    mass = robot_link.getMass()
    p_lc, R_lc = body.inertial_frames[k]
    inertia = R_lc.T @ mass.inertiaMatrix() @ R_lc
    surface = _surface(body, link)
    extra = body.info.setdefault("dynamics", {}).get(link, {})
    from sim_node.pybullet.bodies import vec, xyzw
    return (float(mass.getMass()), float(surface[1]), vec(np.diag(inertia)), vec(p_lc),
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
                   jointUpperLimit=None, jointLimitForce=None, physicsClientId=0):
    """Change a link's dynamics. Mapped: mass, localInertiaDiagonal (the link's inertia about its
    COM in its inertial frame), lateralFriction, restitution, contactStiffness and
    contactDamping (together, the engine's contact spring and damper). Kept for
    getDynamicsInfo only: spinningFriction, rollingFriction. Accepted and ignored with a
    one-time warning: the rest (README). Validated whole before anything applies."""
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
    kept = {k: positive(v, k) for k, v in (("spinningFriction", spinningFriction),
                                           ("rollingFriction", rollingFriction))
            if v is not None}
    ignored = {k: v for k, v in (("linearDamping", linearDamping),
                                 ("angularDamping", angularDamping),
                                 ("frictionAnchor", frictionAnchor),
                                 ("ccdSweptSphereRadius", ccdSweptSphereRadius),
                                 ("contactProcessingThreshold", contactProcessingThreshold),
                                 ("activationState", activationState),
                                 ("jointDamping", jointDamping),
                                 ("anisotropicFriction", anisotropicFriction),
                                 ("maxJointVelocity", maxJointVelocity),
                                 ("collisionMargin", collisionMargin),
                                 ("jointLowerLimit", jointLowerLimit),
                                 ("jointUpperLimit", jointUpperLimit),
                                 ("jointLimitForce", jointLimitForce)) if v is not None}
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
        robot_link.setMass(Mass(old.getMass() if new_mass is None else new_mass, com, inertia))
        _refresh_inertia(client, body)
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
    body.info.setdefault("dynamics", {}).setdefault(link, {}).update(kept)
    for name in ignored:
        warn_once(client, f"changeDynamics:{name}", f"{fn}: {name} is accepted and ignored "
                  "by sim_node (README 'The PyBullet API: bodies, joints, control')")


def _refresh_inertia(client, body):
    """The engine scene copies the robot's inertias when built: rebuild it (state kept)."""
    sim = client.sim
    try:
        sim._rebuild(lambda world: None)
    except ValueError as e:
        raise error(f"changeDynamics: {e}") from None
    client._rebuilt()


def joint_reaction(body, j: int) -> np.ndarray:
    """The reaction wrench of joint j (enableJointForceTorqueSensor): not computed yet."""
    return np.zeros(6)
