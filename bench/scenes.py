"""Contact benchmark: microseconds per 1 ms step of sim_node's engine, PyBullet and MuJoCo.

S3  20 boxes (0.1 m, 0.5 kg, friction 0.5) dropped in a loose 3-layer pile onto a plane
    (data/worlds/box_pile.yaml), 3 s.
S4  the 12-joint quadruped dropped 5 cm onto a plane, holding its initial joint angles with a
    joint PD (data/worlds/quadruped.yaml), 3 s.

Every engine simulates the same scene, read from the world file (sim_node through its
WorldModel, the others through PyYAML), in this one process. Timing: per engine one warm-up
run that also records the physics sanity numbers, then 3 rounds of one timed run per engine
(interleaved, so that a change of load on the machine hits every engine alike), each from a
freshly built scene, the best kept; only the stepping is timed, never the building. sim_node and
MuJoCo step in C (scene.step(dt, n), mj_step(nstep=n)); PyBullet has no such call, so its time
includes one Python call of stepSimulation per step (about 1 µs: an empty world's step).

How each engine holds the scenes the same way:
  friction     sim_node combines two surfaces' coefficients by their harmonic mean, MuJoCo by the
               max and Bullet by the product; PyBullet therefore gets sqrt(mu) on both surfaces
               (0.5 on each would make 0.25 between them).
  PD (S4)      tau = kp (q_des - q) - kd qdot, clamped to the URDF effort limit, once per step
               inside the engine: sim_node's robot_kp / robot_kd / robot_q_des; PyBullet's
               PD_CONTROL (its pdControlPlugin computes exactly this before every internal
               step, in SI gains, with the effort limit as `forces`); MuJoCo `position`
               actuators with kp and kv, clamped by the joint's actuatorfrcrange that its URDF
               import takes from the effort limit.
  joints (S4)  URDF damping 0.1 N m s/rad and dry friction 0.1 N m: sim_node and MuJoCo's URDF
               import take both, PyBullet's loadURDF the damping; its default velocity motors
               (which would hold the joints nearly locked) get target velocity 0 and a maximum
               force equal to the URDF friction, PyBullet's usual joint dry friction.
  collisions   the quadruped does not collide with itself (self_collision: false): PyBullet's
               loadURDF default; in MuJoCo the robot geoms have contype 0, conaffinity 1.
  free boxes   PyBullet's boxes are rigid bodies (useMaximalCoordinates=True), its fast path
               for free bodies; as one-link multibodies they cost about 2.5x more per step.
  inertia      PyBullet loads the URDF inertias (URDF_USE_INERTIA_FROM_FILE), not its own
               estimate from the collision shapes.
  sleeping     off in every engine (sim_node and MuJoCo do not sleep by default): PyBullet lets
               a body that rested ~2 s sleep by default, which skips its work from then on; the
               row "PyBullet sleeping" shows that default, "PyBullet" (the target's reference)
               has it disabled per body.
Otherwise each engine runs its default solver and contact settings.

    python bench/scenes.py [--quick] [--json out.json]
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: idle OpenBLAS threads spin

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable  # noqa: E402

import numpy as np  # noqa: E402
import yaml  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

BOX_PILE_WORLD = REPO / "data" / "worlds" / "box_pile.yaml"
QUADRUPED_WORLD = REPO / "data" / "worlds" / "quadruped.yaml"
PHYSICS_DT = 0.001          # [s]
GRAVITY_Z = -9.81           # [m/s^2]
REPEATS = 3
TARGET_SPEEDUP_VS_PYBULLET = 2.0    # issue: ours at least 2x faster than PyBullet
REFERENCE_US = {            # issue: µs/step measured on this kind of machine
    "S3": {"PyBullet": 336.0, "MuJoCo": 66.0},
    "S4": {"PyBullet": 203.0, "MuJoCo": 20.0},
}


# ---------------------------------------------------------------------------------------------
# The scenes, read from the world files with PyYAML for the other engines


@dataclass
class BoxPile:
    """S3: free boxes on the plane z = 0."""
    position_W: np.ndarray      # (n, 3) box centres [m]
    quat_xyzw_W: np.ndarray     # (n, 4) orientations
    half_extents: np.ndarray    # (n, 3) [m]
    mass: np.ndarray            # (n,) [kg]
    friction: np.ndarray        # (n,) Coulomb coefficients
    ground_friction: float


@dataclass
class Quadruped:
    """S4: a floating-base URDF robot on the plane z = 0, PD-held at its initial joint angles."""
    urdf: Path
    base_position_W: np.ndarray     # (3,) [m]
    base_quat_xyzw_W: np.ndarray    # (4,)
    q_des: dict                     # joint name -> initial angle = PD target [rad]
    kp: dict                        # joint name -> [N m/rad]
    kd: dict                        # joint name -> [N m s/rad]
    friction: float                 # robot surface
    ground_friction: float


def _per_joint(value, names) -> dict:
    return dict(value) if isinstance(value, dict) else {name: float(value) for name in names}


def _ground_friction(world: dict) -> float:
    (ground,) = [t for t in world["terrains"] if "plane" in t["geometry"]]
    plane = ground["geometry"]["plane"]
    if list(plane["normal"]) != [0, 0, 1] or plane.get("offset", 0.0) != 0.0:
        raise ValueError(f"ground plane {plane}: the benchmark expects z = 0")
    return float(ground["surface"]["kFriction"])


def read_box_pile(path: Path) -> BoxPile:
    world = yaml.safe_load(path.read_text())
    boxes = world["rigid_objects"]
    return BoxPile(
        position_W=np.array([b["pose"]["position"] for b in boxes], dtype=float),
        quat_xyzw_W=np.array([b["pose"]["orientation"] for b in boxes], dtype=float),
        half_extents=0.5 * np.array([b["geometry"]["box"] for b in boxes], dtype=float),
        mass=np.array([b["mass"] for b in boxes], dtype=float),
        friction=np.array([b["surface"]["kFriction"] for b in boxes], dtype=float),
        ground_friction=_ground_friction(world))


def read_quadruped(path: Path) -> Quadruped:
    world = yaml.safe_load(path.read_text())
    (robot,) = world["robots"]
    if robot.get("fixed_base", False):
        raise ValueError(f"{path}: S4 needs a floating base")
    q_des = dict(robot["initial_config"])
    gains = robot["controller"]
    return Quadruped(
        urdf=(path.parent / robot["urdf"]).resolve(),
        base_position_W=np.array(robot["pose"]["position"], dtype=float),
        base_quat_xyzw_W=np.array(robot["pose"]["orientation"], dtype=float),
        q_des=q_des, kp=_per_joint(gains["kp"], q_des), kd=_per_joint(gains["kd"], q_des),
        friction=float(robot["surface"]["kFriction"]),
        ground_friction=_ground_friction(world))


# ---------------------------------------------------------------------------------------------
# One simulation per engine per scene: build it, then step and probe it


@dataclass
class Sim:
    step: Callable[[int], None]     # advance n steps of PHYSICS_DT
    probe: Callable[[], object]     # S3: (centres (n, 3) [m], speeds (n,) [m/s]); S4: base z [m]
    close: Callable[[], None] = lambda: None


def ours_s3_scene():
    """S3 as sim_node's engine Scene (sim_node.engine.api)."""
    import sim_node
    from sim_node.sim.build import build_scene

    world = sim_node.WorldModel()
    world.readFile(str(BOX_PILE_WORLD))
    return build_scene(world).scene


def ours_s3() -> Sim:
    scene = ours_s3_scene()

    def probe():
        state = np.asarray(scene.free_state)   # (n, 13): p, quat xyzw, v, omega (world)
        return state[:, 0:3].copy(), np.linalg.norm(state[:, 7:10], axis=1)

    return Sim(step=lambda n: scene.step(PHYSICS_DT, n), probe=probe)


def ours_s4_scene():
    """S4 as sim_node's engine Scene, its PD gains and targets set (sim_node.engine.api)."""
    import sim_node
    from sim_node.sim.build import build_scene

    world = sim_node.WorldModel()
    world.readFile(str(QUADRUPED_WORLD))
    scene = build_scene(world).scene
    robot = world.robot(0)
    structure, gains, q0 = robot.structure, robot.settings["controller"], robot.getConfig()
    for name in robot.getJointNames():
        v_index, q_index = structure.joint_v_index[name], structure.joint_q_index[name]
        scene.robot_kp[0][v_index] = gains["kp"][name]
        scene.robot_kd[0][v_index] = gains["kd"][name]
        scene.robot_q_des[0][v_index] = q0[q_index]
    return scene


def ours_s4() -> Sim:
    scene = ours_s4_scene()
    return Sim(step=lambda n: scene.step(PHYSICS_DT, n),
               probe=lambda: float(scene.robot_q[0][2]))


def _bullet_client():
    import pybullet

    client = pybullet.connect(pybullet.DIRECT)
    pybullet.setTimeStep(PHYSICS_DT, physicsClientId=client)
    pybullet.setGravity(0.0, 0.0, GRAVITY_Z, physicsClientId=client)
    return pybullet, client


def _bullet_ground(pb, client, friction: float) -> int:
    plane = pb.createCollisionShape(pb.GEOM_PLANE, physicsClientId=client)
    ground = pb.createMultiBody(baseMass=0.0, baseCollisionShapeIndex=plane,
                                physicsClientId=client)
    pb.changeDynamics(ground, -1, lateralFriction=math.sqrt(friction), physicsClientId=client)
    return ground


def _bullet_activation(pb, sleeping: bool) -> int:
    """PyBullet's default lets a body that rested ~2 s sleep (skipped until touched)."""
    return pb.ACTIVATION_STATE_ENABLE_SLEEPING if sleeping else pb.ACTIVATION_STATE_DISABLE_SLEEPING


def pybullet_s3(pile: BoxPile, sleeping: bool = False) -> Sim:
    pb, client = _bullet_client()
    _bullet_ground(pb, client, pile.ground_friction)
    boxes = []
    for p_W, quat, half, mass, mu in zip(pile.position_W, pile.quat_xyzw_W, pile.half_extents,
                                         pile.mass, pile.friction):
        shape = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=half.tolist(),
                                        physicsClientId=client)
        box = pb.createMultiBody(baseMass=float(mass), baseCollisionShapeIndex=shape,
                                 basePosition=p_W.tolist(), baseOrientation=quat.tolist(),
                                 useMaximalCoordinates=True, physicsClientId=client)
        pb.changeDynamics(box, -1, lateralFriction=math.sqrt(mu),
                          activationState=_bullet_activation(pb, sleeping),
                          physicsClientId=client)
        boxes.append(box)

    def step(n):
        for _ in range(n):
            pb.stepSimulation(physicsClientId=client)

    def probe():
        centres, speeds = [], []
        for box in boxes:
            centres.append(pb.getBasePositionAndOrientation(box, physicsClientId=client)[0])
            speeds.append(np.linalg.norm(pb.getBaseVelocity(box, physicsClientId=client)[0]))
        return np.array(centres), np.array(speeds)

    return Sim(step=step, probe=probe, close=lambda: pb.disconnect(physicsClientId=client))


def pybullet_s4(quad: Quadruped, sleeping: bool = False) -> Sim:
    pb, client = _bullet_client()
    _bullet_ground(pb, client, quad.ground_friction)
    robot = pb.loadURDF(str(quad.urdf), quad.base_position_W.tolist(),
                        quad.base_quat_xyzw_W.tolist(), useFixedBase=False,
                        flags=pb.URDF_USE_INERTIA_FROM_FILE, physicsClientId=client)
    pb.changeDynamics(robot, -1, lateralFriction=math.sqrt(quad.friction),
                      activationState=_bullet_activation(pb, sleeping),
                      physicsClientId=client)
    joints, targets, kp, kd, effort, dry_friction = [], [], [], [], [], []
    for j in range(pb.getNumJoints(robot, physicsClientId=client)):
        info = pb.getJointInfo(robot, j, physicsClientId=client)
        pb.changeDynamics(robot, j, lateralFriction=math.sqrt(quad.friction),
                          physicsClientId=client)
        name = info[1].decode()
        if name not in quad.q_des:
            continue
        pb.resetJointState(robot, j, quad.q_des[name], physicsClientId=client)
        joints.append(j)
        targets.append(quad.q_des[name])
        kp.append(quad.kp[name])
        kd.append(quad.kd[name])
        dry_friction.append(info[7])
        effort.append(info[10])
    pb.setJointMotorControlArray(robot, joints, pb.VELOCITY_CONTROL,
                                 targetVelocities=[0.0] * len(joints), forces=dry_friction,
                                 physicsClientId=client)
    pb.setJointMotorControlArray(robot, joints, pb.PD_CONTROL, targetPositions=targets,
                                 targetVelocities=[0.0] * len(joints), positionGains=kp,
                                 velocityGains=kd, forces=effort, physicsClientId=client)

    def step(n):
        for _ in range(n):
            pb.stepSimulation(physicsClientId=client)

    return Sim(step=step,
               probe=lambda: pb.getBasePositionAndOrientation(robot, physicsClientId=client)[0][2],
               close=lambda: pb.disconnect(physicsClientId=client))


def _wxyz(quat_xyzw) -> str:
    x, y, z, w = quat_xyzw
    return f"{w} {x} {y} {z}"


def mujoco_s3(pile: BoxPile) -> Sim:
    import mujoco

    bodies = "\n".join(
        f'<body name="box{i:02d}" pos="{" ".join(map(str, p_W))}" quat="{_wxyz(quat)}">'
        f'<freejoint/><geom type="box" size="{" ".join(map(str, half))}" mass="{mass}" '
        f'friction="{mu} 0.005 0.0001"/></body>'
        for i, (p_W, quat, half, mass, mu) in enumerate(zip(
            pile.position_W, pile.quat_xyzw_W, pile.half_extents, pile.mass, pile.friction)))
    mjcf = f"""<mujoco model="box_pile">
  <option timestep="{PHYSICS_DT}" gravity="0 0 {GRAVITY_Z}"/>
  <worldbody>
    <geom name="ground" type="plane" size="0 0 1" friction="{pile.ground_friction} 0.005 0.0001"/>
    {bodies}
  </worldbody>
</mujoco>"""
    model = mujoco.MjModel.from_xml_string(mjcf)
    data = mujoco.MjData(model)
    # free joint i: qpos[7i : 7i + 3] position, qvel[6i : 6i + 3] linear velocity (world)
    n = len(pile.mass)

    def probe():
        centres = data.qpos.reshape(n, 7)[:, 0:3].copy()
        return centres, np.linalg.norm(data.qvel.reshape(n, 6)[:, 0:3], axis=1)

    return Sim(step=lambda steps: mujoco.mj_step(model, data, nstep=steps), probe=probe)


def mujoco_s4(quad: Quadruped) -> Sim:
    import mujoco

    urdf = quad.urdf.read_text()
    compiler = '<mujoco><compiler discardvisual="true" balanceinertia="true"/></mujoco>'
    spec = mujoco.MjSpec.from_string(re.sub(r"(<robot\b[^>]*>)", r"\1" + compiler, urdf, count=1))
    spec.option.timestep = PHYSICS_DT
    spec.option.gravity = [0.0, 0.0, GRAVITY_Z]
    # MuJoCo's URDF import welds the root link to the world: give it a free joint
    root = spec.worldbody.first_body()
    root.add_freejoint()
    for geom in spec.geoms:
        geom.friction = [quad.friction, 0.005, 0.0001]
        geom.contype, geom.conaffinity = 0, 1       # robot touches the ground, not itself
    spec.worldbody.add_geom(name="ground", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1],
                            friction=[quad.ground_friction, 0.005, 0.0001])
    for name in quad.q_des:
        actuator = spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        actuator.set_to_position(kp=quad.kp[name], kv=quad.kd[name])
    model = spec.compile()
    data = mujoco.MjData(model)
    data.qpos[0:3] = quad.base_position_W
    data.qpos[3:7] = np.roll(quad.base_quat_xyzw_W, 1)
    for name, angle in quad.q_des.items():
        data.qpos[model.joint(name).qposadr[0]] = angle
        data.ctrl[model.actuator(name).id] = angle
    mujoco.mj_forward(model, data)
    return Sim(step=lambda steps: mujoco.mj_step(model, data, nstep=steps),
               probe=lambda: float(data.qpos[2]))


# ---------------------------------------------------------------------------------------------
# Measurement


def record(make: Callable[[], Sim], steps: int, probe_every: int) -> list:
    """Probes after every `probe_every` steps of one run (the warm-up)."""
    sim = make()
    try:
        probes = []
        for _ in range(steps // probe_every):
            sim.step(probe_every)
            probes.append(sim.probe())
        return probes
    finally:
        sim.close()


def us_per_step(make: Callable[[], Sim], steps: int) -> float:
    """One timed run from a freshly built scene (building not timed)."""
    sim = make()
    try:
        start = time.perf_counter()
        sim.step(steps)
        return (time.perf_counter() - start) / steps * 1e6
    finally:
        sim.close()


def s3_sanity(probes: list, steps: int) -> dict:
    centres, speeds = probes[-1]
    return {"max_speed_m_s": float(speeds.max()),
            "min_centre_z_mm": float(centres[:, 2].min() * 1e3)}


def s4_sanity(probes: list, steps: int) -> dict:
    heights = np.array(probes)              # one per step
    window = min(1000, steps // 2)          # the last second (or half of a shorter run)
    last = heights[-window:]
    return {"base_z_mm": float(heights[-1] * 1e3),
            "base_z_range_mm": float((last.max() - last.min()) * 1e3),
            "range_window_s": window * PHYSICS_DT}


SCENES = {
    "S3": {"title": "20 boxes dropped in a 3-layer pile", "sanity": s3_sanity,
           "probe_every": None, "columns": ("max speed [m/s]", "min centre z [mm]"),
           "engines": {"sim_node": ours_s3,
                       "PyBullet": lambda: pybullet_s3(read_box_pile(BOX_PILE_WORLD)),
                       "PyBullet sleeping": lambda: pybullet_s3(read_box_pile(BOX_PILE_WORLD),
                                                                sleeping=True),
                       "MuJoCo": lambda: mujoco_s3(read_box_pile(BOX_PILE_WORLD))}},
    "S4": {"title": "quadruped dropped 5 cm, PD holding its pose", "sanity": s4_sanity,
           "probe_every": 1, "columns": ("base z [mm]", "z range [mm]"),
           "engines": {"sim_node": ours_s4,
                       "PyBullet": lambda: pybullet_s4(read_quadruped(QUADRUPED_WORLD)),
                       "PyBullet sleeping": lambda: pybullet_s4(read_quadruped(QUADRUPED_WORLD),
                                                                sleeping=True),
                       "MuJoCo": lambda: mujoco_s4(read_quadruped(QUADRUPED_WORLD))}},
}


def engine_versions() -> dict:
    """engine -> its version, None when it is not installed."""
    from importlib.metadata import version

    versions = {"sim_node": version("sim_node")}
    try:
        _import_pybullet_quietly()
        versions["PyBullet"] = version("pybullet")
    except ImportError:
        versions["PyBullet"] = None
    try:
        import mujoco
        versions["MuJoCo"] = mujoco.__version__
    except ImportError:
        versions["MuJoCo"] = None
    return versions


def _import_pybullet_quietly():
    """import pybullet, whose import writes its build time to file descriptor 2."""
    saved_stderr, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        import pybullet  # noqa: F401
    finally:
        os.dup2(saved_stderr, 2)
        os.close(saved_stderr)
        os.close(devnull)


def run_scene(scene: str, steps: int, versions: dict) -> dict:
    """Warm-up (and sanity) run of every engine, then REPEATS rounds of one timed run per
    engine, interleaved so that a change of load on the machine hits every engine alike."""
    spec = SCENES[scene]
    print(f"\n{scene}: {spec['title']}, {steps * PHYSICS_DT:g} s at dt {PHYSICS_DT * 1e3:g} ms "
          f"({steps} steps; best of {REPEATS} after a warm-up)")
    available = []
    for engine, make in spec["engines"].items():
        package = engine.split()[0]             # "PyBullet sleeping" -> PyBullet
        version = versions[package]
        if version is None:
            if engine == package:
                print(f"  {engine} not installed (pip install -r requirements/bench.txt): "
                      "skipped")
        else:
            available.append((engine, version, make))
    sanity = {engine: spec["sanity"](record(make, steps, spec["probe_every"] or steps), steps)
              for engine, _, make in available}
    best = {engine: math.inf for engine, _, _ in available}
    for _ in range(REPEATS):
        for engine, _, make in available:
            best[engine] = min(best[engine], us_per_step(make, steps))

    col_a, col_b = spec["columns"]
    print(f"  {'engine':17s} {'µs/step':>9s} {'vs ours':>8s} {'reference':>10s}  "
          f"{col_a:>17s} {col_b:>17s}")
    ours_us = best["sim_node"]
    results = {}
    for engine, version, _ in available:
        us, reference = best[engine], REFERENCE_US[scene].get(engine)
        results[engine] = {"version": version, "us_per_step": us, "ratio_vs_ours": us / ours_us,
                           "reference_us_per_step": reference, **sanity[engine]}
        a, b = list(sanity[engine].values())[:2]
        ref = f"{reference:g}" if reference else "-"
        print(f"  {engine:17s} {us:9.1f} {us / ours_us:8.2f} {ref:>10s}  {a:17.4g} {b:17.4g}")
    print("  vs ours = engine µs / sim_node µs (> 1: sim_node is faster); "
          "reference = the issue's µs/step on this kind of machine")
    if "PyBullet" in results:
        speedup = results["PyBullet"]["ratio_vs_ours"]
        verdict = "met" if speedup >= TARGET_SPEEDUP_VS_PYBULLET else "NOT met"
        print(f"  target: sim_node >= {TARGET_SPEEDUP_VS_PYBULLET:g}x faster than PyBullet: "
              f"{speedup:.2f}x, {verdict}")
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="0.5 s simulated instead of 3 s")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    steps = round((0.5 if args.quick else 3.0) / PHYSICS_DT)
    versions = engine_versions()
    print("engines: " + ", ".join(f"{engine} {version or '(not installed)'}"
                                  for engine, version in versions.items()))
    results = {"steps": steps, "physics_dt": PHYSICS_DT, "versions": versions,
               "scenes": {scene: run_scene(scene, steps, versions) for scene in SCENES}}
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
