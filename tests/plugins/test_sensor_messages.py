"""sensor_messages: what the packed messages hold, read back after a trip over the wire format
(rclpy serializes, the rosbags library's own CDR decoder reads): pixels in row-major order with
the right step, PointCloud2 fields at their offsets, CameraInfo's P = [K | 0]."""
from __future__ import annotations

import numpy as np
from rclpy.serialization import serialize_message
from rosbags.typesys import Stores, get_typestore

from sim_node.plugins.sensor_messages import camera_info, image, laser_scan, point_cloud

STORE = get_typestore(Stores.ROS2_JAZZY)


def _wire(message, name: str):
    # rclpy's buffer may carry trailing padding: rosbags reads the message from its start
    return STORE.deserialize_cdr(bytes(serialize_message(message)), name)


def test_images_keep_their_pixels_rows_and_stamp():
    rgb = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)
    message = _wire(image(12.25, "cam", rgb, "rgb8"), "sensor_msgs/msg/Image")
    assert (message.height, message.width, message.step, message.encoding) == (4, 5, 15, "rgb8")
    assert (message.header.stamp.sec, message.header.stamp.nanosec) == (12, 250_000_000)
    np.testing.assert_array_equal(message.data.reshape(4, 5, 3), rgb)
    depth = np.array([[1.5, np.inf], [0.25, 3.0]], dtype=np.float32)
    message = _wire(image(0.0, "cam", depth, "32FC1"), "sensor_msgs/msg/Image")
    assert message.step == 8 and message.is_bigendian == 0
    np.testing.assert_array_equal(message.data.view("<f4").reshape(2, 2), depth)
    segmentation = np.array([[-1, 7 + (3 << 24)]], dtype=np.int32)
    message = _wire(image(0.0, "cam", segmentation, "32SC1"), "sensor_msgs/msg/Image")
    np.testing.assert_array_equal(message.data.view("<i4").reshape(1, 2), segmentation)


def test_messages_keep_the_packed_buffer_without_a_second_copy(monkeypatch):
    # rclpy's setters copy an array.array into a new one unless the message checks its fields
    from sim_node.plugins import sensor_messages

    packed = []

    def keep(values, typecode="B"):
        packed.append(pack(values, typecode))
        return packed[-1]
    pack = sensor_messages._bytes
    monkeypatch.setattr(sensor_messages, "_bytes", keep)
    message = image(0.0, "cam", np.zeros((2, 3), dtype=np.float32), "32FC1")
    assert message.data is packed[-1] and len(message.data) == 24
    message = laser_scan(0.0, "scan", -1.0, 1.0, 1.0, 0.1, 0.1, 30.0, np.ones(3))
    assert message.ranges is packed[-1]
    message = point_cloud(0.0, "lidar", {"x": np.ones(4, dtype=np.float32)})
    assert message.data is packed[-1] and len(message.data) == 16


def test_a_point_cloud_packs_its_fields_point_by_point():
    x = np.array([1.0, 2.0, np.nan], dtype=np.float32)
    ring = np.array([0, 5, 15], dtype=np.uint16)
    message = _wire(point_cloud(1.0, "lidar", {"x": x, "y": -x, "z": 2 * x, "ring": ring},
                                is_dense=False), "sensor_msgs/msg/PointCloud2")
    assert [(f.name, f.offset, f.datatype, f.count) for f in message.fields] == [
        ("x", 0, 7, 1), ("y", 4, 7, 1), ("z", 8, 7, 1), ("ring", 12, 4, 1)]
    assert (message.point_step, message.row_step, message.width, message.height) == (14, 42, 3,
                                                                                     1)
    assert not message.is_dense
    points = message.data.view([("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("ring", "<u2")])
    np.testing.assert_array_equal(points["x"], x)
    np.testing.assert_array_equal(points["z"], 2 * x)
    np.testing.assert_array_equal(points["ring"], ring)


def test_camera_info_and_laser_scan():
    K = np.array([[500.0, 0, 319.5], [0, 500.0, 239.5], [0, 0, 1]])
    info = _wire(camera_info(0.5, "cam", 640, 480, K), "sensor_msgs/msg/CameraInfo")
    np.testing.assert_array_equal(info.p.reshape(3, 4), np.hstack([K, np.zeros((3, 1))]))
    np.testing.assert_array_equal(info.k.reshape(3, 3), K)
    assert (info.width, info.height, info.distortion_model) == (640, 480, "plumb_bob")
    np.testing.assert_array_equal(info.d, np.zeros(5))
    scan = _wire(laser_scan(0.0, "laser", -1.0, 1.0, 0.5, 0.1, 0.1, 30.0,
                            np.array([1.0, np.inf, 2.0, 3.0, np.inf])),
                 "sensor_msgs/msg/LaserScan")
    np.testing.assert_array_equal(scan.ranges, np.array([1, np.inf, 2, 3, np.inf], "f4"))
    assert (scan.angle_increment, scan.range_max, scan.scan_time) == (0.5, 30.0,
                                                                      np.float32(0.1))
