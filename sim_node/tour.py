"""Headless tour of the Simulator API (`sim_node tour`), no ROS: load a world, simulate it,
and print what happened.

Every robot starts under PID holding its initial configuration with the world file's gains. A
quarter into the run the first fixed-base robot gets a milestone (a time-optimal joint motion,
seed 002's "sending commands"), and every floating-base robot drives its joints at a constant
velocity for a while (a mobile base's wheels). Rigid objects fall and settle on whatever holds
them; contact feedback reports which bodies touched.
"""
from __future__ import annotations

import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # idle BLAS threads would spin on a core

import numpy as np  # noqa: E402

from sim_node.model.robot import RobotModel  # noqa: E402
from sim_node.model.world import RigidObjectModel, TerrainModel, WorldModel  # noqa: E402
from sim_node.resources import default_world  # noqa: E402
from sim_node.sim.simulator import Simulator  # noqa: E402

CONTROL_DT = 0.01      # [s] one simulate() call: the controller period of this tour
ARM_MOVE = {0: 0.5, 3: 0.3}         # joint index -> displacement [rad] of the milestone
WHEEL_SPEED, WHEEL_TIME = 2.0, 1.0  # [rad/s], [s] of the floating-base robots' velocity command


def _describe(world, out):
    for i in range(world.numIDs()):
        entity = world.getEntity(i)
        if isinstance(entity, RobotModel):
            out(f"  [{i:2d}] robot {entity.getName()}: {entity.numLinks()} links (IDs {i + 1}.."
                f"{i + entity.numLinks()}), {len(entity.getJointNames())} joints, "
                f"{'floating' if entity.isFloatingBase() else 'fixed'} base, "
                f"{entity.getTotalMass():.2f} kg")
        elif isinstance(entity, RigidObjectModel):
            out(f"  [{i:2d}] rigid object {entity.getName()}: {entity.getMass().getMass():.2f} kg "
                f"at {np.round(entity.getTransform()[1], 3).tolist()}")
        elif isinstance(entity, TerrainModel):
            out(f"  [{i:2d}] terrain {entity.getName()}: "
                f"{type(entity.getCollisionGeometry()[0].shape).__name__.lower()}")


def _entity_name(world, id_: int) -> str:
    """The terrain, object or robot an ID belongs to (robot links report their robot)."""
    entity = world.getEntity(id_)
    return entity.getRobot().getName() if hasattr(entity, "getRobot") else entity.getName()


def run(world_path=None, duration: float = 4.0, out=print) -> WorldModel:
    world_path = world_path or default_world()
    world = WorldModel()
    t0 = time.perf_counter()
    world.readFile(world_path)
    out(f"Loaded {world_path} in {time.perf_counter() - t0:.2f} s: {world}")
    settings = world.simulation
    out(f"  physics_dt {settings.physics_dt} s, gravity {tuple(settings.gravity)} m/s^2, "
        f"padding {settings.padding} m, max_contacts {settings.max_contacts}")
    _describe(world, out)
    sim = Simulator(world)
    sim.enableContactFeedbackAll()
    ids = range(world.numIDs())
    bodies = [i for i in ids if not isinstance(world.getEntity(i), RobotModel)]

    mover = next((r for r in range(world.numRobots()) if not world.robot(r).isFloatingBase()
                  and len(world.robot(r).getJointNames()) > max(ARM_MOVE)), None)
    targets = {}
    steps = int(round(duration / CONTROL_DT))
    seen, statuses = set(), set()
    wall = time.perf_counter()
    for k in range(steps):
        if k == steps // 4:
            for r in range(world.numRobots()):
                c = sim.controller(r)
                q = c.getCommandedConfig()[-len(world.robot(r).getJointNames()):]
                if r == mover:
                    for j, delta in ARM_MOVE.items():
                        q[j] += delta
                    c.setMilestone(q)
                elif world.robot(r).isFloatingBase():
                    c.setVelocity(np.full(len(q), WHEEL_SPEED), WHEEL_TIME)
                targets[r] = q
        sim.simulate(CONTROL_DT)
        statuses.add(sim.getStatusString())
        if k % 10 == 0:
            for n, i in enumerate(bodies):
                for j in bodies[n + 1:]:
                    if sim.hadContact(i, j):
                        seen.add((i, j))
    wall = time.perf_counter() - wall
    out(f"Simulated {sim.getTime():.2f} s in {steps} calls of simulate({CONTROL_DT}) "
        f"(physics step {sim.getSimStep() * 1e3:g} ms): {wall:.2f} s wall "
        f"({sim.getTime() / wall:.1f}x real time); status {', '.join(sorted(statuses))}")
    pairs = sorted({tuple(sorted((_entity_name(world, i), _entity_name(world, j))))
                    for i, j in seen})
    out(f"  {len(pairs)} touching pairs seen ({len(seen)} body pairs):")
    for a, b in pairs:
        out(f"    {a} - {b}")
    sim.updateWorld()
    for i in range(world.numRigidObjects()):
        obj = world.rigidObject(i)
        speed = np.linalg.norm(obj.getVelocity()[1])
        out(f"  {obj.getName():15s} settled at {np.round(obj.getTransform()[1], 3).tolist()} "
            f"(speed {speed:.1e} m/s)")
    for r in range(world.numRobots()):
        robot = world.robot(r)
        c = sim.controller(r)
        n = len(robot.getJointNames())
        line = f"  robot {robot.getName()}: "
        if r == mover:
            error = c.getSensedConfig()[-n:] - targets[r] if r in targets else np.zeros(n)
            moved = ", ".join(f"{robot.getJointNames()[j]} by {d:+.2f}" for j, d in ARM_MOVE.items())
            line += f"joint error max {np.abs(error).max():.1e}, moved {moved}"
        else:
            line += f"joint error max {np.abs(c.getSensedConfig()[-n:] - c.getCommandedConfig()[-n:]).max():.1e}"
        if robot.isFloatingBase():
            line += f", base at {np.round(robot.getConfig()[:3], 3).tolist()}"
        out(line)
    return world
