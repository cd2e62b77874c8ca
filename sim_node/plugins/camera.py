"""camera (sensor): an RGB-D camera at a robot link, Gazebo's camera / depth camera.

Frames. The camera sits at the sensor frame S: the link frame L, or with ``pose`` (Gazebo's
sensor <pose>: x, y, z [m], roll, pitch, yaw [rad], URDF's fixed-axis order) that pose in L. It
looks along S's +x (Gazebo); the images are in its optical frame O (REP-103: z forward, x
right, y down): R_SO = [[0, 0, 1], [-1, 0, 0], [0, -1, 0]], the same origin. frame_id defaults
to ``<link frame>_optical`` (the link frame: ``<namespace>/<link>``), and the plugin then
publishes the static transform link -> optical (pose and R_SO) on /tf_static itself
(transient local, at every reset). A frame_id given in the config is taken to exist already (a
URDF optical link, where the pose must put the camera): nothing is published for it.

Messages, under ``<namespace>/<name>/``, all of one frame stamped with the sim time of the step
that captured it:
    image_raw               sensor_msgs/Image rgb8
    depth/image_raw         sensor_msgs/Image 32FC1, z-depth along the optical axis [m], +inf
                            where no surface lies within [near, far] (REP-118)   (depth: true)
    segmentation/image_raw  sensor_msgs/Image 32SC1, PyBullet's encoding entity + ((link + 1)
                            << 24) (entity = the world ID, link -1 for objects and terrains),
                            -1 background                                    (segmentation: true)
    points                  sensor_msgs/PointCloud2, organised (height x width), x, y, z float32
                            in the optical frame [m], NaN where the depth is +inf (is_dense
                            false)                                                 (points: true)
    camera_info             sensor_msgs/CameraInfo: K of the image, P = [K | 0], R = I,
                            plumb_bob with D = 0 (an ideal pinhole)
Pixel convention (CameraInfo, OpenCV): pixel (u, v) (column, row) has its centre at image
coordinates (u, v); a point (x, y, z) of O projects to u = fx x / z + cx, v = fy y / z + cy.
The principal point is the image centre: cx = (width - 1) / 2, cy = (height - 1) / 2; fx = fy =
(width / 2) / tan(horizontal_fov / 2) (square pixels).

Timing. Frames are due on the grid t0 + k / rate of sim time from the reset at t0. At the step
a frame is due the plugin takes the camera pose and a snapshot of the world (Camera.snapshot(),
cheap) on the physics thread and renders it on a worker thread (one thread: the physics keeps
its core), which publishes when done; the physics steps on meanwhile. At most one frame is in
flight: a frame due while the last one is still rendering is captured at the first step that
finds the worker free (stamped with that step's time), and grid times passed meanwhile get no
frame of their own (counted in ``skipped``; ``frames`` counts the published ones). So a worker
slower than the period costs only the time it overruns, not a whole period (the plugin is
polled at every control step for this: its period is 0, ``rate`` sets the grid). A lockstep run
is unaffected: lockstep waits for commands, never for sensor output, and the images are those
of the capture step whenever they arrive.

Noise: zero-mean Gaussian of std ``noise`` [m] on every finite depth value (the point cloud is
made from the noisy depth); each frame draws from a generator seeded by one number drawn from
ctx.rng at capture, so runs repeat frame for frame.

Config: link (required), pose (none), name "camera", rate 30, width 640, height 480,
horizontal_fov 1.047 [rad], near 0.05, far 50 [m], depth true, segmentation false, points false,
noise 0 [m], seed, frame_id. No readings for controllers (update returns {}); without ROS (no publisher factory)
it renders nothing (sim_node.sim.camera.Camera, or the Klamp't-style CameraSensor, serve Python).
"""
from __future__ import annotations

import math
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from geometry_msgs.msg import TransformStamped
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image, PointCloud2
from tf2_msgs.msg import TFMessage
from transforms3d.euler import euler2mat

from sim_node.plugins.common import (TIME_TOLERANCE, check_std, require_robot,
                                     require_sampling_every_step, robot_of, topic_name, xyzw)
from sim_node.plugins.sensor_messages import camera_info, image, point_cloud
from sim_node.ros.namespaces import link_frame
from sim_node.ros.stamps import time_msg
from sim_node.sim.camera import Camera
from sim_node.sim.simulation import SensorEmulator

QUEUE_DEPTH = 2
MAX_PIXELS = 4096 * 4096        # a typo of 1e6 x 1e6 must not try to allocate terabytes
# the optical frame in the sensor frame: columns = the optical x, y, z axes in S's axes
R_SO = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
STATIC = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                    reliability=ReliabilityPolicy.RELIABLE)


def intrinsics(width: int, height: int, horizontal_fov: float) -> np.ndarray:
    """K (3x3) of the module docstring's convention."""
    f = (width / 2.0) / math.tan(horizontal_fov / 2.0)
    return np.array([[f, 0.0, (width - 1) / 2.0], [0.0, f, (height - 1) / 2.0],
                     [0.0, 0.0, 1.0]])


def organised_points(depth: np.ndarray, K: np.ndarray) -> np.ndarray:
    """(H, W, 3) float32 points in the optical frame of a z-depth image (H, W) [m] with
    intrinsics K (module docstring's pixel convention); NaN where the depth is not finite."""
    height, width = depth.shape
    u = (np.arange(width) - K[0, 2]) / K[0, 0]
    v = (np.arange(height) - K[1, 2]) / K[1, 1]
    z = np.where(np.isfinite(depth), depth, np.nan).astype(np.float32)
    return np.stack([z * u[None, :].astype(np.float32), z * v[:, None].astype(np.float32), z],
                    axis=-1)


class CameraSensor(SensorEmulator):
    """An RGB-D(+segmentation) camera at a link, rendered off the physics thread (module
    docstring)."""

    @dataclass(frozen=True, kw_only=True)
    class Config(SensorEmulator.Config):
        """Gazebo's camera keys (module docstring)."""
        link: str
        pose: tuple[float, ...] | None = None
        name: str = "camera"
        rate: float = 30.0
        width: int = 640
        height: int = 480
        horizontal_fov: float = 1.047
        near: float = 0.05
        far: float = 50.0
        depth: bool = True
        segmentation: bool = False
        points: bool = False
        noise: float = 0.0
        frame_id: str = ""

        def __post_init__(self):
            super().__post_init__()
            require_sampling_every_step(self, "camera")
            for key in ("width", "height"):
                if getattr(self, key) < 1:
                    raise ValueError(f"{key} must be >= 1 [pixels], got {getattr(self, key)}")
            if self.width * self.height > MAX_PIXELS:
                raise ValueError(f"width x height must be at most {MAX_PIXELS:,} pixels, got "
                                 f"{self.width} x {self.height}")
            if not 0.0 < self.horizontal_fov < math.pi:
                raise ValueError(f"horizontal_fov must be in (0, pi) [rad], got "
                                 f"{self.horizontal_fov}")
            if not 0.0 < self.near < self.far:
                raise ValueError(f"near and far must satisfy 0 < near < far [m], got "
                                 f"{self.near}, {self.far}")
            if not self.name.strip("/"):
                raise ValueError("name must be a non-empty topic name (e.g. 'camera')")
            check_std(self.noise, "noise")
            if self.pose is not None and len(self.pose) != 6:
                raise ValueError(f"pose needs 6 values (x, y, z [m], roll, pitch, yaw [rad]), "
                                 f"got {len(self.pose)}")

    def configure(self, ctx, config):
        require_robot(self, ctx)
        super().configure(ctx, config)
        robot = robot_of(ctx)
        self._link = robot.link(config.link).getIndex()     # KeyError listing the links
        self.link_frame = link_frame(robot, self._link)
        self.frame_id = config.frame_id or self.link_frame + "_optical"
        x, y, z, roll, pitch, yaw = config.pose or (0.0,) * 6
        # the optical frame in the link frame (R_LS = Rz(yaw) Ry(pitch) Rx(roll), URDF's rpy)
        self.R_LO = euler2mat(roll, pitch, yaw, "sxyz") @ R_SO
        self.p_LO = np.array([x, y, z])
        self.K = intrinsics(config.width, config.height, config.horizontal_fov)
        # the renderer's K: the same camera, its pixel centres at integer + 0.5
        self._camera = Camera(ctx.sim, width=config.width, height=config.height,
                              K=self.K + np.array([[0, 0, 0.5], [0, 0, 0.5], [0, 0, 0]]),
                              near=config.near, far=config.far)
        self._publishers = {}
        self._tf_static = None
        if ctx.create_publisher is not None:
            prefix = config.name.strip("/") + "/"
            wanted = [("rgb", Image, "image_raw", True),
                      ("depth", Image, "depth/image_raw", config.depth),
                      ("segmentation", Image, "segmentation/image_raw", config.segmentation),
                      ("points", PointCloud2, "points", config.points),
                      ("info", CameraInfo, "camera_info", True)]
            for key, msg_type, topic, on in wanted:
                if on:
                    self._publishers[key] = ctx.create_publisher(
                        msg_type, topic_name(ctx, prefix + topic), QUEUE_DEPTH)
            if not config.frame_id:
                self._tf_static = ctx.create_publisher(TFMessage, "/tf_static", STATIC)
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=f"camera-{config.name}")
        self._inflight = None
        self._worker_error: BaseException | None = None
        self._lock = threading.Lock()
        self.frames = self.skipped = 0
        self._period = 1.0 / config.rate if config.rate > 0.0 else 0.0
        self._next = 0.0                # [s] sim time the next frame is due

    def reset(self, scope):
        """Let the frame in flight finish, zero the counts, publish the optical frame."""
        self.wait()
        self.frames = self.skipped = 0
        self._next = self.ctx.sim.getTime()
        if self._tf_static is not None:
            self._tf_static.publish(self._static_transform(self.ctx.sim.getTime()))

    def get_state(self) -> dict:
        return {"next": self._next}

    def set_state(self, state: dict):
        self._next = float(state["next"])

    def _static_transform(self, t: float) -> TFMessage:
        ts = TransformStamped()
        ts.header.stamp = time_msg(t)
        ts.header.frame_id = self.link_frame
        ts.child_frame_id = self.frame_id
        p, q = ts.transform.translation, ts.transform.rotation
        p.x, p.y, p.z = (float(v) for v in self.p_LO)
        q.x, q.y, q.z, q.w = (float(v) for v in xyzw(self.R_LO))
        return TFMessage(transforms=[ts])

    def pose(self) -> tuple[np.ndarray, np.ndarray]:
        """(R (3x3), t (3,)): the optical frame in the world now."""
        link = robot_of(self.ctx).link(self._link)
        R_WL, p_W = self.ctx.sim.body(link).getObjectTransform()
        R_WL = np.asarray(R_WL)
        return R_WL @ self.R_LO, np.asarray(p_W, dtype=float) + R_WL @ self.p_LO

    def update(self, t=None):
        t = self.ctx.sim.getTime() if t is None else t
        error, self._worker_error = self._worker_error, None
        if error is not None:       # raised here, on the physics thread: the plugin is disabled
            raise RuntimeError(f"camera '{self.config.name}': rendering failed: {error}")
        if not self._publishers:        # no ROS: nobody to show a frame to, nothing rendered
            return {}
        if t + TIME_TOLERANCE < self._next or (self._inflight is not None
                                               and not self._inflight.done()):
            return {}
        if self._period > 0.0:          # due at _next; grid times after it up to t are skipped
            missed = math.floor((t + TIME_TOLERANCE - self._next) / self._period)
            self.skipped += missed
            self._next += (missed + 1) * self._period
        R, p = self.pose()
        snapshot = self._camera.snapshot()
        seed = int(self.ctx.rng.integers(2 ** 63)) if self.config.noise > 0.0 else None
        self._inflight = self._executor.submit(self._render, t, R, p, snapshot, seed)
        return {}

    def _render(self, t, R, p, snapshot, seed):
        try:
            self.publish(t, self.render(R, p, snapshot, seed))
        except Exception as error:      # noqa: BLE001 -- handed to the physics thread
            self._worker_error = error

    def render(self, R, p, snapshot=None, seed=None):
        """The frame of optical pose (R, p) (world) of a snapshot (None: the sim now) as
        CameraImage, depth noise drawn from seed (None: no noise)."""
        config = self.config
        frame = self._camera.render(R, p, snapshot=snapshot, rgb=True,
                                    depth=config.depth or config.points,
                                    segmentation=config.segmentation, threads=1)
        if seed is not None and frame.depth is not None:
            depth = frame.depth
            noise = np.random.default_rng(seed).normal(0.0, config.noise, depth.shape)
            depth += np.where(np.isfinite(depth), noise, 0.0).astype(np.float32)
        return frame

    def publish(self, t: float, frame):
        """Publish a rendered frame stamped t."""
        publishers, frame_id = self._publishers, self.frame_id
        if "rgb" in publishers:
            publishers["rgb"].publish(image(t, frame_id, frame.rgb, "rgb8"))
        if "depth" in publishers:
            publishers["depth"].publish(image(t, frame_id, frame.depth, "32FC1"))
        if "segmentation" in publishers:
            publishers["segmentation"].publish(image(t, frame_id, frame.segmentation, "32SC1"))
        if "points" in publishers:
            xyz = organised_points(frame.depth, self.K).reshape(-1, 3)
            publishers["points"].publish(point_cloud(
                t, frame_id, {"x": xyz[:, 0], "y": xyz[:, 1], "z": xyz[:, 2]},
                height=self.config.height, is_dense=False))
        if "info" in publishers:
            publishers["info"].publish(camera_info(t, frame_id, self.config.width,
                                                   self.config.height, self.K))
        with self._lock:
            self.frames += 1

    def wait(self, timeout: float | None = None):
        """Wait for the frame in flight (if any) to be published."""
        inflight = self._inflight
        if inflight is not None:
            inflight.result(timeout)

    def shutdown(self):
        self.wait()
        self._executor.shutdown(wait=True)
        self._publishers, self._tf_static = {}, None
