"""pybullet_data's r2d2 (floating base, five continuous joints, a prismatic and two revolute
ones) in our layout and in Klamp't's, for the klampt comparisons of the geodesic and the
robot trajectories."""
import os

import numpy as np
import pytest

import sim_node
from sim_node.math import so3

pybullet_data = pytest.importorskip("pybullet_data")
R2D2 = os.path.join(pybullet_data.getDataPath(), "r2d2.urdf")

# Klamp't side (after klampt_reference's prelude): the robot `r`, our link order `links`,
# config(base, values) building its configuration, poses() of `links` as R (9) + t (3)
KLAMPT_PRELUDE = """
from klampt.math import so3
w = WorldModel()
w.loadRobot(URDF)
r = w.robot(0)
data = json.load(open(DATA))
links = [r.link(n) for n in data["links"]]
def config(base, values):
    return base + [values.get(r.link(i).getName(), 0.0) for i in range(6, r.numLinks())]
def poses():
    return [list(l.getTransform()[0]) + list(l.getTransform()[1]) for l in links]
"""


def r2d2():
    return sim_node.WorldModel().loadRobot(R2D2)


def klampt_config(robot, q) -> tuple:
    """Our r2d2 q for Klamp't: its 6 base coordinates (x, y, z, yaw, pitch, roll: links
    base0..base4 and base_link) and {link name: value of the joint moving it}."""
    x, y, z, w = q[3:7]
    roll, pitch, yaw = so3.rpy(so3.from_quaternion([w, x, y, z]))
    joints = {name: float(q[robot.jointIndices(name)[0]]) for name in robot.getJointNames()}
    return ([float(v) for v in (q[0], q[1], q[2], yaw, pitch, roll)],
            {j.child: joints[name] for name, j in robot.urdf.joints.items() if name in joints})


def random_config(robot, rng) -> np.ndarray:
    """Joints within their limits, continuous joints in [-10, 10] rad, the base anywhere near
    the origin with |pitch| < 1.3 (away from the Euler singularity of Klamp't's base)."""
    lower, upper = robot.getJointLimits()
    bounded = np.isfinite(lower)
    q = np.where(bounded, rng.uniform(np.where(bounded, lower, 0), np.where(bounded, upper, 1)),
                 rng.uniform(-10, 10, size=len(lower)))
    roll, pitch, yaw = rng.uniform(-3, 3), rng.uniform(-1.3, 1.3), rng.uniform(-3, 3)
    w, x, y, z = so3.quaternion(so3.from_rpy([roll, pitch, yaw]))
    q[3:7] = [x, y, z, w]
    q[0:3] = rng.normal(size=3)
    return q


def link_poses(robot, q):
    """Every link's frame as R (9, column-major) + t (3)."""
    robot.setConfig(q)
    return [np.concatenate([R.T.reshape(9), t]) for R, t in
            (link.getTransform() for link in robot.links())]
