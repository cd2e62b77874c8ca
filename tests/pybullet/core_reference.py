"""Shared by the tests of sim_node.pybullet's core (client, connection, loading, bodies,
control, state): a sim_node client and a real PyBullet client side by side on pybullet_data."""
import contextlib
import warnings

import numpy as np
import pybullet as pb
import pybullet_data

import sim_node.pybullet as p

DATA = pybullet_data.getDataPath()
# robots of pybullet_data whose joint tables are compared with PyBullet's
ROBOTS = ["r2d2.urdf", "kuka_iiwa/model.urdf", "franka_panda/panda.urdf", "husky/husky.urdf",
          "quadruped/minitaur.urdf", "humanoid/humanoid.urdf", "laikago/laikago.urdf"]


@contextlib.contextmanager
def ours():
    """A connected sim_node client (DIRECT) with pybullet_data on the search path."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cid = p.connect(pb.DIRECT)
    p.setAdditionalSearchPath(DATA, physicsClientId=cid)
    try:
        yield cid
    finally:
        if p.isConnected(cid):
            p.disconnect(cid)


@contextlib.contextmanager
def reference():
    """A real PyBullet client (DIRECT) with pybullet_data on the search path."""
    cid = pb.connect(pb.DIRECT)
    pb.setAdditionalSearchPath(DATA, physicsClientId=cid)
    try:
        yield cid
    finally:
        pb.disconnect(cid)


def quiet(function, *args, **kwargs):
    """Call without the loaders' warnings (URDF repairs, ignored arguments)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def same_rotation(q1, q2, atol) -> bool:
    """Quaternions (x, y, z, w) of the same rotation (q and -q are one)."""
    q1, q2 = np.asarray(q1, float), np.asarray(q2, float)
    return bool(np.allclose(q1, q2, atol=atol) or np.allclose(q1, -q2, atol=atol))
