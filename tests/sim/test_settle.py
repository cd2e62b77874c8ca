"""settle (seed 000) and ContactPoint (seed 004): rest poses against closed forms — the boundary
layer's rest gap is REST_GAP_FRACTION = 10 % of the summed paddings (engine/types.pxd) — and
against the Simulator itself (settled objects stay at rest under gravity)."""
import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.spatial.transform import Rotation

import sim_node
from sim_node.model.contact import ContactPoint
from sim_node.resources import data_path, default_world
from sim_node.sim.settle import settle

REST_GAP_FRACTION = 0.1
PADDING = 0.0025            # the default boundary layer [m]
REST_GAP = REST_GAP_FRACTION * 2 * PADDING
HEIGHT_TOL = 2e-4           # [m] twice the default settletol


def load(tmp_path, objects, terrains="", name="world.yaml"):
    """A world: a ground plane, the given terrains and rigid objects (YAML list items)."""
    path = tmp_path / name
    path.write_text(f"""terrains:
  - name: ground
    geometry: {{plane: {{normal: [0, 0, 1], offset: 0.0}}}}
{terrains}
rigid_objects:
{objects}""")
    world = sim_node.WorldModel()
    world.readFile(path)
    return world


def box(name, size, position, mass=1.0, yaw=0.0, surface=""):
    q = Rotation.from_euler("z", yaw).as_quat()     # (x, y, z, w)
    return f"""  - name: {name}
    geometry: {{box: {list(size)}}}
    mass: {mass}
    pose: {{position: {list(position)}, orientation: {q.tolist()}}}
""" + (f"    surface: {surface}\n" if surface else "")


def snapshot(world):
    """Everything settle must leave alone: the entity names and the robot and object states."""
    arrays = []
    for i in range(world.numRigidObjects()):
        arrays += [*world.rigidObject(i).getTransform(), *world.rigidObject(i).getVelocity()]
    for r in range(world.numRobots()):
        arrays += [world.robot(r).getConfig(), world.robot(r).getVelocity()]
    return [world.getName(i) for i in range(world.numIDs())], arrays


def assert_same(a, b):
    assert a[0] == b[0] and len(a[1]) == len(b[1])
    for x, y in zip(a[1], b[1]):
        np.testing.assert_array_equal(x, y)


def test_a_dropped_box_rests_at_the_boundary_layer_rest_height_on_its_four_corners(tmp_path):
    world = load(tmp_path, box("b", (0.1, 0.2, 0.3), (0.2, -0.1, 0.5), yaw=0.3,
                               surface="{kFriction: 0.8}"))
    b = world.rigidObject("b")
    before = snapshot(world)
    (R, t), touched = settle(world, b)
    assert t[2] == pytest.approx(0.15 + REST_GAP, abs=HEIGHT_TOL)
    assert np.allclose(t[:2], [0.2, -0.1], atol=1e-4)         # pushed straight down
    assert Rotation.from_matrix(R).magnitude() == pytest.approx(0.3, abs=1e-3)
    assert list(touched) == [world.terrain("ground").getID()]
    contacts = touched[world.terrain("ground").getID()]
    assert len(contacts) == 4
    corners = {(sx * 0.05, sy * 0.1) for sx in (-1, 1) for sy in (-1, 1)}
    for c in contacts:
        assert isinstance(c, ContactPoint)
        np.testing.assert_allclose(c.n, [0, 0, 1], atol=1e-9)
        local = R.T @ (c.x - t)
        assert min(math.dist(local[:2], k) for k in corners) < 1e-4
        assert c.kFriction == pytest.approx(2 / (1 / 0.8 + 1 / 0.5))   # harmonic mean
    assert_same(snapshot(world), before)          # the world is not modified


def test_margin_is_the_objects_padding_during_settling(tmp_path):
    world = load(tmp_path, box("b", (0.1, 0.1, 0.1), (0, 0, 0.3)))
    (_, t), _ = settle(world, world.rigidObject("b"), margin=0.01)
    assert t[2] == pytest.approx(0.05 + REST_GAP_FRACTION * (0.01 + PADDING), abs=HEIGHT_TOL)
    with pytest.raises(ValueError, match="margin"):
        settle(world, world.rigidObject("b"), settletol=1e-3, margin=5e-4)


def test_a_box_settles_onto_the_box_below_it(tmp_path):
    world = load(tmp_path, box("low", (0.2, 0.2, 0.1), (0, 0, 0.05 + REST_GAP))
                 + box("top", (0.1, 0.1, 0.1), (0.02, 0.01, 0.6)))
    (_, t), touched = settle(world, world.rigidObject("top"))
    assert t[2] == pytest.approx(0.1 + REST_GAP + 0.05 + REST_GAP, abs=HEIGHT_TOL)
    assert list(touched) == [world.rigidObject("low").getID()]
    for c in touched[world.rigidObject("low").getID()]:
        np.testing.assert_allclose(c.n, [0, 0, 1], atol=1e-9)


def test_a_sideways_push_stops_at_a_wall(tmp_path):
    wall = """  - name: wall
    geometry: {box: [0.1, 1.0, 1.0]}
    pose: {position: [0.5, 0.0, 0.5], orientation: [0.0, 0.0, 0.0, 1.0]}
"""
    world = load(tmp_path, box("b", (0.1, 0.2, 0.3), (0, 0, 0.2)), terrains=wall)
    (R, t), touched = settle(world, world.rigidObject("b"), forcedir=(1, 0, 0))
    assert t[0] == pytest.approx(0.45 - 0.05 - REST_GAP, abs=HEIGHT_TOL)
    np.testing.assert_allclose(t[1:], [0, 0.2], atol=1e-4)
    assert list(touched) == [world.terrain("wall").getID()]
    for c in touched[world.terrain("wall").getID()]:
        np.testing.assert_allclose(c.n, [-1, 0, 0], atol=1e-9)     # into the box


def test_forcedir_length_limits_the_travel(tmp_path):
    world = load(tmp_path, box("b", (0.1, 0.1, 0.1), (0, 0, 0.5)))
    b = world.rigidObject("b")
    assert settle(world, b, forcedir=(0, 0, 1)) == (None, {})           # nothing above
    assert settle(world, b, forcedir=(0, 0, -0.4)) == (None, {})        # the ground is 0.45 away
    (_, t), touched = settle(world, b, forcedir=(0, 0, -0.5))
    assert t[2] == pytest.approx(0.05 + REST_GAP, abs=HEIGHT_TOL) and touched


def test_starting_in_collision_raises_and_names_the_other_entity(tmp_path):
    world = load(tmp_path, box("low", (0.2, 0.2, 0.1), (0, 0, 0.05 + REST_GAP))
                 + box("top", (0.1, 0.1, 0.1), (0, 0, 0.14)))
    with pytest.raises(ValueError, match=r"'top' starts in collision with low \(ID 1\)"):
        settle(world, world.rigidObject("top"))


def test_an_object_resting_inside_the_boundary_layer_settles_where_it_is(tmp_path):
    resting = 0.1 + REST_GAP + 0.05 + REST_GAP
    world = load(tmp_path, box("low", (0.2, 0.2, 0.1), (0, 0, 0.05 + REST_GAP))
                 + box("top", (0.1, 0.1, 0.1), (0, 0, resting)))
    (_, t), touched = settle(world, world.rigidObject("top"))
    assert t[2] == pytest.approx(resting, abs=HEIGHT_TOL)
    assert list(touched) == [world.rigidObject("low").getID()]


def test_orientation_spring_holds_a_tilted_box_on_its_edge_at_the_torque_balance(tmp_path):
    """A 0.2 (y) x 0.3 (z) box tilted by theta0 about x lands on its lowest edge. Without the
    spring its weight tips it flat; with stiffness k it stops where k (theta0 - theta) equals
    the weight's moment about that edge, m g (0.1 cos theta - 0.15 sin theta)."""
    theta0, k, m, g = math.radians(20), 100.0, 1.0, 9.81
    world = load(tmp_path, box("b", (0.1, 0.2, 0.3), (0, 0, 0.5), mass=m))
    b = world.rigidObject("b")
    b.setTransform(Rotation.from_euler("x", theta0).as_matrix(), [0, 0, 0.5])
    (R, t), _ = settle(world, b)
    assert Rotation.from_matrix(R).magnitude() < 1e-3
    assert t[2] == pytest.approx(0.15 + REST_GAP, abs=HEIGHT_TOL)
    (R, _), touched = settle(world, b, orientationDamping=k, settletol=1e-6)
    theta = Rotation.from_matrix(R).as_euler("xyz")[0]
    expected = brentq(lambda th: k * (theta0 - th)
                      - m * g * (0.1 * math.cos(th) - 0.15 * math.sin(th)), 0.0, theta0)
    assert theta == pytest.approx(expected, abs=1e-4)
    assert len(touched[world.terrain("ground").getID()]) == 2            # the two edge ends


def test_a_perturbed_push_is_reproducible_and_still_comes_to_rest(tmp_path):
    world = load(tmp_path, box("b", (0.1, 0.1, 0.1), (0, 0, 0.4)))
    b = world.rigidObject("b")
    (R1, t1), _ = settle(world, b, perturb=1.0)
    (R2, t2), _ = settle(world, b, perturb=1.0)
    (_, t3), _ = settle(world, b, perturb=1.0, rng=np.random.default_rng(7))
    np.testing.assert_array_equal(t1, t2)
    np.testing.assert_array_equal(R1, R2)
    assert np.linalg.norm(t1[:2]) > 1e-3 and np.linalg.norm(t1[:2] - t3[:2]) > 1e-3
    # whatever the path, a cube ends on one of its faces
    assert t1[2] == pytest.approx(0.05 + REST_GAP, abs=HEIGHT_TOL)


def test_a_pile_settled_box_by_box_stays_at_rest_under_gravity():
    """The S3 box pile, built by settling its 20 boxes one at a time (each onto the ones
    already settled), is at equilibrium in the Simulator: nothing moves in 0.5 s."""
    source = sim_node.WorldModel()
    source.readFile(data_path("worlds", "box_pile.yaml"))
    world = sim_node.WorldModel()
    world.simulation = source.simulation
    ground = source.terrain("ground")
    world.add(sim_node.TerrainModel("ground", ground.getCollisionGeometry(),
                                    *ground.getTransform()))
    for i in range(source.numRigidObjects()):
        o = source.rigidObject(i)
        copy = sim_node.RigidObjectModel(o.getName(), o.getCollisionGeometry(), o.getMass(),
                                         *o.getTransform())
        copy.settings = o.settings
        world.add(copy)
        transform, touched = settle(world, copy)
        assert touched
        copy.setTransform(*transform)
    settled = [world.rigidObject(i).getTransform()[1] for i in range(world.numRigidObjects())]
    assert max(p[2] for p in settled) > 0.25            # three layers
    sim = sim_node.Simulator(world)
    sim.simulate(0.5)
    assert sim.getStatus() == 0
    sim.updateWorld()
    moved = [np.linalg.norm(world.rigidObject(i).getTransform()[1] - settled[i])
             for i in range(world.numRigidObjects())]
    assert max(moved) < 2e-4


def test_frozen_meshes_are_their_convex_hulls_as_in_the_simulator(tmp_path):
    """A box dropped over a U-shaped mesh object rests on the rim (the hull a moving mesh
    collides as), not inside the U; placed there, it stays in the Simulator."""
    import trimesh

    slab = trimesh.creation.box([0.3, 0.2, 0.02],
                                trimesh.transformations.translation_matrix([0, 0, 0.01]))
    walls = [trimesh.creation.box([0.02, 0.2, 0.2],
                                  trimesh.transformations.translation_matrix([x, 0, 0.1]))
             for x in (-0.14, 0.14)]
    trimesh.util.concatenate([slab, *walls]).export(tmp_path / "u.stl")
    u_object = f"""  - name: u
    geometry: {{mesh: {tmp_path / 'u.stl'}}}
    mass: 1.0
    pose: {{position: [0, 0, 0.01], orientation: [0, 0, 0, 1]}}
"""
    world = load(tmp_path, u_object + box("b", (0.05, 0.05, 0.05), (0, 0, 0.4), mass=0.2))
    u, b = world.rigidObject("u"), world.rigidObject("b")
    u.setTransform(*settle(world, u)[0])
    (R, t), touched = settle(world, b)
    rim = u.getTransform()[1][2] + 0.2
    assert t[2] == pytest.approx(rim + 0.025 + REST_GAP, abs=HEIGHT_TOL)
    assert list(touched) == [u.getID()]
    b.setTransform(R, t)
    sim = sim_node.Simulator(world)
    sim.simulate(0.3)
    sim.updateWorld()
    assert np.linalg.norm(b.getTransform()[1] - t) < 2e-4


def test_a_floating_base_robot_settles_as_one_body_on_its_wheels_and_caster():
    """The mobile base (wheel radius 0.08 m, caster reaching as low as the wheels) rests with
    its base on the axle height plus the rest gap, on 2 x 2 wheel-edge contacts and the
    caster; the other robot (the arm) and the table are frozen."""
    world = sim_node.WorldModel()
    world.readFile(default_world())
    robot = world.robot("mobile_base")
    before = snapshot(world)
    (R, t), touched = settle(world, robot)
    assert t[2] == pytest.approx(0.08 + REST_GAP, abs=HEIGHT_TOL)
    np.testing.assert_allclose(R, np.eye(3), atol=1e-3)
    ground = world.terrain("ground").getID()
    assert list(touched) == [ground]
    ys = sorted(round(c.x[1] - t[1], 3) for c in touched[ground])
    assert ys == [-0.185, -0.155, 0.0, 0.155, 0.185]          # wheel edges (0.17 +- 0.015)
    assert_same(snapshot(world), before)
    # settling by a link pushes at that link's point: the same run, that link's frame
    wheel = robot.link("left_wheel")
    R_base, p_base = robot.link("base_link").getTransform()
    R_wheel, p_wheel = wheel.getTransform()
    (R_w, t_w), _ = settle(world, wheel, forcept=R_wheel.T @ (p_base - p_wheel))
    np.testing.assert_allclose(R_w, R @ R_base.T @ R_wheel, atol=1e-9)
    np.testing.assert_allclose(t_w, R @ R_base.T @ (p_wheel - p_base) + t, atol=1e-9)


STAND_URDF = """<robot name="stand">
  <link name="base">
    <inertial><mass value="5"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
    </inertial>
    <collision><origin xyz="0 0 0.25"/><geometry><box size="0.4 0.4 0.5"/></geometry></collision>
  </link>
  <link name="paddle">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0"
      iyz="0"/></inertial>
    <collision><geometry><box size="0.1 0.2 0.05"/></geometry></collision>
  </link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="paddle"/>
    <origin xyz="0 0 1.0" rpy="0 0 0.4"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
</robot>
"""


def test_a_link_of_a_fixed_base_robot_settles_alone_through_its_own_robot(tmp_path):
    """Klamp't's rule: the link is cut loose and settles by itself, its robot left out: the
    paddle (0.05 m thick, 1 m up) passes through its own 0.5 m pedestal and rests on the ground
    at half its thickness plus the rest gap; a box of the world under it stops it instead."""
    (tmp_path / "stand.urdf").write_text(STAND_URDF)
    world = load(tmp_path, box("far", (0.1, 0.1, 0.1), (3, 0, 0.05)))
    world.loadRobot(str(tmp_path / "stand.urdf"), fixed_base=True)
    paddle = world.robot(0).link("paddle")
    before = snapshot(world)
    (R, t), touched = settle(world, paddle, forcedir=(0, 0, -2))
    assert t[2] == pytest.approx(0.025 + REST_GAP, abs=HEIGHT_TOL)
    np.testing.assert_allclose(t[:2], [0, 0], atol=1e-4)
    assert Rotation.from_matrix(R).as_rotvec() == pytest.approx([0, 0, 0.4], abs=1e-3)
    assert list(touched) == [world.terrain("ground").getID()]
    assert_same(snapshot(world), before)
    # an entity that is not the paddle's robot stops it: a box on the pedestal's footprint
    blocked = load(tmp_path, box("block", (0.3, 0.3, 0.3), (0, 0, 0.15)), name="blocked.yaml")
    blocked.loadRobot(str(tmp_path / "stand.urdf"), fixed_base=True)
    (R, t), touched = settle(blocked, blocked.robot(0).link("paddle"), forcedir=(0, 0, -2))
    assert t[2] == pytest.approx(0.3 + 0.025 + REST_GAP, abs=HEIGHT_TOL)
    assert list(touched) == [blocked.rigidObject("block").getID()]


def test_bad_arguments_raise_with_what_is_valid(tmp_path):
    world = load(tmp_path, box("b", (0.1, 0.1, 0.1), (0, 0, 0.5)))
    b = world.rigidObject("b")
    with pytest.raises(ValueError, match="forcedir must be nonzero"):
        settle(world, b, forcedir=(0, 0, 0))
    with pytest.raises(ValueError, match="forcept must be 3 finite numbers"):
        settle(world, b, forcept=(0, 0))
    with pytest.raises(ValueError, match="settletol"):
        settle(world, b, settletol=0)
    other = load(tmp_path, box("b", (0.1, 0.1, 0.1), (0, 0, 0.5)), name="other.yaml")
    with pytest.raises(ValueError, match="not in the given world"):
        settle(world, other.rigidObject("b"))
    arm_world = sim_node.WorldModel()
    arm_world.readFile(default_world())
    with pytest.raises(ValueError, match="fixed base"):
        settle(arm_world, arm_world.robot("arm"))
    with pytest.raises(TypeError, match="RigidObjectModel"):
        settle(world, "b")


def test_contact_point_lists_are_simulator_contact_rows():
    row = [0.1, -0.2, 0.3, 0.0, 0.6, 0.8, 0.4]
    c = ContactPoint()
    assert c.tolist() == [0, 0, 0, 0, 0, 1, 0]
    c.fromlist(row)
    assert c.tolist() == row
    assert repr(c) == "ContactPoint(x=[0.1, -0.2, 0.3], n=[0.0, 0.6, 0.8], kFriction=0.4)"
    with pytest.raises(ValueError, match="unit vector"):
        c.fromlist(row[:3] + [0, 0, 2] + row[6:])
    with pytest.raises(ValueError, match="kFriction"):
        ContactPoint((0, 0, 0), (0, 0, 1), -1)
    assert c.tolist() == row                       # a rejected fromlist changes nothing


def test_contact_point_transform_moves_the_point_and_turns_the_normal():
    R = Rotation.from_euler("zyx", [0.3, -0.2, 0.5]).as_matrix()
    t = np.array([1.0, 2.0, -0.5])
    c = ContactPoint((0.1, 0.2, 0.3), (0.0, 0.6, 0.8), 0.5)
    c.transform(R, t)
    np.testing.assert_allclose(c.x, R @ [0.1, 0.2, 0.3] + t, atol=1e-15)
    np.testing.assert_allclose(c.n, R @ [0.0, 0.6, 0.8], atol=1e-15)
    assert c.kFriction == 0.5
    with pytest.raises(ValueError, match="rotation"):
        c.transform(2 * np.eye(3), t)
