"""Scenes whose stepped states are recorded bit for bit (tests/engine/data/pipeline_reference.npz)
and replayed by test_pipeline.py: the staged step must reproduce the engine it replaced exactly.

Each case builds an engine scene from a world file (sim_node.model.scene), sets its actuators
directly on the engine, and steps it; `trace(case)` returns what is compared: the state bytes
(get_state) at a few checkpoints, every 10th step's robot q and free-body states, and the last step's
contacts and feedback. Together the cases cover every stage: free bodies on a plane (box pile,
with feedback for every pair), a floating-base robot on its feet under PD with joint dry
friction (quadruped), a fixed arm with mimic fingers under PID with moving targets (arm), convex
and primitive shapes on a triangle mesh and a heightfield with restitution, a compliant layer
and a kinematic body (mesh), and a spherical joint under PID (ball).

    python tests/engine/pipeline_cases.py     rewrites the reference (only from a trusted build)
"""
from __future__ import annotations

import math
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
REFERENCE = DATA / "pipeline_reference.npz"
DT = 0.001
CHECKPOINTS = (1, 100, 250)         # state bytes after these steps, and after the last
RECORD_EVERY = 10                   # robot q and free-body states after every 10th step

MESH_WORLD = """simulation: {{physics_dt: 0.001, max_contacts: 8}}
terrains:
  - name: grid
    geometry: {{mesh: {grid}}}
    pose: {{position: [0.0, 0.0, 0.0]}}
    surface: {{kFriction: 0.7}}
  - name: hills
    geometry: {{heightfield: {{file: {heights}, size: [1.0, 1.0]}}}}
    pose: {{position: [1.5, 0.0, 0.0]}}
    surface: {{kFriction: 0.6}}
rigid_objects:
  - name: octahedron
    geometry: {{mesh: {octahedron}}}
    mass: 0.4
    pose: {{position: [0.1, 0.05, 0.08], orientation: [0.1, 0.05, 0.0, 0.99373]}}
  - name: ball
    geometry: {{sphere: 0.05}}
    mass: 0.3
    pose: {{position: [-0.2, 0.1, 0.12]}}
    surface: {{kRestitution: 0.6}}
  - name: capsule
    geometry: {{capsule: [0.03, 0.12]}}
    mass: 0.2
    pose: {{position: [1.4, 0.1, 0.2], orientation: [0.3, 0.0, 0.0, 0.95394]}}
  - name: can
    geometry: {{cylinder: [0.04, 0.1]}}
    mass: 0.25
    pose: {{position: [1.6, -0.1, 0.2], orientation: [0.0, 0.4, 0.0, 0.91652]}}
  - name: sponge
    geometry: {{box: [0.1, 0.08, 0.06]}}
    mass: 0.3
    pose: {{position: [0.25, -0.2, 0.032]}}
    surface: {{kStiffness: 20000.0, kDamping: 300.0}}
  - name: paddle
    geometry: {{box: [0.05, 0.3, 0.1]}}
    mass: 2.0
    pose: {{position: [-0.4, 0.1, 0.0706]}}
"""

BALL_URDF = """<robot name="ball_arm"><link name="world"/>
  <link name="bob"><inertial><origin xyz="0 0 -0.5"/><mass value="1.0"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 -0.5"/><geometry><sphere radius="0.05"/></geometry></collision>
  </link>
  <joint name="ball" type="spherical"><parent link="world"/><child link="bob"/>
    <origin xyz="0 0 0.6"/></joint>
</robot>"""


def _mesh_files(folder: Path) -> dict:
    # deterministic inputs: a 6 x 6 grid of 2 triangles per cell over [-1, 1]^2 with a gentle
    # bump, an octahedron, and a 9 x 9 heightfield of ripples
    n = 7
    xs = np.linspace(-1.0, 1.0, n)
    vx, vy = np.meshgrid(xs, xs)
    vz = 0.02 * np.exp(-((vx - 0.3) ** 2 + (vy + 0.2) ** 2) / 0.1)
    verts = np.column_stack([vx.ravel(), vy.ravel(), vz.ravel()])
    faces = []
    for j in range(n - 1):
        for i in range(n - 1):
            a = j * n + i
            faces += [(a, a + 1, a + n + 1), (a, a + n + 1, a + n)]
    grid = folder / "grid.obj"
    _write_obj(grid, verts, faces)
    octa = np.array([[0.06, 0, 0], [-0.06, 0, 0], [0, 0.05, 0], [0, -0.05, 0], [0, 0, 0.04],
                     [0, 0, -0.04]])
    octahedron = folder / "octahedron.obj"
    _write_obj(octahedron, octa, [(0, 2, 4), (2, 1, 4), (1, 3, 4), (3, 0, 4), (2, 0, 5),
                                   (1, 2, 5), (3, 1, 5), (0, 3, 5)])
    hx = np.linspace(0.0, 1.0, 9)
    heights = folder / "hills.npy"
    np.save(heights, 0.03 * np.sin(6 * hx)[None, :] * np.cos(5 * hx)[:, None])
    return dict(grid=grid, octahedron=octahedron, heights=heights)


def _write_obj(path: Path, verts, faces):
    lines = [f"v {x!r} {y!r} {z!r}" for x, y, z in np.asarray(verts, float).tolist()]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in faces]
    path.write_text("\n".join(lines) + "\n")


def _world(text: str, folder: Path):
    import sim_node

    path = folder / "world.yaml"
    path.write_text(text)
    world = sim_node.WorldModel()
    world.readFile(str(path))
    return world


def _gains(scene, world, robot_index: int):
    """The world file's controller gains on the engine's DOFs, q_des at the initial config."""
    robot = world.robot(robot_index)
    s, gains, q0 = robot.structure, robot.settings["controller"], robot.getConfig()
    for name in robot.getJointNames():
        v, q = s.joint_v_index.get(name), s.joint_q_index.get(name)
        if v is None or name not in gains["kp"]:
            continue
        for key, array in (("kp", scene.robot_kp), ("ki", scene.robot_ki), ("kd", scene.robot_kd)):
            array[robot_index][v] = gains[key][name]
        scene.robot_q_des[robot_index][v] = q0[q]


def build(case: str, folder: Path):
    """(scene, steps, per_step) of a case; per_step(scene, k) runs before step k (or None)."""
    import sim_node
    from sim_node.model.scene import build_scene

    if case == "box_pile":
        world = sim_node.WorldModel()
        world.readFile(str(REPO / "data" / "worlds" / "box_pile.yaml"))
        scene = build_scene(world).scene
        scene.enable_feedback_all(True)
        return scene, 500, None
    if case == "quadruped":
        world = sim_node.WorldModel()
        world.readFile(str(REPO / "data" / "worlds" / "quadruped.yaml"))
        scene = build_scene(world).scene
        _gains(scene, world, 0)
        return scene, 500, None
    if case == "arm":
        world = sim_node.WorldModel()
        world.readFile(str(REPO / "data" / "worlds" / "arm.yaml"))
        scene = build_scene(world).scene
        _gains(scene, world, 0)

        def per_step(scene, k):
            if k == 50:     # joint1 turns at 0.5 rad/s for 0.2 s; joint4 moves by position
                q = scene.commanded_config(0)
                q[3] += 0.2
                scene.set_commands(0, 2, q_des=q, v_des=np.r_[0.5, np.zeros(scene.robot_v[0].size - 1)],
                                   advance=0.2)
            if k == 200:
                scene.set_joint_commands(0, [1], 1, tau_ff=[5.0])
        return scene, 400, per_step
    if case == "mesh":
        world = _world(MESH_WORLD.format(**_mesh_files(folder)), folder)
        scene = build_scene(world).scene
        scene.set_free_body_kinematic(5, True)
        scene.free_state[5, 7:10] = [0.4, 0.0, 0.0]
        scene.free_state[1, 7:10] = [0.0, 0.0, -1.0]      # the ball lands fast: a bounce
        scene.enable_feedback(1, 3, True)
        scene.begin_feedback_window()
        return scene, 500, None
    if case == "ball":
        world = sim_node.WorldModel()
        robot = world.loadRobot(BALL_URDF)
        robot.setConfig(np.array([math.sin(0.2), 0.0, 0.0, math.cos(0.2)]))
        scene = build_scene(world).scene
        scene.robot_kp[0][:] = 40.0
        scene.robot_ki[0][:] = 5.0
        scene.robot_kd[0][:] = 2.0

        def per_step(scene, k):
            if k == 0:
                scene.set_commands(0, 2, q_des=[0.0, math.sin(0.3), 0.0, math.cos(0.3)],
                                   v_des=[0.0, 0.0, 1.0], advance=0.1)
        return scene, 300, per_step
    raise ValueError(case)


CASES = ("box_pile", "quadruped", "arm", "mesh", "ball")


def trace(case: str) -> dict:
    """Arrays of one run of a case (see the module docstring), keyed '<case>/<what>'."""
    with tempfile.TemporaryDirectory() as tmp:
        scene, steps, per_step = build(case, Path(tmp))
        qs, free, out = [], [], {}
        for k in range(steps):
            if per_step is not None:
                per_step(scene, k)
            scene.step(DT)
            if k % RECORD_EVERY == 0:
                qs.append(np.concatenate([np.asarray(q) for q in scene.robot_q] or [np.zeros(0)]))
                free.append(np.asarray(scene.free_state).reshape(-1).copy())
            if k + 1 in CHECKPOINTS:
                out[f"{case}/state{k + 1}"] = np.frombuffer(scene.get_state(), np.uint8).copy()
        out[f"{case}/state{steps}"] = np.frombuffer(scene.get_state(), np.uint8).copy()
        out[f"{case}/q"] = np.array(qs)
        out[f"{case}/free"] = np.array(free)
        contacts = scene.contact_arrays()
        for key in ("body_a", "body_b", "point", "normal", "distance", "impulse", "torsion"):
            out[f"{case}/contact_{key}"] = np.asarray(contacts[key])
        table = scene.feedback_table()
        for key in ("body_a", "body_b", "force", "torque"):
            out[f"{case}/feedback_{key}"] = np.asarray(table[key])
        out[f"{case}/status"] = np.array([scene.status, scene.ncontact, scene.npatch, scene.nrow])
        return out


def main() -> int:
    sys.path.insert(0, str(REPO))
    DATA.mkdir(exist_ok=True)
    arrays = {}
    for case in CASES:
        arrays.update(trace(case))
        print(case, {k: v.shape for k, v in arrays.items() if k.startswith(case)})
    np.savez_compressed(REFERENCE, **arrays)
    print(f"wrote {REFERENCE} ({REFERENCE.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
