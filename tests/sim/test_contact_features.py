"""Contact features beyond the headline claims: compliant layers, kinematic bodies, joint limits
and joint dry friction in the same solve, heightfields, concave moving meshes, determinism and
bit-exact state restore."""
import math

import numpy as np
import pytest
from scene_helpers import DT, REPO, ground, quat_about, shell_floor

import sim_node
from sim_node.model.scene import build_scene


def test_compliant_layer_sinks_to_the_static_depth_m_g_over_4_k(make_scene):
    # four corner contacts, each pushing k * depth: 4 k depth = m g (harmonic blend of k, k = k)
    k, c, m = 2.0e4, 300.0, 1.0
    surface = f"kStiffness: {k}, kDamping: {c}"
    _, _, scene = make_scene(ground(extra=", " + surface) + f"""rigid_objects:
  - name: box
    geometry: {{box: [0.1, 0.1, 0.1]}}
    mass: {m}
    pose: {{position: [0, 0, 0.0549]}}
    surface: {{{surface}}}
""")
    scene.step(DT, 2000)
    depth = 0.005 - (scene.free_state[0, 2] - 0.05)       # into the two 2.5 mm layers
    assert depth == pytest.approx(m * 9.81 / (4 * k), rel=0.02)
    assert scene.contact_arrays()["depth"] == pytest.approx(np.full(4, depth), rel=1e-6)


def test_a_kinematic_body_follows_its_velocity_and_pushes_a_dynamic_box(make_scene):
    _, layout, scene = make_scene(ground() + """rigid_objects:
  - name: paddle
    geometry: {box: [0.05, 0.3, 0.1]}
    mass: 2.0
    pose: {position: [-0.2, 0, 0.0505]}
  - name: crate
    geometry: {box: [0.1, 0.1, 0.1]}
    mass: 0.5
    pose: {position: [0.0, 0, 0.0505]}
""")
    scene.set_free_body_kinematic(0, True)
    scene.free_state[0, 7:10] = [0.5, 0.0, 0.0]
    scene.step(DT, 1000)
    paddle, crate = scene.free_state[0], scene.free_state[1]
    assert paddle[0] == pytest.approx(-0.2 + 0.5, abs=1e-9)      # exactly its set motion
    assert paddle[7] == 0.5 and paddle[2] == pytest.approx(0.0505)
    assert crate[0] > paddle[0] + 0.074                             # pushed ahead, not through
    assert crate[7] == pytest.approx(0.5, abs=0.02)


LIMITED_ARM = """<robot name="limited">
  <link name="world"/>
  <link name="arm"><inertial><origin xyz="0.25 0 0"/><mass value="1"/>
    <inertia ixx="0.001" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="world"/><child link="arm"/>
    <origin xyz="0 0 1"/><axis xyz="0 1 0"/>
    <limit lower="-0.3" upper="0.5" effort="10" velocity="10"/>
    <dynamics friction="{friction}"/></joint>
</robot>"""


def arm_world(tmp_path, friction=0.0):
    path = tmp_path / "arm.urdf"
    path.write_text(LIMITED_ARM.format(friction=friction))
    world = sim_node.WorldModel()
    world.loadRobot(str(path))
    return world


def test_joint_limit_stops_a_falling_arm_inside_the_limit(tmp_path):
    # the arm falls towards +q (gravity about +y pulls x-pointing arm down); upper limit 0.5
    world = arm_world(tmp_path)
    scene = build_scene(world).scene
    highest = -1.0
    for _ in range(2000):
        scene.step(DT)
        highest = max(highest, scene.robot_q[0][0])
    assert 0.49 < scene.robot_q[0][0] <= 0.5 + 1e-4
    assert highest <= 0.5 + 1e-3
    assert abs(scene.robot_v[0][0]) < 1e-4


@pytest.mark.parametrize("friction, holds", [(2.3, False), (2.6, True)])
def test_joint_dry_friction_holds_until_the_breakaway_torque(tmp_path, friction, holds):
    # gravity torque at q = 0: m g r = 1 * 9.81 * 0.25 = 2.45 N m
    world = arm_world(tmp_path, friction)
    scene = build_scene(world).scene
    scene.step(DT, 500)
    moved = abs(scene.robot_q[0][0])
    if holds:
        assert moved < 1e-6
    else:
        assert moved > 0.1


def test_ball_rolls_down_a_heightfield_and_stays_on_its_surface(make_scene, tmp_path):
    heights = np.tile(0.1 * np.linspace(0.0, 1.0, 21)[None, :], (21, 1))    # 10 cm rise over 2 m
    np.save(tmp_path / "ramp.npy", heights)
    _, _, scene = make_scene(f"""terrains:
  - name: ramp
    geometry: {{heightfield: {{file: {tmp_path / 'ramp.npy'}, size: [2.0, 2.0]}}}}
rigid_objects:
  - name: ball
    geometry: {{sphere: 0.05}}
    mass: 0.2
    pose: {{position: [0.33, 0.07, 0.2]}}
""")
    scene.step(DT, 1500)
    x, y, z = scene.free_state[0, :3]
    surface = 0.1 * (x + 1.0) / 2.0
    slope = math.atan(0.05)
    normal_offset = 0.0505 / math.cos(slope)
    assert x < 0.25                                    # rolled down the slope (-x)
    assert z == pytest.approx(surface + normal_offset, abs=3e-4)


def test_a_concave_moving_tray_holds_a_ball_that_its_convex_hull_would_not(make_scene, tmp_path):
    import trimesh

    parts = [trimesh.creation.box((0.3, 0.3, 0.02), trimesh.transformations.translation_matrix((0, 0, 0.01)))]
    for x, y, ex, ey in ((0.14, 0, 0.02, 0.3), (-0.14, 0, 0.02, 0.3), (0, 0.14, 0.3, 0.02), (0, -0.14, 0.3, 0.02)):
        parts.append(trimesh.creation.box((ex, ey, 0.1), trimesh.transformations.translation_matrix((x, y, 0.05))))
    tray = trimesh.util.concatenate(parts)
    tray.export(tmp_path / "tray.stl")
    text = ground() + f"""rigid_objects:
  - name: tray
    geometry: {{mesh: {tmp_path / 'tray.stl'}, concave: {{concave}}}}
    mass: 1.0
    pose: {{position: [0, 0, 0.003]}}
  - name: ball
    geometry: {{sphere: 0.03}}
    mass: 0.1
    pose: {{position: [0.02, 0.01, 0.25]}}
"""
    world, layout, scene = make_scene(text.replace("{concave}", "true"))
    scene.step(DT, 1500)
    scene.refresh()
    # inside, resting on the tray's floor (0.02 above the tray origin), 0.5 mm rest gap
    tray_origin = scene.body_pose(layout.body_of_id[world.rigidObject("tray").getID()])[1]
    floor = tray_origin[2] + 0.02
    assert scene.free_state[1, 2] == pytest.approx(floor + 0.03 + 0.0005, abs=2e-4)
    _, _, hull = make_scene(text.replace("{concave}", "false"))
    hull.step(DT, 1500)
    assert hull.free_state[1, 2] > 0.13                 # on top of the hull's lid


def test_same_inputs_give_the_same_bits_and_a_restored_state_continues_bit_for_bit(tmp_path):
    def pile():
        world = sim_node.WorldModel()
        world.readFile(REPO / "data" / "worlds" / "box_pile.yaml")
        return build_scene(world).scene

    a, b = pile(), pile()
    a.step(DT, 400)
    b.step(DT, 400)
    assert a.get_state() == b.get_state()
    saved = a.get_state()
    a.step(DT, 300)
    reference = a.get_state()
    c = pile()
    c.set_state(saved)
    c.step(DT, 300)
    assert c.get_state() == reference
    with pytest.raises(ValueError, match="does not belong to this scene"):
        c.set_state(saved[:-8])


def test_a_box_sliding_across_a_triangulated_floor_does_not_bump_on_its_interior_edges(make_scene, tmp_path):
    # a 4 x 4 m floor of 2 triangles (diagonal from (-2,-2) to (2,2)), frictionless
    floor = shell_floor(tmp_path, half=2.0, surface="{kFriction: 0.0}")
    _, _, scene = make_scene(floor + f"""rigid_objects:
  - name: box
    geometry: {{box: [0.2, 0.2, 0.2]}}
    mass: 1.0
    pose: {{position: [-1.0, 0.5, 0.1005]}}
    surface: {{kFriction: 0.0}}
""")
    scene.step(DT, 100)
    scene.free_state[0, 7:10] = [1.5, 0.0, 0.0]          # crosses the diagonal near x = 0.5
    z, spin = [], []
    for _ in range(1500):
        scene.step(DT)
        z.append(scene.free_state[0, 2])
        spin.append(np.abs(scene.free_state[0, 10:13]).max())
        if scene.ncontact:
            np.testing.assert_allclose(scene.contact_arrays()["normal"], np.tile([0, 0, 1], (scene.ncontact, 1)), atol=1e-12)
    assert scene.free_state[0, 0] > 1.0                  # it crossed
    assert max(z) - min(z) < 1e-5        # a few micrometres while contacts move between triangles
    assert max(spin) < 1e-3                              # no tilting bump
    np.testing.assert_allclose(scene.free_state[0, 8:13], 0.0, atol=1e-6)   # straight on, level
    assert scene.free_state[0, 7] == pytest.approx(1.5, rel=1e-6)


def test_commanded_torques_reach_a_robot_with_mimic_joints(tmp_path):
    # one step from rest without gravity: v = dt B^-1 tau (ABA's mimic fallback must see tau)
    import re

    source = REPO / "data" / "robots" / "arm7"
    (tmp_path / "meshes").symlink_to(source / "meshes")
    (tmp_path / "arm.urdf").write_text(re.sub(r"<dynamics[^>]*/>", "", (source / "arm7.urdf").read_text()))
    world = sim_node.WorldModel()
    world.loadRobot(str(tmp_path / "arm.urdf"))          # no joint friction or damping
    world.simulation.gravity = (0.0, 0.0, 0.0)
    robot = world.robot(0)
    assert robot.structure.mimic_joints                       # the finger mimics the other
    scene = build_scene(world).scene
    tau = np.linspace(1.0, -1.0, robot.model.nv)
    tau[-1] = 1.0                      # the finger sits at its lower limit: open it
    scene.robot_tau_ff[0][:] = tau
    scene.step(DT)
    expected = DT * np.linalg.solve(robot.getMassMatrix(), tau)
    np.testing.assert_allclose(scene.robot_v[0], expected, rtol=1e-9, atol=1e-12)
