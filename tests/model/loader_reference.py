"""What the MJCF and SDF loader tests (test_mjcf.py, test_sdf.py) share: PyBullet's joint type
codes, a parsed body as a RobotModel in PyBullet's initial state, and PyBullet's own view of the
bodies its loader made (the reference both compare with)."""
import warnings

import numpy as np

from sim_node.model.world import WorldModel

# pybullet's JOINT_REVOLUTE, JOINT_PRISMATIC, JOINT_SPHERICAL, JOINT_FIXED of each URDF type
PB_JOINT_TYPE = {"revolute": 0, "continuous": 0, "prismatic": 1, "spherical": 2, "fixed": 4}


def build(body):
    """The RobotModel of a parsed MJCF / SDF body, every scalar joint at 0 (PyBullet's initial
    state; the builder's default clamps 0 into the limits)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = WorldModel().makeRobot(body.urdf, body.fixed_base, R=body.R, t=body.p)
    s = robot.structure
    q = robot.getConfig()
    for name in s.joint_names:
        if s.joint_type[name] in ("revolute", "continuous", "prismatic"):
            q[s.joint_q_index[name]] = 0.0
    robot.setConfig(q)
    return robot


def pybullet_bodies(pb, uids, cid) -> list:
    """PyBullet's view of the bodies `uids` of client `cid` (pb: the pybullet module), in plain
    lists and numbers (JSON, for a subprocess): per body its base link and name, base mass,
    pose and local inertial position; per joint its name, type, limits, effort, velocity,
    damping, axis, child link, mass and URDF link frame (p, R as 9 numbers)."""
    bodies = []
    for uid in uids:
        pos, orn = pb.getBasePositionAndOrientation(uid, physicsClientId=cid)
        dyn = pb.getDynamicsInfo(uid, -1, physicsClientId=cid)
        joints = []
        for j in range(pb.getNumJoints(uid, physicsClientId=cid)):
            info = pb.getJointInfo(uid, j, physicsClientId=cid)
            state = pb.getLinkState(uid, j, physicsClientId=cid)
            joints.append(dict(
                name=info[1].decode(), type=info[2], lower=info[8], upper=info[9],
                effort=info[10], velocity=info[11], damping=info[6], axis=info[13],
                child=info[12].decode(), mass=pb.getDynamicsInfo(uid, j, physicsClientId=cid)[0],
                frame_p=state[4], frame_R=pb.getMatrixFromQuaternion(state[5])))
        info = pb.getBodyInfo(uid, physicsClientId=cid)
        bodies.append(dict(base=info[0].decode(), name=info[1].decode(), mass=dyn[0], pos=pos,
                           R=pb.getMatrixFromQuaternion(orn), lip=dyn[3], joints=joints))
    return bodies


def as_arrays(bodies: list) -> list:
    """pybullet_bodies' result with numpy vectors and 3x3 matrices, and each base's URDF link
    frame (base_p, base_R: PyBullet's base pose is its centre-of-mass frame)."""
    out = []
    for b in bodies:
        R = np.array(b["R"]).reshape(3, 3)
        joints = [dict(j, axis=np.array(j["axis"]), frame_p=np.array(j["frame_p"]),
                       frame_R=np.array(j["frame_R"]).reshape(3, 3)) for j in b["joints"]]
        out.append(dict(base=b["base"], name=b["name"], mass=b["mass"], base_R=R,
                        base_p=np.array(b["pos"]) - R @ np.array(b["lip"]), joints=joints))
    return out
