"""lidar (sensor): a scanning range finder at a robot link, Gazebo's ray sensor.

Geometry. Ray (i, j) leaves the origin of the link frame L along
    d_ij = (cos v_j cos h_i, cos v_j sin h_i, sin v_j)       (L's axes)
h_i: the horizontal angle about L's +z from +x; v_j: the elevation above L's xy plane. The
samples include both ends of their interval, as Gazebo's: h_i = horizontal_min_angle + i
(max - min) / (horizontal_samples - 1) (one sample: the min angle), likewise v_j. As in Gazebo,
the ray is cast over [min_range, max_range] along d_ij: nothing nearer than min_range is seen
(a lidar inside its robot's body does not see that body when min_range clears it), and a
reading is a distance from the link origin in [min_range, max_range]. All rays of a sweep are
cast at once on the state at the update's sim time (sim.rayCast) on the physics thread, on that
one thread: the physics holds its core and the camera's render worker wants the other, and an
OpenMP team on a busy machine waits for its slowest thread (28,800 rays took 5 ms on one thread
and 22 ms on two of a loaded 2-core machine).

Messages, stamped with the sim time of the sweep, frame_id the link's TF frame
``<namespace>/<link>`` unless set:
    one ring (vertical_samples 1)  sensor_msgs/LaserScan on ``<namespace>/scan``: angle_min,
                                   angle_max, angle_increment = the horizontal samples (0 for one
                                   sample), range_min / range_max, ranges [m], +inf where the ray
                                   hit nothing or dropped out (REP-117); time_increment 0,
                                   scan_time the period.
    several rings                  sensor_msgs/PointCloud2 on ``<namespace>/points``: fields x,
                                   y, z (float32, metres, in the sensor frame L) and ring
                                   (uint16, 0 = the lowest elevation, as Velodyne drivers);
                                   points of rays without a return are left out (height 1,
                                   is_dense true), ring by ring, each by increasing angle.
``topic`` replaces scan / points.

Noise. range_noise: zero-mean Gaussian of that std [m] added to every return, the result kept
within [min_range, max_range]; dropout: each ray independently loses its return (+inf) with
that probability. Both draw from ctx.rng (seeded by ``seed``; saved with the simulation
state), the same count of numbers at every sweep, so runs repeat.

Config: link (required), rate [Hz] 10 (0: every control step), min_range 0.1, max_range 30
[m], horizontal_samples 360, horizontal_min_angle -pi, horizontal_max_angle pi [rad],
vertical_samples 1, vertical_min_angle 0, vertical_max_angle 0 [rad], range_noise 0 [m],
dropout 0, seed, frame_id, topic. No readings for controllers (update returns {}).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from sensor_msgs.msg import LaserScan, PointCloud2

from sim_node.plugins.common import check_std, rate_to_period, require_robot, robot_of, topic_name
from sim_node.plugins.sensor_messages import laser_scan, point_cloud
from sim_node.ros.namespaces import link_frame
from sim_node.sim.simulation import SensorEmulator

QUEUE_DEPTH = 5
MAX_RAYS = 4_000_000        # per sweep: 16 x 1,800 is 28,800; a typo of 1e9 must not eat memory
MAX_RANGE = 1e5            # [m]: ray ends stay within the ray casts' +-1e6 m world bound


def _samples(n: int, low: float, high: float) -> np.ndarray:
    return np.full(1, low) if n == 1 else np.linspace(low, high, n)


def ray_directions(config) -> np.ndarray:
    """(vertical_samples, horizontal_samples, 3) unit ray directions in the link frame."""
    h = _samples(config.horizontal_samples, config.horizontal_min_angle,
                 config.horizontal_max_angle)
    v = _samples(config.vertical_samples, config.vertical_min_angle, config.vertical_max_angle)
    cv, sv = np.cos(v)[:, None], np.sin(v)[:, None]
    return np.stack(np.broadcast_arrays(cv * np.cos(h), cv * np.sin(h), sv), axis=-1)


class LidarSensor(SensorEmulator):
    """A 2D (LaserScan) or 3D (PointCloud2) lidar at a link (module docstring)."""

    @dataclass(frozen=True, kw_only=True)
    class Config(SensorEmulator.Config):
        """Gazebo's ray sensor keys (module docstring)."""
        link: str
        rate: float = 10.0
        min_range: float = 0.1
        max_range: float = 30.0
        horizontal_samples: int = 360
        horizontal_min_angle: float = -math.pi
        horizontal_max_angle: float = math.pi
        vertical_samples: int = 1
        vertical_min_angle: float = 0.0
        vertical_max_angle: float = 0.0
        range_noise: float = 0.0
        dropout: float = 0.0
        frame_id: str = ""
        topic: str = ""

        def __post_init__(self):
            super().__post_init__()
            rate_to_period(self)
            if not 0.0 <= self.min_range < self.max_range <= MAX_RANGE:
                raise ValueError(f"min_range and max_range must satisfy 0 <= min_range < "
                                 f"max_range <= {MAX_RANGE:g} [m], got {self.min_range}, "
                                 f"{self.max_range}")
            for axis, limit in (("horizontal", math.pi), ("vertical", math.pi / 2)):
                n = getattr(self, f"{axis}_samples")
                low = getattr(self, f"{axis}_min_angle")
                high = getattr(self, f"{axis}_max_angle")
                if n < 1:
                    raise ValueError(f"{axis}_samples must be >= 1, got {n}")
                if not -limit - 1e-9 <= low <= high <= limit + 1e-9:
                    raise ValueError(f"{axis}_min_angle and {axis}_max_angle must satisfy "
                                     f"-{limit:.6g} <= min <= max <= {limit:.6g} [rad], got "
                                     f"{low}, {high}")
            if self.horizontal_samples * self.vertical_samples > MAX_RAYS:
                raise ValueError(f"horizontal_samples x vertical_samples must be at most "
                                 f"{MAX_RAYS:,} rays per sweep, got {self.horizontal_samples} x "
                                 f"{self.vertical_samples}")
            check_std(self.range_noise, "range_noise")
            if not 0.0 <= self.dropout <= 1.0:
                raise ValueError(f"dropout must be a probability in [0, 1], got {self.dropout}")

    def configure(self, ctx, config):
        require_robot(self, ctx)
        super().configure(ctx, config)
        robot = robot_of(ctx)
        self._link = robot.link(config.link).getIndex()    # KeyError listing the links
        self.frame_id = config.frame_id or link_frame(robot, self._link)
        self.directions = ray_directions(config)      # (rings, samples, 3), frame L
        self._flat = self.directions.reshape(-1, 3)
        self._rings = np.repeat(np.arange(config.vertical_samples, dtype=np.uint16),
                                config.horizontal_samples)
        self.scan = config.vertical_samples == 1
        self.topic = topic_name(ctx, config.topic or ("scan" if self.scan else "points"))
        self._publisher = None
        if ctx.create_publisher is not None:
            self._publisher = ctx.create_publisher(LaserScan if self.scan else PointCloud2,
                                                   self.topic, QUEUE_DEPTH)

    def reset(self, scope):
        """Nothing to reset: every sweep reads the simulator; the noise generator is ctx.rng."""

    def sweep(self) -> np.ndarray:
        """The ranges (rings, samples) [m] of one sweep now: +inf for no return (noise and
        dropout applied, drawing from ctx.rng)."""
        config = self.config
        sim = self.ctx.sim
        R_WL, p_W = sim.body(robot_of(self.ctx).link(self._link)).getObjectTransform()
        d_W = self._flat @ np.asarray(R_WL).T
        hits = sim.rayCast(p_W + config.min_range * d_W, p_W + config.max_range * d_W, threads=1)
        fraction = np.asarray(hits.fraction)
        ranges = config.min_range + fraction * (config.max_range - config.min_range)
        hit = fraction < 1.0
        rng = self.ctx.rng
        if config.range_noise > 0.0:
            noisy = ranges + rng.normal(0.0, config.range_noise, ranges.shape)
            ranges = np.where(hit, np.clip(noisy, config.min_range, config.max_range), ranges)
        if config.dropout > 0.0:
            hit &= rng.random(ranges.shape) >= config.dropout
        return np.where(hit, ranges, np.inf).reshape(self.directions.shape[:2])

    def update(self, t=None):
        t = self.ctx.sim.getTime() if t is None else t
        ranges = self.sweep()
        if self._publisher is not None:
            self._publisher.publish(self._message(t, ranges))
        return {}

    def _message(self, t: float, ranges: np.ndarray):
        config = self.config
        if self.scan:
            n = config.horizontal_samples
            increment = ((config.horizontal_max_angle - config.horizontal_min_angle) / (n - 1)
                         if n > 1 else 0.0)
            return laser_scan(t, self.frame_id, config.horizontal_min_angle,
                              config.horizontal_min_angle + increment * (n - 1), increment,
                              config.period, config.min_range, config.max_range, ranges[0])
        flat = ranges.ravel()
        keep = np.isfinite(flat)
        points = (self._flat[keep] * flat[keep, None]).astype(np.float32)
        return point_cloud(t, self.frame_id, {"x": points[:, 0], "y": points[:, 1],
                                              "z": points[:, 2], "ring": self._rings[keep]})

    def shutdown(self):
        self._publisher = None
