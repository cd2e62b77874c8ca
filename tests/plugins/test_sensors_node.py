"""The lidar and camera inside the node, over real DDS: the sensor mast before the wall (a
scene of sensor_scene.py), a ROS subscriber in this process. The scan's ranges and the depth
image arrive with their closed-form values, stamped with sim time on their rate grids; the
optical frame arrives on /tf_static; every depth image has its CameraInfo of the same stamp."""
from __future__ import annotations

import numpy as np
import pytest
from node_harness import DEEP, NO_PLUGINS, ns, start_node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image, LaserScan
from sensor_scene import write_scene
from test_camera_plugin import _expected_depth, _image
from test_lidar import _wall_ranges
from tf2_msgs.msg import TFMessage

pytestmark = [pytest.mark.ros,
              pytest.mark.filterwarnings("ignore:module 'sre_:DeprecationWarning")]

PLUGINS = """      - name: lidar
        config: {link: sensor, rate: 20.0}
      - name: camera
        config: {link: sensor, rate: 10.0, width: 80, height: 60}
"""
# as tf2's static listener: every publisher's latched message (the node's and the camera's)
STATIC = QoSProfile(depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                    reliability=ReliabilityPolicy.RELIABLE)


def test_scan_and_depth_arrive_with_closed_form_values_on_their_sim_time_grids(
        tmp_path_factory):
    path = write_scene(tmp_path_factory.mktemp("world"), PLUGINS)
    node, client = start_node(tmp_path_factory, "sensors", {
        "world": str(path), "real_time_factor": 1.0, "default_plugins": NO_PLUGINS})
    try:
        client.subscribe(TFMessage, "/tf_static", STATIC)
        client.subscribe(LaserScan, "/mast/scan", DEEP)
        client.subscribe(Image, "/mast/camera/depth/image_raw", DEEP)
        client.subscribe(CameraInfo, "/mast/camera/camera_info", DEEP)
        depths = client.wait_for("/mast/camera/depth/image_raw", 4, 120.0)
        scans = client.wait_for("/mast/scan", 6, 120.0)
        for scan in scans:
            angles = scan.angle_min + scan.angle_increment * np.arange(len(scan.ranges))
            np.testing.assert_allclose(scan.ranges, _wall_ranges(0.0, angles), rtol=1e-6)
            assert scan.header.frame_id == "mast/sensor"
        assert all(ns(s.header.stamp) % 50_000_000 == 0 for s in scans)
        for depth in depths:
            stamp = ns(depth.header.stamp)
            assert stamp % 100_000_000 == 0
            [info] = client.wait_for("/mast/camera/camera_info", 1, 20.0,
                                     lambda m, s=stamp: ns(m.header.stamp) == s)
            K = np.array(info.k).reshape(3, 3)
            np.testing.assert_allclose(_image(depth), _expected_depth(K, 0.0, 80, 60),
                                       rtol=1e-4)
            assert depth.header.frame_id == "mast/sensor_optical"
        optical = [t for m in client.messages("/tf_static") for t in m.transforms
                   if t.child_frame_id == "mast/sensor_optical"]
        assert optical and optical[0].header.frame_id == "mast/sensor"
    finally:
        client.close()
        node.stop()
