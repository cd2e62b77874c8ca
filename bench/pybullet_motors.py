"""Motors benchmark: microseconds per stepSimulation of motorised robots, sim_node.pybullet
against the real PyBullet 3.2.7, the same script run on each (`p` either module). (Not named
bench/pybullet.py: the script's folder comes first on sys.path and would shadow pybullet.)

Scenes (pybullet_data's files, Bullet's default step of 1/240 s, gravity -9.81):
  kuka      kuka_iiwa/model.urdf, fixed base; its 7 joints under POSITION_CONTROL
            (setJointMotorControlArray, force 500 N m) towards targets that move every step
            (a sine per joint), as bullet3's kuka examples drive it.
  r2d2      r2d2.urdf on plane.urdf; its 4 wheels under VELOCITY_CONTROL (target 10 rad/s,
            force 20 N m) set once, the rest of its joints with PyBullet's default motors:
            it drives over the plane (contacts every step).
Each run: the scene loaded and stepped 100 times (settling, warm caches), then `--steps` steps
timed by the process's CPU time (time.process_time: on a loaded machine it measures what a free
core gives); the per-step command calls of the kuka are in the timed loop on both sides.
Prints the median over `--repeat` runs and, for sim_node, the share of the motors' pre- and
post-step hooks (sim_node.pybullet.control) measured by timing them alone.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import pybullet  # noqa: E402
import pybullet_data  # noqa: E402

import sim_node.pybullet as sim_pybullet  # noqa: E402
from sim_node.model.errors import URDFWarning  # noqa: E402
from sim_node.pybullet import control  # noqa: E402
from sim_node.pybullet.client import get_client  # noqa: E402

WARMUP = 100


def kuka(p, c):
    robot = p.loadURDF("kuka_iiwa/model.urdf", useFixedBase=True, physicsClientId=c)
    joints = list(range(7))

    def step(k):
        t = k / 240.0
        targets = [0.5 * math.sin(0.5 * t + j) for j in joints]
        p.setJointMotorControlArray(robot, joints, p.POSITION_CONTROL, targetPositions=targets,
                                    forces=[500.0] * 7, physicsClientId=c)
        p.stepSimulation(physicsClientId=c)
    return step


def r2d2(p, c):
    p.loadURDF("plane.urdf", physicsClientId=c)
    robot = p.loadURDF("r2d2.urdf", [0, 0, 0.5], physicsClientId=c)
    wheels = [j for j in range(p.getNumJoints(robot, physicsClientId=c))
              if b"wheel" in p.getJointInfo(robot, j, physicsClientId=c)[1]]
    p.setJointMotorControlArray(robot, wheels, p.VELOCITY_CONTROL,
                                targetVelocities=[10.0] * len(wheels),
                                forces=[20.0] * len(wheels), physicsClientId=c)

    def step(k):
        p.stepSimulation(physicsClientId=c)
    return step


SCENES = {"kuka": kuka, "r2d2": r2d2}


def per_step(p, scene, steps):
    """CPU microseconds per step of one run of `scene` on module p (and the client id)."""
    c = p.connect(p.DIRECT)
    try:
        p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=c)
        p.setGravity(0, 0, -9.81, physicsClientId=c)
        step = SCENES[scene](p, c)
        for k in range(WARMUP):
            step(k)
        start = time.process_time()
        for k in range(WARMUP, WARMUP + steps):
            step(k)
        spent = time.process_time() - start
        hooks = _hook_share(c, steps) if p is sim_pybullet else None
        return spent / steps * 1e6, hooks
    finally:
        p.disconnect(physicsClientId=c)


def _hook_share(c, steps):
    # the motors' hooks alone, called as stepSimulation calls them (state unchanged between
    # calls: the same work as in a step)
    client = get_client(c)
    start = time.process_time()
    for _ in range(steps):
        control.apply_motors(client)
    pre = time.process_time() - start
    start = time.process_time()
    for _ in range(steps):
        control.record_motors(client)
    post = time.process_time() - start
    return (pre + post) / steps * 1e6


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(SCENES), default=list(SCENES))
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    # pybullet_data's harmless defects (the loader repairs them), not the benchmark's subject
    warnings.simplefilter("ignore", URDFWarning)
    print(f"PyBullet {pybullet.getAPIVersion()}, {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.2f}, CPU time, median of {args.repeat} runs of {args.steps} "
          f"steps")
    print("\n| scene | sim_node [us/step] | of which motor hooks [us/step] | PyBullet [us/step] "
          "| sim_node / PyBullet |")
    print("|---|---:|---:|---:|---:|")
    for scene in args.only:
        ours, hooks, theirs = [], [], []
        for _ in range(args.repeat):
            t, h = per_step(sim_pybullet, scene, args.steps)
            ours.append(t)
            hooks.append(h)
            theirs.append(per_step(pybullet, scene, args.steps)[0])
        o, h, t = (statistics.median(x) for x in (ours, hooks, theirs))
        print(f"| {scene} | {o:.1f} | {h:.1f} | {t:.1f} | {o / t:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
