"""PNG snapshots of a Simulator's scene without a browser or a display: the CPU renderer.

    from sim_node.viewer.snapshot import View, snapshot
    snapshot(sim, "scene.png")                                   # a view framing the world
    snapshot(sim, "top.png", width=800, height=600,
             camera=View(eye=(0, 0, 3), target=(0, 0, 0), up=(0, 1, 0)))

The pictures are sim_node.sim.camera's z-buffer rasterizer: every robot link's visual geometry
in its URDF colours, rigid objects and terrains in the camera's palette, one directional light,
a white background. `render` returns the pixels, `snapshot` writes them as PNG.

Default view (`framing_view`): the camera looks at the centre of the bounding box of every
robot, rigid object and bounded terrain (planes are infinite and left out), from azimuth
FRAMING_YAW and elevation FRAMING_PITCH, just far enough for the box's eight corners to fall
inside the image with FRAMING_MARGIN to spare.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim_node.sim.camera import Camera

DEFAULT_WIDTH, DEFAULT_HEIGHT = 640, 480
DEFAULT_FOV_X = math.radians(60.0)   # horizontal field of view [rad]
# the default view: from the front-right, looking down, as PyBullet's default debug camera
# (yaw 50, pitch -35 degrees about a z-up world)
FRAMING_YAW = math.radians(50.0)     # [rad] about world z (PyBullet's yaw: 0 looks along +y)
FRAMING_PITCH = math.radians(-35.0)  # [rad] negative: looking down
FRAMING_MARGIN = 1.1                 # the framed corners reach 1 / this of the half-image
# a terrain whose bounding box reaches farther than this from the origin on any axis (a plane,
# a huge heightfield) does not count towards the framing
MAX_FRAMED_EXTENT = 1e3              # [m]
EMPTY_SCENE_RADIUS = 1.0             # [m] what an empty world's view frames, at the origin


@dataclass(frozen=True)
class View:
    """A camera at `eye` looking at `target` (world, [m]), `up` the world direction that
    points up in the picture, `fov_x` the horizontal field of view [rad] in (0, pi); near and
    far [m] clip what is drawn (0 < near < far)."""
    eye: tuple
    target: tuple
    up: tuple = (0.0, 0.0, 1.0)
    fov_x: float = DEFAULT_FOV_X
    near: float = 0.01
    far: float = 100.0

    def __post_init__(self):
        for name in ("eye", "target", "up"):
            try:
                value = np.asarray(getattr(self, name), dtype=float).reshape(-1)
            except (TypeError, ValueError):
                value = None
            if value is None or value.shape != (3,) or not np.all(np.isfinite(value)):
                raise ValueError(f"View: {name} must be 3 finite numbers [m], got "
                                 f"{getattr(self, name)!r}")
            object.__setattr__(self, name, tuple(float(v) for v in value))
        for name in ("fov_x", "near", "far"):
            value = getattr(self, name)
            try:
                object.__setattr__(self, name, float(value))
            except (TypeError, ValueError):
                raise ValueError(f"View: {name} must be a number, got {value!r}") from None
        if not 0.0 < self.fov_x < math.pi:
            raise ValueError(f"View: fov_x {self.fov_x!r} rad must lie in (0, pi)")
        if not 0.0 < self.near < self.far < math.inf:
            raise ValueError(f"View: near {self.near!r} and far {self.far!r} [m] must satisfy "
                             f"0 < near < far < inf")
        forward = np.subtract(self.target, self.eye)
        if not np.linalg.norm(forward) > 0:
            raise ValueError(f"View: eye and target must differ, both are {self.eye}")
        if not np.linalg.norm(np.cross(forward, self.up)) > 1e-9 * np.linalg.norm(forward):
            raise ValueError(f"View: up {self.up} must not be parallel to the view direction "
                             f"(target - eye = {tuple(forward.tolist())})")

    def optical_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """(R (3, 3), t (3,)): the optical frame in the world (z forward, x right, y down,
        REP-103), as sim_node.sim.camera.Camera.render takes it."""
        eye = np.asarray(self.eye)
        z = np.asarray(self.target) - eye
        z /= np.linalg.norm(z)
        x = np.cross(z, self.up)
        x /= np.linalg.norm(x)
        return np.column_stack([x, np.cross(z, x), z]), eye


def scene_bounds(sim) -> tuple[np.ndarray, np.ndarray] | None:
    """(lo (3,), hi (3,)) world box [m] around every robot, rigid object and bounded terrain
    at the simulator's current state (collision geometry), or None for a world without any."""
    world = sim.getWorld()
    entities = [*(world.robot(i) for i in range(world.numRobots())),
                *(world.rigidObject(i) for i in range(world.numRigidObjects())),
                *(world.terrain(i) for i in range(world.numTerrains()))]
    boxes = []
    for entity in entities:
        try:
            lo, hi = sim.getAABB(entity.getID())
        except ValueError:          # no collision geometry: nothing to frame
            continue
        if np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) \
                and max(np.abs(lo).max(), np.abs(hi).max()) <= MAX_FRAMED_EXTENT:
            boxes.append((lo, hi))
    if not boxes:
        return None
    return (np.min([lo for lo, _ in boxes], axis=0), np.max([hi for _, hi in boxes], axis=0))


def framing_view(sim, width: int = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT,
                 fov_x: float = DEFAULT_FOV_X, yaw: float = FRAMING_YAW,
                 pitch: float = FRAMING_PITCH) -> View:
    """A View of the whole scene (module docstring) for a width x height picture: yaw [rad]
    about world z, pitch [rad] above (> 0) or below (< 0) the horizon, |pitch| < pi/2."""
    if not abs(pitch) < 0.5 * math.pi:
        raise ValueError(f"framing_view: pitch {pitch!r} rad must lie in (-pi/2, pi/2)")
    bounds = scene_bounds(sim)
    if bounds is None:
        lo, hi = np.full(3, -EMPTY_SCENE_RADIUS), np.full(3, EMPTY_SCENE_RADIUS)
    else:
        lo, hi = bounds
    centre = 0.5 * (lo + hi)
    # PyBullet's computeViewMatrixFromYawPitchRoll (z up): the view direction is
    # Rz(yaw) Rx(pitch) applied to +y; pitch < 0 looks down
    forward = np.array([-math.sin(yaw) * math.cos(pitch), math.cos(yaw) * math.cos(pitch),
                        math.sin(pitch)])
    R, _ = View(eye=tuple(centre - forward), target=tuple(centre)).optical_pose()
    # the box's corners in the optical frame centred on the box: the camera sits at distance
    # d behind the centre, a corner (x, y, z) is seen at (x, y) / (d + z), inside the image
    # when |x| / (d + z) <= tan(fov_x / 2) / margin (and the same for y)
    corners = np.array([[a, b, c] for a in (lo[0], hi[0]) for b in (lo[1], hi[1])
                        for c in (lo[2], hi[2])]) - centre
    x, y, z = (corners @ R).T
    tan_x = math.tan(0.5 * fov_x) / FRAMING_MARGIN
    tan_y = tan_x * height / width
    distance = float(max(np.max(np.abs(x) / tan_x - z), np.max(np.abs(y) / tan_y - z),
                         np.max(-z) + 1e-2))
    radius = 0.5 * float(np.linalg.norm(hi - lo))
    eye = centre - distance * forward
    return View(eye=tuple(eye), target=tuple(centre), fov_x=fov_x,
                near=max(1e-3, 1e-3 * distance), far=distance + 10.0 * radius + 100.0)


def render(sim, width: int = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT,
           camera: View | None = None) -> np.ndarray:
    """The scene now, as (height, width, 3) uint8 RGB, seen from `camera` (None:
    framing_view)."""
    if camera is None:
        camera = framing_view(sim, width, height)
    elif not isinstance(camera, View):
        raise TypeError(f"camera must be a sim_node.viewer.snapshot.View or None (a view "
                        f"framing the world), got {type(camera).__name__}")
    R, t = camera.optical_pose()
    image = Camera(sim, width, height, fov_x=camera.fov_x, near=camera.near,
                   far=camera.far).render(R, t, depth=False)
    return image.rgb


def snapshot(sim, path, width: int = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT,
             camera: View | None = None) -> Path:
    """Write the scene now as a PNG image at `path` (render()); the path written."""
    import imageio.v3 as iio

    path = Path(path)
    rgb = render(sim, width, height, camera)
    try:
        iio.imwrite(path, rgb, extension=".png")
    except OSError as error:
        raise OSError(f"snapshot: cannot write {path}: {error.strerror or error}") from None
    return path
