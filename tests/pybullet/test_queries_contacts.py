"""getContactPoints after steps the engine could not take: no NaN, no force that never acted."""
import math

import pybullet as pb
import pytest
from core_reference import ours, quiet

import sim_node.pybullet as p
from sim_node.pybullet.client import get_client


def test_a_step_the_engine_refuses_reports_no_contact_force():
    # a 0.1 kg ball resting on the plane (its weight on the contact), then 1e9 N sideways: no
    # step of 1/240 s, nor its halves, can take that (the engine keeps the state: "unstable");
    # the contact is still there, the impulses of the refused attempt never acted
    with ours() as a:
        p.setGravity(0, 0, -10, physicsClientId=a)
        plane = quiet(p.loadURDF, "plane.urdf", physicsClientId=a)
        ball = quiet(p.loadURDF, "sphere_small.urdf", [0, 0, 0.5], physicsClientId=a)
        for _ in range(240):
            p.stepSimulation(physicsClientId=a)
        resting = p.getContactPoints(ball, plane, physicsClientId=a)
        assert sum(c[9] for c in resting) == pytest.approx(1.0, rel=1e-6)
        before = p.getBasePositionAndOrientation(ball, physicsClientId=a)
        p.applyExternalForce(ball, -1, [1e9, 0, 0], before[0], pb.WORLD_FRAME,
                             physicsClientId=a)
        p.stepSimulation(physicsClientId=a)
        assert get_client(a).sim.getStatusString() == "unstable"
        assert p.getBasePositionAndOrientation(ball, physicsClientId=a) == before
        contacts = p.getContactPoints(ball, plane, physicsClientId=a)
        assert contacts
        for c in contacts:
            assert (c[9], c[10], c[12]) == (0.0, 0.0, 0.0)


def test_the_planar_biped_landing_reports_finite_contact_forces():
    # biped2d_pybullet.urdf on its world-fixed prismatic base: the feet's sideways friction and
    # torsion are directions no DOF moves (getContactPoints read NaN normal forces at landing)
    with ours() as a:
        p.setGravity(0, 0, -9.8, physicsClientId=a)
        p.setTimeStep(1e-3, physicsClientId=a)
        plane = quiet(p.loadURDF, "plane.urdf", physicsClientId=a)
        bot = quiet(p.loadURDF, "biped/biped2d_pybullet.urdf", [0, 0, 1.13],
                    physicsClientId=a)
        for joint in range(p.getNumJoints(bot, physicsClientId=a)):
            p.setJointMotorControl2(bot, joint, pb.POSITION_CONTROL, force=1,
                                    physicsClientId=a)
        touched = 0
        for step in range(700):
            p.stepSimulation(physicsClientId=a)
            contacts = p.getContactPoints(bot, plane, physicsClientId=a)
            touched += bool(contacts)
            for c in contacts:
                assert all(math.isfinite(x) for x in (c[8], c[9], c[10], c[12])), (step, c)
        assert touched > 100            # it lands (at 0.54 s)
