"""The simulation document's examples (Klamp't seed 002) with sim_node's imports, on the default
world: sending commands to a controller, playing God with forces and kinematic bodies, and
extracting contacts and contact forces.

    python examples/simulation_tour.py
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import sim_node  # noqa: E402
from sim_node.resources import default_world  # noqa: E402


def main():
    world = sim_node.WorldModel()
    if not world.readFile(default_world()):
        raise RuntimeError("Unable to load the default world")
    sim = sim_node.Simulator(world)
    dt = 0.01

    # -- sending commands: a leg-lift-like motion of the arm through the milestone queue --------
    arm = world.robot("arm")
    controller = sim.controller(arm)
    q = controller.getCommandedConfig()
    lifted = q.copy()
    lifted[arm.getJointNames().index("joint2")] -= 0.4
    while sim.getTime() < 3.0:
        if sim.getTime() >= 1.0 and sim.getTime() - dt < 1.0:
            controller.setMilestone(lifted)
            controller.addMilestone(q)
        sim.simulate(dt)
    print(f"milestones done at t = {sim.getTime():.2f} s: remaining {controller.remainingTime()}"
          f" s, joint error {np.abs(controller.getSensedConfig() - q).max():.1e} rad")

    # -- playing God: a force on a rigid object and a kinematically driven one ------------------
    body = sim.body(world.rigidObject("red_box"))
    x0 = body.getTransform()[1]
    body.applyForceAtPoint([0.0, 0.0, 4.0], x0)       # a 0.2 kg box: 2 g upwards for one call
    sim.simulate(dt)
    print(f"pushed box: vertical speed {body.getVelocity()[1][2]:.3f} m/s")
    capsule = sim.body(world.rigidObject("yellow_capsule"))
    capsule.enableDynamics(False)
    capsule.setVelocity([0.0, 0.0, 0.0], [0.0, 0.0, 0.05])   # angular velocity first
    for _ in range(100):
        sim.simulate(dt)
    print(f"kinematic capsule rose to z = {capsule.getTransform()[1][2]:.3f} m")

    # -- extracting contacts and contact forces ---------------------------------------------
    sim.enableContactFeedbackAll()
    sim.simulate(dt)
    for i in range(world.numIDs()):
        for j in range(i + 1, world.numIDs()):
            if sim.inContact(i, j):
                f = sim.contactForce(i, j)
                t = sim.contactTorque(i, j)
                print(f"  {world.getName(i)} - {world.getName(j)}: contact force "
                      f"{np.round(f, 3).tolist()} and torque {np.round(t, 3).tolist()}")
    table = world.terrain("table").getID()
    for c in sim.getContacts(world.rigidObject("green_cylinder").getID(), table):
        print(f"  contact point {np.round(c[0:3], 4).tolist()} normal {np.round(c[3:6], 3).tolist()}"
              f" friction coefficient {c[6]:.3f}")


if __name__ == "__main__":
    main()
