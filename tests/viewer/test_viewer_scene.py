"""sim_node.viewer.scene: what the viewer draws, checked against independent references:
PyBullet's own reading of pybullet_data's robots (getVisualShapeData: visual elements per link,
their colours, box sizes), closed-form geometry and closed-form statics for contact arrows."""
import math
import os
from collections import Counter

import numpy as np
import pytest

viser = pytest.importorskip("viser")
pb = pytest.importorskip("pybullet")
import pybullet_data  # noqa: E402

from sim_node import Simulator, WorldModel  # noqa: E402
from sim_node.model import geometry as geo  # noqa: E402
from sim_node.viewer.scene import (DEFAULT_COLOR, ViewerScene, shape_mesh,  # noqa: E402
                                   wxyz_of_matrix)
from sim_node.viewer.viewer import quiet_server, stop_quietly  # noqa: E402

DATA = pybullet_data.getDataPath()
ROBOTS = {"r2d2": "r2d2.urdf", "kuka": "kuka_iiwa/model.urdf",
          "panda": "franka_panda/panda.urdf"}


@pytest.fixture
def scene():
    server = quiet_server("127.0.0.1", 0)
    try:
        yield ViewerScene(server)
    finally:
        stop_quietly(server)


def _pybullet_visuals(path):
    """PyBullet's visual shapes of a URDF: link name -> [(geometry type, dimensions, rgba)]."""
    cid = pb.connect(pb.DIRECT)
    try:
        uid = pb.loadURDF(path, useFixedBase=True, physicsClientId=cid)
        names = {-1: pb.getBodyInfo(uid, physicsClientId=cid)[0].decode()}
        for j in range(pb.getNumJoints(uid, physicsClientId=cid)):
            names[j] = pb.getJointInfo(uid, j, physicsClientId=cid)[12].decode()
        out = {name: [] for name in names.values()}
        for row in pb.getVisualShapeData(uid, physicsClientId=cid):
            out[names[row[1]]].append((row[2], row[3], row[7]))
        return out
    finally:
        pb.disconnect(cid)


@pytest.mark.parametrize("robot", sorted(ROBOTS))
def test_a_robot_gets_one_handle_per_urdf_visual_with_its_colour(scene, robot):
    """Per link, the visual handles are named {root}/{robot}/{link}/visual/{k}, as many as
    PyBullet reads <visual> elements, with the colours PyBullet reads from the materials."""
    path = os.path.join(DATA, ROBOTS[robot])
    world = WorldModel()
    model = world.loadRobot(path, fixed_base=True)
    scene.set_robot(robot, model)
    reference = _pybullet_visuals(path)
    assert sorted(reference) == sorted(link.getName() for link in model.links())
    for link, visuals in reference.items():
        ours = sorted(p for p in scene.nodes if p.startswith(f"/world/{robot}/{link}/visual/"))
        assert ours == [f"/world/{robot}/{link}/visual/{k}" for k in range(len(visuals))], link
        our_colors = Counter(tuple(scene.nodes[p].color) for p in ours)
        pb_colors = Counter()
        for _, _, rgba in visuals:
            # PyBullet reports white for a visual without a <material>; we draw those grey
            rgb = tuple(int(round(255 * c)) for c in rgba[:3])
            pb_colors[rgb] += 1
        grey = tuple(int(round(255 * c)) for c in DEFAULT_COLOR)
        white = (255, 255, 255)
        if pb_colors != our_colors:      # only the "no material" visuals may differ
            assert our_colors[grey] == pb_colors[white] - our_colors[white], link
            assert our_colors - Counter({grey: our_colors[grey]}) == \
                pb_colors - Counter({white: pb_colors[white] - our_colors[white]}), link


def test_r2d2_colours_and_box_sizes_match_pybullet(scene):
    """r2d2's materials (blue, white, grey "black", some defined inside a link and reused by
    name): every visual's colour is PyBullet's (its meshes without material: PyBullet white,
    our grey); every box visual's vertices span PyBullet's box extents."""
    path = os.path.join(DATA, "r2d2.urdf")
    model = WorldModel().loadRobot(path, fixed_base=True)
    scene.set_robot("r2d2", model)
    boxes = 0
    for link, visuals in _pybullet_visuals(path).items():
        for k, (gtype, dims, rgba) in enumerate(visuals):
            handle = scene.nodes[f"/world/r2d2/{link}/visual/{k}"]
            expected = tuple(int(round(255 * c)) for c in rgba[:3])
            if gtype == pb.GEOM_MESH and expected == (255, 255, 255):
                expected = tuple(int(round(255 * c)) for c in DEFAULT_COLOR)
            assert tuple(handle.color) == expected, link
            if gtype == pb.GEOM_BOX:
                extent = handle.vertices.max(axis=0) - handle.vertices.min(axis=0)
                np.testing.assert_allclose(extent, dims, rtol=1e-6)
                boxes += 1
    assert boxes >= 3          # base, legs' boxes, ... (the test must check something)


def test_collision_geometry_is_hidden_until_toggled(scene):
    path = os.path.join(DATA, "kuka_iiwa/model.urdf")
    model = WorldModel().loadRobot(path, fixed_base=True)
    scene.set_robot("kuka", model)
    collision = [h for p, h in scene.nodes.items() if "/collision/" in p]
    n_elements = sum(len(link.getCollisionGeometry()) for link in model.links())
    assert len(collision) == n_elements > 0
    assert not any(h.visible for h in collision)
    scene.show_collision.value = True          # what the browser's checkbox does
    assert all(h.visible for h in collision)
    scene.show_visual.value = False
    assert not any(h.visible for p, h in scene.nodes.items() if "/visual/" in p)


def test_update_poses_moves_link_frames(scene):
    model = WorldModel().loadRobot(os.path.join(DATA, "r2d2.urdf"))
    scene.set_robot("r2d2", model)
    scene.update_poses({"r2d2/head": ((1.0, 2.0, 3.0), (0.0, 1.0, 0.0, 0.0)),
                        "gone/link": ((0, 0, 0), (1, 0, 0, 0))})      # unknown: ignored
    head = scene.nodes["/world/r2d2/head"]
    np.testing.assert_allclose(head.position, (1, 2, 3))
    np.testing.assert_allclose(head.wxyz, (0, 1, 0, 0))


@pytest.mark.parametrize("shape, extent", [
    (geo.Box((0.1, 0.2, 0.3)), (0.1, 0.2, 0.3)),
    (geo.Sphere(0.25), (0.5, 0.5, 0.5)),
    (geo.Cylinder(0.1, 0.4), (0.2, 0.2, 0.4)),             # along z (URDF)
    (geo.Capsule(0.1, 0.4), (0.2, 0.2, 0.6)),              # cylinder part + two caps
])
def test_primitive_meshes_have_the_shape_extents(shape, extent):
    mesh = shape_mesh(shape)
    np.testing.assert_allclose(mesh.vertices.max(0) - mesh.vertices.min(0), extent, atol=1e-6)
    np.testing.assert_allclose((mesh.vertices.max(0) + mesh.vertices.min(0)) / 2, 0, atol=1e-6)


def test_heightfield_mesh_vertices_are_the_grid():
    heights = np.array([[0.0, 0.1, 0.2], [0.3, 0.4, 0.5]])       # (ny=2, nx=3)
    mesh = shape_mesh(geo.Heightfield(heights, size=(2.0, 1.0)))
    assert mesh.faces.shape == (2 * 1 * 2, 3)
    # z = heights[j, i] at x = -1 + i, y = -0.5 + j
    for j in range(2):
        for i in range(3):
            np.testing.assert_allclose(mesh.vertices[j * 3 + i], (-1 + i, -0.5 + j,
                                                                 heights[j, i]), atol=1e-6)


def test_a_plane_is_drawn_through_its_offset_across_its_normal():
    n = np.array([0.0, 0.6, 0.8])
    mesh = shape_mesh(geo.Plane(tuple(n), 0.5))
    np.testing.assert_allclose(mesh.vertices @ n, 0.5, atol=1e-5)


def test_a_contact_arrow_length_scales_with_the_force(scene):
    points = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.5]])
    normals = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 0.6, 0.8]])
    forces = np.array([1.0, 10.0, 40.0])
    scene.set_contact_scale(0.01)
    scene.update_contacts(points, normals, forces)
    arrows = scene.contact_arrows
    lengths = np.linalg.norm(arrows[:, 1] - arrows[:, 0], axis=1)
    np.testing.assert_allclose(lengths, 0.01 * forces)
    np.testing.assert_allclose(arrows[:, 0], points)
    np.testing.assert_allclose((arrows[:, 1] - arrows[:, 0]) / lengths[:, None], normals)
    handles = [scene.nodes["/world/contacts/points"], scene.nodes["/world/contacts/forces"]]
    assert handles[1].points.shape == (3, 2, 3)
    # no contacts: the nodes hide; the next contacts update the same nodes in place (new
    # count, new values), shown again
    scene.update_contacts(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0))
    assert not any(h.visible for h in handles) and len(scene.contact_arrows) == 0
    scene.update_contacts(points[1:] + 0.5, normals[1:], forces[1:])
    assert [scene.nodes["/world/contacts/points"], scene.nodes["/world/contacts/forces"]] \
        == handles and all(h.visible for h in handles)
    np.testing.assert_allclose(handles[0].points, points[1:] + 0.5, rtol=1e-3)  # float16
    np.testing.assert_allclose(handles[1].points[:, 1],
                               points[1:] + 0.5 + normals[1:] * 0.01 * forces[1:, None],
                               rtol=1e-6)
    assert handles[1].colors.shape in ((3,), (2, 3))
    scene.show_contacts.value = False
    assert not any(h.visible for h in handles)
    with pytest.raises(ValueError, match="differ in length"):
        scene.update_contacts(points, normals, forces[:2])
    with pytest.raises(ValueError, match="scale"):
        scene.set_contact_scale(-1.0)


def test_a_resting_box_draws_arrows_summing_to_its_weight(scene):
    """A 1 kg cube resting on a plane: the drawn arrows' lengths sum to scale * m g (statics),
    from the simulator's contacts as the Viewer passes them (normal part of each force)."""
    from sim_node.viewer.viewer import Viewer

    world = WorldModel()
    world.loadTerrain(os.path.join(DATA, "plane.urdf"))
    cube = world.loadRigidObject(os.path.join(DATA, "cube_small.urdf"))
    mass = cube.getMass().getMass()
    sim = Simulator(world)
    for _ in range(400):
        sim.simulate(0.005)
    viewer = Viewer(sim, port=0)
    viewer.publish()
    snap = viewer._snapshot
    scene.set_contact_scale(0.1)
    scene.update_contacts(snap.contact_points, snap.contact_normals, snap.contact_forces)
    lengths = np.linalg.norm(scene.contact_arrows[:, 1] - scene.contact_arrows[:, 0], axis=1)
    assert len(lengths) >= 3
    assert math.isclose(lengths.sum(), 0.1 * mass * 9.81, rel_tol=0.02)


def test_frames_toggle_shows_tf_frames_and_link_axes(scene):
    model = WorldModel().loadRobot(os.path.join(DATA, "r2d2.urdf"))
    scene.set_robot("r2d2", model)
    scene.update_frames({"odom": ((0, 0, 0), (1, 0, 0, 0)), "/base_link": ((0, 0, 1),
                                                                          (1, 0, 0, 0))})
    tf = [scene.nodes["/world/frames/odom"], scene.nodes["/world/frames/base_link"]]
    assert not any(h.visible for h in tf)
    assert not scene.nodes["/world/r2d2/head"].show_axes
    scene.show_frames.value = True
    assert all(h.visible for h in tf) and scene.nodes["/world/r2d2/head"].show_axes
    np.testing.assert_allclose(tf[1].position, (0, 0, 1))


def test_sensors_status_and_debug_items(scene):
    R = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])   # 90 deg about z
    wxyz = wxyz_of_matrix(R)
    np.testing.assert_allclose(wxyz, (math.cos(math.pi / 4), 0, 0, math.sin(math.pi / 4)))
    scene.update_sensors(cameras={"cam": ((0, 0, 1), wxyz, 1.0, 4 / 3)},
                         lidars={"scan": np.ones((5, 3))})
    assert scene.nodes["/world/sensors/cam"].fov == pytest.approx(1.0)
    assert scene.nodes["/world/sensors/scan"].points.shape == (5, 3)
    scene.update_status(1.25, 0.97, "running")
    assert "1.250 s" in scene.status_text.content and "0.97" in scene.status_text.content
    scene.add_slider(7, "gain", 0.0, 2.0, 0.5)
    assert scene.read_slider(7) == 0.5
    scene.add_debug_line(8, (0, 0, 0), (1, 0, 0), (1, 0, 0), 2.0)
    assert "/world/debug/debug_8" in scene.nodes
    scene.remove_debug(8)
    scene.remove_debug(8)                   # twice: harmless
    assert "/world/debug/debug_8" not in scene.nodes


def test_set_link_color_and_back(scene):
    model = WorldModel().loadRobot(os.path.join(DATA, "r2d2.urdf"))
    scene.set_robot("r2d2", model)
    handle = scene.nodes["/world/r2d2/head/visual/0"]
    original = tuple(handle.color)
    scene.set_link_color("r2d2/head", (1.0, 0.0, 0.0))
    assert tuple(handle.color) == (255, 0, 0)
    scene.set_link_color("r2d2/head", None)
    assert tuple(handle.color) == original


def test_sensors_update_their_nodes_in_place(scene):
    """A lidar cloud and a camera frustum drawn once keep their viser handles across updates
    (re-added nodes stall the browsers); points, pose and field of view follow the values."""
    rng = np.random.default_rng(3)
    first, second = rng.normal(size=(40, 3)), rng.normal(size=(25, 3))
    wxyz = (1.0, 0.0, 0.0, 0.0)
    scene.update_sensors(cameras={"cam": ((0, 0, 1), wxyz, 1.0, 4 / 3)},
                         lidars={"scan": first})
    cloud, frustum = scene.nodes["/world/sensors/scan"], scene.nodes["/world/sensors/cam"]
    turned = (math.cos(0.3), 0.0, 0.0, math.sin(0.3))
    scene.update_sensors(cameras={"cam": ((1, 2, 3), turned, 0.5, 16 / 9)},
                         lidars={"scan": second})
    assert scene.nodes["/world/sensors/scan"] is cloud
    assert scene.nodes["/world/sensors/cam"] is frustum
    # viser keeps point clouds in float16 (11-bit mantissa: relative error <= 2^-11)
    np.testing.assert_allclose(cloud.points, second, rtol=1e-3)
    assert cloud.colors.shape in ((3,), (25, 3))
    np.testing.assert_allclose(frustum.position, (1, 2, 3))
    np.testing.assert_allclose(frustum.wxyz, turned)
    assert frustum.fov == pytest.approx(0.5) and frustum.aspect == pytest.approx(16 / 9)
    # the same helper draws any one-colour cloud (the ROS side's scans)
    path = "/world/sensors/other"
    handle = scene.set_point_cloud(path, first)
    assert scene.set_point_cloud(path, second[:3]) is handle is scene.nodes[path]
    np.testing.assert_allclose(handle.points, second[:3], rtol=1e-3)


def test_poses_within_the_tolerance_are_not_sent_again(scene):
    """update_poses skips a frame that moved less than POSE_TOLERANCE since it was sent (the
    browsers render a frame per message), and sends any larger move."""
    from sim_node.viewer.scene import POSE_TOLERANCE

    scene.set_object("box", geo.Box((0.1, 0.1, 0.1)))
    handle = scene.nodes["/world/box"]
    identity = (1.0, 0.0, 0.0, 0.0)
    scene.update_poses({"box": ((0.0, 0.0, 1.0), identity)})
    scene.update_poses({"box": ((0.5 * POSE_TOLERANCE, 0.0, 1.0), identity)})
    np.testing.assert_array_equal(handle.position, (0.0, 0.0, 1.0))
    scene.update_poses({"box": ((3 * POSE_TOLERANCE, 0.0, 1.0), identity)})
    np.testing.assert_allclose(handle.position, (3 * POSE_TOLERANCE, 0.0, 1.0))
    # a body drawn again starts afresh: its first pose is sent whatever the last one was
    scene.set_object("box", geo.Box((0.1, 0.1, 0.1)))
    scene.update_poses({"box": ((3 * POSE_TOLERANCE, 0.0, 1.0), identity)})
    np.testing.assert_allclose(scene.nodes["/world/box"].position,
                               (3 * POSE_TOLERANCE, 0.0, 1.0))
    # tolerance 0 (a caller that filters itself, as sim_node view at rest): any change is sent
    scene.update_poses({"box": ((3.5 * POSE_TOLERANCE, 0.0, 1.0), identity)}, tolerance=0.0)
    np.testing.assert_array_equal(scene.nodes["/world/box"].position,
                                  (3.5 * POSE_TOLERANCE, 0.0, 1.0))


def _click(handle):
    """What viser runs when a page clicks the node: its registered click callbacks, with the
    event viser makes (viser 1.1.1 has no public server-side way to fire a click)."""
    from viser._scene_handles import SceneNodePointerEvent

    event = SceneNodePointerEvent(client=None, client_id=0, event="click", target=handle,
                                  ray_origin=(0.0, 0.0, 5.0), ray_direction=(0.0, 0.0, -1.0),
                                  screen_pos=(0.5, 0.5), instance_index=None, modifier=None)
    assert handle._impl.click_cb, f"{handle.name} is not clickable"
    for entry in handle._impl.click_cb:
        entry.callback(event)


def test_a_click_on_a_body_selects_it_and_shows_its_pose(scene):
    model = WorldModel().loadRobot(os.path.join(DATA, "r2d2.urdf"))
    scene.set_robot("r2d2", model)
    scene.set_object("box", geo.Box((0.1, 0.1, 0.1)))
    assert scene.selected is None and "click a body" in scene.selection_text.content
    turned = (math.cos(0.25), 0.0, 0.0, math.sin(0.25))      # 0.5 rad about z
    scene.update_poses({"r2d2/head": ((0.1, -0.2, 1.25), turned)})
    _click(scene.nodes["/world/r2d2/head/visual/0"])
    assert scene.selected == "r2d2/head"
    text = scene.selection_text.content
    assert "r2d2/head" in text and "0.100, -0.200, 1.250 m" in text
    assert f"{math.cos(0.25):.3f}, 0.000, 0.000, {math.sin(0.25):.3f}" in text
    scene.update_poses({"r2d2/head": ((0.3, -0.2, 1.25), turned)})      # follows the body
    assert "0.300, -0.200, 1.250 m" in scene.selection_text.content
    _click(scene.nodes["/world/box/visual/0"])
    assert scene.selected == "box" and "**selected** box" in scene.selection_text.content
    scene.remove("box")                               # a removed body is deselected
    assert scene.selected is None and "click a body" in scene.selection_text.content
