"""Contact benchmark: microseconds per 1 ms step of sim_node's engine, PyBullet and MuJoCo.

S3  20 boxes (0.1 m, 0.5 kg, friction 0.5) dropped in a loose 3-layer pile onto a plane
    (data/worlds/box_pile.yaml), 3 s.
S4  the 12-joint quadruped dropped 5 cm onto a plane, holding its initial joint angles with a
    joint PD (data/worlds/quadruped.yaml), 3 s.
S7  500 objects, 125 each of boxes, spheres, capsules and four convex meshes (random sizes and
    orientations, 600 kg/m^3, friction 0.5), dropped from an 8 x 8 grid in 8 layers into a bin:
    the ground plane and four static box walls (data/worlds/bin_500.yaml, written by
    bench/make_bin.py), 2 s (--quick 0.5 s). Sanity: the deepest reach of any object into the
    floor or a wall over the run (< 0: the smallest gap; computed from every engine's poses and
    the exact shapes, every step), the largest speed at the end, the objects inside the bin.
S8  example-robot-data's TALOS (talos_reduced.urdf, floating base, 32 joints, collision meshes)
    standing on a plane from its SRDF half-sitting configuration under a joint PD
    (data/worlds/talos.yaml), 3 s. Sanity: base height at the end and its range over the last s.

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
  S7 shapes    every object's frame is its centre of mass and principal frame; PyBullet's
               maximal-coordinates rigid bodies get the exact inertias (Bullet's own estimate
               for capsules and hulls is their bounding box's); its meshes (GEOM_MESH) and
               MuJoCo's mesh geoms collide as convex hulls, as sim_node's non-concave meshes do.
  S7 MuJoCo    "MuJoCo" is its default Newton solver, only with --quick: once the pile is one
               connected contact graph its step grows to ~100 ms (0.8 s in); "MuJoCo CG" (its
               conjugate-gradient solver, the faster one here) is the full-run reference.
  S8 (TALOS)   as S4: the PD inside each engine, self collision off, each engine's own handling
               of the collision meshes (convex hulls in all three); MuJoCo's URDF import gets the
               mesh paths made absolute (it strips package:// paths to file names otherwise);
               package://example-robot-data resolves through ROS_PACKAGE_PATH, to which
               example_robot_data_share() adds the pip wheel's cmeel.prefix/share.
  S4/S8 height PyBullet's base position is its centre of mass: the probe takes the base frame's.
Otherwise each engine runs its default solver and contact settings.

    python bench/scenes.py [--quick] [--json out.json] [--only S3 S4 S7 S8]
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
BIN_WORLD = REPO / "data" / "worlds" / "bin_500.yaml"
TALOS_WORLD = REPO / "data" / "worlds" / "talos.yaml"
PHYSICS_DT = 0.001          # [s]
GRAVITY_Z = -9.81           # [m/s^2]
REPEATS = 3
# issue 11's targets, (scene, --quick) -> (engine, speed-up sim_node must reach against it)
TARGETS = {("S3", False): ("MuJoCo", 3.0), ("S3", True): ("PyBullet", 3.0),
           ("S4", False): ("MuJoCo", 1.2), ("S4", True): ("MuJoCo", 1.2),
           ("S7", False): ("MuJoCo CG", 1.0), ("S7", True): ("MuJoCo", 1.0),
           ("S8", False): ("MuJoCo", 1.0), ("S8", True): ("MuJoCo", 1.0)}
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
    from sim_node.model.scene import build_scene

    world = sim_node.WorldModel()
    world.readFile(str(BOX_PILE_WORLD))
    return build_scene(world).scene


def ours_s3() -> Sim:
    scene = ours_s3_scene()

    def probe():
        state = np.asarray(scene.free_state)   # (n, 13): p, quat xyzw, v, omega (world)
        return state[:, 0:3].copy(), np.linalg.norm(state[:, 7:10], axis=1)

    return Sim(step=lambda n: scene.step(PHYSICS_DT, n), probe=probe)


def ours_pd_robot_scene(world_path: Path):
    """The engine Scene of a one-robot world file with the robot's joint PD from the file's
    controller section (gains, and targets = its initial configuration) set in the engine
    (sim_node.engine.api); S4, S8 and bench/scaling.py's robots."""
    import warnings

    import sim_node
    from sim_node.model.errors import URDFWarning
    from sim_node.model.scene import build_scene

    world = sim_node.WorldModel()
    with warnings.catch_warnings():     # third-party URDFs' repaired defects (TALOS: axes on
        warnings.simplefilter("ignore", URDFWarning)    # fixed joints)
        world.readFile(str(world_path))
    scene = build_scene(world).scene
    robot = world.robot(0)
    structure, gains, q0 = robot.structure, robot.settings["controller"], robot.getConfig()
    for name in robot.getJointNames():
        v_index, q_index = structure.joint_v_index[name], structure.joint_q_index[name]
        scene.robot_kp[0][v_index] = gains["kp"][name]
        scene.robot_kd[0][v_index] = gains["kd"][name]
        scene.robot_q_des[0][v_index] = q0[q_index]
    return scene


def ours_pd_robot(world_path: Path) -> Sim:
    """ours_pd_robot_scene as a Sim probing the base height [m]."""
    scene = ours_pd_robot_scene(world_path)
    return Sim(step=lambda n: scene.step(PHYSICS_DT, n),
               probe=lambda: float(scene.robot_q[0][2]))


def ours_s4_scene():
    """S4 as sim_node's engine Scene, its PD gains and targets set."""
    return ours_pd_robot_scene(QUADRUPED_WORLD)


def ours_s4() -> Sim:
    return ours_pd_robot(QUADRUPED_WORLD)


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

    # PyBullet reports the base's centre of mass: the base frame's height (what the other
    # engines report) is that minus the inertial origin turned into the world
    com_B = pb.getDynamicsInfo(robot, -1, physicsClientId=client)[3]

    def probe():
        p_com, quat = pb.getBasePositionAndOrientation(robot, physicsClientId=client)
        R = np.array(pb.getMatrixFromQuaternion(quat)).reshape(3, 3)
        return float(p_com[2] - (R @ np.asarray(com_B))[2])

    return Sim(step=step, probe=probe, close=lambda: pb.disconnect(physicsClientId=client))


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


def mujoco_s4(quad: Quadruped, urdf_text: str = None, compiler_extra: str = "") -> Sim:
    import mujoco

    urdf = quad.urdf.read_text() if urdf_text is None else urdf_text
    compiler = ('<mujoco><compiler discardvisual="true" balanceinertia="true" '
                f'{compiler_extra}/></mujoco>')
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
# S7: mixed objects dropped into a bin (data/worlds/bin_500.yaml, written by bench/make_bin.py)


@dataclass
class MixedBin:
    """S7: free objects of four kinds over the plane z = 0, inside four static box walls.

    Every object's frame is its centre of mass and principal frame (make_bin.py centres and
    turns the meshes), so a pose fixes the geometry in every engine."""
    kind: list                  # (n,) "box" | "sphere" | "capsule" | "mesh"
    size: list                  # (n,) box: half extents (3,); sphere: (r,); capsule: (r, half
                                # length of the cylinder); mesh: index into mesh_paths
    position_W: np.ndarray      # (n, 3) [m]
    quat_xyzw_W: np.ndarray     # (n, 4)
    mass: np.ndarray            # (n,) [kg]
    inertia_diag: np.ndarray    # (n, 3) principal moments [kg m^2]
    friction: np.ndarray        # (n,)
    mesh_paths: list            # absolute paths of the convex meshes
    mesh_vertices: list         # (V, 3) vertices of each mesh [m]
    walls: list                 # [(centre (3,), half extents (3,), friction)] static boxes
    ground_friction: float
    half_width: float           # [m] half the inner side of the bin (walls' inner faces)
    wall_height: float          # [m]


def _capsule_inertia(mass: float, r: float, length: float) -> np.ndarray:
    """Principal moments (x, y, z; axis z) of a solid capsule: cylinder `length` + two
    hemispheres of radius r."""
    v_cyl, v_sph = math.pi * r * r * length, 4.0 / 3.0 * math.pi * r ** 3
    m_cyl, m_sph = mass * v_cyl / (v_cyl + v_sph), mass * v_sph / (v_cyl + v_sph)
    i_axis = m_cyl * r * r / 2 + m_sph * 2 * r * r / 5
    i_side = (m_cyl * (length ** 2 / 12 + r * r / 4)
              + m_sph * (2 * r * r / 5 + length ** 2 / 4 + 3 * length * r / 8))
    return np.array([i_side, i_side, i_axis])


def read_bin(path: Path) -> MixedBin:
    import trimesh

    world = yaml.safe_load(path.read_text())
    mesh_paths, mesh_vertices, mesh_unit_inertia = [], [], []
    kind, size, inertia = [], [], []
    objects = world["rigid_objects"]
    for obj in objects:
        (k, value), = obj["geometry"].items()
        m = float(obj["mass"])
        if k == "box":
            half = 0.5 * np.array(value, dtype=float)
            size.append(half)
            a, b, c = 2 * half
            inertia.append(m / 12 * np.array([b * b + c * c, a * a + c * c, a * a + b * b]))
        elif k == "sphere":
            size.append(np.array([float(value)]))
            inertia.append(np.full(3, 0.4 * m * float(value) ** 2))
        elif k == "capsule":
            r, length = map(float, value)
            size.append(np.array([r, length / 2]))
            inertia.append(_capsule_inertia(m, r, length))
        elif k == "mesh":
            mesh_path = str((path.parent / value).resolve())
            if mesh_path not in mesh_paths:
                mesh = trimesh.load(mesh_path, force="mesh")
                mesh_paths.append(mesh_path)
                mesh_vertices.append(np.asarray(mesh.vertices))
                # principal frame by construction: the diagonal at unit mass
                mesh_unit_inertia.append(np.diag(mesh.moment_inertia) / mesh.volume)
            index = mesh_paths.index(mesh_path)
            size.append(index)
            inertia.append(m * mesh_unit_inertia[index])
        else:
            raise ValueError(f"{path}: S7 does not simulate {k} objects")
        kind.append(k)
    walls = []
    for terrain in world["terrains"]:
        if "box" in terrain["geometry"]:
            walls.append((np.array(terrain["pose"]["position"], dtype=float),
                          0.5 * np.array(terrain["geometry"]["box"], dtype=float),
                          float(terrain["surface"]["kFriction"])))
    inner = min(abs(c[0]) - h[0] for c, h, _ in walls if abs(c[0]) > 0)
    return MixedBin(
        kind=kind, size=size,
        position_W=np.array([o["pose"]["position"] for o in objects], dtype=float),
        quat_xyzw_W=np.array([o["pose"]["orientation"] for o in objects], dtype=float),
        mass=np.array([o["mass"] for o in objects], dtype=float),
        inertia_diag=np.array(inertia), friction=np.array([o["surface"]["kFriction"]
                                                           for o in objects], dtype=float),
        mesh_paths=mesh_paths, mesh_vertices=mesh_vertices, walls=walls,
        ground_friction=_ground_friction(world), half_width=inner,
        wall_height=max(c[2] + h[2] for c, h, _ in walls))


def _rotations(quat_xyzw: np.ndarray) -> np.ndarray:
    """(n, 3, 3) rotation matrices of (n, 4) unit quaternions x, y, z, w."""
    q = quat_xyzw / np.linalg.norm(quat_xyzw, axis=1, keepdims=True)
    x, y, z, w = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], 1)


class BinGeometry:
    """Support functions of the S7 objects: how deep each one reaches into the floor and the
    walls, from its pose alone (the same measure for every engine, whatever it reports)."""

    def __init__(self, scene: MixedBin):
        self.scene = scene
        kinds = np.array(scene.kind)
        self.box = np.flatnonzero(kinds == "box")
        self.sphere = np.flatnonzero(kinds == "sphere")
        self.capsule = np.flatnonzero(kinds == "capsule")
        self.half = np.array([scene.size[i] for i in self.box]).reshape(-1, 3)
        self.radius = np.array([scene.size[i][0] for i in self.sphere])
        self.cap = np.array([scene.size[i] for i in self.capsule]).reshape(-1, 2)
        self.mesh = [np.flatnonzero([k == "mesh" and scene.size[i] == m
                                     for i, k in enumerate(scene.kind)])
                     for m in range(len(scene.mesh_paths))]

    def support(self, position: np.ndarray, R: np.ndarray, d: np.ndarray) -> np.ndarray:
        """(n,) max over each object's points x of d . x [m], for the unit direction d (3,)."""
        local = np.einsum("nji,j->ni", R, d)                # R^T d per object
        h = position @ d
        h[self.box] += np.sum(np.abs(local[self.box]) * self.half, axis=1)
        h[self.sphere] += self.radius
        h[self.capsule] += self.cap[:, 0] + np.abs(local[self.capsule, 2]) * self.cap[:, 1]
        for m, members in enumerate(self.mesh):
            h[members] += (local[members] @ self.scene.mesh_vertices[m].T).max(axis=1)
        return h

    def depth(self, position: np.ndarray, quat_xyzw: np.ndarray) -> float:
        """[m] the deepest reach of any object into the floor (z < 0) or, for objects whose
        centre is inside the bin below the walls' top, into a wall; < 0: the smallest gap."""
        R = _rotations(quat_xyzw)
        a = self.scene.half_width
        deepest = self.support(position, R, np.array([0.0, 0.0, -1.0]))
        inside = ((np.abs(position[:, 0]) < a) & (np.abs(position[:, 1]) < a)
                  & (position[:, 2] < self.scene.wall_height))
        for axis in range(2):
            for sign in (1.0, -1.0):
                d = np.zeros(3)
                d[axis] = sign
                wall = np.where(inside, self.support(position, R, d) - a, -np.inf)
                deepest = np.maximum(deepest, wall)
        return float(deepest.max())

    @staticmethod
    def inside_count(position: np.ndarray, scene: MixedBin) -> int:
        """Objects whose centre is inside the bin's walls (and below their top)."""
        a = scene.half_width
        return int(np.sum((np.abs(position[:, 0]) < a) & (np.abs(position[:, 1]) < a)
                          & (position[:, 2] < scene.wall_height)))


def _bin_probe(geometry: BinGeometry, read_state: Callable[[], tuple]) -> Callable[[], tuple]:
    """probe() -> (depth [m], centres (n, 3) [m], speeds (n,) [m/s]) from read_state() ->
    (centres (n, 3), quaternions xyzw (n, 4), linear velocities (n, 3))."""
    def probe():
        centres, quats, velocities = read_state()
        return (geometry.depth(centres, quats), centres,
                np.linalg.norm(velocities, axis=1))
    return probe


def ours_s7_scene(world_path: Path = None):
    """S7 as sim_node's engine Scene (sim_node.engine.api)."""
    import sim_node
    from sim_node.model.scene import build_scene

    world = sim_node.WorldModel()
    world.readFile(str(world_path or BIN_WORLD))
    return build_scene(world).scene


def ours_s7(world_path: Path = None) -> Sim:
    world_path = world_path or BIN_WORLD
    scene = ours_s7_scene(world_path)
    geometry = BinGeometry(read_bin(world_path))

    def read_state():
        state = np.asarray(scene.free_state)   # (n, 13): com, quat xyzw, v, omega (world)
        return state[:, 0:3].copy(), state[:, 3:7].copy(), state[:, 7:10].copy()

    return Sim(step=lambda n: scene.step(PHYSICS_DT, n), probe=_bin_probe(geometry, read_state))


def pybullet_s7(scene: MixedBin, sleeping: bool = False) -> Sim:
    pb, client = _bullet_client()
    _bullet_ground(pb, client, scene.ground_friction)
    for centre, half, mu in scene.walls:
        shape = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=half.tolist(),
                                        physicsClientId=client)
        wall = pb.createMultiBody(baseMass=0.0, baseCollisionShapeIndex=shape,
                                  basePosition=centre.tolist(), physicsClientId=client)
        pb.changeDynamics(wall, -1, lateralFriction=math.sqrt(mu), physicsClientId=client)
    # a dynamic GEOM_MESH is the convex hull of its vertices in Bullet; one shape per file
    mesh_shapes = [pb.createCollisionShape(pb.GEOM_MESH, fileName=path, physicsClientId=client)
                   for path in scene.mesh_paths]
    bodies = []
    for i, kind in enumerate(scene.kind):
        size = scene.size[i]
        if kind == "box":
            shape = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=size.tolist(),
                                            physicsClientId=client)
        elif kind == "sphere":
            shape = pb.createCollisionShape(pb.GEOM_SPHERE, radius=float(size[0]),
                                            physicsClientId=client)
        elif kind == "capsule":
            shape = pb.createCollisionShape(pb.GEOM_CAPSULE, radius=float(size[0]),
                                            height=2 * float(size[1]), physicsClientId=client)
        else:
            shape = mesh_shapes[size]
        body = pb.createMultiBody(baseMass=float(scene.mass[i]), baseCollisionShapeIndex=shape,
                                  basePosition=scene.position_W[i].tolist(),
                                  baseOrientation=scene.quat_xyzw_W[i].tolist(),
                                  useMaximalCoordinates=True, physicsClientId=client)
        # Bullet estimates capsule and hull inertias from their bounding boxes: give the exact
        # ones (with the mass again: without it, a maximal-coordinates body's mass becomes 0)
        pb.changeDynamics(body, -1, lateralFriction=math.sqrt(scene.friction[i]),
                          mass=float(scene.mass[i]),
                          localInertiaDiagonal=scene.inertia_diag[i].tolist(),
                          activationState=_bullet_activation(pb, sleeping),
                          physicsClientId=client)
        bodies.append(body)

    def step(n):
        for _ in range(n):
            pb.stepSimulation(physicsClientId=client)

    def read_state():
        poses = [pb.getBasePositionAndOrientation(b, physicsClientId=client) for b in bodies]
        velocities = [pb.getBaseVelocity(b, physicsClientId=client)[0] for b in bodies]
        return (np.array([p for p, _ in poses]), np.array([q for _, q in poses]),
                np.array(velocities))

    return Sim(step=step, probe=_bin_probe(BinGeometry(scene), read_state),
               close=lambda: pb.disconnect(physicsClientId=client))


def mujoco_s7(scene: MixedBin, option: str = "") -> Sim:
    """option: extra attributes of MJCF's <option> (e.g. 'solver="CG"')."""
    import mujoco

    def vec(values) -> str:
        return " ".join(f"{float(v):.9g}" for v in values)

    assets = "\n".join(f'<mesh name="hull{m}" file="{path}"/>'
                       for m, path in enumerate(scene.mesh_paths))
    walls = "\n".join(
        f'<geom name="wall{w}" type="box" pos="{vec(centre)}" size="{vec(half)}" '
        f'friction="{mu} 0.005 0.0001"/>' for w, (centre, half, mu) in enumerate(scene.walls))
    bodies = []
    for i, kind in enumerate(scene.kind):
        size = scene.size[i]
        if kind == "mesh":
            geom = f'type="mesh" mesh="hull{size}"'
        else:
            geom = f'type="{kind}" size="{vec(size)}"'
        bodies.append(
            f'<body name="o{i}" pos="{vec(scene.position_W[i])}" '
            f'quat="{_wxyz(scene.quat_xyzw_W[i])}"><freejoint/>'
            f'<geom {geom} mass="{scene.mass[i]}" friction="{scene.friction[i]} 0.005 0.0001"/>'
            f'</body>')
    body_lines = "\n    ".join(bodies)
    mjcf = f"""<mujoco model="bin">
  <option timestep="{PHYSICS_DT}" gravity="0 0 {GRAVITY_Z}" {option}/>
  <asset>{assets}</asset>
  <worldbody>
    <geom name="ground" type="plane" size="0 0 1" friction="{scene.ground_friction} 0.005 0.0001"/>
    {walls}
    {body_lines}
  </worldbody>
</mujoco>"""
    model = mujoco.MjModel.from_xml_string(mjcf)
    data = mujoco.MjData(model)
    n = len(scene.kind)

    def read_state():
        qpos, qvel = data.qpos.reshape(n, 7), data.qvel.reshape(n, 6)
        return qpos[:, 0:3].copy(), np.roll(qpos[:, 3:7], -1, axis=1), qvel[:, 0:3].copy()

    sim = Sim(step=lambda steps: mujoco.mj_step(model, data, nstep=steps),
              probe=_bin_probe(BinGeometry(scene), read_state))
    sim.mujoco = (model, data)      # for inspection (solver statistics, warnings)
    return sim


# ---------------------------------------------------------------------------------------------
# S8: example-robot-data's TALOS standing under a joint PD (data/worlds/talos.yaml)


def example_robot_data_share() -> Path | None:
    """The folder holding example-robot-data's package (its pip wheel installs it under
    site-packages/cmeel.prefix/share), put on ROS_PACKAGE_PATH so that the world file's
    package://example-robot-data/ URI resolves; None when the package is not installed."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        share = Path(distribution("example-robot-data").locate_file("cmeel.prefix/share"))
    except PackageNotFoundError:
        return None
    paths = [p for p in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if p]
    if str(share) not in paths:
        os.environ["ROS_PACKAGE_PATH"] = os.pathsep.join([str(share), *paths])
    return share


def read_humanoid(path: Path) -> Quadruped:
    """S8: like S4, but every joint named under controller.kp is held (at 0 when the world file
    gives no initial angle) and the URDF may be a package:// URI."""
    from sim_node.model.packages import PackageSearch

    world = yaml.safe_load(path.read_text())
    (robot,) = world["robots"]
    urdf = robot["urdf"]
    if urdf.startswith("package://"):
        example_robot_data_share()
        package, _, rest = urdf[len("package://"):].partition("/")
        found = PackageSearch(file_dir=path.parent).find(package)
        if found is None:
            raise FileNotFoundError(f"{path}: package '{package}' not found (install "
                                    "example-robot-data: requirements/dev.txt)")
        urdf_path = found / rest
    else:
        urdf_path = (path.parent / urdf).resolve()
    gains = robot["controller"]
    q_des = {name: float(robot.get("initial_config", {}).get(name, 0.0)) for name in gains["kp"]}
    return Quadruped(
        urdf=urdf_path,
        base_position_W=np.array(robot["pose"]["position"], dtype=float),
        base_quat_xyzw_W=np.array(robot["pose"]["orientation"], dtype=float),
        q_des=q_des, kp=_per_joint(gains["kp"], q_des), kd=_per_joint(gains["kd"], q_des),
        friction=float(robot["surface"]["kFriction"]),
        ground_friction=_ground_friction(world))


def ours_s8_scene():
    """S8 as sim_node's engine Scene, its PD gains and targets set."""
    example_robot_data_share()
    return ours_pd_robot_scene(TALOS_WORLD)


def ours_s8() -> Sim:
    example_robot_data_share()
    return ours_pd_robot(TALOS_WORLD)


def mujoco_s8(robot: Quadruped) -> Sim:
    """S4's MuJoCo setup on a URDF whose meshes are package:// URIs: they are made absolute and
    kept whole (MuJoCo's URDF import strips mesh paths to their file names by default)."""
    (package_root,) = [p for p in robot.urdf.parents if p.name == "example-robot-data"][:1]
    urdf_text = robot.urdf.read_text().replace("package://example-robot-data/",
                                               f"{package_root}/")
    return mujoco_s4(robot, urdf_text=urdf_text, compiler_extra='strippath="false"')


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


def s7_sanity(probes: list, steps: int) -> dict:
    _, centres, speeds = probes[-1]
    return {"max_depth_mm": max(p[0] for p in probes) * 1e3,
            "max_speed_m_s": float(speeds.max()),
            "inside": BinGeometry.inside_count(centres, read_bin(BIN_WORLD))}


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
    "S7": {"title": "500 mixed objects dropped into a bin", "sanity": s7_sanity,
           "probe_every": 1, "seconds": 2.0,
           "columns": ("max depth [mm]", "max speed [m/s]", "inside the bin"),
           "engines": {"sim_node": ours_s7,
                       "PyBullet": lambda: pybullet_s7(read_bin(BIN_WORLD)),
                       "MuJoCo CG": lambda: mujoco_s7(read_bin(BIN_WORLD), 'solver="CG"'),
                       "MuJoCo": lambda: mujoco_s7(read_bin(BIN_WORLD))},
           # MuJoCo's default Newton solver factors a Hessian that fills in once the pile is
           # one connected contact graph: ~100 ms a step after 0.8 s; its row comes from --quick
           "quick_only": {"MuJoCo"}},
    "S8": {"title": "TALOS humanoid standing, PD holding half-sitting", "sanity": s4_sanity,
           "probe_every": 1, "columns": ("base z [mm]", "z range [mm]"),
           "engines": {"sim_node": ours_s8,
                       "PyBullet": lambda: pybullet_s4(read_humanoid(TALOS_WORLD)),
                       "MuJoCo": lambda: mujoco_s8(read_humanoid(TALOS_WORLD))}},
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


def run_scene(scene: str, steps: int, versions: dict, quick: bool = False) -> dict:
    """Warm-up (and sanity) run of every engine, then REPEATS rounds of one timed run per
    engine, interleaved so that a change of load on the machine hits every engine alike."""
    spec = SCENES[scene]
    if "seconds" in spec and not quick:
        steps = round(spec["seconds"] / PHYSICS_DT)
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
        elif engine in spec.get("quick_only", ()) and not quick:
            print(f"  {engine}: only with --quick (see SCENES['{scene}'])")
        else:
            available.append((engine, version, make))
    sanity = {engine: spec["sanity"](record(make, steps, spec["probe_every"] or steps), steps)
              for engine, _, make in available}
    best = {engine: math.inf for engine, _, _ in available}
    for _ in range(REPEATS):
        for engine, _, make in available:
            best[engine] = min(best[engine], us_per_step(make, steps))

    columns = spec["columns"]
    print(f"  {'engine':17s} {'µs/step':>9s} {'vs ours':>8s} {'reference':>10s}  "
          + " ".join(f"{column:>17s}" for column in columns))
    ours_us = best["sim_node"]
    results = {}
    for engine, version, _ in available:
        us, reference = best[engine], REFERENCE_US.get(scene, {}).get(engine)
        results[engine] = {"version": version, "seconds": steps * PHYSICS_DT,
                           "us_per_step": us, "ratio_vs_ours": us / ours_us,
                           "reference_us_per_step": reference, **sanity[engine]}
        values = list(sanity[engine].values())[:len(columns)]
        ref = f"{reference:g}" if reference else "-"
        print(f"  {engine:17s} {us:9.1f} {us / ours_us:8.2f} {ref:>10s}  "
              + " ".join(f"{value:17.4g}" for value in values))
    print("  vs ours = engine µs / sim_node µs (> 1: sim_node is faster); "
          "reference = the issue's µs/step on this kind of machine")
    peer, factor = TARGETS[(scene, quick)]
    if peer in results:
        speedup = results[peer]["ratio_vs_ours"]
        verdict = "met" if speedup >= factor else "NOT met"
        print(f"  target (issue 11): sim_node >= {factor:g}x {peer}'s speed: {speedup:.2f}x, "
              f"{verdict}")
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="0.5 s simulated instead of 3 s (S7: 2 s)")
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument("--only", nargs="+", choices=sorted(SCENES), help="these scenes only")
    args = parser.parse_args(argv)
    steps = round((0.5 if args.quick else 3.0) / PHYSICS_DT)
    versions = engine_versions()
    print("engines: " + ", ".join(f"{engine} {version or '(not installed)'}"
                                  for engine, version in versions.items()))
    results = {"steps": steps, "physics_dt": PHYSICS_DT, "versions": versions,
               "scenes": {scene: run_scene(scene, steps, versions, args.quick)
                          for scene in (args.only or SCENES)}}
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
