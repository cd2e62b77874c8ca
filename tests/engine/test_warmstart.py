"""The warm-start record (engine/pipeline/warmstart.pyx): joint-row impulses are kept by the
robot that owns the row.

Regression: a robot without DOFs (pybullet_data's plane.urdf loaded as a fixed robot, as
sim_node.pybullet and the examples do) shares its first vel entry with the robot after it; the
record matched rows by that entry alone, wrote the next robot's limit impulses into the empty
robot's zero-length row_lam (past its end: heap corruption, glibc aborts at exit in ~half of the
runs of a humanoid on a plane) and lost the real robot's warm start."""
from __future__ import annotations

import os

import numpy as np
import pytest

import sim_node

pybullet_data = pytest.importorskip("pybullet_data")
DATA = pybullet_data.getDataPath()


def _limit_impulses(plane_first: bool) -> np.ndarray:
    # kuka_iiwa hanging limp with joint 2 at its upper limit, pushed into it by gravity
    world = sim_node.WorldModel()
    if plane_first:
        world.loadRobot(os.path.join(DATA, "plane.urdf"), fixed_base=True, t=[0, 0, -5])
    arm = world.loadRobot(os.path.join(DATA, "kuka_iiwa/model.urdf"), fixed_base=True)
    q = np.zeros(arm.numJoints())
    q[1] = arm.getJointLimits()[1][1]
    arm.setConfig(q)
    sim = sim_node.Simulator(world)
    sim.controller(arm).setTorque(np.zeros(arm.numJoints()))
    sim.simulate(0.01)
    scene = sim.engine
    r = world.numRobots() - 1
    return np.array(scene.robot_row_lam[r])


@pytest.mark.filterwarnings("ignore")
def test_a_robot_after_a_robot_without_dofs_keeps_its_joint_limit_impulses():
    alone = _limit_impulses(plane_first=False)
    assert np.count_nonzero(alone) == 1 and np.abs(alone).max() > 1e-3    # the limit holds
    after_plane = _limit_impulses(plane_first=True)
    np.testing.assert_array_equal(after_plane, alone)
