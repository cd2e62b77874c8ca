"""Headless demo: load a world, simulate its fixed-base robots under PID control with the
articulated-body dynamics, and print what happened.

Free bodies (rigid objects, floating-base robots) need contact to stand on anything; until
the contact solver lands they are listed but kept at rest.
"""
from __future__ import annotations

import time

import numpy as np

from sim_node.engine.aba import forward_dynamics
from sim_node.engine.integrate import integrate
from sim_node.model.robot import RobotModel
from sim_node.model.world import RigidObjectModel, TerrainModel, WorldModel
from sim_node.resources import default_world


def _smoothstep(s: float) -> float:
    s = min(max(s, 0.0), 1.0)
    return s * s * (3.0 - 2.0 * s)


def simulate_robot(robot, gravity, dt: float, duration: float, move: dict, out=print):
    """PID-hold the initial configuration, then move the joints in `move` {joint: delta} over
    the middle of the run; returns the per-joint tracking error at the end [rad or m]."""
    gains = robot.settings.get("controller", {})
    names = robot.getJointNames()
    kp = np.array([gains.get("kp", {}).get(n, 100.0) for n in names])
    ki = np.array([gains.get("ki", {}).get(n, 0.0) for n in names])
    kd = np.array([gains.get("kd", {}).get(n, 10.0) for n in names])
    effort = robot.getTorqueLimits()
    damping = robot.structure.damping
    q0 = robot.getConfig()
    target_delta = np.array([move.get(n, 0.0) for n in names])
    q = q0.copy()
    v = np.zeros(robot.model.nv)
    integral = np.zeros(len(names))
    model, data = robot.model, robot.data
    steps = int(round(duration / dt))
    peak_torque = np.zeros(len(names))
    t_move0, t_move1 = 0.25 * duration, 0.75 * duration
    wall = time.perf_counter()
    for k in range(steps):
        t = k * dt
        q_des = q0 + target_delta * _smoothstep((t - t_move0) / (t_move1 - t_move0))
        error = q_des - q
        integral += error * dt
        tau = np.clip(kp * error - kd * v + ki * integral, -effort, effort)
        peak_torque = np.maximum(peak_torque, np.abs(tau))
        ddq = forward_dynamics(model, data, q, v, tau - damping * v, gravity)
        v = v + dt * ddq                      # semi-implicit Euler
        q = integrate(model, q, v, dt)
    wall = time.perf_counter() - wall
    robot.setConfig(q)
    robot.setVelocity(v)
    final_error = (q0 + target_delta) - q
    out(f"  simulated {duration:.1f} s in {steps} steps of {dt * 1e3:g} ms "
        f"({steps / wall:,.0f} steps/s including the Python PID loop)")
    for i, name in enumerate(names):
        if target_delta[i] != 0.0 or abs(final_error[i]) > 1e-3:
            out(f"    {name:16s} moved {target_delta[i]:+.3f} -> error {final_error[i]:+.2e}, "
                f"peak torque {peak_torque[i]:.1f} of {effort[i]:g}")
    return final_error


def run(world_path=None, duration: float = 4.0, out=print) -> WorldModel:
    world_path = world_path or default_world()
    world = WorldModel()
    t0 = time.perf_counter()
    world.readFile(world_path)
    out(f"Loaded {world_path} in {time.perf_counter() - t0:.2f} s: {world}")
    sim = world.simulation
    out(f"  physics_dt {sim.physics_dt} s, gravity {tuple(sim.gravity)} m/s^2, "
        f"padding {sim.padding} m, max_contacts {sim.max_contacts}")
    for i in range(world.numIDs()):
        entity = world.getEntity(i)
        if isinstance(entity, RobotModel):
            out(f"  [{i:2d}] robot {entity.getName()}: {entity.numLinks()} links (IDs {i + 1}.."
                f"{i + entity.numLinks()}), {len(entity.getJointNames())} joints, "
                f"{'floating' if entity.isFloatingBase() else 'fixed'} base, "
                f"{entity.getTotalMass():.2f} kg, COM {np.round(entity.getCom(), 3).tolist()}")
        elif isinstance(entity, RigidObjectModel):
            out(f"  [{i:2d}] rigid object {entity.getName()}: {entity.getMass().getMass():.2f} kg "
                f"at {np.round(entity.getTransform()[1], 3).tolist()}")
        elif isinstance(entity, TerrainModel):
            out(f"  [{i:2d}] terrain {entity.getName()}: "
                f"{type(entity.getCollisionGeometry()[0].shape).__name__.lower()}")
    gravity = np.array(sim.gravity)
    for r in range(world.numRobots()):
        robot = world.robot(r)
        if robot.isFloatingBase():
            out(f"Robot {robot.getName()}: floating base, kept at rest (needs ground contact)")
            continue
        names = robot.getJointNames()
        move = {names[0]: 0.5}
        if len(names) > 3:
            move[names[3]] = 0.3
        out(f"Robot {robot.getName()}: PID hold against gravity, then move "
            + ", ".join(f"{k} by {v:+.2f}" for k, v in move.items()))
        tip = robot.link(robot.numLinks() - 1)
        start = tip.getWorldPosition([0, 0, 0])
        simulate_robot(robot, gravity, sim.physics_dt, duration, move, out)
        end = tip.getWorldPosition([0, 0, 0])
        out(f"    link {tip.getName()} went from {np.round(start, 3).tolist()} to "
            f"{np.round(end, 3).tolist()} (world, m)")
    return world
