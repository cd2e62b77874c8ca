"""Simulator benchmark: robots driven from Python through sim_node's Simulator API, PyBullet and
MuJoCo.

S1      the 7-DOF arm (data/robots/arm7/arm7.urdf, fixed base, alone in the world), 10 s of
        q_des(t) = q0 + 0.3 sin(2 pi 0.2 t) on the seven revolute joints (q0: the ready pose of
        data/worlds/default.yaml) with the gripper held 0.02 m open; PD torques
        tau = kp (q_des - q) - kd qdot computed in Python before every 1 ms step, with the arm's
        kp, kd of data/worlds/default.yaml. Reported: physics steps per wall-clock second.
S1 PID  the same motion with the PD inside the engine: q_des(t_k) and qdot_des(t_k) commanded
        every 10 ms, tau = kp (q_des - q) + kd (qdot_des - qdot) (ki = 0) at every 1 ms step.
S2      the seed's Monte Carlo example (data/worlds/pendulum.yaml): the one-link pendulum under
        PID (kP 20, kI 8, kD 5) toward angle 0, 100 runs of 5 s from initial angles drawn
        uniformly in [-pi, pi] (seeded), control period 10 ms, physics step 1 ms. Reported:
        simulations per wall-clock second, in one process and on a pool of one process per
        core (2 here).

How each engine runs the loops (every engine from its own natural Python API):
  sim_node  S1: `q = ctrl.getSensedConfig(); v = ctrl.getSensedVelocity();
            ctrl.setTorqueCommand(kp * (q_des - q) - kd * v); sim.simulate(0.001)`.
            S1 PID: `ctrl.setPIDCommand(q_des, dq_des); sim.simulate(0.01)` (the engine's PID,
            gains set with setPIDGains(kp, 0, kd)). S2: `sim_node.sim.batch.monteCarloSim` with
            the seed's arguments and simInit (PID gains, target 0); its default runs on a
            process pool over all cores, `processes=1` in this process.
  MuJoCo    S1: reads views of d.qpos / d.qvel, writes d.ctrl of `motor` actuators, mj_step.
            S1 PID: `position` actuators (kp, kv) with d.ctrl = q_des + (kd / kp) qdot_des, which
            makes their kp (ctrl - q) - kv qdot exactly ours, set every 10 ms, then
            mj_step(nstep=10). S2: a `position` actuator (kp, kv) inside the engine, the integral
            term in Python at the control rate folded into its target the same way
            (ctrl = ki I / kp), mj_step(nstep=10); one compiled model per process, mj_resetData
            between runs.
  PyBullet  S1: getJointStates, setJointMotorControlArray(TORQUE_CONTROL), stepSimulation.
            S1 PID: setJointMotorControlArray(PD_CONTROL, target positions and velocities, kp,
            kd) every 10 ms, then 10 stepSimulation calls (PyBullet has no call stepping n
            times). S2: a PD_CONTROL call costs about 0.1 ms (PyBullet's PD plugin), more than
            the 10 steps of a tick, and a TORQUE_CONTROL torque holds for one stepSimulation
            only: the natural loop computes the PD torque in Python before every step (the
            physics of an in-engine PD), the integral term at the control rate; one client per
            process, resetJointState between runs.
  S2 on a pool: MuJoCo and PyBullet map the runs over a multiprocessing pool (fork) of as many
  processes as monteCarloSim's default (one per core), each process building its engine once;
  the time covers making the pool, as monteCarloSim's does.

How each engine holds the same physics:
  joints       URDF damping (viscous) and friction (dry, stick-slip): sim_node and MuJoCo's URDF
               import take both (MuJoCo: damping and frictionloss); PyBullet gets the damping
               through changeDynamics(jointDamping) and the dry friction as its usual velocity
               motors with target 0 and maximum force = the URDF friction.
  torque limit the URDF effort: sim_node clips every actuator torque, MuJoCo's URDF import sets
               the joints' actuatorfrcrange, PyBullet's PD_CONTROL takes it as `forces`; its
               TORQUE_CONTROL applies torques unclipped, so the Python loops clip them.
  integral     S2's integral term is updated at the control rate in MuJoCo and PyBullet (at every
               physics step in sim_node), kept within |ki I| <= effort as sim_node does.
  mimic        finger_joint2 mimics finger_joint1: sim_node couples it exactly, MuJoCo's URDF
               import makes a joint equality; PyBullet ignores <mimic>, so finger_joint2 gets the
               same PD toward the mimicked target as its own joint instead.
  massless     PyBullet gives a URDF link without <inertial> (arm7's tool0 and tcp) 1 kg and
               1 kg m^2; they get mass 0 back. It also damps every link's velocity by default
               (linear and angular damping 0.04), which is set to 0.
  collisions   none in S1 (no other body, no self-collision): sim_node finds no collidable pair
               and skips collision detection; PyBullet does not self-collide by default; MuJoCo's
               geoms get contype = conaffinity = 0 and its URDF import then discards them. S2
               keeps pendulum.yaml's ground plane in every engine (the pendulum never reaches it).
  inertia      PyBullet loads the URDF inertias (URDF_USE_INERTIA_FROM_FILE).
  meshes       MuJoCo and PyBullet read the URDFs with <visual> dropped and mesh file names made
               absolute (neither resolves package://sim_node/).
The sanity columns show that each engine did the same physics: S1's RMS tracking error over the
last 5 s (all seven arm joints, and the worst joint), S2's distribution of final angles.

Timing: every case first runs once untimed (the warm-up, which gives the sanity numbers), then
3 rounds of one timed run per engine, interleaved so that a change of load on the machine hits
every engine alike; the best is kept. S1 times the stepping loop only, from a freshly built
scene, its reference trajectory tabulated beforehand for all engines alike; S2 times
everything from the world (file or model description) to the final angles of all runs.

    python bench/simulator.py [--quick] [--json out.json]
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: idle OpenBLAS threads spin

import argparse  # noqa: E402
import contextlib  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import multiprocessing  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import xml.etree.ElementTree as ElementTree  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable  # noqa: E402

import numpy as np  # noqa: E402
import yaml  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.scenes import engine_versions  # noqa: E402

DEFAULT_WORLD = REPO / "data" / "worlds" / "default.yaml"
PENDULUM_WORLD = REPO / "data" / "worlds" / "pendulum.yaml"
ARM_ROBOT = "arm"                   # the arm's entry in default.yaml
PHYSICS_DT = 0.001                  # [s]
CONTROL_DT = 0.01                   # [s] S1 PID and S2 controller period
STEPS_PER_TICK = round(CONTROL_DT / PHYSICS_DT)
GRAVITY_Z = -9.81                   # [m/s^2]
S1_AMPLITUDE = 0.3                  # [rad] of the sinusoid on each revolute joint
S1_FREQUENCY = 0.2                  # [Hz]
FINGER_JOINT = "finger_joint1"      # held at FINGER_OPENING instead
FINGER_OPENING = 0.02               # [m]
S1_ERROR_WINDOW = 5.0               # [s] at the end of the run for the RMS tracking error
S2_DURATION = 5.0                   # [s] per run
S2_SEED = 2024
S2_SETTLED = 0.05                   # [rad] a run ending this close to the target has settled
POOL_PROCESSES = os.cpu_count() or 1    # monteCarloSim's default pool; the others' pools
START_METHOD = "fork"               # MuJoCo's and PyBullet's pools
REPEATS = 3
REFERENCE = {                       # issue: measured on this kind of machine
    "S1": {"MuJoCo": 126e3, "PyBullet": 46e3},      # steps/s
    "S2": {"MuJoCo": 78.0, "PyBullet": 26.0},       # sims/s
}
TARGET_S1 = 1.0                     # sim_node's S1 steps/s >= this x MuJoCo's
TARGET_S1_PID = 3.0                 # sim_node's S1 PID steps/s >= this x MuJoCo's S1 steps/s
TARGET_S2 = 2.0                     # sim_node's S2 sims/s on 2 cores >= this x MuJoCo's


# ---------------------------------------------------------------------------------------------
# The scenes, read from the world files with PyYAML for the other engines


@dataclass
class Arm:
    """S1: the arm of the default world, alone, fixed base at the origin."""
    urdf: Path
    joints: list                # commanded joints, in sim_node's q order
    q0: np.ndarray              # (8,) sinusoid centre; the finger's opening [rad, m]
    kp: np.ndarray              # (8,) [N m/rad; N/m for the finger]
    kd: np.ndarray              # (8,) [N m s/rad; N s/m]
    mimics: dict                # mimic joint -> (index of its master in joints, multiplier, offset)
    massless_links: list        # links without <inertial>


@dataclass
class Reference:
    """S1's desired motion at every physics step k (t = k PHYSICS_DT)."""
    q_des: np.ndarray           # (steps, 8) [rad, m]
    dq_des: np.ndarray          # (steps, 8) [rad/s, m/s]


@dataclass
class Pendulum:
    """S2: the pendulum world's robot and its PID (target 0)."""
    urdf: Path
    joint: str
    kp: float                   # [N m/rad]
    ki: float                   # [N m/(rad s)]
    kd: float                   # [N m s/rad]
    effort: float               # [N m] URDF torque limit (bounds ki I)


def _urdf_links_and_joints(path: Path):
    root = ElementTree.parse(path).getroot()
    return root.findall("link"), root.findall("joint")


def read_arm(world_path: Path) -> Arm:
    world = yaml.safe_load(world_path.read_text())
    (robot,) = [r for r in world["robots"] if r["name"] == ARM_ROBOT]
    if not robot.get("fixed_base", False):
        raise ValueError(f"{world_path}: robot '{ARM_ROBOT}' must have a fixed base for S1")
    joints = list(robot["initial_config"])
    q0 = np.array([FINGER_OPENING if j == FINGER_JOINT else robot["initial_config"][j]
                   for j in joints], dtype=float)
    gains = robot["controller"]
    urdf = (world_path.parent / robot["urdf"]).resolve()
    links, urdf_joints = _urdf_links_and_joints(urdf)
    mimics = {}
    for joint in urdf_joints:
        mimic = joint.find("mimic")
        if mimic is not None:
            mimics[joint.get("name")] = (joints.index(mimic.get("joint")),
                                         float(mimic.get("multiplier", 1.0)),
                                         float(mimic.get("offset", 0.0)))
    return Arm(urdf=urdf, joints=joints, q0=q0,
               kp=np.array([gains["kp"][j] for j in joints], dtype=float),
               kd=np.array([gains["kd"][j] for j in joints], dtype=float),
               mimics=mimics,
               massless_links=[link.get("name") for link in links
                               if link.find("inertial") is None])


def arm_reference(arm: Arm, t: np.ndarray) -> Reference:
    """q_des, dq_des at the times t (n,) [s]."""
    moving = np.array([j != FINGER_JOINT for j in arm.joints], dtype=float)
    omega = 2.0 * math.pi * S1_FREQUENCY
    return Reference(
        q_des=arm.q0 + S1_AMPLITUDE * np.sin(omega * t)[:, None] * moving,
        dq_des=S1_AMPLITUDE * omega * np.cos(omega * t)[:, None] * moving)


def read_pendulum(world_path: Path) -> Pendulum:
    world = yaml.safe_load(world_path.read_text())
    (robot,) = world["robots"]
    urdf = (world_path.parent / robot["urdf"]).resolve()
    _, urdf_joints = _urdf_links_and_joints(urdf)
    (joint,) = [j for j in urdf_joints if j.get("type") != "fixed"]
    name = joint.get("name")
    gains = {key: value[name] if isinstance(value, dict) else value
             for key, value in robot["controller"].items()}
    return Pendulum(urdf=urdf, joint=name, kp=float(gains["kp"]), ki=float(gains["ki"]),
                    kd=float(gains["kd"]), effort=float(joint.find("limit").get("effort")))


def _loadable_urdf(path: Path) -> str:
    """The URDF without <visual> elements and with absolute mesh file names (MuJoCo and
    PyBullet resolve neither package://sim_node/ nor, from a string, relative names)."""
    def absolute(match):
        name = match.group(1)
        package = "package://sim_node/"
        if name.startswith(package):
            return f'filename="{REPO / name[len(package):]}"'
        if name.startswith("package://"):
            raise ValueError(f"{path}: mesh {name}: only package://sim_node/ is known")
        return f'filename="{(path.parent / name).resolve()}"'

    text = re.sub(r"<visual\b.*?</visual>", "", path.read_text(), flags=re.S)
    return re.sub(r'filename="([^"]+)"', absolute, text)


# ---------------------------------------------------------------------------------------------
# S1: one arm simulation per engine, stepped in chunks and probed between them


@dataclass
class Sim:
    step: Callable[[int], None]     # advance n physics steps (S1 PID: a multiple of the tick)
    probe: Callable[[], np.ndarray]     # (8,) positions of the commanded joints
    close: Callable[[], None] = lambda: None


def ours_arm(arm: Arm, reference: Reference, engine_pid: bool) -> Sim:
    import sim_node

    world = sim_node.WorldModel()
    robot = world.loadRobot(str(arm.urdf), fixed_base=True)
    if robot.getJointNames() != arm.joints:
        raise ValueError(f"{arm.urdf}: sim_node's joints {robot.getJointNames()} are not the "
                         f"world file's {arm.joints}")
    robot.setConfig(arm.q0)
    sim = sim_node.Simulator(world)
    sim.setSimStep(PHYSICS_DT)
    sim.setGravity((0.0, 0.0, GRAVITY_Z))
    ctrl = sim.controller(0)
    kp, kd = arm.kp, arm.kd
    k = 0                                   # physics steps done

    def step_torque(n):
        nonlocal k
        for q_des in reference.q_des[k:k + n]:
            q = ctrl.getSensedConfig()
            v = ctrl.getSensedVelocity()
            ctrl.setTorqueCommand(kp * (q_des - q) - kd * v)
            sim.simulate(PHYSICS_DT)
        k += n

    def step_pid(n):
        nonlocal k
        ticks = slice(k, k + n, STEPS_PER_TICK)
        for q_des, dq_des in zip(reference.q_des[ticks], reference.dq_des[ticks]):
            ctrl.setPIDCommand(q_des, dq_des)
            sim.simulate(CONTROL_DT)
        k += n

    if engine_pid:
        ctrl.setPIDGains(kp, np.zeros_like(kp), kd)
    return Sim(step=step_pid if engine_pid else step_torque, probe=ctrl.getSensedConfig)


def _consecutive(indices: list, what: str) -> slice:
    if indices != list(range(indices[0], indices[0] + len(indices))):
        raise ValueError(f"MuJoCo model: the commanded joints' {what} addresses {indices} are "
                         f"not consecutive")
    return slice(indices[0], indices[0] + len(indices))


def _mujoco_spec(urdf: Path):
    import mujoco

    compiler = '<mujoco><compiler discardvisual="true" balanceinertia="true"/></mujoco>'
    text = re.sub(r"(<robot\b[^>]*>)", r"\1" + compiler, _loadable_urdf(urdf), count=1)
    spec = mujoco.MjSpec.from_string(text)
    spec.option.timestep = PHYSICS_DT
    spec.option.gravity = [0.0, 0.0, GRAVITY_Z]
    return spec


def mujoco_arm(arm: Arm, reference: Reference, engine_pid: bool) -> Sim:
    import mujoco

    spec = _mujoco_spec(arm.urdf)
    for geom in spec.geoms:
        geom.contype, geom.conaffinity = 0, 0       # nothing to touch, no self-collision
    for name, kp, kd in zip(arm.joints, arm.kp, arm.kd):
        actuator = spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        if engine_pid:
            actuator.set_to_position(kp=kp, kv=kd)
        else:
            actuator.set_to_motor()
    model = spec.compile()
    data = mujoco.MjData(model)
    q = data.qpos[_consecutive([int(model.joint(j).qposadr[0]) for j in arm.joints], "qpos")]
    v = data.qvel[_consecutive([int(model.joint(j).dofadr[0]) for j in arm.joints], "dof")]
    q[:] = arm.q0
    for name, (master, multiplier, offset) in arm.mimics.items():
        data.qpos[model.joint(name).qposadr[0]] = multiplier * arm.q0[master] + offset
    mujoco.mj_forward(model, data)
    ctrl = data.ctrl
    kp, kd = arm.kp, arm.kd
    lead = kd / kp      # ctrl = q_des + lead dq_des: kp (ctrl - q) - kd v = ours
    k = 0

    def step_torque(n):
        nonlocal k
        for q_des in reference.q_des[k:k + n]:
            ctrl[:] = kp * (q_des - q) - kd * v
            mujoco.mj_step(model, data)
        k += n

    def step_pid(n):
        nonlocal k
        ticks = slice(k, k + n, STEPS_PER_TICK)
        for q_des, dq_des in zip(reference.q_des[ticks], reference.dq_des[ticks]):
            ctrl[:] = q_des + lead * dq_des
            mujoco.mj_step(model, data, nstep=STEPS_PER_TICK)
        k += n

    return Sim(step=step_pid if engine_pid else step_torque, probe=q.copy)


def _bullet_client():
    import pybullet

    client = pybullet.connect(pybullet.DIRECT)
    pybullet.setTimeStep(PHYSICS_DT, physicsClientId=client)
    pybullet.setGravity(0.0, 0.0, GRAVITY_Z, physicsClientId=client)
    return pybullet, client


@contextlib.contextmanager
def _quiet():
    """File descriptors 1 and 2 to /dev/null: PyBullet's loader prints its warnings (such as
    the massless links' default mass) there."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved + [devnull]:
            os.close(fd)


def _bullet_robot(pb, client, urdf: Path, massless_links=()) -> tuple[int, dict]:
    """Load a fixed-base URDF as sim_node simulates it: (body, joint name -> getJointInfo)."""
    with tempfile.NamedTemporaryFile("w", suffix=".urdf") as file, _quiet():
        file.write(_loadable_urdf(urdf))
        file.flush()
        robot = pb.loadURDF(file.name, useFixedBase=True, flags=pb.URDF_USE_INERTIA_FROM_FILE,
                            physicsClientId=client)
    pb.changeDynamics(robot, -1, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
    infos = {}
    for j in range(pb.getNumJoints(robot, physicsClientId=client)):
        info = pb.getJointInfo(robot, j, physicsClientId=client)
        if info[12].decode() in massless_links:
            pb.changeDynamics(robot, j, mass=0.0, localInertiaDiagonal=[0.0, 0.0, 0.0],
                              physicsClientId=client)
        if info[2] != pb.JOINT_FIXED:
            infos[info[1].decode()] = info
            pb.changeDynamics(robot, j, jointDamping=info[6], physicsClientId=client)
            pb.setJointMotorControl2(robot, j, pb.VELOCITY_CONTROL, targetVelocity=0.0,
                                     force=info[7], physicsClientId=client)
    return robot, infos


def pybullet_arm(arm: Arm, reference: Reference, engine_pid: bool) -> Sim:
    pb, client = _bullet_client()
    robot, infos = _bullet_robot(pb, client, arm.urdf, arm.massless_links)
    # PyBullet's joints: the commanded ones, then the mimic joints under the same PD
    names = arm.joints + list(arm.mimics)
    source = np.array(list(range(len(arm.joints))) + [m[0] for m in arm.mimics.values()])
    multiplier = np.array([1.0] * len(arm.joints) + [m[1] for m in arm.mimics.values()])
    offset = np.array([0.0] * len(arm.joints) + [m[2] for m in arm.mimics.values()])
    joints = [infos[name][0] for name in names]
    q_table = reference.q_des[:, source] * multiplier + offset
    dq_table = reference.dq_des[:, source] * multiplier
    for joint, q0 in zip(joints, q_table[0]):
        pb.resetJointState(robot, joint, q0, 0.0, physicsClientId=client)
    kp, kd = arm.kp[source], arm.kd[source]
    effort = np.array([infos[name][10] for name in names])
    kp_list, kd_list, effort_list = kp.tolist(), kd.tolist(), effort.tolist()
    k = 0

    def step_torque(n):
        nonlocal k
        for q_des in q_table[k:k + n]:
            states = pb.getJointStates(robot, joints, physicsClientId=client)
            q = np.array([s[0] for s in states])
            v = np.array([s[1] for s in states])
            tau = np.clip(kp * (q_des - q) - kd * v, -effort, effort)
            pb.setJointMotorControlArray(robot, joints, pb.TORQUE_CONTROL, forces=tau.tolist(),
                                         physicsClientId=client)
            pb.stepSimulation(physicsClientId=client)
        k += n

    def step_pid(n):
        nonlocal k
        ticks = slice(k, k + n, STEPS_PER_TICK)
        for q_des, dq_des in zip(q_table[ticks], dq_table[ticks]):
            pb.setJointMotorControlArray(robot, joints, pb.PD_CONTROL,
                                         targetPositions=q_des.tolist(),
                                         targetVelocities=dq_des.tolist(),
                                         positionGains=kp_list, velocityGains=kd_list,
                                         forces=effort_list, physicsClientId=client)
            for _ in range(STEPS_PER_TICK):
                pb.stepSimulation(physicsClientId=client)
        k += n

    def probe():
        states = pb.getJointStates(robot, joints[:len(arm.joints)], physicsClientId=client)
        return np.array([s[0] for s in states])

    return Sim(step=step_pid if engine_pid else step_torque, probe=probe,
               close=lambda: pb.disconnect(physicsClientId=client))


S1_ENGINES = {"sim_node": ours_arm, "PyBullet": pybullet_arm, "MuJoCo": mujoco_arm}


def tracking_errors(make: Callable[[], Sim], arm: Arm, steps: int) -> dict:
    """The warm-up run: joint positions every control tick against q_des at that time; RMS
    over the arm's revolute joints in the last S1_ERROR_WINDOW (half the run if shorter)."""
    sim = make()
    try:
        samples = []
        for _ in range(steps // STEPS_PER_TICK):
            sim.step(STEPS_PER_TICK)
            samples.append(sim.probe())
    finally:
        sim.close()
    t = np.arange(1, len(samples) + 1) * CONTROL_DT
    error = np.array(samples) - arm_reference(arm, t).q_des
    window = t > t[-1] - min(S1_ERROR_WINDOW, t[-1] / 2)
    revolute = [i for i, j in enumerate(arm.joints) if j != FINGER_JOINT]
    error = error[window][:, revolute]
    return {"rms_error_mrad": float(np.sqrt(np.mean(error ** 2)) * 1e3),
            "worst_joint_rms_error_mrad": float(np.sqrt(np.mean(error ** 2, axis=0)).max() * 1e3)}


def steps_per_second(make: Callable[[], Sim], steps: int) -> float:
    """One timed run from a freshly built scene (building not timed)."""
    sim = make()
    try:
        start = time.perf_counter()
        sim.step(steps)
        return steps / (time.perf_counter() - start)
    finally:
        sim.close()


# ---------------------------------------------------------------------------------------------
# S2: 100 pendulum runs per engine, in one process or on a pool


def _pendulum_sim_init(sim, pendulum: Pendulum):
    """The seed's simInit: the PID gains and the target angle 0."""
    controller = sim.controller(0)
    controller.setPIDGains([pendulum.kp], [pendulum.ki], [pendulum.kd])
    controller.setPIDCommand([0.0], [0.0])


def ours_monte_carlo(pendulum: Pendulum, angles: list, processes: int | None) -> list:
    """Final angles [rad] of monteCarloSim's runs from the given initial angles (processes:
    None for its default pool, one process per core)."""
    import sim_node
    from sim_node.sim import batch

    world = sim_node.WorldModel()
    world.readFile(str(PENDULUM_WORLD))
    item, return_items = "robots[0].config[0]", ["robots[0].config", "robots[0].velocity"]
    results = batch.monteCarloSim(
        world, S2_DURATION, {item: iter(angles).__next__}, len(angles), return_items,
        simDt=CONTROL_DT, simInit=functools.partial(_pendulum_sim_init, pendulum=pendulum),
        processes=processes, progress=False)
    if [initial[item] for initial, _ in results] != list(angles):
        raise RuntimeError("monteCarloSim did not run the sampled initial angles in order")
    return [float(result[return_items[0]][0]) for _, result in results]


def _integral_step(integral: float, error: float, pendulum: Pendulum) -> float:
    # I += e dt at the control rate, |ki I| kept within the torque limit (sim_node's anti-windup)
    bound = pendulum.effort / pendulum.ki
    return min(bound, max(-bound, integral + error * CONTROL_DT))


@dataclass
class Runner:
    """S2 in one engine, built once per process."""
    run: Callable[[float], float]   # initial angle -> final angle of one run [rad]
    close: Callable[[], None] = lambda: None


def mujoco_pendulum(pendulum: Pendulum) -> Runner:
    import mujoco

    spec = _mujoco_spec(pendulum.urdf)
    spec.worldbody.add_geom(name="ground", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1])
    actuator = spec.add_actuator(name=pendulum.joint, target=pendulum.joint,
                                 trntype=mujoco.mjtTrn.mjTRN_JOINT)
    actuator.set_to_position(kp=pendulum.kp, kv=pendulum.kd)
    model = spec.compile()
    data = mujoco.MjData(model)
    address = int(model.joint(pendulum.joint).qposadr[0])
    ticks = round(S2_DURATION / CONTROL_DT)

    def run(angle: float) -> float:
        mujoco.mj_resetData(model, data)
        data.qpos[address] = angle
        integral = 0.0
        for _ in range(ticks):
            error = -data.qpos[address]
            data.ctrl[0] = pendulum.ki * integral / pendulum.kp
            mujoco.mj_step(model, data, nstep=STEPS_PER_TICK)
            integral = _integral_step(integral, error, pendulum)
        return float(data.qpos[address])

    return Runner(run)


def pybullet_pendulum(pendulum: Pendulum) -> Runner:
    pb, client = _bullet_client()
    plane = pb.createCollisionShape(pb.GEOM_PLANE, physicsClientId=client)
    pb.createMultiBody(baseMass=0.0, baseCollisionShapeIndex=plane, physicsClientId=client)
    robot, infos = _bullet_robot(pb, client, pendulum.urdf)
    joint = infos[pendulum.joint][0]
    ticks = round(S2_DURATION / CONTROL_DT)
    kp, ki, kd, effort = pendulum.kp, pendulum.ki, pendulum.kd, pendulum.effort

    def run(angle: float) -> float:
        pb.resetJointState(robot, joint, angle, 0.0, physicsClientId=client)
        integral = 0.0
        for _ in range(ticks):
            error = -pb.getJointState(robot, joint, physicsClientId=client)[0]
            for _ in range(STEPS_PER_TICK):
                q, v = pb.getJointState(robot, joint, physicsClientId=client)[:2]
                tau = min(effort, max(-effort, -kp * q - kd * v + ki * integral))
                pb.setJointMotorControl2(robot, joint, pb.TORQUE_CONTROL, force=tau,
                                         physicsClientId=client)
                pb.stepSimulation(physicsClientId=client)
            integral = _integral_step(integral, error, pendulum)
        return pb.getJointState(robot, joint, physicsClientId=client)[0]

    return Runner(run, close=lambda: pb.disconnect(physicsClientId=client))


_worker: Runner | None = None       # the engine of this pool process (_start_worker builds it)


def _start_worker(build, pendulum: Pendulum):
    global _worker
    _worker = build(pendulum)


def _run_in_worker(angle: float) -> float:
    return _worker.run(angle)


def monte_carlo(build, pendulum: Pendulum, angles: list, processes: int) -> list:
    """Final angles [rad] of one run per initial angle, with the engine `build` makes, in this
    process or on a pool of `processes` (each building its engine once)."""
    if processes == 1:
        runner = build(pendulum)
        try:
            return [runner.run(angle) for angle in angles]
        finally:
            runner.close()
    context = multiprocessing.get_context(START_METHOD)
    with context.Pool(processes, initializer=_start_worker, initargs=(build, pendulum)) as pool:
        return pool.map(_run_in_worker, angles, chunksize=math.ceil(len(angles) / processes))


def s2_cases(pendulum: Pendulum, angles: list) -> dict:
    """row name -> (engine, a function running all runs and returning the final angles)."""
    return {
        f"sim_node, default ({POOL_PROCESSES} processes)":
            ("sim_node", lambda: ours_monte_carlo(pendulum, angles, None)),
        "sim_node, 1 process": ("sim_node", lambda: ours_monte_carlo(pendulum, angles, 1)),
        "PyBullet, 1 process":
            ("PyBullet", lambda: monte_carlo(pybullet_pendulum, pendulum, angles, 1)),
        f"PyBullet, {POOL_PROCESSES} processes":
            ("PyBullet", lambda: monte_carlo(pybullet_pendulum, pendulum, angles, POOL_PROCESSES)),
        "MuJoCo, 1 process":
            ("MuJoCo", lambda: monte_carlo(mujoco_pendulum, pendulum, angles, 1)),
        f"MuJoCo, {POOL_PROCESSES} processes":
            ("MuJoCo", lambda: monte_carlo(mujoco_pendulum, pendulum, angles, POOL_PROCESSES)),
    }


def final_angle_sanity(final_angles: list) -> dict:
    final = np.abs(np.array(final_angles))
    return {"mean_abs_final_angle_rad": float(final.mean()),
            "fraction_settled": float(np.mean(final < S2_SETTLED))}


def sims_per_second(run: Callable[[], list], runs: int) -> float:
    start = time.perf_counter()
    run()
    return runs / (time.perf_counter() - start)


# ---------------------------------------------------------------------------------------------
# Reports


def _available(engines, versions: dict) -> list:
    missing = sorted({e for e in engines if versions[e] is None})
    for engine in missing:
        print(f"  {engine} not installed (pip install -r requirements/bench.txt): skipped")
    return [e for e in engines if versions[e] is not None]


def _verdict(ratio: float, target: float) -> str:
    return f"{ratio:.2f}x, {'met' if ratio >= target else 'NOT met'}"


def run_s1(arm: Arm, steps: int, engine_pid: bool, versions: dict) -> dict:
    title = ("PD inside the engine, commanded every 10 ms" if engine_pid
             else "PD torques from Python every 1 ms step")
    name = "S1 PID" if engine_pid else "S1"
    print(f"\n{name}: 7-DOF arm tracking a {S1_FREQUENCY:g} Hz sinusoid, {title}; "
          f"{steps * PHYSICS_DT:g} s ({steps} physics steps; best of {REPEATS} after a warm-up)")
    engines = _available(S1_ENGINES, versions)
    reference = arm_reference(arm, np.arange(steps) * PHYSICS_DT)
    makers = {e: functools.partial(S1_ENGINES[e], arm, reference, engine_pid) for e in engines}
    sanity = {e: tracking_errors(makers[e], arm, steps) for e in engines}
    best = dict.fromkeys(engines, 0.0)
    for _ in range(REPEATS):
        for engine in engines:
            best[engine] = max(best[engine], steps_per_second(makers[engine], steps))
    print(f"  {'engine':10s} {'steps/s':>9s} {'ours/this':>9s} {'reference':>10s}  "
          f"{'RMS error [mrad]':>17s} {'worst joint [mrad]':>19s}")
    results = {}
    for engine in engines:
        reference_rate = None if engine_pid else REFERENCE["S1"].get(engine)
        results[engine] = {"version": versions[engine], "steps_per_s": best[engine],
                           "ours_over_this": best["sim_node"] / best[engine],
                           "reference_steps_per_s": reference_rate, **sanity[engine]}
        ref = f"{reference_rate:,.0f}" if reference_rate else "-"
        print(f"  {engine:10s} {best[engine]:9,.0f} {best['sim_node'] / best[engine]:9.2f} "
              f"{ref:>10s}  {sanity[engine]['rms_error_mrad']:17.3f} "
              f"{sanity[engine]['worst_joint_rms_error_mrad']:19.3f}")
    print("  ours/this = sim_node steps/s / engine steps/s (> 1: sim_node is faster); "
          "reference = the issue's steps/s on this kind of machine")
    return results


def run_s2(pendulum: Pendulum, runs: int, versions: dict) -> dict:
    print(f"\nS2: the seed's Monte Carlo, pendulum PID (kP {pendulum.kp:g}, kI {pendulum.ki:g}, "
          f"kD {pendulum.kd:g}) toward 0 from {runs} angles uniform in [-pi, pi] (seed "
          f"{S2_SEED}), {S2_DURATION:g} s each, control {CONTROL_DT * 1e3:g} ms, physics "
          f"{PHYSICS_DT * 1e3:g} ms (best of {REPEATS} after a warm-up)")
    sampler = random.Random(S2_SEED)
    angles = [sampler.uniform(-math.pi, math.pi) for _ in range(runs)]
    cases = s2_cases(pendulum, angles)
    engines = _available(list(dict.fromkeys(engine for engine, _ in cases.values())), versions)
    cases = {row: case for row, case in cases.items() if case[0] in engines}
    sanity = {row: final_angle_sanity(run()) for row, (_, run) in cases.items()}
    best = dict.fromkeys(cases, 0.0)
    for _ in range(REPEATS):
        for row, (_, run) in cases.items():
            best[row] = max(best[row], sims_per_second(run, runs))
    ours = best[next(iter(cases))]
    print(f"  {'engine':31s} {'sims/s':>8s} {'ours/this':>9s} {'reference':>10s}  "
          f"{'mean |final| [rad]':>18s} {f'within {S2_SETTLED:g} rad':>15s}")
    results = {}
    for row, (engine, _) in cases.items():
        reference = REFERENCE["S2"].get(engine) if row.endswith(", 1 process") else None
        results[row] = {"version": versions[engine], "sims_per_s": best[row],
                        "ours_over_this": ours / best[row], "reference_sims_per_s": reference,
                        **sanity[row]}
        ref = f"{reference:g}" if reference else "-"
        print(f"  {row:31s} {best[row]:8.1f} {ours / best[row]:9.2f} {ref:>10s}  "
              f"{sanity[row]['mean_abs_final_angle_rad']:18.4f} "
              f"{sanity[row]['fraction_settled']:15.2f}")
    print(f"  ours/this = sim_node's default ({POOL_PROCESSES} processes) sims/s / this row's; "
          "reference = the issue's sims/s on this kind of machine")
    return results


def report_targets(s1: dict, s1_pid: dict, s2: dict):
    print("\nTargets (issue)")
    if "MuJoCo" not in s1:
        print("  MuJoCo not installed: the targets, all relative to MuJoCo, are not evaluated")
        return
    mujoco_s1 = s1["MuJoCo"]["steps_per_s"]
    print(f"  S1      sim_node >= {TARGET_S1:g}x MuJoCo ({mujoco_s1:,.0f} steps/s): "
          f"{_verdict(s1['sim_node']['steps_per_s'] / mujoco_s1, TARGET_S1)}")
    print(f"  S1 PID  sim_node >= {TARGET_S1_PID:g}x MuJoCo's S1 Python loop "
          f"({mujoco_s1:,.0f} steps/s): "
          f"{_verdict(s1_pid['sim_node']['steps_per_s'] / mujoco_s1, TARGET_S1_PID)}")
    ours = next(iter(s2.values()))["sims_per_s"]
    for row, result in s2.items():
        if row.startswith("MuJoCo"):
            print(f"  S2      sim_node on {POOL_PROCESSES} cores >= {TARGET_S2:g}x {row} "
                  f"({result['sims_per_s']:.1f} sims/s): "
                  f"{_verdict(ours / result['sims_per_s'], TARGET_S2)}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="S1 2 s instead of 10 s, S2 20 runs instead of 100")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    s1_steps = round((2.0 if args.quick else 10.0) / PHYSICS_DT)
    s2_runs = 20 if args.quick else 100
    versions = engine_versions()
    print("engines: " + ", ".join(f"{engine} {version or '(not installed)'}"
                                  for engine, version in versions.items()))
    arm = read_arm(DEFAULT_WORLD)
    results = {"physics_dt": PHYSICS_DT, "control_dt": CONTROL_DT, "versions": versions,
               "S1": run_s1(arm, s1_steps, False, versions),
               "S1 PID": run_s1(arm, s1_steps, True, versions),
               "S2": run_s2(read_pendulum(PENDULUM_WORLD), s2_runs, versions)}
    report_targets(results["S1"], results["S1 PID"], results["S2"])
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
