"""Bodies, joints and links: PyBullet's getJointInfo, get/resetJointState, getLinkState, base
pose and velocity.

Frames (sim_node.pybullet.client): the base pose and getLinkState's first pose are the
inertial (COM) frame of the link; worldLinkFrame is the URDF link frame. Joint states are the
simulated state, read fresh at every call: getLinkState computes the forward kinematics every
time (PyBullet without computeForwardKinematics=1 returns the poses of the last step; here they
are always current). Velocities are in world axes: linear of the link's COM, angular.

PyBullet's state vectors have 7 base coordinates (position, quaternion) and 6 base velocities
before the joints' whether the base moves or not: getJointInfo's qIndex / uIndex count so.
"""
from __future__ import annotations

import numpy as np
from sim_node.engine.api import kinematics
from sim_node.pybullet.client import (finite_float, finite_vector, get_client, rotation,
                                      unit_quaternion, vec, xyzw)
from sim_node.pybullet.errors import error
from sim_node.sim import bounds

__all__ = ["getNumBodies", "getBodyUniqueId", "getBodyInfo", "getNumJoints", "getJointInfo",
           "getJointState", "getJointStates", "getJointStateMultiDof",
           "getJointStatesMultiDof", "resetJointState", "resetJointStateMultiDof",
           "resetJointStatesMultiDof", "getLinkState", "getLinkStates",
           "getBasePositionAndOrientation", "resetBasePositionAndOrientation",
           "getBaseVelocity", "resetBaseVelocity", "enableJointForceTorqueSensor"]

# PyBullet's joint types
JOINT_REVOLUTE, JOINT_PRISMATIC, JOINT_SPHERICAL, JOINT_PLANAR, JOINT_FIXED = 0, 1, 2, 3, 4
_JOINT_TYPE = {"revolute": JOINT_REVOLUTE, "continuous": JOINT_REVOLUTE,
               "prismatic": JOINT_PRISMATIC, "spherical": JOINT_SPHERICAL,
               "planar": JOINT_PLANAR, "fixed": JOINT_FIXED,
               "floating": JOINT_FIXED}     # (Bullet has no free joint inside a tree)
_SCALAR = ("revolute", "continuous", "prismatic")


# -- bodies --------------------------------------------------------------------------------
def getNumBodies(physicsClientId=0) -> int:
    return len(get_client(physicsClientId).bodies)


def getBodyUniqueId(serialIndex, physicsClientId=0) -> int:
    """The unique id of the serialIndex-th body (0 <= serialIndex < getNumBodies())."""
    client = get_client(physicsClientId)
    uids = list(client.bodies)
    try:
        k = int(serialIndex)
    except (TypeError, ValueError, OverflowError):
        raise error(f"getBodyUniqueId: serialIndex must be an integer, got {serialIndex!r}") \
            from None
    if not 0 <= k < len(uids):
        raise error(f"getBodyUniqueId: serialIndex {k} out of range (there are {len(uids)} "
                    "bodies)")
    return uids[k]


def getBodyInfo(bodyUniqueId, physicsClientId=0) -> tuple:
    """(base link name, body name), bytes, as PyBullet."""
    body = get_client(physicsClientId).body(bodyUniqueId)
    return body.base_name, body.name


def getNumJoints(bodyUniqueId, physicsClientId=0) -> int:
    return get_client(physicsClientId).body(bodyUniqueId).num_joints


def getJointInfo(bodyUniqueId, jointIndex, physicsClientId=0) -> tuple:
    """PyBullet's 17-tuple: (jointIndex, jointName, jointType, qIndex, uIndex, flags,
    jointDamping, jointFriction, jointLowerLimit, jointUpperLimit, jointMaxForce,
    jointMaxVelocity, linkName, jointAxis, parentFramePos, parentFrameOrn, parentIndex).
    jointAxis is in the child's inertial frame; parentFramePos / parentFrameOrn place the joint
    in the parent's inertial frame as Bullet does (parentFrameOrn maps parent to child axes at
    q = 0). Joints without position limits report (0, -1) as PyBullet."""
    body = get_client(physicsClientId).body(bodyUniqueId)
    j = body.check_joint(jointIndex, "getJointInfo")
    return joint_info(body, j)


def joint_info(body, j: int) -> tuple:
    robot = body.entity
    st = robot.structure
    k = body.robot_link(j)
    name = st.link_joint[k]
    joint = robot.urdf.joints[name]
    parent = st.link_parent[k]
    jtype = _JOINT_TYPE[joint.type]
    movable = name in st.joint_q_index
    if movable:
        base_q, base_v = (0, 0) if st.floating else (7, 6)
        q_index = st.joint_q_index[name] + base_q
        u_index = st.joint_v_index[name] + base_v
    else:
        q_index = u_index = -1
    flags = 1 if movable and joint.type in _SCALAR else 0
    if name in body.joint_limits:
        lower, upper, effort, velocity = (float(x) for x in body.joint_limits[name])
    else:
        lower, upper = (1.0, -1.0) if body.info.get("created") else (0.0, -1.0)
        effort = velocity = 0.0
    p_pc, R_pc = body.inertial_frames[parent]
    p_cc, R_cc = body.inertial_frames[k]
    axis = (0.0, 0.0, 0.0)
    if joint.type in ("revolute", "continuous", "prismatic", "planar"):
        axis = vec(R_cc.T @ np.asarray(joint.axis, dtype=float))
    R_j, p_j = np.asarray(joint.origin.R), np.asarray(joint.origin.p, dtype=float)
    # the joint pivot from the parent's COM in its inertial axes, and the rotation from the
    # parent's inertial axes to the child's at q = 0 (Bullet's eVector, zeroRotParentToThis)
    parent_pos = R_pc.T @ (p_j - p_pc)
    parent_orn = R_cc.T @ R_j.T @ R_pc
    return (j, name.encode(), jtype, q_index, u_index, flags, float(joint.damping),
            float(joint.friction), lower, upper, effort, velocity, st.link_names[k].encode(),
            axis, vec(parent_pos), xyzw(parent_orn), parent - 1 if parent > 0 else -1)


# -- joint states -----------------------------------------------------------------------------
def getJointState(bodyUniqueId, jointIndex, physicsClientId=0) -> tuple:
    """(jointPosition, jointVelocity, jointReactionForces (6), appliedJointMotorTorque) of a
    joint: 0 position and velocity for fixed joints, the first coordinate of multi-DOF joints
    (getJointStateMultiDof has them all). Reaction forces are zeros unless
    enableJointForceTorqueSensor is on for the joint."""
    body = get_client(physicsClientId).body(bodyUniqueId)
    j = body.check_joint(jointIndex, "getJointState")
    return _joint_state(body, j, multi=False)


def getJointStates(bodyUniqueId, jointIndices, physicsClientId=0) -> tuple:
    body = get_client(physicsClientId).body(bodyUniqueId)
    indices = _indices(body, jointIndices, "getJointStates")
    return tuple(_joint_state(body, j, multi=False) for j in indices)


def getJointStateMultiDof(bodyUniqueId, jointIndex, physicsClientId=0) -> tuple:
    """(jointPosition, jointVelocity, jointReactionForces, jointMotorTorque): position and
    velocity as tuples of the joint's coordinates (1 for scalar joints, a quaternion (x, y, z,
    w) and angular velocity (3) for spherical joints, empty for fixed joints)."""
    body = get_client(physicsClientId).body(bodyUniqueId)
    j = body.check_joint(jointIndex, "getJointStateMultiDof")
    return _joint_state(body, j, multi=True)


def getJointStatesMultiDof(bodyUniqueId, jointIndex=None, physicsClientId=0,
                           jointIndices=None) -> tuple:
    """getJointStateMultiDof of each joint of jointIndex: a list of joint indices (PyBullet
    3.2.7's name for it; jointIndices, as getJointStates, is taken too)."""
    fn = "getJointStatesMultiDof"
    if (jointIndex is None) == (jointIndices is None):
        raise error(f"{fn}: give the list of joint indices once, as jointIndex (or jointIndices)")
    body = get_client(physicsClientId).body(bodyUniqueId)
    indices = _indices(body, jointIndex if jointIndices is None else jointIndices, fn)
    return tuple(_joint_state(body, j, multi=True) for j in indices)


def _indices(body, joint_indices, function: str) -> list:
    if isinstance(joint_indices, (str, bytes)) or not hasattr(joint_indices, "__iter__"):
        raise error(f"{function}: jointIndices must be a sequence of joint indices, got "
                    f"{joint_indices!r}")
    return [body.check_joint(j, function, "jointIndices entry") for j in joint_indices]


def _joint_state(body, j: int, multi: bool) -> tuple:
    qs, vs = body.joint_coords(j)
    q, v = body.q(), body.v()
    m = body.motors
    reaction = (0.0,) * 6
    if j in body.sensors:
        # (sim_node.pybullet.control's sensors_after: the last step's reaction)
        reaction = vec(body.reactions.get(j, np.zeros(6)))
    # the torques the motors, TORQUE_CONTROL and PD_CONTROL applied over the last step
    if m is None:
        torque = [0.0] * (vs.stop - vs.start)
    elif vs.stop - vs.start == 1:
        torque = [float(m.applied[j])]
    else:
        torque = [float(m.spherical_applied.get(k, 0.0)) for k in range(vs.start, vs.stop)]
    if multi:
        if qs.stop == qs.start:
            return ((), (), reaction, ())
        return (vec(q[qs]), vec(v[vs]), reaction, tuple(torque))
    if qs.stop == qs.start:
        return (0.0, 0.0, reaction, 0.0)
    return (float(q[qs.start]), float(v[vs.start]), reaction, torque[0])


def resetJointState(bodyUniqueId, jointIndex, targetValue, targetVelocity=0.0,
                    physicsClientId=0):
    """Set a scalar joint's position and velocity at once (no physics); a fixed joint is left
    as it is. Motor targets are not changed."""
    body = get_client(physicsClientId).body(bodyUniqueId)
    fn = "resetJointState"
    j = body.check_joint(jointIndex, fn)
    value = finite_float(targetValue, fn, "targetValue")
    velocity = finite_float(targetVelocity, fn, "targetVelocity")
    _check_joint_values(body, j, [value], [velocity], fn, scalar=True)
    qs, vs = body.joint_coords(j)
    if qs.stop == qs.start:
        return
    body.q()[qs.start] = value
    body.v()[vs.start] = velocity
    body.client.sim.engine.refresh()


def resetJointStateMultiDof(bodyUniqueId, jointIndex, targetValue, targetVelocity=None,
                            physicsClientId=0):
    """Set a joint's coordinates (1 value, or a quaternion (x, y, z, w) for a spherical joint)
    and velocities (1 or 3 values; default zeros)."""
    body = get_client(physicsClientId).body(bodyUniqueId)
    _reset_multi(body, [jointIndex], [targetValue],
                 None if targetVelocity is None else [targetVelocity],
                 "resetJointStateMultiDof")


def resetJointStatesMultiDof(bodyUniqueId, jointIndices, targetValues, targetVelocities=None,
                             physicsClientId=0):
    body = get_client(physicsClientId).body(bodyUniqueId)
    fn = "resetJointStatesMultiDof"
    indices = _indices(body, jointIndices, fn)
    for name, values in (("targetValues", targetValues), ("targetVelocities", targetVelocities)):
        if values is not None and (isinstance(values, (str, bytes))
                                   or not hasattr(values, "__len__")):
            raise error(f"{fn}: {name} must be a list of one entry per joint, got {values!r}")
    if targetValues is None or len(targetValues) != len(indices) or (targetVelocities is not None
                                             and len(targetVelocities) != len(indices)):
        raise error(f"{fn}: jointIndices, targetValues (and targetVelocities) must have the "
                    f"same length")
    _reset_multi(body, indices, targetValues, targetVelocities, fn)


def _reset_multi(body, indices, values, velocities, fn: str):
    writes = []
    for n, j in enumerate(indices):
        j = body.check_joint(j, fn)
        qs, vs = body.joint_coords(j)
        nq, nv = qs.stop - qs.start, vs.stop - vs.start
        if nq == 0:
            continue
        value = finite_vector(values[n], nq, fn, f"targetValue of joint {j}")
        if nq == 4:
            value = unit_quaternion(value, fn, f"targetValue of joint {j}")
        velocity = np.zeros(nv)
        if velocities is not None and velocities[n] is not None \
                and np.size(np.asarray(velocities[n], dtype=object)):
            velocity = finite_vector(velocities[n], nv, fn, f"targetVelocity of joint {j}")
        if nq == 1:
            _check_joint_values(body, j, value, velocity, fn, scalar=True)
        writes.append((qs, vs, value, velocity))
    q, v = body.q(), body.v()
    for qs, vs, value, velocity in writes:
        q[qs] = value
        v[vs] = velocity
    body.client.sim.engine.refresh()


def _check_joint_values(body, j, values, velocities, fn, scalar):
    qs, _ = body.joint_coords(j)
    if scalar and qs.stop - qs.start > 1:
        raise error(f"{fn}: joint {j} ({body.joint_type(j)}) has {qs.stop - qs.start} "
                    "coordinates; use resetJointStateMultiDof")
    for x in values:
        if abs(x) > bounds.MAX_JOINT_POSITION:
            raise error(f"{fn}: joint {j}: |targetValue| must be <= "
                        f"{bounds.MAX_JOINT_POSITION:g}, got {x}")
    for x in velocities:
        if abs(x) > bounds.MAX_ANGULAR_SPEED:
            raise error(f"{fn}: joint {j}: |targetVelocity| must be <= "
                        f"{bounds.MAX_ANGULAR_SPEED:g}, got {x}")


# -- link states ------------------------------------------------------------------------------
def getLinkState(bodyUniqueId, linkIndex, computeLinkVelocity=0, computeForwardKinematics=0,
                 physicsClientId=0) -> tuple:
    """(linkWorldPosition, linkWorldOrientation, localInertialFramePosition,
    localInertialFrameOrientation, worldLinkFramePosition, worldLinkFrameOrientation) and with
    computeLinkVelocity (worldLinkLinearVelocity, worldLinkAngularVelocity): the COM frame,
    the inertial frame in the URDF link frame, the URDF link frame, the COM's velocity."""
    body = get_client(physicsClientId).body(bodyUniqueId)
    link = body.check_joint(linkIndex, "getLinkState", "linkIndex")
    return _link_states(body, [link], bool(computeLinkVelocity))[0]


def getLinkStates(bodyUniqueId, linkIndices, computeLinkVelocity=0, computeForwardKinematics=0,
                  physicsClientId=0) -> tuple:
    body = get_client(physicsClientId).body(bodyUniqueId)
    links = _indices(body, linkIndices, "getLinkStates")
    return tuple(_link_states(body, links, bool(computeLinkVelocity)))


def _link_states(body, links, velocity: bool) -> list:
    R_all, p_all = body.link_frames()
    out = []
    for link in links:
        k = body.robot_link(link)
        R_l, p_l = R_all[k], p_all[k]
        p_lc, R_lc = body.inertial_frames[k]
        R_c, p_c = body.com_frame(k, R_l, p_l)
        state = (vec(p_c), xyzw(R_c), vec(p_lc), xyzw(R_lc), vec(p_l), xyzw(R_l))
        if velocity:
            lin, ang = _com_velocity(body, k, p_lc)
            state += (vec(lin), vec(ang))
        out.append(state)
    return out


def _com_velocity(body, k: int, p_lc):
    """(linear velocity of the point p_lc of robot link k, angular velocity), world axes."""
    r = body.robot_index()
    model, data, q = body.client.sim.robot_query(r)
    J = kinematics.jacobian(model, data, q, k, p_lc)
    twist = J @ body.v()
    return twist[3:], twist[:3]


# -- the base ---------------------------------------------------------------------------------
def getBasePositionAndOrientation(bodyUniqueId, physicsClientId=0) -> tuple:
    """(position, orientation (x, y, z, w)) of the base's inertial (COM) frame."""
    body = get_client(physicsClientId).body(bodyUniqueId)
    R_l, p_l = body.client.sim.link_transform(body.robot_index(), 0)
    R_c, p_c = body.com_frame(0, R_l, p_l)
    return vec(p_c), xyzw(R_c)


def resetBasePositionAndOrientation(bodyUniqueId, posObj, ornObj, physicsClientId=0):
    """Place the base's inertial frame at posObj / ornObj (no physics; velocities kept). A fixed
    or static base is part of the body's model here: the body is rebuilt at the new place
    (its joint state, masses and contact settings kept; world IDs change as when a body is
    added)."""
    body = get_client(physicsClientId).body(bodyUniqueId)
    fn = "resetBasePositionAndOrientation"
    p_c = finite_vector(posObj, 3, fn, "posObj")
    quat = unit_quaternion(ornObj, fn, "ornObj")
    if np.abs(p_c).max() > bounds.MAX_POSITION:
        raise error(f"{fn}: |posObj| must be within {bounds.MAX_POSITION:g} m, got "
                    f"{p_c.tolist()}")
    p_lc, R_lc = body.inertial_frames[0]
    R_c = rotation(quat)
    R_l = R_c @ R_lc.T
    p_l = p_c - R_l @ p_lc
    if not body.entity.isFloatingBase():
        _move_fixed_base(body, R_l, p_l, fn)
        return
    q = body.q()
    q[0:3] = p_l
    q[3:7] = xyzw(R_l)
    body.client.sim.engine.refresh()


def _move_fixed_base(body, R_l, p_l, fn: str):
    """Rebuild a fixed-base body with its root link frame at (R_l, p_l)."""
    client, old = body.client, body.entity
    sim = client.sim
    q, v = sim.getActualConfig(old), sim.getActualVelocity(old)
    surfaces = {}
    for k in range(old.numLinks()):
        try:
            surfaces[k] = sim.body(old.link(k)).getSurface()
        except ValueError:
            pass                                # (a link without collision geometry)
    try:
        new = client.world.makeRobot(old.urdf, True, name=old.getName(), R=R_l, t=p_l)
    except ValueError as e:
        raise error(f"{fn}: {e}") from None
    new.settings = old.settings
    for k in range(old.numLinks()):
        mass = old.link(k).getMass()
        if mass != new.link(k).getMass():
            new.link(k).setMass(mass)
    effort = new.structure.effort_limit
    effort[effort > 0] = np.inf
    new.setConfig(q)
    new.setVelocity(v)
    try:
        sim.removeEntity(old)
        sim.addEntity(new)
    except ValueError as e:     # (the same geometry as before: not expected)
        raise error(f"{fn}: {e}") from None
    sim.controller(new).setTorqueCommand(np.zeros(new.model.nv))   # (as add_body)
    body.entity = new
    for k, surface in surfaces.items():
        client.sim.body(new.link(k)).setSurface(surface)
    client._rebuilt()


def getBaseVelocity(bodyUniqueId, physicsClientId=0) -> tuple:
    """(linear velocity of the base COM, angular velocity), world axes; zeros for a fixed
    base."""
    body = get_client(physicsClientId).body(bodyUniqueId)
    lin, ang = _com_velocity(body, 0, body.inertial_frames[0][0])
    return vec(lin), vec(ang)


def resetBaseVelocity(objectUniqueId, linearVelocity=None, angularVelocity=None,
                      physicsClientId=0):
    """Set the base COM's linear and the base's angular velocity (world axes); an omitted one
    is kept. Ignored for a fixed base, as PyBullet does."""
    body = get_client(physicsClientId).body(objectUniqueId)
    fn = "resetBaseVelocity"
    lin_old, ang_old = (np.array(x) for x in getBaseVelocity(body.uid, body.client.id))
    lin = lin_old if linearVelocity is None else finite_vector(linearVelocity, 3, fn,
                                                                "linearVelocity")
    ang = ang_old if angularVelocity is None else finite_vector(angularVelocity, 3, fn,
                                                                 "angularVelocity")
    if np.abs(lin).max() > bounds.MAX_LINEAR_SPEED or np.abs(ang).max() > bounds.MAX_ANGULAR_SPEED:
        raise error(f"{fn}: speeds must be within {bounds.MAX_LINEAR_SPEED:g} m/s and "
                    f"{bounds.MAX_ANGULAR_SPEED:g} rad/s")
    if not body.entity.isFloatingBase():
        return
    R_l, _ = body.client.sim.link_transform(body.robot_index(), 0)
    p_lc = body.inertial_frames[0][0]
    # the base frame's origin moves with v_o = v_com - w x (R p_lc); the free joint's
    # velocities are in base axes
    v_origin = lin - np.cross(ang, R_l @ p_lc)
    v = body.v()
    v[0:3] = R_l.T @ v_origin
    v[3:6] = R_l.T @ ang
    body.client.sim.engine.refresh()


def enableJointForceTorqueSensor(bodyUniqueId, jointIndex, enableSensor=1, physicsClientId=0):
    """Report the joint's reaction wrench in getJointState (zeros otherwise)."""
    body = get_client(physicsClientId).body(bodyUniqueId)
    j = body.check_joint(jointIndex, "enableJointForceTorqueSensor")
    if enableSensor:
        body.sensors.add(j)
    else:
        body.sensors.discard(j)
