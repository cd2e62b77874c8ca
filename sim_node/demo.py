"""Headless demo: load a world, simulate everything in it with the engine (dynamics and
boundary-layer contact), and print what happened.

Robots hold their initial configuration with the world file's PD gains (the engine's PD
actuators; the integral term and the full controller API arrive with the simulator); the first
fixed-base robot then moves two joints. Rigid objects fall and settle on whatever holds them.
"""
from __future__ import annotations

import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # idle BLAS threads would spin on a core

import numpy as np  # noqa: E402

from sim_node.model.robot import RobotModel  # noqa: E402
from sim_node.model.world import RigidObjectModel, TerrainModel, WorldModel  # noqa: E402
from sim_node.resources import default_world  # noqa: E402
from sim_node.sim.build import build_scene  # noqa: E402


def _smoothstep(s: float) -> float:
    s = min(max(s, 0.0), 1.0)
    return s * s * (3.0 - 2.0 * s)


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


def run(world_path=None, duration: float = 4.0, out=print) -> WorldModel:
    world_path = world_path or default_world()
    world = WorldModel()
    t0 = time.perf_counter()
    world.readFile(world_path)
    out(f"Loaded {world_path} in {time.perf_counter() - t0:.2f} s: {world}")
    sim = world.simulation
    out(f"  physics_dt {sim.physics_dt} s, gravity {tuple(sim.gravity)} m/s^2, "
        f"padding {sim.padding} m, max_contacts {sim.max_contacts}")
    _describe(world, out)
    layout = build_scene(world)
    scene = layout.scene
    dt = sim.physics_dt

    # PD hold of every robot's initial configuration; the first fixed-base robot also moves
    mover, move, targets = None, {}, []
    for r in range(world.numRobots()):
        robot = world.robot(r)
        st = robot.structure
        gains = robot.settings.get("controller", {})
        q0 = robot.getConfig()
        for name in robot.getJointNames():
            v, q = st.joint_v_index[name], st.joint_q_index[name]
            scene.robot_kp[r][v] = gains.get("kp", {}).get(name, 100.0)
            scene.robot_kd[r][v] = gains.get("kd", {}).get(name, 10.0)
            scene.robot_q_des[r][v] = q0[q]
        targets.append(scene.robot_q_des[r].copy())
        if mover is None and not robot.isFloatingBase() and len(robot.getJointNames()) >= 4:
            names = robot.getJointNames()
            mover, move = r, {st.joint_v_index[names[0]]: 0.5, st.joint_v_index[names[3]]: 0.3}

    steps = int(round(duration / dt))
    seen = set()
    deepest = 0.0
    wall = time.perf_counter()
    for k in range(steps):
        if mover is not None:
            s = _smoothstep((k * dt - 0.25 * duration) / (0.5 * duration))
            for v, delta in move.items():
                scene.robot_q_des[mover][v] = targets[mover][v] + s * delta
        scene.step(dt)
        if scene.status != 0:
            out(f"  simulation became unstable at t = {scene.time:.3f} s (status {scene.status})")
            break
        if k % 10 == 0 and scene.ncontact:
            pairs = scene.pair_arrays()
            for a, b, touched in zip(pairs["body_a"], pairs["body_b"], pairs["touched"]):
                if touched:
                    seen.add(tuple(sorted((world.getName(layout.id_of_body[a]),
                                           world.getName(layout.id_of_body[b])))))
            deepest = max(deepest, -scene.contact_arrays()["distance"].min())
    wall = time.perf_counter() - wall
    out(f"Simulated {scene.time:.2f} s in {steps} steps of {dt * 1e3:g} ms: {wall:.2f} s wall "
        f"({scene.time / wall:.1f}x real time, {wall / steps * 1e6:.0f} us/step)")
    out(f"  {len(seen)} touching pairs seen; now {scene.ncontact} contacts in {scene.npatch} pairs; "
        f"real geometries never overlapped by more than {max(deepest, 0.0) * 1e3:.2f} mm")
    for a, b in sorted(seen):
        out(f"    {a} - {b}")
    for i in range(world.numRigidObjects()):
        obj = world.rigidObject(i)
        state = scene.free_state[layout.free_of_object[i]]
        out(f"  {obj.getName():15s} settled at {np.round(state[:3], 3).tolist()} "
            f"(speed {np.linalg.norm(state[7:10]):.1e} m/s)")
    for r in range(world.numRobots()):
        robot = world.robot(r)
        st = robot.structure
        errors = [targets[r][st.joint_v_index[n]] + (move.get(st.joint_v_index[n], 0.0) if r == mover else 0.0)
                  - scene.robot_q[r][st.joint_q_index[n]] for n in robot.getJointNames()]
        robot.setConfig(scene.robot_q[r])
        line = f"  robot {robot.getName()}: joint error max {np.abs(errors).max():.1e}"
        if robot.isFloatingBase():
            line += f", base at {np.round(scene.robot_q[r][:3], 3).tolist()}"
        if r == mover:
            line += ", moved " + ", ".join(f"{robot.getJointNames()[[st.joint_v_index[n] for n in robot.getJointNames()].index(v)]} by {d:+.2f}"
                                           for v, d in move.items())
        out(line)
    return world
