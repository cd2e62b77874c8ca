"""The viewer on ROS, translation only (sim_node/ros/view.py), without processes: TF trees
composed like tf2 (checked against scipy's rotations), LaserScan / PointCloud2 decoded against
closed forms, robot descriptions whose meshes this process cannot find still drawn, and a real
ViewerScene (viser on a free port) fed the messages a node or a bag played by
`sim_node replay --states` publishes: links posed where TF puts them, contact arrows, status,
camera frustums and lidar points."""
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from geometry_msgs.msg import TransformStamped
from rclpy.serialization import serialize_message
from sensor_msgs.msg import CameraInfo, LaserScan, PointCloud2, PointField
from tf2_msgs.msg import TFMessage

from sim_node.msg import Contact, Contacts, SimStatus
from sim_node.resources import default_world
from sim_node.ros import view
from sim_node.ros.view import (FrameTree, Latest, RosScene, cloud_points, description_model,
                               framing_camera, matrix_of_xyzw, scan_points)

REPO_PENDULUM = default_world().parents[1] / "robots" / "pendulum" / "pendulum.urdf"


def _transform(parent, child, xyz, xyzw, stamp=0.0):
    t = TransformStamped()
    t.header.frame_id, t.child_frame_id = parent, child
    t.header.stamp.sec, t.header.stamp.nanosec = int(stamp), int(round(stamp % 1 * 1e9))
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = \
        (float(v) for v in xyz)
    r = t.transform.rotation
    r.x, r.y, r.z, r.w = (float(v) for v in xyzw)
    return t


quaternions = st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(
    lambda q: np.linalg.norm(q) > 0.1)
vectors = st.lists(st.floats(-10, 10), min_size=3, max_size=3)


@settings(max_examples=100, deadline=None)
@given(q=quaternions)
def test_quaternion_to_matrix_matches_scipy(q):
    np.testing.assert_allclose(matrix_of_xyzw(q), Rotation.from_quat(q).as_matrix(), atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(q1=quaternions, p1=vectors, q2=quaternions, p2=vectors)
def test_frame_tree_composes_a_chain_as_tf2(q1, p1, q2, p2):
    q1, q2 = q1 / np.linalg.norm(q1), q2 / np.linalg.norm(q2)     # tf2 takes unit ones
    tree = FrameTree()
    tree.update(TFMessage(transforms=[_transform("world", "a", p1, q1)]), static=True)
    tree.update(TFMessage(transforms=[_transform("a", "b", p2, q2)]), static=False)
    poses = tree.world_poses()
    R1, R2 = Rotation.from_quat(q1), Rotation.from_quat(q2)
    R, p = poses["b"]
    np.testing.assert_allclose(R, (R1 * R2).as_matrix(), atol=1e-9)
    np.testing.assert_allclose(p, R1.apply(p2) + np.asarray(p1), atol=1e-9)


def test_tf_bytes_read_as_rclpy_deserializes_them():
    from rclpy.serialization import deserialize_message

    from sim_node.ros.cdr import TFMessageCDR

    rng = np.random.default_rng(5)
    message = TFMessage(transforms=[
        _transform(parent, child, rng.normal(size=3), rng.normal(size=4), 12.345)
        for parent, child in (("world", "a"), ("a", "bb/ccc"), ("", "x"))])
    for data in (serialize_message(message),
                 TFMessageCDR([("world", "a"), ("a", "long/frame_name")]).encode(
                     1.5, rng.normal(size=(2, 3)), rng.normal(size=(2, 4)))):
        reference = view.tf_entries(deserialize_message(data, TFMessage))
        assert view.tf_entries(data) == reference


def test_frame_tree_leaves_out_frames_off_the_world_and_moving_overrides_static():
    tree = FrameTree()
    tree.update(TFMessage(transforms=[_transform("world", "a", (1, 0, 0), (0, 0, 0, 1)),
                                      _transform("elsewhere", "c", (1, 0, 0), (0, 0, 0, 1)),
                                      _transform("c", "d", (1, 0, 0), (0, 0, 0, 1)),
                                      _transform("loop1", "loop2", (0, 0, 0), (0, 0, 0, 1)),
                                      _transform("loop2", "loop1", (0, 0, 0), (0, 0, 0, 1))]),
                static=True)
    tree.update(TFMessage(transforms=[_transform("world", "a", (0, 2, 0), (0, 0, 0, 1))]),
                static=False)
    poses = tree.world_poses()
    assert set(poses) == {"world", "a"}
    np.testing.assert_allclose(poses["a"][1], [0, 2, 0])


def test_laser_scan_returns_are_points_on_their_rays():
    scan = LaserScan(angle_min=-math.pi / 2, angle_increment=math.pi / 2, range_min=0.1,
                     range_max=10.0, ranges=[1.0, 2.0, math.inf, 0.05, math.nan, 3.0])
    # angles -90, 0, 90 (inf: no return), 180 (below range_min), 270 (NaN), 360 deg
    np.testing.assert_allclose(scan_points(scan), [[0, -1, 0], [2, 0, 0], [3, 0, 0]],
                               atol=1e-12)


def _cloud(points: np.ndarray, with_ring=True) -> PointCloud2:
    fields = [PointField(name=n, offset=4 * i, datatype=PointField.FLOAT32, count=1)
              for i, n in enumerate("xyz")]
    dtype = [("x", "<f4"), ("y", "<f4"), ("z", "<f4")]
    if with_ring:
        fields.append(PointField(name="ring", offset=12, datatype=PointField.UINT16, count=1))
        dtype.append(("ring", "<u2"))
    data = np.zeros(len(points), dtype=np.dtype(dtype))
    data["x"], data["y"], data["z"] = points.T
    return PointCloud2(height=1, width=len(points), fields=fields, is_bigendian=False,
                       point_step=data.dtype.itemsize, row_step=data.nbytes,
                       data=data.tobytes(), is_dense=False)


def test_point_cloud_xyz_decoded_nan_dropped_and_thinned():
    rng = np.random.default_rng(3)
    points = rng.normal(size=(100, 3)).astype(np.float32)
    points[7] = np.nan
    decoded = cloud_points(_cloud(points))
    np.testing.assert_array_equal(decoded, np.delete(points, 7, axis=0))
    many = rng.normal(size=(3 * view.MAX_CLOUD_POINTS + 5, 3)).astype(np.float32)
    thinned = cloud_points(_cloud(many, with_ring=False))
    assert len(thinned) == view.MAX_CLOUD_POINTS
    np.testing.assert_array_equal(thinned, many[::3][:view.MAX_CLOUD_POINTS])
    assert cloud_points(PointCloud2()).shape == (0, 3)


def test_a_description_with_meshes_this_process_cannot_find_is_drawn_without_them():
    # the default world's arm: robot_description as the node publishes it, with mesh paths
    # relative to the URDF file (meshes/link1.dae), which a separate process cannot resolve
    import sim_node

    world = sim_node.WorldModel()
    world.readFile(default_world())
    arm = world.robot("arm")
    model, left_out = description_model(arm.urdf.xml)
    assert [link.getName() for link in model.links()] == \
        [link.getName() for link in arm.links()]
    relative = set(re.findall(r'filename="(meshes/[^"]+)"', arm.urdf.xml))
    assert relative and all(any(path in problem for problem in left_out) for path in relative)
    # everything else is drawn: every collision element, the visuals named by package://
    assert sum(len(link.getCollisionGeometry()) for link in model.links()) == \
        sum(len(link.getCollisionGeometry()) for link in arm.links()) \
        - sum(1 for p in left_out if "<collision>" in p)
    assert sum(len(link.getVisualGeometry()) for link in model.links()) > 0


def test_framing_camera_looks_at_the_middle_from_pybullets_default_direction():
    eye, target = framing_camera([[0, 0, 0], [2, 0, 1]])
    np.testing.assert_allclose(target, [1, 0, 0.5])
    d = np.subtract(target, eye)
    assert math.degrees(math.asin(d[2] / np.linalg.norm(d))) == pytest.approx(-35)


# -- a real scene -------------------------------------------------------------------------------
@pytest.fixture
def scene():
    import viser

    from sim_node.viewer.scene import ViewerScene

    server = viser.ViserServer(host="127.0.0.1", port=0, verbose=False)
    try:
        yield ViewerScene(server)
    finally:
        view.stop_server(server)


def _pendulum_stream(angle: float, t: float) -> tuple:
    """What sim_node publishes for the pendulum world in namespace 'pendulum' (and what a bag
    played by `sim_node replay --states` replays): robot_description, /tf_static (world ->
    pendulum/world is the URDF root 'world' welded at the origin), /tf (the joint at 1 m)."""
    static = TFMessage(transforms=[_transform("world", "pendulum/world", (0, 0, 0),
                                              (0, 0, 0, 1), t)])
    q = Rotation.from_rotvec([0, angle, 0]).as_quat()
    moving = TFMessage(transforms=[_transform("pendulum/world", "pendulum/link1", (0, 0, 1),
                                              q, t)])
    return static, moving


def test_a_replayed_stream_poses_the_robot_and_shows_status(scene):
    latest = Latest()
    ros_scene = RosScene(scene, latest)
    latest.descriptions["/pendulum/robot_description"] = REPO_PENDULUM.read_text()
    static, moving = _pendulum_stream(0.7, 1.25)
    latest.tf_static.append(serialize_message(static))        # raw, as subscribed
    latest.tf.append(moving)                                    # objects, as tapped
    from rosgraph_msgs.msg import Clock
    clock = Clock()
    clock.clock.sec, clock.clock.nanosec = 1, 250_000_000
    latest.clock = serialize_message(clock)
    status = SimStatus(real_time_factor=0.5, paused=True, engine_status_string="normal")
    status.sim_time.sec, status.sim_time.nanosec = 1, 0
    latest.status = status
    ros_scene.draw()
    # the robot's links and visuals are in the scene under its namespace
    for part in ("pendulum/link1", "pendulum/link1/visual/0", "pendulum/link1/visual/1",
                 "pendulum/link1/collision/0"):
        assert f"/world/{part}" in scene.nodes
    link = scene.nodes["/world/pendulum/link1"]
    np.testing.assert_allclose(link.position, [0, 0, 1], atol=1e-6)
    expected = Rotation.from_rotvec([0, 0.7, 0]).as_quat()     # xyzw; viser: wxyz
    np.testing.assert_allclose(np.abs(np.dot(link.wxyz, np.roll(expected, 1))), 1.0,
                               atol=1e-6)
    # the URDF colour of the visuals
    assert tuple(scene.nodes["/world/pendulum/link1/visual/1"].color) == (230, 115, 26)
    assert "**sim time** 1.250 s" in scene.status_text.content
    assert "**RTF** 0.50" in scene.status_text.content
    assert "paused" in scene.status_text.content
    assert scene.paused            # the node's word: the Pause button reads "Resume"
    # a later pose moves the link; an unchanged one sends nothing new
    _, moving = _pendulum_stream(-0.3, 1.5)
    latest.tf.append(moving)
    ros_scene.draw()
    expected = Rotation.from_rotvec([0, -0.3, 0]).as_quat()
    np.testing.assert_allclose(np.abs(np.dot(link.wxyz, np.roll(expected, 1))), 1.0,
                               atol=1e-6)
    # while TF streams, a move below the tolerance is not sent; at the first draw without new
    # TF (paused, the bag's end) the exact pose is (the page must show where the link rests)
    sent = np.array(link.wxyz)
    _, moving = _pendulum_stream(-0.3 + 2e-5, 1.75)
    latest.tf.append(moving)
    ros_scene.draw()
    np.testing.assert_array_equal(link.wxyz, sent)
    ros_scene.draw()
    exact = np.roll(Rotation.from_rotvec([0, -0.3 + 2e-5, 0]).as_quat(), 1)
    assert np.abs(np.dot(link.wxyz, exact)) == pytest.approx(1.0, abs=1e-12)
    assert np.abs(link.wxyz - sent).max() > 1e-6


def test_contacts_draw_arrows_of_the_normal_force(scene):
    latest = Latest()
    ros_scene = RosScene(scene, latest)
    message = Contacts()
    for position, normal, force in (((0., 0., 0.), (0., 0., 1.), (3., 0., 20.)),
                                    ((1., 0., 0.), (1., 0., 0.), (-5., 0., 0.))):
        c = Contact()
        c.position.x, c.position.y, c.position.z = position
        c.normal.x, c.normal.y, c.normal.z = normal
        c.force.x, c.force.y, c.force.z = force
        message.contacts.append(c)
    latest.contacts = serialize_message(message)
    ros_scene.draw()
    s = scene.contact_scale
    # the arrow: from the point along the normal, |f . n| long (20 N and 5 N)
    np.testing.assert_allclose(scene.contact_arrows,
                               [[[0, 0, 0], [0, 0, 20 * s]], [[1, 0, 0], [1 + 5 * s, 0, 0]]])


def test_sensors_draw_a_frustum_and_lidar_points_in_the_world(scene):
    latest = Latest()
    ros_scene = RosScene(scene, latest)
    # a sensor frame 1 m up, turned 90 degrees about z
    q = Rotation.from_rotvec([0, 0, math.pi / 2]).as_quat()
    latest.tf_static.append(TFMessage(transforms=[_transform("world", "sensor", (0, 0, 1), q)]))
    info = CameraInfo(width=640, height=480)
    info.header.frame_id = "sensor"
    info.k = [500.0, 0, 320, 0, 500.0, 240, 0, 0, 1]
    scan = LaserScan(angle_min=0.0, angle_increment=0.0, range_min=0.1, range_max=10.0,
                     ranges=[2.0])
    scan.header.frame_id = "sensor"
    latest.sensors["/cam/camera_info"] = (view.CAMERA_INFO_TYPE, info, CameraInfo)
    latest.sensors["/scan"] = (view.SCAN_TYPE, serialize_message(scan), LaserScan)
    ros_scene.draw()
    frustum = scene.nodes["/world/sensors/cam_camera_info"]
    assert frustum.fov == pytest.approx(2 * math.atan(240 / 500))
    assert frustum.aspect == pytest.approx(640 / 480)
    np.testing.assert_allclose(frustum.position, [0, 0, 1])
    # the return 2 m along the sensor's x, which points along the world's y
    np.testing.assert_allclose(scene.nodes["/world/sensors/scan"].points, [[0, 2, 1]],
                               atol=1e-6)


def test_the_node_entities_are_drawn_and_removed_as_the_world_changes(scene):
    import sim_node

    world = sim_node.WorldModel()
    world.readFile(default_world())
    latest = Latest()
    ros_scene = RosScene(scene, latest)
    entities = tuple(
        [("robot", world.robot(i).getName(), world.robot(i), f"{world.robot(i).getName()}/")
         for i in range(world.numRobots())]
        + [("object", world.rigidObject(i).getName(), world.rigidObject(i), "")
           for i in range(world.numRigidObjects())]
        + [("terrain", world.terrain(i).getName(), world.terrain(i), "")
           for i in range(world.numTerrains())])
    latest.entities = entities
    ros_scene.draw()
    for robot in (world.robot(i) for i in range(world.numRobots())):
        for link in robot.links():
            assert f"/world/{robot.getName()}/{link.getName()}" in scene.nodes
    assert "/world/red_box" in scene.nodes and "/world/table" in scene.nodes
    # the red box is posed by its TF frame (named as the object)
    latest.tf.append(TFMessage(transforms=[_transform("world", "red_box", (0.1, 0.2, 0.8),
                                                      (0, 0, 0, 1))]))
    ros_scene.draw()
    np.testing.assert_allclose(scene.nodes["/world/red_box"].position, [0.1, 0.2, 0.8])
    # a deleted object leaves the scene
    latest.entities = tuple(e for e in entities if e[1] != "red_box")
    ros_scene.draw()
    assert not any(path.startswith("/world/red_box") for path in scene.nodes)
    assert "/world/table" in scene.nodes


# -- hostile input ----------------------------------------------------------------------------
finite_or_not = st.one_of(st.floats(-10, 10), st.sampled_from([math.nan, math.inf, -math.inf,
                                                               1e300, 0.0]))


@settings(max_examples=100, deadline=None)
@given(xyz=st.lists(finite_or_not, min_size=3, max_size=3),
       xyzw=st.lists(finite_or_not, min_size=4, max_size=4))
def test_a_transform_is_taken_only_when_finite_bounded_and_unit_and_nothing_drawn_is_nan(
        xyz, xyzw):
    tree = FrameTree()
    ignored = tree.update(TFMessage(transforms=[_transform("world", "a", xyz, xyzw)]),
                          static=False)
    q = np.asarray(xyzw)
    valid = bool(np.all(np.isfinite(xyz)) and np.all(np.isfinite(q))
                 and np.abs(xyz).max() <= view.MAX_COORDINATE and abs(q @ q - 1) <= 0.01)
    assert (ignored == []) == valid
    assert ("a" in tree.world_poses()) == valid
    for R, p in tree.world_poses().values():
        assert np.all(np.isfinite(R)) and np.all(np.isfinite(p))
    if not valid:
        assert "frame 'a'" in ignored[0]


def test_a_nan_transform_on_tf_is_not_drawn_and_named_once(scene):
    latest, logged = Latest(), []
    ros_scene = RosScene(scene, latest, log=logged.append)
    latest.descriptions["/pendulum/robot_description"] = REPO_PENDULUM.read_text()
    static, moving = _pendulum_stream(0.7, 1.0)
    latest.tf_static.append(static)
    latest.tf.append(moving)
    ros_scene.draw()
    link = scene.nodes["/world/pendulum/link1"]
    before = (np.array(link.position), np.array(link.wxyz))
    for _ in range(3):
        latest.tf.append(TFMessage(transforms=[_transform(
            "pendulum/world", "pendulum/link1", (math.nan, 0, 1), (0, 0, 0, 1))]))
        ros_scene.draw()
    np.testing.assert_array_equal(link.position, before[0])     # the last good pose stays
    np.testing.assert_array_equal(link.wxyz, before[1])
    assert len([m for m in logged if "/tf:" in m and "pendulum/link1" in m]) == 1, logged


def test_a_tf_chain_longer_than_the_recursion_limit_is_composed():
    import sys

    n = sys.getrecursionlimit() + 500
    tree = FrameTree()
    tree.update(TFMessage(transforms=[_transform("world" if i == 0 else f"f{i - 1}", f"f{i}",
                                                 (0.001, 0, 0), (0, 0, 0, 1))
                                      for i in range(n)]), static=True)
    np.testing.assert_allclose(tree.world_poses()[f"f{n - 1}"][1], [0.001 * n, 0, 0])


def test_malformed_tf_bytes_are_a_value_error():
    data = serialize_message(TFMessage(transforms=[_transform("world", "a", (1, 2, 3),
                                                              (0, 0, 0, 1))]))
    for bad in (data[:len(data) // 2], data[:4] + b"\xff" * 40, b"\x00\x01"):
        with pytest.raises(ValueError, match="TFMessage"):
            view.tf_entries(bad)


@pytest.mark.parametrize("xml, problem", [
    ("<robot name='x'><link name='a'>", "cannot draw this robot"),
    ("/etc/passwd", "not URDF XML"),
    ("<robot name='x'>" + "<link name='l'/>" * (view.MAX_DESCRIPTION_LINKS + 1) + "</robot>",
     "links, more than"),
    ("<robot name='x'><link name='a'/><!--" + "x" * view.MAX_DESCRIPTION_BYTES + "--></robot>",
     "bytes, more than"),
])
def test_a_hostile_robot_description_is_named_and_not_drawn(scene, xml, problem):
    latest, logged = Latest(), []
    ros_scene = RosScene(scene, latest, log=logged.append)
    latest.descriptions["/evil/robot_description"] = xml
    ros_scene.draw()
    assert not any(path.startswith("/world/evil") for path in scene.nodes)
    assert any("/evil/robot_description" in m and problem in m for m in logged), logged


def test_a_description_does_not_expand_this_machines_environment():
    from sim_node.model.errors import ModelLoadError

    with pytest.raises(ModelLoadError, match=r"substitution arg .* not expanded"):
        description_model('<robot name="x"><link name="$(env HOME)"/></robot>')


def test_nan_contacts_are_left_out_and_named(scene):
    latest, logged = Latest(), []
    ros_scene = RosScene(scene, latest, log=logged.append)
    message = Contacts()
    for position in ((0., 0., 0.), (math.nan, 0., 0.)):
        c = Contact()
        c.position.x, c.position.y, c.position.z = position
        c.normal.z, c.force.z = 1.0, 10.0
        message.contacts.append(c)
    latest.contacts = message
    ros_scene.draw()
    assert scene.contact_arrows.shape == (1, 2, 3) and np.all(np.isfinite(scene.contact_arrows))
    assert any("contacts" in m and "1 with a non-finite" in m for m in logged)


@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.sampled_from([math.nan, math.inf, -1e30, 0.5, -2.0, 1e7]),
                       min_size=1, max_size=60))
def test_cloud_points_and_scans_never_return_nan(values):
    points = np.resize(np.asarray(values, dtype=np.float32), (len(values), 3))
    assert np.all(np.isfinite(cloud_points(_cloud(points))))
    scan = LaserScan(angle_min=float(values[0]), angle_increment=0.01, range_min=0.0,
                     range_max=math.inf, ranges=[float(v) for v in values])
    assert np.all(np.isfinite(scan_points(scan)))


def test_a_cloud_of_ten_million_points_is_drawn_thinned():
    many = np.zeros((10_000_000, 3), dtype=np.float32)
    many[:, 0] = np.arange(10_000_000, dtype=np.float32) * 1e-6
    drawn = cloud_points(_cloud(many, with_ring=False))
    assert len(drawn) == view.MAX_CLOUD_POINTS
    np.testing.assert_array_equal(drawn, many[::2000][:view.MAX_CLOUD_POINTS])


def test_a_cloud_shorter_than_it_claims_is_a_value_error_naming_it():
    cloud = _cloud(np.zeros((10, 3), dtype=np.float32))
    cloud.width = 1000
    with pytest.raises(ValueError, match="point cloud: .* bytes of data for 1000x1 points"):
        cloud_points(cloud)
