"""Physical validation of contact: each test names the claim it checks and compares with
closed-form physics (issue 3, item 8). Default padding 2.5 mm, dt = 1 ms throughout."""
import math

import numpy as np
import pytest
from scene_helpers import DT, REPO, ground, quat_about, shell_floor
from transforms3d.quaternions import quat2mat

import sim_node
from sim_node.model.scene import build_scene

G = 9.81


def box(name, size, mass, position, friction=0.5, orientation=(0, 0, 0, 1), restitution=0.0):
    return f"""  - name: {name}
    geometry: {{box: [{size}, {size}, {size}]}}
    mass: {mass}
    pose: {{position: {list(position)}, orientation: {list(orientation)}}}
    surface: {{kFriction: {friction}, kRestitution: {restitution}}}
"""


def bounce_apexes(scene, count=3, steps=3000):
    """Heights of the ball's centre at its first `count` apexes after the first bounce."""
    z = []
    for _ in range(steps):
        scene.step(DT)
        z.append(scene.free_state[0, 2])
    return [z[i] for i in range(1, len(z) - 1) if z[i - 1] < z[i] >= z[i + 1]][:count]


BALL_E_HALF = """rigid_objects:
  - name: ball
    geometry: {{sphere: 0.05}}
    mass: 1.0
    pose: {{position: [{x}, {y}, 1.0]}}
    surface: {{kRestitution: 0.5}}
"""
# r 0.05 m dropped from 1 m (centre): apex after bounce k = r + e^(2k) (1 - r)
IDEAL_APEXES = [0.05 + 0.5 ** (2 * k) * 0.95 for k in (1, 2, 3)]


def test_ball_with_restitution_half_bounces_to_the_ideal_apexes_within_3_percent(make_scene):
    world, _, scene = make_scene(ground(restitution=0.5) + BALL_E_HALF.format(x=0, y=0))
    np.testing.assert_allclose(IDEAL_APEXES, [0.2875, 0.109375, 0.06484375])
    np.testing.assert_allclose(bounce_apexes(scene), IDEAL_APEXES, rtol=0.03)


@pytest.mark.parametrize("floor, xy", [
    ("two triangles", (0.3, -0.4)),           # interior
    ("two triangles", (0.2, 0.2)),            # on the shared diagonal
    ("two triangles", (1.0, 1.0)),            # on a (corner) vertex
    ("grid 50", (0.013, 0.027)),              # interior of a 4 cm cell
    ("grid 50", (0.04, 0.017)),               # on a grid line
    ("grid 50", (0.02, 0.02)),                # on a diagonal
    ("grid 50", (0.04, 0.08)),                # on a vertex of six triangles
    ("heightfield 41", (0.013, 0.027)),
    ("heightfield 41", (0.05, 0.05)),         # on a diagonal
    ("heightfield 41", (0.1, -0.15)),         # on a vertex
], ids=lambda v: v if isinstance(v, str) else f"{v[0]},{v[1]}")
def test_ball_with_restitution_half_bounces_on_a_mesh_floor_as_on_a_plane(make_scene, tmp_path, floor, xy):
    # the seed's claim on triangle meshes (2 triangles; 5,000 of 4 cm) and a heightfield,
    # landing on interiors, shared edges and vertices: the apexes within 3 % of the ideal ones
    import mesh_floors as mf

    if floor == "heightfield 41":
        terrain = mf.heightfield_yaml(np.zeros((41, 41)), (2.0, 2.0), tmp_path / "floor.npy",
                                      surface="{kRestitution: 0.5}")
    else:
        v, f = mf.two_triangles() if floor == "two triangles" else mf.grid(50)
        terrain = mf.floor_yaml(v, f, tmp_path / "floor.stl", surface="{kRestitution: 0.5}")
    world, _, scene = make_scene(terrain + BALL_E_HALF.format(x=xy[0], y=xy[1]))
    np.testing.assert_allclose(bounce_apexes(scene), IDEAL_APEXES, rtol=0.03)
    np.testing.assert_allclose(scene.free_state[0, :2], xy, atol=1e-9)      # straight up


def incline(make_scene, mu, seconds, tmp_path=None):
    """A 0.1 m box on a 20-degree slope: the plane, or (tmp_path given) a triangulated slope
    (8 x 8 cells of 25 cm, the box crossing their edges as it slides)."""
    theta = math.radians(20)
    n = [-math.sin(theta), 0.0, math.cos(theta)]
    q = quat_about((0, 1, 0), -theta)                 # box faces parallel to the slope
    centre = np.array(n) * (0.05 + 0.0005)
    R = quat2mat([q[3], q[0], q[1], q[2]])
    assert np.allclose(R[:, 2], n)
    if tmp_path is None:
        slope = f"""terrains:
  - name: slope
    geometry: {{plane: {{normal: {n}, offset: 0.0}}}}
    surface: {{kFriction: {mu}}}
"""
    else:
        import mesh_floors as mf

        v, f = mf.grid(8)
        slope = mf.floor_yaml((v + [0.3, 0.1, 0.0]) @ R.T, f, tmp_path / "slope.stl",
                              surface=f"{{kFriction: {mu}}}")
    world, _, scene = make_scene(slope + "rigid_objects:\n" + box("box", 0.1, 0.5, centre.tolist(), mu, q))
    x0 = scene.free_state[0, :3].copy()
    downhill = np.array([-math.cos(theta), 0.0, -math.sin(theta)])
    s = []
    for _ in range(int(seconds / DT)):
        scene.step(DT)
        s.append((scene.free_state[0, :3] - x0) @ downhill)
    return np.array(s), scene, theta


@pytest.mark.parametrize("slope", ["plane", "mesh"])
def test_box_on_20_degree_incline_with_mu_0_3_slides_at_g_sin_minus_mu_cos_within_1_percent(make_scene, tmp_path,
                                                                                             slope):
    s, scene, theta = incline(make_scene, 0.3, 1.0, tmp_path if slope == "mesh" else None)
    t = np.arange(1, len(s) + 1) * DT
    accel = 2 * np.polyfit(t[100:], s[100:], 2)[0]
    assert abs(accel / (G * (math.sin(theta) - 0.3 * math.cos(theta))) - 1) < 0.01
    # sliding: the friction force is exactly mu times the normal force, against the motion
    contacts = scene.contact_arrays()
    F = contacts["impulse"].sum(axis=0) / DT
    n = np.array([-math.sin(theta), 0.0, math.cos(theta)])
    normal = F @ n
    tangential = F - normal * n
    # (the mesh's vertices went through binary STL: float32, so its normals are exact to ~1e-8)
    exact = 1e-9 if slope == "plane" else 1e-6
    assert abs(np.linalg.norm(tangential) / (0.3 * normal) - 1) < exact
    assert tangential @ np.array([-math.cos(theta), 0, -math.sin(theta)]) < 0
    np.testing.assert_allclose(contacts["normal"], np.tile(n, (len(contacts["normal"]), 1)), atol=exact)


@pytest.mark.parametrize("slope", ["plane", "mesh"])
def test_box_on_20_degree_incline_with_mu_0_5_sticks_moving_less_than_10_micrometres_in_1_5_s(make_scene, tmp_path,
                                                                                              slope):
    s, scene, theta = incline(make_scene, 0.5, 1.5, tmp_path if slope == "mesh" else None)
    assert np.abs(s).max() < 10e-6
    # sticking: friction below its limit mu N
    F = scene.contact_arrays()["impulse"].sum(axis=0) / DT
    n = np.array([-math.sin(theta), 0.0, math.cos(theta)])
    assert np.linalg.norm(F - (F @ n) * n) < 0.5 * (F @ n)


def test_box_resting_on_the_ground_for_10_s_drifts_less_than_0_1_mm_and_stays_below_1e_4_m_per_s(make_scene):
    _, _, scene = make_scene(ground() + "rigid_objects:\n" + box("box", 0.1, 0.5, (0.1, -0.2, 0.0505)))
    z0 = scene.free_state[0, 2]
    drift = speed = 0.0
    for _ in range(100):
        scene.step(DT, 100)
        drift = max(drift, abs(scene.free_state[0, 2] - z0))
        speed = max(speed, np.linalg.norm(scene.free_state[0, 7:10]))
    assert drift < 1e-4
    assert speed < 1e-4


def test_stack_of_5_boxes_stands_for_10_s(make_scene):
    boxes = "".join(box(f"b{i}", 0.1, 0.5, (0.0, 0.0, 0.0505 + i * 0.1005)) for i in range(5))
    _, _, scene = make_scene(ground() + "rigid_objects:\n" + boxes)
    x0 = scene.free_state[:, :3].copy()
    for _ in range(100):
        scene.step(DT, 100)
        assert scene.status == 0
    assert np.abs(scene.free_state[:, :3] - x0).max() < 1e-3       # nothing slid or fell
    assert np.abs(scene.free_state[:, 7:]).max() < 1e-3
    assert np.all(np.diff(scene.free_state[:, 2]) > 0.099)


def test_pile_of_20_boxes_settles_within_3_s_without_penetrating_more_than_padding_plus_half_a_mm(tmp_path):
    world = sim_node.WorldModel()
    world.readFile(REPO / "data" / "worlds" / "box_pile.yaml")
    assert world.numRigidObjects() == 20
    scene = build_scene(world).scene
    deepest = 0.0
    for _ in range(3000):
        scene.step(DT)
        if scene.ncontact:
            deepest = max(deepest, -scene.contact_arrays()["distance"].min())
    assert deepest <= 0.0025 + 0.0005          # overlap of the real geometries
    assert np.abs(scene.free_state[:, 7:10]).max() < 1e-3
    assert scene.free_state[:, 2].min() > 0.049


def test_object_resting_on_a_zero_thickness_triangle_mesh_floor_stays_on_it(make_scene, tmp_path):
    _, _, scene = make_scene(shell_floor(tmp_path) + f"""rigid_objects:
""" + box("box", 0.2, 1.0, (0.3, 0.2, 0.15)) + box("cube", 0.1, 0.5, (-0.4, 0.0, 0.06),
                                                     orientation=quat_about((0, 0, 1), 0.3)))
    for _ in range(3000):
        scene.step(DT)
    z = scene.free_state[:, 2]
    assert abs(z[0] - 0.1) < 1e-3 and abs(z[1] - 0.05) < 1e-3      # on the shell, not through it
    assert np.abs(scene.free_state[:, 7:]).max() < 1e-4


def test_a_sphere_at_10_m_per_s_does_not_tunnel_through_a_zero_thickness_floor(make_scene, tmp_path):
    _, _, scene = make_scene(shell_floor(tmp_path) + f"""rigid_objects:
  - name: bullet
    geometry: {{sphere: 0.01}}
    mass: 0.01
    pose: {{position: [0.2, 0.1, 0.3]}}
""")
    scene.free_state[0, 7:10] = [3.0, -2.0, -10.0]
    lowest = 1.0
    for _ in range(300):
        scene.step(DT)
        lowest = min(lowest, scene.free_state[0, 2])
    assert lowest > 0.01                       # its surface never crossed the shell


def test_ball_with_restitution_0_comes_to_rest(make_scene):
    _, _, scene = make_scene(ground() + """rigid_objects:
  - name: ball
    geometry: {sphere: 0.05}
    mass: 1.0
    pose: {position: [0, 0, 0.5]}
""")
    scene.free_state[0, 7:10] = [0.3, 0.0, -2.0]
    scene.step(DT, 2000)
    assert abs(scene.free_state[0, 2] - 0.0505) < 1e-4
    assert abs(scene.free_state[0, 9]) < 1e-5


def test_energy_of_a_passive_closed_system_never_grows(make_scene):
    world, _, scene = make_scene(ground(friction=0.4, restitution=0.3) + """rigid_objects:
  - name: box
    geometry: {box: [0.2, 0.1, 0.05]}
    mass: 1.0
    pose: {position: [0, 0, 0.6], orientation: [0.2, 0.3, 0.1, 0.927]}
    surface: {kRestitution: 0.3, kFriction: 0.4}
  - name: ball
    geometry: {sphere: 0.05}
    mass: 0.3
    pose: {position: [0.3, 0, 0.4]}
    surface: {kRestitution: 0.6}
  - name: can
    geometry: {cylinder: [0.04, 0.15]}
    mass: 0.4
    pose: {position: [-0.3, 0.1, 0.8], orientation: [0.5, 0, 0, 0.866]}
""")
    scene.free_state[0, 10:13] = [3.0, -5.0, 8.0]      # tumbling
    scene.free_state[2, 10:13] = [0.0, 6.0, 1.0]
    masses = [world.rigidObject(i).getMass() for i in range(3)]

    def energy():
        total = 0.0
        for i, mass in enumerate(masses):
            state = scene.free_state[i]
            R = quat2mat([state[6], state[3], state[4], state[5]])
            inertia = R @ mass.inertiaMatrix() @ R.T
            total += (0.5 * mass.getMass() * state[7:10] @ state[7:10]
                      + 0.5 * state[10:13] @ inertia @ state[10:13] + mass.getMass() * G * state[2])
        return total

    energies = [energy()]
    for _ in range(4000):
        scene.step(DT)
        energies.append(energy())
    growth = np.diff(energies)
    assert growth.max() <= 1e-6 * energies[0]
    assert energies[-1] < 0.1 * energies[0]


def test_quadruped_dropped_5_cm_holding_its_pose_with_pd_stands_steady_within_1_mm(tmp_path):
    world = sim_node.WorldModel()
    world.readFile(REPO / "data" / "worlds" / "quadruped.yaml")
    scene = build_scene(world).scene
    robot = world.robot(0)
    gains, q0 = robot.settings["controller"], robot.getConfig()
    for name in robot.getJointNames():
        v, q = robot.structure.joint_v_index[name], robot.structure.joint_q_index[name]
        scene.robot_kp[0][v] = gains["kp"][name]
        scene.robot_kd[0][v] = gains["kd"][name]
        scene.robot_q_des[0][v] = q0[q]
    heights = []
    for _ in range(3000):
        scene.step(DT)
        heights.append(scene.robot_q[0][2])
    last_second = np.array(heights[-1000:])
    assert last_second.max() - last_second.min() < 1e-3
    assert last_second.mean() > 0.25                 # standing, not collapsed (stance 0.299 m)


def test_cost_of_a_step_grows_about_linearly_from_10_to_100_boxes_on_a_plane(tmp_path):
    # work counted by the engine (shape pairs tested, contacts, solver row updates): a machine-
    # independent cost measure; wall-clock scaling is measured in bench/scenes.py
    def work(n):
        side = math.ceil(math.sqrt(n))
        boxes = "".join(box(f"b{i}", 0.1, 0.5, ((i % side) * 0.15, (i // side) * 0.15, 0.0505))
                        for i in range(n))
        world = sim_node.WorldModel()
        (tmp_path / f"w{n}.yaml").write_text(ground() + "rigid_objects:\n" + boxes)
        world.readFile(tmp_path / f"w{n}.yaml")
        scene = build_scene(world).scene
        scene.step(DT, 50)
        scene.reset_counters()
        scene.step(DT, 100)
        return scene.count_shape_pairs + scene.count_contacts + scene.count_row_updates

    ratio = work(100) / work(10)
    assert 7.0 <= ratio <= 14.0


def leaning_plank(tmp_path, theta_deg, corner, mu=0.5, length=1.0, thickness=0.02, seconds=2.0):
    """A plank (box 2 cm x 10 cm x 1 m, 1 kg) leaning at theta from the floor z = 0 against the
    wall x = 0, both of friction mu, its lowest corner and its corner nearest the wall at the
    rest gap from them; the corner is two plane terrains, one terrain of the two planes, or a
    triangle mesh of four triangles. Returns the path of its centre (steps, 3) and its last
    state row."""
    from sim_node.model import geometry as geo
    from sim_node.model.urdf import GeometryElement, Origin

    import trimesh

    th = math.radians(theta_deg)
    rest = 0.1 * 2 * 0.0025                               # the rest gap of two default paddings
    centre = [length / 2 * math.cos(th) + thickness / 2 * math.sin(th) + rest, 0.0,
              length / 2 * math.sin(th) + thickness / 2 * math.cos(th) + rest]
    surface = f"{{kFriction: {mu}}}"
    text = f"""rigid_objects:
  - name: plank
    geometry: {{box: [{thickness}, 0.1, {length}]}}
    mass: 1.0
    pose: {{position: {centre}, orientation: {quat_about((0, 1, 0), th - math.pi / 2)}}}
    surface: {surface}
terrains:
"""
    normals = [(0.0, 0.0, 1.0), (1.0, 0.0, 0.0)]
    if corner == "two plane terrains":
        text += "".join(f"""  - name: plane{k}
    geometry: {{plane: {{normal: {list(n)}, offset: 0.0}}}}
    surface: {surface}
""" for k, n in enumerate(normals))
    elif corner == "triangle mesh":
        trimesh.Trimesh([[0, -1, 0], [2, -1, 0], [2, 1, 0], [0, 1, 0], [0, 1, 2], [0, -1, 2]],
                        [[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 5]]).export(tmp_path / "corner.stl")
        text += f"""  - name: corner
    geometry: {{mesh: {tmp_path / 'corner.stl'}}}
    surface: {surface}
"""
    else:
        text = text.replace("terrains:\n", "")
    path = tmp_path / "plank.yaml"
    path.write_text(text)
    world = sim_node.WorldModel()
    world.readFile(path)
    if corner == "one terrain of two planes":
        terrain = sim_node.TerrainModel("corner", tuple(
            GeometryElement(Origin(), geo.Plane(n, 0.0)) for n in normals))
        world.add(terrain)
        terrain.settings = world.rigidObject("plank").settings
    scene = build_scene(world).scene
    centres = []
    for _ in range(int(round(seconds / DT))):
        scene.step(DT)
        centres.append(scene.free_state[0, :3].copy())
    return np.array(centres), scene.free_state[0].copy()


def plank_critical_angle(mu, length, thickness):
    """The least angle [deg] at which a plank leaning on a wall stands, friction mu at both
    ends: the moments about its foot at limiting friction, N_floor = m g / (1 + mu^2),
    N_wall = mu N_floor, give tan(theta) = (1 - mu^2) / (2 mu + (1 + mu^2) thickness / length)
    (a thin ladder's (1 - mu^2) / (2 mu)) [deg]."""
    return math.degrees(math.atan((1 - mu * mu) / (2 * mu + (1 + mu * mu) * thickness / length)))


CORNERS = ("two plane terrains", "one terrain of two planes", "triangle mesh")


@pytest.mark.parametrize("margin_deg", [3.0, -3.0], ids=["stands", "slides"])
def test_a_plank_leaning_on_a_wall_stands_above_the_critical_angle_and_slides_below_it(
        tmp_path, margin_deg):
    # Claim: friction acts on each face of a corner in that face's own plane, whether the floor
    # and the wall are two terrains, one terrain of two planes or one triangle mesh (a body
    # pair touching two faces has a friction patch per face): a plank (mu 0.5) leaning 3
    # degrees above the closed-form critical angle (36.2 degrees) stands — its centre moves
    # less than 1 mm in 2 s and it is at rest — and 3 degrees below it slides down, its centre
    # dropping more than 10 cm; the three corners give the same path to 1 um. (With one
    # friction disk across the floor's and the wall's mean normal, the plank slid down even
    # at 60 degrees.)
    theta = plank_critical_angle(0.5, 1.0, 0.02) + margin_deg
    paths = {corner: leaning_plank(tmp_path, theta, corner) for corner in CORNERS}
    reference, last = paths["two plane terrains"]
    moved = np.linalg.norm(reference[-1] - reference[0])
    if margin_deg > 0:
        assert moved < 1e-3
        assert np.linalg.norm(last[7:10]) + 0.5 * np.linalg.norm(last[10:13]) < 1e-3
    else:
        assert reference[0, 2] - reference[-1, 2] > 0.1
    for corner in CORNERS[1:]:
        assert np.abs(paths[corner][0] - reference).max() < 1e-6, corner


@pytest.mark.parametrize("corner", CORNERS[1:])
@pytest.mark.parametrize("theta", [45.0, 60.0, 75.0])
def test_a_plank_leaning_on_a_wall_of_the_same_terrain_stands_as_on_two_terrains(tmp_path, theta,
                                                                                  corner):
    # Claim: well above the critical angle the plank stands against a wall that is part of the
    # floor's terrain (one terrain of two planes, a triangle-mesh room) exactly as between two
    # plane terrains (with one friction disk per body pair it slid down at 45 and 60 degrees)
    same, _ = leaning_plank(tmp_path, theta, corner, seconds=1.0)
    planes, _ = leaning_plank(tmp_path, theta, "two plane terrains", seconds=1.0)
    assert np.linalg.norm(same[-1] - same[0]) < 1e-3
    assert np.abs(same - planes).max() < 1e-6
