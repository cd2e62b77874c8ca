"""Camera and laser measurements to images and point clouds (Klamp't's klampt.model.sensing,
numpy outputs).

The functions take a sensor with Klamp't's API (sim_node.sim.sensors' CameraSensor /
LaserRangeSensor, or anything with getSetting(name) -> str and getMeasurements()); the
measurements may be passed instead of read (``measurements=``), e.g. a vector recorded
earlier or one Klamp't produced.

Camera layout (Klamp't's): xres * yres packed colours row by row (0xRRGGBB in the low 24 bits
of each value), then xres * yres depths [m] row by row; zmax = no reading.
"""
from __future__ import annotations

import math

import numpy as np


def _setting(sensor, name: str, kind=float):
    return kind(float(sensor.getSetting(name)))


def _measurements(sensor, measurements):
    m = sensor.getMeasurements() if measurements is None else measurements
    return np.asarray(m, dtype=float).ravel()


def _intrinsics(camera):
    # (fx, fy, cx, cy): exact from our CameraSensor; else the sensor's fx, fy, cx, cy
    # settings (Klamp't 0.10 prints them with 6 digits and its own functions use those),
    # else from the fields of view
    if hasattr(camera, "intrinsics"):
        return tuple(camera.intrinsics())
    try:
        return tuple(_setting(camera, k) for k in ("fx", "fy", "cx", "cy"))
    except (KeyError, ValueError):
        w, h = _setting(camera, "xres", int), _setting(camera, "yres", int)
        return (w / (2.0 * math.tan(_setting(camera, "xfov") / 2.0)),
                h / (2.0 * math.tan(_setting(camera, "yfov") / 2.0)), w / 2.0, h / 2.0)


def camera_to_intrinsics(camera, format: str = "numpy"):
    """The camera's intrinsics: format 'numpy' a 3x3 K, 'opencv' (K, 5 zero distortion
    coefficients), 'json' {'fx', 'fy', 'cx', 'cy'} [pixels]. Klamp't's: fx = xres / (2
    tan(xfov / 2)), fy = yres / (2 tan(yfov / 2)), cx = xres / 2, cy = yres / 2 (exact for
    our CameraSensor; a sensor answering getSetting('fx') etc. is read as it answers)."""
    fx, fy, cx, cy = _intrinsics(camera)
    if format == "json":
        return {"fx": fx, "fy": fy, "cx": cx, "cy": cy}
    K = np.array([[fx, 0.0, cx], [0.0, fy, cy], [0.0, 0.0, 1.0]])
    if format == "numpy":
        return K
    if format == "opencv":
        return K, np.zeros(5)
    raise ValueError(f"camera_to_intrinsics: format must be 'numpy', 'opencv' or 'json', "
                     f"got {format!r}")


def camera_to_images(camera, image_format: str = "numpy", color_format: str = "channels",
                     measurements=None):
    """(rgb, depth) of a CameraSensor's measurements, or the one it has (None if neither or
    before the first update). rgb: color_format 'channels' (h, w, 3) uint8, 'rgb' (h, w)
    uint32 0xRRGGBB, 'bgr' (h, w) uint32 0xBBGGRR; depth (h, w) float64 [m]."""
    if image_format != "numpy":
        raise ValueError(f"camera_to_images: only image_format 'numpy' is supported, got "
                         f"{image_format!r}")
    if color_format not in ("channels", "rgb", "bgr"):
        raise ValueError(f"camera_to_images: color_format must be 'channels', 'rgb' or 'bgr', "
                         f"got {color_format!r}")
    w, h = _setting(camera, "xres", int), _setting(camera, "yres", int)
    has_rgb, has_depth = _setting(camera, "rgb", int), _setting(camera, "depth", int)
    m = _measurements(camera, measurements)
    expected = w * h * (int(bool(has_rgb)) + int(bool(has_depth)))
    if len(m) and len(m) != expected:
        raise ValueError(f"camera_to_images: {len(m)} measurements, the settings ({w} x {h}, "
                         f"rgb {has_rgb}, depth {has_depth}) give {expected}")
    rgb = depth = None
    if has_rgb and len(m):
        packed = m[:w * h].reshape(h, w).astype(np.uint32) & 0xFFFFFF
        if color_format == "rgb":
            rgb = packed
        elif color_format == "bgr":
            rgb = ((packed & 0xFF) << 16) | (packed & 0xFF00) | (packed >> 16)
        else:
            rgb = np.empty((h, w, 3), dtype=np.uint8)
            rgb[..., 0], rgb[..., 1], rgb[..., 2] = packed >> 16, (packed >> 8) & 0xFF, \
                packed & 0xFF
    if has_depth and len(m):
        start = w * h if has_rgb else 0
        depth = m[start:start + w * h].reshape(h, w).copy()
    if has_rgb and has_depth:
        return rgb, depth
    return rgb if has_rgb else depth


def camera_to_points(camera, points_format: str = "numpy", all_points: bool = False,
                     color_format: str | None = "channels", measurements=None) -> np.ndarray:
    """The point cloud of a CameraSensor's depth, in the camera frame (x right, y down,
    z forward) [m]: (n, 3), with colour (n, 6) ('channels', in [0, 1]) or (n, 4) ('rgb',
    0xRRGGBB as a float). all_points=False drops pixels without a reading (depth >= zmax);
    True keeps every pixel row by row, those at (0, 0, 0)."""
    if points_format != "numpy":
        raise ValueError(f"camera_to_points: only points_format 'numpy' is supported, got "
                         f"{points_format!r}")
    if not _setting(camera, "depth", int):
        raise ValueError("camera_to_points: the camera has no depth channel (setting 'depth')")
    has_rgb = _setting(camera, "rgb", int)
    images = camera_to_images(camera, "numpy", color_format or "channels", measurements)
    rgb, depth = images if has_rgb else (None, images)
    if depth is None:
        raise ValueError("camera_to_points: the camera has no measurements yet")
    if color_format is None:
        rgb = None
    h, w = depth.shape
    fx, fy, cx, cy = _intrinsics(camera)
    zmax = _setting(camera, "zmax")
    if all_points:
        depth[depth >= zmax] = 0.0
    xs = (np.arange(w) - cx) / fx
    ys = (np.arange(h) - cy) / fy
    pts = np.dstack((xs[None, :] * depth, ys[:, None] * depth, depth))
    if rgb is not None:
        colour = rgb * (1.0 / 255.0) if color_format == "channels" else \
            rgb.reshape(h, w, 1).astype(float)
        pts = np.concatenate((pts, colour), axis=2)
    if all_points:
        return pts.reshape(w * h, pts.shape[2])
    return pts[depth < zmax]


def laser_to_points(sensor, frame: str = "world", scan=None) -> np.ndarray:
    """The readings of a LaserRangeSensor as points (n, 3) [m] along the rays of its last
    update, in the world, its link's frame or the sensor frame; readings without a return
    (>= depthMaximum, inf) are left out. Unlike Klamp't's (which assumes a planar scan in the
    x-y plane at angles spaced by 1 / (n + 1)), the points lie along the rays the sensor cast
    (sensor.directions()), so 2-D and 3-D sweeps and any Tsensor come out right."""
    if frame not in ("world", "link", "sensor"):
        raise ValueError(f"laser_to_points: frame must be 'world', 'link' or 'sensor', got "
                         f"{frame!r}")
    d = _measurements(sensor, scan)
    directions = sensor.directions()
    if len(d) != len(directions):
        raise ValueError(f"laser_to_points: {len(d)} readings for {len(directions)} rays")
    keep = np.isfinite(d) & (d < float(sensor.getSetting("depthMaximum")))
    pts = directions[keep] * d[keep, None]
    if frame == "sensor":
        return pts
    R, t = sensor.getTransformWorld() if frame == "world" else sensor.getTransform()
    return pts @ R.T + t
