"""Packing numpy arrays into sensor_msgs messages: Image, CameraInfo, PointCloud2, LaserScan.

Pure message construction (no node, no simulator); the lidar and camera plugins use it.
Byte order: little-endian (is_bigendian False), as every machine we build for.
"""
from __future__ import annotations

from array import array

import numpy as np
from sensor_msgs.msg import CameraInfo, Image, LaserScan, PointCloud2, PointField

from sim_node.ros.stamps import time_msg

__all__ = ["camera_info", "image", "laser_scan", "point_cloud", "IMAGE_ENCODINGS"]

# uint8[] / float32[] fields keep an array.array of the right type code as it is, but only in a
# message made with check_fields=True: without it (the default unless ROS_PYTHON_CHECK_FIELDS=1)
# the setter copies every value into a new array.array, a second megabyte copy per image.
# numpy dtype and channels of the encodings we publish (REP-118 / sensor_msgs image_encodings)
IMAGE_ENCODINGS = {"rgb8": (np.uint8, 3), "32FC1": (np.float32, 1), "32SC1": (np.int32, 1)}

_POINT_FIELD = {np.dtype(np.float32): PointField.FLOAT32, np.dtype(np.uint16): PointField.UINT16,
                np.dtype(np.int32): PointField.INT32, np.dtype(np.uint8): PointField.UINT8}


def _bytes(values: np.ndarray, typecode: str = "B") -> array:
    # an array.array holding the array's raw bytes (C order), in one copy
    out = array(typecode)
    out.frombytes(np.ascontiguousarray(values).data.cast("B"))
    return out


def image(t: float, frame_id: str, pixels: np.ndarray, encoding: str) -> Image:
    """sensor_msgs/Image of pixels (H, W) or (H, W, C) in `encoding` (rgb8, 32FC1, 32SC1),
    stamped t [s] of sim time."""
    dtype, channels = IMAGE_ENCODINGS[encoding]
    pixels = np.ascontiguousarray(pixels, dtype=dtype)
    height, width = pixels.shape[:2]
    if (pixels.shape[2] if pixels.ndim == 3 else 1) != channels:
        raise ValueError(f"image: {encoding} needs {channels} channel(s), got shape "
                         f"{pixels.shape}")
    message = Image(check_fields=True)
    message.header.stamp = time_msg(t)
    message.header.frame_id = frame_id
    message.height, message.width = height, width
    message.encoding = encoding
    message.is_bigendian = 0
    message.step = width * channels * np.dtype(dtype).itemsize
    message.data = _bytes(pixels)
    return message


def camera_info(t: float, frame_id: str, width: int, height: int, K: np.ndarray) -> CameraInfo:
    """sensor_msgs/CameraInfo of an ideal pinhole camera (no distortion: plumb_bob, D = 0;
    R = I; P = [K | 0], a monocular camera) with intrinsics K (3x3)."""
    message = CameraInfo()
    message.header.stamp = time_msg(t)
    message.header.frame_id = frame_id
    message.width, message.height = int(width), int(height)
    message.distortion_model = "plumb_bob"
    message.d = [0.0] * 5
    message.k = [float(v) for v in np.asarray(K, dtype=float).ravel()]
    message.r = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    P = np.zeros((3, 4))
    P[:, :3] = K
    message.p = [float(v) for v in P.ravel()]
    return message


def laser_scan(t: float, frame_id: str, angle_min: float, angle_max: float,
               angle_increment: float, scan_time: float, range_min: float, range_max: float,
               ranges: np.ndarray) -> LaserScan:
    """sensor_msgs/LaserScan of ranges (N,) [m] (REP-117: +inf no return, -inf too close);
    every ray of a sweep is taken at the same instant (time_increment 0)."""
    message = LaserScan(check_fields=True)
    message.header.stamp = time_msg(t)
    message.header.frame_id = frame_id
    message.angle_min, message.angle_max = float(angle_min), float(angle_max)
    message.angle_increment = float(angle_increment)
    message.time_increment = 0.0
    message.scan_time = float(scan_time)
    message.range_min, message.range_max = float(range_min), float(range_max)
    message.ranges = _bytes(np.asarray(ranges, dtype=np.float32), "f")
    return message


def point_cloud(t: float, frame_id: str, fields: dict, height: int = 1,
                is_dense: bool = True) -> PointCloud2:
    """sensor_msgs/PointCloud2 of named per-point arrays (N,), e.g. {"x": ..., "y": ...,
    "z": ..., "ring": ...}, of dtypes float32, int32, uint16 or uint8, packed point by point in
    that order (no padding). height > 1: an organised cloud of N / height columns."""
    arrays = {name: np.asarray(values) for name, values in fields.items()}
    n = len(next(iter(arrays.values())))
    layout = np.dtype([(name, a.dtype) for name, a in arrays.items()])
    packed = np.empty(n, dtype=layout)
    message = PointCloud2(check_fields=True)
    offset = 0
    for name, a in arrays.items():
        packed[name] = a
        message.fields.append(PointField(name=name, offset=offset,
                                         datatype=_POINT_FIELD[a.dtype], count=1))
        offset += a.dtype.itemsize
    message.header.stamp = time_msg(t)
    message.header.frame_id = frame_id
    message.height, message.width = int(height), int(n // height) if n else 0
    message.is_bigendian = False
    message.point_step = layout.itemsize
    message.row_step = layout.itemsize * message.width
    message.data = _bytes(packed)
    message.is_dense = bool(is_dense)
    return message
