"""camera: the depth image of a wall and the ground against the closed form (each pixel's ray
through K meets the planes), CameraInfo K that projects a known point onto the pixel where the
depth and segmentation images see it, the cube's palette colour there, the organised cloud on
the known surfaces, the optical frame on /tf_static, sim-time stamps of the capture step, the
skip rule of a frame still rendering, seeded depth noise, and hostile configs."""
from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from plugin_helpers import DT, FakeRos, add_plugin, run, simulator, stamp
from sensor_msgs.msg import CameraInfo, Image, PointCloud2
from sensor_scene import MAST_HEIGHT, MAST_X, MAST_Y, WALL_X, write_scene
from transforms3d.quaternions import quat2mat

from sim_node.plugins.camera import CameraSensor
from sim_node.sim.camera import PALETTE

W, H = 160, 120
CUBE = (2.0, MAST_Y + 0.3, 0.4)         # x, y, size: its front face x = 1.8 faces the camera


def _camera(tmp_path, yaw=0.0, cube=None, **config):
    ros = FakeRos()
    sim = simulator(write_scene(tmp_path, "", yaw=yaw, cube=cube), ros)
    camera = add_plugin(sim, CameraSensor, 0, {"link": "sensor", "width": W, "height": H,
                                               **config}, ros)
    return sim, ros, camera


def _capture(sim, camera, steps=1):
    for _ in range(steps):
        sim.simulate(DT)
        camera.wait()


def _image(message) -> np.ndarray:
    dtype = {"rgb8": np.uint8, "32FC1": np.float32, "32SC1": np.int32}[message.encoding]
    pixels = np.frombuffer(bytes(message.data), dtype=dtype)
    assert message.step == message.width * pixels.itemsize * (3 if message.encoding == "rgb8"
                                                               else 1)
    return pixels.reshape(message.height, message.width, -1).squeeze()


def _optical_rotation(yaw):
    # R_WO = R_z(yaw) R_LO (the mast at pan 0)
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) @ np.array([[0, 0, 1], [-1, 0, 0],
                                                                     [0, -1, 0]])


def _expected_depth(K, yaw, width=W, height=H, lift=0.0):
    # each pixel centre's ray r = ((u - cx) / fx, (v - cy) / fy, 1) in the optical frame meets
    # the wall x = WALL_X and the ground z = 0 at depths t (z-depth: r's z is 1); the nearer
    u = (np.arange(width) - K[0, 2]) / K[0, 0]
    v = (np.arange(height) - K[1, 2]) / K[1, 1]
    r = np.stack(np.broadcast_arrays(u[None, :], v[:, None], 1.0), axis=-1)
    d = r @ _optical_rotation(yaw).T
    with np.errstate(divide="ignore"):
        t_wall = np.where(d[..., 0] > 0, (WALL_X - MAST_X) / d[..., 0], np.inf)
        t_ground = np.where(d[..., 2] < 0, -(MAST_HEIGHT + lift) / d[..., 2], np.inf)
    return np.minimum(t_wall, t_ground)


@pytest.mark.parametrize("yaw", [0.0, 0.35])
def test_the_depth_image_of_a_wall_and_the_ground_has_the_closed_form(tmp_path, yaw):
    sim, ros, camera = _camera(tmp_path, yaw=yaw)
    _capture(sim, camera)
    [depth] = ros.messages("mast/camera/depth/image_raw")
    [info] = ros.messages("mast/camera/camera_info")
    assert ros.types["mast/camera/depth/image_raw"] is Image
    assert (depth.encoding, depth.width, depth.height) == ("32FC1", W, H)
    assert depth.header.frame_id == info.header.frame_id == "mast/sensor_optical"
    K = np.array(info.k).reshape(3, 3)
    expected = _expected_depth(K, yaw)
    pixels = _image(depth)
    # float32 depth: rtol 1e-4 (pixels on the wall / ground seam too: each pixel's centre
    # decides which plane it sees)
    np.testing.assert_allclose(pixels, expected, rtol=1e-4)


def test_a_pose_on_the_link_moves_the_camera_and_its_optical_frame(tmp_path):
    # pose: 0.2 m up, turned 0.35 rad about z (yaw): the depth of a camera that high on a mast
    # turned that much; /tf_static holds the pose composed with the optical rotation
    sim, ros, camera = _camera(tmp_path, pose=[0.0, 0.0, 0.2, 0.0, 0.0, 0.35])
    _capture(sim, camera)
    K = np.array(ros.messages("mast/camera/camera_info")[0].k).reshape(3, 3)
    depth = _image(ros.messages("mast/camera/depth/image_raw")[0])
    np.testing.assert_allclose(depth, _expected_depth(K, 0.35, lift=0.2), rtol=1e-4)
    [transform] = ros.messages("/tf_static")[0].transforms
    q, t = transform.transform.rotation, transform.transform.translation
    np.testing.assert_allclose(quat2mat([q.w, q.x, q.y, q.z]), _optical_rotation(0.35),
                               atol=1e-12)
    np.testing.assert_allclose([t.x, t.y, t.z], [0.0, 0.0, 0.2], atol=1e-15)


def test_camera_info_is_an_ideal_pinhole_of_the_configured_fov(tmp_path):
    sim, ros, camera = _camera(tmp_path, horizontal_fov=1.2)
    _capture(sim, camera)
    [info] = ros.messages("mast/camera/camera_info")
    assert ros.types["mast/camera/camera_info"] is CameraInfo
    f = (W / 2) / math.tan(0.6)
    K = [[f, 0, (W - 1) / 2], [0, f, (H - 1) / 2], [0, 0, 1]]
    np.testing.assert_allclose(np.array(info.k).reshape(3, 3), K, rtol=1e-12)
    np.testing.assert_allclose(np.array(info.p).reshape(3, 4), np.hstack([K, np.zeros((3, 1))]),
                               rtol=1e-12)
    assert (info.width, info.height, info.distortion_model) == (W, H, "plumb_bob")
    assert list(info.d) == [0.0] * 5 and list(info.r) == [1, 0, 0, 0, 1, 0, 0, 0, 1]
    assert stamp(info) == 0.0


def test_a_known_point_projects_through_K_onto_the_pixel_that_sees_it(tmp_path):
    # the centre of the cube's front face, x = 1.8, projected with K: the depth image reads
    # its z-depth there, the segmentation the cube's ID, the rgb its colour (the camera's
    # palette colour of its ID, uniformly shaded: one face, one light)
    sim, ros, camera = _camera(tmp_path, cube=CUBE, segmentation=True)
    _capture(sim, camera)
    K = np.array(ros.messages("mast/camera/camera_info")[0].k).reshape(3, 3)
    x, y, size = CUBE
    face = np.array([x - size / 2, y, size / 2])
    p = _optical_rotation(0.0).T @ (face - [MAST_X, MAST_Y, MAST_HEIGHT])
    u, v = K[0, 0] * p[0] / p[2] + K[0, 2], K[1, 1] * p[1] / p[2] + K[1, 2]
    col, row = int(round(u)), int(round(v))
    depth = _image(ros.messages("mast/camera/depth/image_raw")[0])
    assert depth[row, col] == pytest.approx(p[2], rel=1e-4)
    cube_id = sim.getWorld().rigidObject("cube").getID()
    segmentation = _image(ros.messages("mast/camera/segmentation/image_raw")[0])
    assert segmentation[row, col] == cube_id            # link -1: entity + (0 << 24)
    wall_id = sim.getWorld().terrain("wall").getID()
    assert segmentation[0, 0] == wall_id                 # the top left corner sees the wall
    rgb = _image(ros.messages("mast/camera/image_raw")[0]).astype(int)
    colour = np.array(PALETTE[cube_id % len(PALETTE)]) * 255
    shade = rgb[row, col] @ colour / (colour @ colour)
    assert 0.3 < shade <= 1.0
    np.testing.assert_allclose(rgb[row, col], shade * colour, atol=1.5)
    assert rgb.std() > 5.0                               # not a blank image
    # the cube's silhouette: its face spans (size / 2) fx / z pixels either side
    half = size / 2 * K[0, 0] / p[2]
    assert np.all(segmentation[row, int(round(u - half)) + 2:int(round(u + half)) - 1]
                  == cube_id)
    assert segmentation[row, int(round(u - half)) - 2] != cube_id


def test_the_organised_cloud_lies_on_the_wall_and_the_ground(tmp_path):
    sim, ros, camera = _camera(tmp_path, yaw=0.2, points=True)
    _capture(sim, camera)
    [cloud] = ros.messages("mast/camera/points")
    assert ros.types["mast/camera/points"] is PointCloud2
    assert (cloud.height, cloud.width, cloud.point_step, cloud.is_dense) == (H, W, 12, False)
    xyz = np.frombuffer(bytes(cloud.data), dtype="<f4").reshape(H, W, 3).astype(float)
    world = xyz @ _optical_rotation(0.2).T + [MAST_X, MAST_Y, MAST_HEIGHT]
    scale = np.maximum(1.0, np.linalg.norm(xyz, axis=-1))
    assert np.all((np.abs(world[..., 0] - WALL_X) < 1e-4 * scale)
                  | (np.abs(world[..., 2]) < 1e-4 * scale))
    K = np.array(ros.messages("mast/camera/camera_info")[0].k).reshape(3, 3)
    np.testing.assert_allclose(xyz[..., 2], _expected_depth(K, 0.2), rtol=1e-4)


def test_the_optical_frame_is_published_on_tf_static(tmp_path):
    sim, ros, camera = _camera(tmp_path)
    [message] = ros.messages("/tf_static")
    [transform] = message.transforms
    assert (transform.header.frame_id, transform.child_frame_id) == ("mast/sensor",
                                                                      "mast/sensor_optical")
    q = transform.transform.rotation
    R = quat2mat([q.w, q.x, q.y, q.z])
    # optical z (forward) = link x, optical x (right) = link -y, optical y (down) = link -z
    np.testing.assert_allclose(R, [[0, 0, 1], [-1, 0, 0], [0, -1, 0]], atol=1e-12)
    t = transform.transform.translation
    assert (t.x, t.y, t.z) == (0.0, 0.0, 0.0)
    # a frame_id of the user's: no transform published
    ros2 = FakeRos()
    sim2 = simulator(write_scene(tmp_path, ""), ros2)
    add_plugin(sim2, CameraSensor, 0, {"link": "sensor", "width": W, "height": H,
                                       "frame_id": "my_optical"}, ros2)
    assert "/tf_static" not in ros2.published


def test_frames_are_stamped_with_the_capture_step_on_the_rate_grid(tmp_path):
    sim, ros, camera = _camera(tmp_path, rate=20.0, name="front")
    _capture(sim, camera, steps=160)
    stamps = [stamp(m) for m in ros.messages("mast/front/image_raw")]
    np.testing.assert_allclose(stamps, np.arange(4) * 0.05, atol=1e-9)
    for topic in ("mast/front/depth/image_raw", "mast/front/camera_info"):
        assert [stamp(m) for m in ros.messages(topic)] == stamps
    assert (camera.frames, camera.skipped) == (4, 0)


def test_a_frame_due_while_one_renders_waits_for_the_worker_and_the_grid_goes_on(tmp_path):
    sim, ros, camera = _camera(tmp_path, rate=100.0)
    release = threading.Event()
    render = camera._camera.render

    def slow_render(*args, **kwargs):
        release.wait(30.0)
        return render(*args, **kwargs)
    camera._camera.render = slow_render
    run(sim, 0.035)                 # due at 0, 0.01, 0.02, 0.03: the first one still renders
    assert (camera.skipped, camera.frames) == (0, 0)
    assert sim.getTime() == pytest.approx(0.035)       # the physics went on meanwhile
    release.set()
    camera.wait()
    assert camera.frames == 1
    # the frame due at 0.01 is taken at the first update finding the worker free (0.035);
    # 0.02 and 0.03 passed meanwhile get none; the grid goes on at 0.04
    _capture(sim, camera, steps=10)
    assert (camera.frames, camera.skipped) == (3, 2)
    np.testing.assert_allclose([stamp(m) for m in ros.messages("mast/camera/image_raw")],
                               [0.0, 0.035, 0.04], atol=1e-9)


def test_the_camera_is_polled_every_step_and_refuses_a_period(tmp_path):
    with pytest.raises(ValueError, match="rate"):
        _camera(tmp_path, period=0.05)
    sim, ros, camera = _camera(tmp_path, rate=20.0)
    assert camera.config.period == 0.0


def test_depth_noise_has_the_configured_std_and_repeats_with_the_seed(tmp_path):
    sigma = 0.01
    sim, ros, camera = _camera(tmp_path, noise=sigma, seed=5, rate=0.0)
    _capture(sim, camera, steps=3)
    K = np.array(ros.messages("mast/camera/camera_info")[0].k).reshape(3, 3)
    frames = np.array([_image(m) for m in ros.messages("mast/camera/depth/image_raw")])
    error = (frames - _expected_depth(K, 0.0)).ravel()
    n = error.size
    assert abs(error.mean()) < 5 * sigma / math.sqrt(n)
    assert error.std(ddof=1) == pytest.approx(sigma, abs=5 * sigma / math.sqrt(2 * (n - 1)))
    assert not np.array_equal(frames[0], frames[1])     # a new draw per frame
    again = _camera(tmp_path, noise=sigma, seed=5, rate=0.0)
    _capture(again[0], again[2], steps=2)
    np.testing.assert_array_equal(_image(again[1].messages("mast/camera/depth/image_raw")[1]),
                                  frames[1])


def test_the_default_image_is_640_by_480(tmp_path):
    ros = FakeRos()
    sim = simulator(write_scene(tmp_path, ""), ros)
    camera = add_plugin(sim, CameraSensor, 0, {"link": "sensor"}, ros)
    _capture(sim, camera)
    [rgb] = ros.messages("mast/camera/image_raw")
    assert (rgb.width, rgb.height, rgb.encoding, rgb.step) == (640, 480, "rgb8", 1920)
    assert "mast/camera/segmentation/image_raw" not in ros.published
    assert "mast/camera/points" not in ros.published


@pytest.mark.parametrize("config, problem", [
    ("{}", "needs config key 'link'"),
    ("{link: sensor, width: 0}", "width must be >= 1"),
    ("{link: sensor, height: -3}", "height must be >= 1"),
    ("{link: sensor, width: 100000, height: 100000}", "width x height must be at most"),
    ("{link: sensor, horizontal_fov: .nan}", "config key 'horizontal_fov' of plugin "
     "CameraSensor must be float"),
    ("{link: sensor, horizontal_fov: 3.2}", "horizontal_fov must be in (0, pi)"),
    ("{link: sensor, near: 1.0, far: 0.5}", "0 < near < far"),
    ("{link: sensor, noise: -1.0}", "noise must be a standard deviation >= 0"),
    ("{link: sensor, name: '/'}", "name must be a non-empty topic name"),
    ("{link: sensor, depth: 1}", "config key 'depth' of plugin CameraSensor must be bool"),
    ("{link: sensor, pose: [0.0, 1.0]}", "pose needs 6 values"),
])
def test_bad_config_is_rejected_naming_the_key(tmp_path, config, problem):
    path = write_scene(tmp_path, f"      - {{name: camera, config: {config}}}\n")
    with pytest.raises(ValueError) as error:
        simulator(path)
    assert problem in str(error.value)


def test_an_unknown_link_disables_the_camera_naming_the_links(tmp_path):
    sim = simulator(write_scene(tmp_path, "      - {name: camera, config: {link: nope}}\n"))
    [camera] = sim.getPlugins()
    assert not camera.enabled and "nope" in camera.error and "sensor" in camera.error
    run(sim, 0.01)
    assert sim.getTime() == pytest.approx(0.01)


def test_without_ros_it_renders_nothing(tmp_path):
    sim = simulator(write_scene(tmp_path, ""))
    camera = add_plugin(sim, CameraSensor, 0, {"link": "sensor", "width": W, "height": H})

    def no_render(*args, **kwargs):
        raise AssertionError("rendered without a publisher")
    camera._camera.render = no_render
    run(sim, 0.1)
    assert (camera.frames, camera.skipped) == (0, 0) and camera.enabled
