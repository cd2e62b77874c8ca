"""A headless camera: RGB, z-depth and segmentation images of the simulated world, on the CPU.

    cam = Camera(sim, width=640, height=480, fov_x=1.047)          # or K=3x3 intrinsics
    img = cam.render(R, t)          # R, t: the optical frame in the world (z forward, x right,
                                    # y down, REP-103); img.rgb, img.depth, img.segmentation, img.K

The render model is built once per Camera from the world (every robot link's visual geometry,
every rigid object's and terrain's collision geometry, primitives tessellated once) and rebuilt
when entities are spawned or deleted; a frame only moves the instances. The drawing is the
engine's z-buffer rasterizer (sim_node.engine.queries.render; README "Camera (CPU renderer)"
says why rasterization and what it costs).

Module functions with PyBullet's conventions (view and projection matrices as 16 floats,
column-major, OpenGL's camera: x right, y up, looking along -z) and get_camera_image returning
PyBullet's getCameraImage tuple.
"""
from __future__ import annotations

import math
import threading
import weakref
from dataclasses import dataclass

import numpy as np

from sim_node.engine.api import Rasterizer
from sim_node.math.rotation_input import as_rotation
from sim_node.model import geometry as geo

# A frame allocates ~23 bytes per pixel (outputs and the z-buffer's scratch): 2^24 pixels
# (4096 x 4096) bound it at ~390 MB.
MAX_PIXELS = 1 << 24
MAX_SIDE = 16384
# the chords of a tessellated sphere, cylinder or capsule lie at most this far inside the surface
# [m] along each direction of the grid, so a facet's centre at most ~twice that (0.5 mm: depth
# error below 1 mm whatever the distance), with 8 to 512 segments per turn
TESSELLATION_TOLERANCE = 2.5e-4
MIN_SEGMENTS, MAX_SEGMENTS = 8, 512
# planes are drawn as squares of this half side [m] centred on the point nearest the frame origin
PLANE_HALF_SIZE = 1000.0
# a visual without <material> colour (or with only a texture) [rgb in 0..1]
DEFAULT_COLOR = (0.7, 0.7, 0.7)
# rigid objects and terrains carry no colour in the world file: a palette by entity ID
PALETTE = ((0.84, 0.37, 0.0), (0.0, 0.45, 0.7), (0.8, 0.47, 0.65), (0.9, 0.62, 0.0),
           (0.34, 0.71, 0.91), (0.0, 0.62, 0.45), (0.94, 0.89, 0.26), (0.6, 0.6, 0.6))
TERRAIN_COLOR = (0.55, 0.57, 0.52)
# one directional light (world direction towards the light), PyBullet's default coefficients
LIGHT_DIRECTION = (0.4, 0.2, 1.0)
AMBIENT, DIFFUSE = 0.6, 0.35
BACKGROUND = (255, 255, 255)


def body_color(body) -> tuple:
    """The colour (rgb in 0..1) of a rigid object's or terrain's geometry elements that carry
    none of their own (world files give none; an SDF / URDF element's colour wins): terrains
    TERRAIN_COLOR, rigid objects PALETTE[entity ID mod its length] (a body in no world yet,
    ID -1, the palette's last entry). One rule for these pictures and the live viewer
    (sim_node.viewer.scene)."""
    from sim_node.model.bodies import TerrainModel

    if isinstance(body, TerrainModel):
        return TERRAIN_COLOR
    return PALETTE[body.getID() % len(PALETTE)]


def intrinsics_from_fov(width: int, height: int, fov_x: float) -> np.ndarray:
    """3x3 intrinsics of a `width` x `height` image with horizontal field of view `fov_x` [rad],
    square pixels and the principal point at the image centre (pixel (i, j) is centred at
    (i + 0.5, j + 0.5), so cx = width / 2, cy = height / 2)."""
    width, height = _image_size(width, height)
    fov_x = _finite_float(fov_x, "fov_x")
    if not 0.0 < fov_x < math.pi:
        raise ValueError(f"fov_x = {fov_x!r} rad: the horizontal field of view must lie in "
                         f"(0, pi)")
    f = 0.5 * width / math.tan(0.5 * fov_x)
    return np.array([[f, 0.0, 0.5 * width], [0.0, f, 0.5 * height], [0.0, 0.0, 1.0]])


@dataclass(frozen=True)
class CameraImage:
    """One frame. rgb (H, W, 3) uint8 or None; depth (H, W) float32 z along the optical axis
    [m], +inf where no surface lies within [near, far] (REP-118), or None; segmentation (H, W)
    int32, entity + ((link + 1) << 24) (link -1 for rigid objects and terrains), -1 background,
    or None; K (3, 3) the intrinsics used."""
    rgb: np.ndarray | None
    depth: np.ndarray | None
    segmentation: np.ndarray | None
    K: np.ndarray


@dataclass(frozen=True, eq=False)
class CameraSnapshot:
    """The world poses of every rendered instance at one moment (Camera.snapshot()); rendering
    it never touches the simulator."""
    model: _RenderModel
    R: np.ndarray       # (I, 3, 3) instance rotations, world
    t: np.ndarray       # (I, 3) instance origins, world [m]
    time: float         # the simulation time it was taken at [s]


class Camera:
    """A pinhole camera on a Simulator. fov_x [rad] in (0, pi) or K (3x3: fx, fy > 0, no skew,
    pixel centres at integer + 0.5); near and far [m], 0 < near < far. Lighting: one
    directional light from world direction `light_direction` (towards the light), shade =
    ambient + diffuse max(0, n.l) (flat per triangle, two-sided), `background` RGB."""

    def __init__(self, sim, width: int = 640, height: int = 480, fov_x: float | None = 1.047,
                 K=None, near: float = 0.05, far: float = 50.0, *,
                 light_direction=LIGHT_DIRECTION, ambient: float = AMBIENT,
                 diffuse: float = DIFFUSE, background=BACKGROUND):
        self.width, self.height = _image_size(width, height)
        if K is not None:
            self.K = _intrinsics(K)
        elif fov_x is not None:
            self.K = intrinsics_from_fov(self.width, self.height, fov_x)
        else:
            raise ValueError("Camera: give fov_x [rad] or K (3x3 intrinsics)")
        self.near, self.far = _near_far(near, far)
        light = np.asarray(light_direction, dtype=float).reshape(-1)
        if light.shape != (3,) or not np.all(np.isfinite(light)) or not np.linalg.norm(light) > 0:
            raise ValueError(f"Camera: light_direction must be a finite non-zero 3-vector, got "
                             f"{light_direction!r}")
        self.light_direction = light / np.linalg.norm(light)
        self.ambient = _finite_float(ambient, "ambient")
        self.diffuse = _finite_float(diffuse, "diffuse")
        bg = np.asarray(background).reshape(-1)
        if bg.shape != (3,) or not np.all((bg >= 0) & (bg <= 255)):
            raise ValueError(f"Camera: background must be 3 values in [0, 255], got {background!r}")
        self.background = bg.astype(np.uint8)
        self._sim = sim

    # -- the render model and its poses ------------------------------------------------------
    def snapshot(self) -> CameraSnapshot:
        """The world pose of every rendered instance now (copies; cheap). Rebuilds the render
        model first when the world's entities changed (spawn / delete)."""
        sim = self._sim
        world = sim.getWorld()
        entities = _world_entities(world)
        model = _models.get(sim)
        if model is None or len(model.entities) != len(entities) \
                or any(a is not b for a, b in zip(model.entities, entities)):
            model = _models[sim] = _RenderModel(world, entities)
        R = np.empty((len(model.sources), 3, 3))
        t = np.empty((len(model.sources), 3))
        robots = {}
        objects = None
        for i, (kind, index, link) in enumerate(model.sources):
            if kind == "link":
                if index not in robots:
                    robots[index] = sim.getLinkTransforms(index)
                R[i], t[i] = robots[index][0][link], robots[index][1][link]
            elif kind == "object":
                if objects is None:
                    objects = sim.getRigidObjectTransforms()
                R[i], t[i] = objects[0][index], objects[1][index]
            else:
                R[i], t[i] = world.terrain(index).getTransform()
        return CameraSnapshot(model, R, t, float(sim.getTime()))

    def render(self, R, t, snapshot: CameraSnapshot | None = None, rgb: bool = True,
               depth: bool = True, segmentation: bool = False, threads=None) -> CameraImage:
        """Draw the world seen from the optical frame (R (3, 3), t (3,)) in the world: z
        forward, x right, y down. snapshot None: the simulator's state now; else that snapshot
        (the simulator is not touched; safe on a worker thread while the physics steps, the
        kernel runs without the GIL). threads: None = every core, or a count >= 1."""
        R_WC, t_WC = _camera_pose(R, t)
        if threads is not None and (not isinstance(threads, (int, np.integer)) or threads < 1):
            raise ValueError(f"render: threads must be None (every core) or an int >= 1, got "
                             f"{threads!r}")
        if snapshot is None:
            snapshot = self.snapshot()
        elif not isinstance(snapshot, CameraSnapshot):
            raise TypeError(f"render: snapshot must come from Camera.snapshot(), got "
                            f"{type(snapshot).__name__}")
        model = snapshot.model
        # instance -> optical frame: R_CW R_WI, R_CW (t_WI - t_WC)
        R_CW = R_WC.T
        pose = np.empty((len(model.sources), 3, 4))
        pose[:, :, :3] = np.einsum("ij,njk->nik", R_CW, snapshot.R)
        pose[:, :, 3] = (snapshot.t - t_WC) @ R_WC
        shape = (self.height, self.width)
        out_depth = np.empty(shape, dtype=np.float32) if depth else None
        out_rgb = np.empty(shape + (3,), dtype=np.uint8) if rgb else None
        out_seg = np.empty(shape, dtype=np.int32) if segmentation else None
        if depth or rgb or segmentation:
            fx, fy, cx, cy = self.K[0, 0], self.K[1, 1], self.K[0, 2], self.K[1, 2]
            with model.lock:
                model.rasterizer.render(pose, model.segments, fx, fy, cx, cy, self.near,
                                        self.far, R_CW @ self.light_direction, self.ambient,
                                        self.diffuse, self.background, out_depth, out_rgb,
                                        out_seg, threads)
        return CameraImage(out_rgb, out_depth, out_seg, self.K.copy())


# Simulator -> its _RenderModel, shared by every Camera on it (get_camera_image makes one per
# call): built once, rebuilt when the entities change
_models = weakref.WeakKeyDictionary()


class _RenderModel:
    """Every drawable instance of a world and its triangles in the instance's frame; the lock
    serialises frames (the rasterizer keeps its scratch between them).

    sources[i]: ("link", robot index, link index) | ("object", index, -1) | ("terrain", index,
    -1); segments[i]: its segmentation value."""

    def __init__(self, world, entities):
        # held, not just compared by id(): a deleted entity's id could be reused by a new one
        self.entities = entities
        self.lock = threading.Lock()
        self.sources, segments, parts = [], [], []
        for r in range(world.numRobots()):
            robot = world.robot(r)
            for link in range(robot.numLinks()):
                model_link = robot.link(link)
                # a link without visuals shows its collision geometry (what it hits is there)
                elements = model_link.getVisualGeometry() or model_link.getCollisionGeometry()
                self._add(("link", r, link), robot.getID() + ((link + 1) << 24), elements,
                          DEFAULT_COLOR, segments, parts)
        for i in range(world.numRigidObjects()):
            body = world.rigidObject(i)
            self._add(("object", i, -1), body.getID(), body.getCollisionGeometry(),
                      body_color(body), segments, parts)
        for i in range(world.numTerrains()):
            body = world.terrain(i)
            self._add(("terrain", i, -1), body.getID(), body.getCollisionGeometry(),
                      body_color(body), segments, parts)
        self.segments = np.array(segments, dtype=np.int32)
        offset = 0
        vertices, vertex_instance, triangles, triangle_instance, colors = [], [], [], [], []
        for instance, (v, f, c) in enumerate(parts):
            vertices.append(v)
            vertex_instance.append(np.full(len(v), instance, dtype=np.int32))
            triangles.append(f + offset)
            triangle_instance.append(np.full(len(f), instance, dtype=np.int32))
            colors.append(c)
            offset += len(v)
        cat = (lambda arrays, shape, dtype: np.concatenate(arrays).astype(dtype) if arrays
               else np.empty(shape, dtype))
        # (vertices (V, 3) in their instance's frame, vertex instance (V,), triangles (T, 3),
        # triangle instance (T,)): the render model as arrays, for tools (bench/sensors.py)
        self.arrays = (cat(vertices, (0, 3), np.float64), cat(vertex_instance, (0,), np.int32),
                       cat(triangles, (0, 3), np.int32), cat(triangle_instance, (0,), np.int32))
        self.rasterizer = Rasterizer(*self.arrays, cat(colors, (0, 3), np.float32),
                                     max(len(self.sources), 1))

    def _add(self, source, segment, elements, default_color, segments, parts):
        vs, fs, cs = [], [], []
        count = 0
        for element in elements:
            v, f = tessellate(element.shape)
            if len(f) == 0:
                continue
            vs.append(v @ np.asarray(element.origin.R).T + element.origin.p)
            fs.append(f + count)
            color = getattr(element, "color", None)
            cs.append(np.tile(np.asarray(color[:3] if color is not None else default_color,
                                         dtype=np.float32), (len(f), 1)))
            count += len(v)
        if not fs:
            return
        self.sources.append(source)
        segments.append(segment)
        parts.append((np.concatenate(vs), np.concatenate(fs), np.concatenate(cs)))


def _world_entities(world) -> tuple:
    """The world's robots, rigid objects and terrains in order: the render model is rebuilt
    when they change (spawn / delete; the IDs follow from them)."""
    return (*(world.robot(i) for i in range(world.numRobots())),
            *(world.rigidObject(i) for i in range(world.numRigidObjects())),
            *(world.terrain(i) for i in range(world.numTerrains())))


# -- tessellation ------------------------------------------------------------------------------
def tessellate(shape) -> tuple[np.ndarray, np.ndarray]:
    """Triangles of a shape in its own frame: vertices (V, 3) float64 [m], faces (F, 3) int64.
    Round shapes get chords at most TESSELLATION_TOLERANCE inside the surface; a plane is a
    square of half side PLANE_HALF_SIZE; a heightfield its grid's top surface."""
    if isinstance(shape, geo.Box):
        hx, hy, hz = 0.5 * np.asarray(shape.size, dtype=float)
        v = np.array([[x, y, z] for x in (-hx, hx) for y in (-hy, hy) for z in (-hz, hz)])
        f = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
        return v, f
    if isinstance(shape, geo.Sphere):
        r = shape.radius
        n = _segments(r)
        lat = np.linspace(-0.5 * np.pi, 0.5 * np.pi, n // 2 + 1)
        return _revolve(r * np.cos(lat), r * np.sin(lat), n)
    if isinstance(shape, geo.Capsule):
        r, h = shape.radius, shape.length
        n = _segments(r)
        lat = np.linspace(0.0, 0.5 * np.pi, n // 4 + 1)
        radii = np.concatenate([r * np.cos(lat[::-1]), r * np.cos(lat)])
        z = np.concatenate([-0.5 * h - r * np.sin(lat[::-1]), 0.5 * h + r * np.sin(lat)])
        return _revolve(radii, z, n)
    if isinstance(shape, geo.Cylinder):
        r, h = shape.radius, shape.length
        return _revolve(np.array([0.0, r, r, 0.0]), np.array([-0.5, -0.5, 0.5, 0.5]) * h,
                        _segments(r))
    if isinstance(shape, geo.Plane):
        n = np.asarray(shape.normal, dtype=float)
        u = np.cross(n, [1.0, 0.0, 0.0] if abs(n[0]) < 0.9 else [0.0, 1.0, 0.0])
        u /= np.linalg.norm(u)
        w = np.cross(n, u)
        c = shape.offset * n
        s = PLANE_HALF_SIZE
        v = np.array([c - s * u - s * w, c + s * u - s * w, c + s * u + s * w, c - s * u + s * w])
        return v, np.array([[0, 1, 2], [0, 2, 3]])
    if isinstance(shape, geo.Heightfield):
        ny, nx = shape.heights.shape
        dx, dy = shape.spacing
        x = -0.5 * shape.size[0] + dx * np.arange(nx)
        y = -0.5 * shape.size[1] + dy * np.arange(ny)
        X, Y = np.meshgrid(x, y)
        v = np.column_stack([X.ravel(), Y.ravel(), np.asarray(shape.heights, float).ravel()])
        k = (np.arange(ny - 1)[:, None] * nx + np.arange(nx - 1)[None, :]).ravel()
        f = np.concatenate([np.column_stack([k, k + 1, k + nx + 1]),
                            np.column_stack([k, k + nx + 1, k + nx])])
        return v, f
    if isinstance(shape, geo.Mesh):
        return np.asarray(shape.vertices, dtype=float), np.asarray(shape.faces, dtype=np.int64)
    raise TypeError(f"cannot draw a {type(shape).__name__}")


def _segments(radius: float) -> int:
    """Segments per turn so that a chord's sagitta r (1 - cos(pi / n)) <= the tolerance."""
    if radius <= TESSELLATION_TOLERANCE:
        return MIN_SEGMENTS
    n = math.ceil(math.pi / math.acos(1.0 - TESSELLATION_TOLERANCE / radius))
    return int(min(max(n + (n % 4 and 4 - n % 4), MIN_SEGMENTS), MAX_SEGMENTS))


def _revolve(radii: np.ndarray, z: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The surface of revolution about z of the profile (radii, z), bottom to top, with n
    segments per turn; a zero radius is a pole (one vertex)."""
    angles = 2.0 * np.pi * np.arange(n) / n
    ring_vertices, vertices = [], []
    count = 0
    for r, h in zip(radii, z):
        if r <= 0.0:
            ring_vertices.append(np.full(n, count))
            vertices.append([[0.0, 0.0, h]])
            count += 1
        else:
            ring_vertices.append(count + np.arange(n))
            vertices.append(np.column_stack([r * np.cos(angles), r * np.sin(angles),
                                             np.full(n, h)]))
            count += n
    faces = []
    for a, b in zip(ring_vertices[:-1], ring_vertices[1:]):
        a1, b1 = np.roll(a, -1), np.roll(b, -1)
        for tri in (np.column_stack([a, a1, b1]), np.column_stack([a, b1, b])):
            keep = (tri[:, 0] != tri[:, 1]) & (tri[:, 1] != tri[:, 2]) & (tri[:, 0] != tri[:, 2])
            faces.append(tri[keep])
    return np.concatenate(vertices).astype(float), np.concatenate(faces)


# -- input checks ------------------------------------------------------------------------------
def _finite_float(value, name: str) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return value


def _image_size(width, height) -> tuple[int, int]:
    for name, value in (("width", width), ("height", height)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise ValueError(f"camera {name} must be an int, got {value!r}")
        if not 1 <= value <= MAX_SIDE:
            raise ValueError(f"camera {name} = {value}: must lie in [1, {MAX_SIDE}]")
    if int(width) * int(height) > MAX_PIXELS:
        raise ValueError(f"camera image {width} x {height}: at most {MAX_PIXELS} pixels "
                         f"(4096 x 4096), as a frame takes ~23 bytes per pixel")
    return int(width), int(height)


def _near_far(near, far) -> tuple[float, float]:
    near, far = _finite_float(near, "near"), _finite_float(far, "far")
    if not 0.0 < near < far:
        raise ValueError(f"camera clipping distances near = {near!r}, far = {far!r} m: need "
                         f"0 < near < far")
    return near, far


def _intrinsics(K) -> np.ndarray:
    K = np.array(K, dtype=float)
    if K.shape != (3, 3) or not np.all(np.isfinite(K)):
        raise ValueError(f"K must be a finite 3x3 intrinsics matrix, got {K.tolist()!r}")
    if not (K[0, 0] > 0 and K[1, 1] > 0) or K[0, 1] != 0 or K[1, 0] != 0 \
            or not np.array_equal(K[2], [0.0, 0.0, 1.0]):
        raise ValueError(f"K must be [[fx, 0, cx], [0, fy, cy], [0, 0, 1]] with fx, fy > 0 "
                         f"(no skew), got {K.tolist()!r}")
    return K


def _camera_pose(R, t) -> tuple[np.ndarray, np.ndarray]:
    """R: 3x3 or Klamp't's column-major 9-list (sim_node.math.rotation_input)."""
    R = as_rotation(R, "render: R (the optical frame in the world)")
    t = np.asarray(t, dtype=float)
    if t.shape != (3,):
        raise ValueError(f"render: t must be a 3-vector (the optical frame in the world), got "
                         f"shape {t.shape}")
    if not np.all(np.isfinite(t)):
        raise ValueError("render: the camera pose (R, t) holds NaN or infinity")
    return R, t


# -- PyBullet's conventions --------------------------------------------------------------------
def view_matrix(eye, target, up) -> tuple:
    """PyBullet's computeViewMatrix (gluLookAt): the world -> OpenGL camera transform (x right,
    y up, looking along -z) as 16 floats, column-major."""
    eye, target, up = (np.asarray(a, dtype=float).reshape(3) for a in (eye, target, up))
    f = target - eye
    s = np.cross(f, up)
    if not (np.all(np.isfinite(f)) and np.linalg.norm(f) > 0 and np.linalg.norm(s) > 0):
        raise ValueError(f"view_matrix: eye {eye.tolist()} and target {target.tolist()} must "
                         f"be finite and distinct, and up {up.tolist()} not along the view")
    f /= np.linalg.norm(f)
    s /= np.linalg.norm(s)
    u = np.cross(s, f)
    M = np.eye(4)
    M[0, :3], M[1, :3], M[2, :3] = s, u, -f
    M[:3, 3] = -M[:3, :3] @ eye
    return tuple(float(x) for x in M.T.ravel())


def view_matrix_from_yaw_pitch_roll(target, distance, yaw, pitch, roll, up_axis_index) -> tuple:
    """PyBullet's computeViewMatrixFromYawPitchRoll: a camera `distance` m from `target`,
    turned by yaw, pitch and roll [degrees] (up_axis_index 1: y up, 2: z up); Bullet's
    setEulerZYX order: z up R = Rz(yaw) Ry(roll) Rx(pitch), y up Rz(roll) Ry(yaw) Rx(-pitch)."""
    target = np.asarray(target, dtype=float).reshape(3)
    yaw_r, pitch_r, roll_r = math.radians(yaw), math.radians(pitch), math.radians(roll)
    if up_axis_index == 2:
        forward, up = 1, np.array([0.0, 0.0, 1.0])
        R = _euler_zyx(yaw_r, roll_r, pitch_r)
    elif up_axis_index == 1:
        forward, up = 2, np.array([0.0, 1.0, 0.0])
        R = _euler_zyx(roll_r, yaw_r, -pitch_r)
    else:
        raise ValueError(f"up_axis_index must be 1 (y up) or 2 (z up), got {up_axis_index!r}")
    eye = np.zeros(3)
    eye[forward] = -float(distance)
    eye = R @ eye + target
    return view_matrix(eye, target, R @ up)


def _euler_zyx(yaw_z: float, pitch_y: float, roll_x: float) -> np.ndarray:
    """Bullet's setEulerZYX(z, y, x): R = Rz(z) Ry(y) Rx(x)."""
    cz, sz, cy, sy, cx, sx = (math.cos(yaw_z), math.sin(yaw_z), math.cos(pitch_y),
                              math.sin(pitch_y), math.cos(roll_x), math.sin(roll_x))
    Rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    Ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    Rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    return Rz @ Ry @ Rx


def projection_matrix_fov(fov, aspect, near, far) -> tuple:
    """PyBullet's computeProjectionMatrixFOV: vertical field of view `fov` [degrees], aspect =
    width / height, clipping distances [m]; 16 floats, column-major."""
    y_scale = 1.0 / math.tan(math.radians(fov) / 2.0)
    P = np.zeros((4, 4))
    P[0, 0], P[1, 1] = y_scale / aspect, y_scale
    P[2, 2], P[2, 3] = (near + far) / (near - far), 2.0 * far * near / (near - far)
    P[3, 2] = -1.0
    return tuple(float(x) for x in P.T.ravel())


def projection_matrix(left, right, bottom, top, near, far) -> tuple:
    """PyBullet's computeProjectionMatrix (glFrustum); 16 floats, column-major."""
    P = np.zeros((4, 4))
    P[0, 0] = 2.0 * near / (right - left)
    P[1, 1] = 2.0 * near / (top - bottom)
    P[0, 2] = (right + left) / (right - left)
    P[1, 2] = (top + bottom) / (top - bottom)
    P[2, 2] = -(far + near) / (far - near)
    P[2, 3] = -2.0 * far * near / (far - near)
    P[3, 2] = -1.0
    return tuple(float(x) for x in P.T.ravel())


def camera_from_matrices(width: int, height: int, view, projection):
    """The optical frame (R, t) in the world, K (3x3) and (near, far) [m] that PyBullet's view
    and projection matrices (16 floats each, column-major) describe for a width x height
    image."""
    V = _matrix16(view, "view matrix")
    P = _matrix16(projection, "projection matrix")
    R_gl = V[:3, :3]
    if not np.allclose(R_gl @ R_gl.T, np.eye(3), atol=1e-5):
        raise ValueError("the view matrix's rotation part is not orthonormal")
    # OpenGL camera (x right, y up, -z forward) -> optical (x right, y down, z forward)
    R_WC = R_gl.T @ np.diag([1.0, -1.0, -1.0])
    t_WC = -R_gl.T @ V[:3, 3]
    if P[3, 2] != -1.0 or P[0, 0] <= 0 or P[1, 1] <= 0 or P[2, 2] == 1.0 or P[2, 2] == -1.0:
        raise ValueError("the projection matrix is not a perspective one (glFrustum form)")
    near, far = P[2, 3] / (P[2, 2] - 1.0), P[2, 3] / (P[2, 2] + 1.0)
    K = np.array([[0.5 * width * P[0, 0], 0.0, 0.5 * width * (1.0 - P[0, 2])],
                  [0.0, 0.5 * height * P[1, 1], 0.5 * height * (1.0 + P[1, 2])],
                  [0.0, 0.0, 1.0]])
    return R_WC, t_WC, K, _near_far(near, far)


def _matrix16(values, what: str) -> np.ndarray:
    M = np.asarray(values, dtype=float).reshape(-1)
    if M.shape != (16,) or not np.all(np.isfinite(M)):
        raise ValueError(f"the {what} must be 16 finite numbers (column-major 4x4)")
    return M.reshape(4, 4).T


# PyBullet's getCameraImage flags
ER_SEGMENTATION_MASK_OBJECT_AND_LINKINDEX = 1
ER_NO_SEGMENTATION_MASK = 4


def get_camera_image(sim, width, height, view_matrix=None, projection_matrix=None,
                     lightDirection=None, lightAmbientCoeff=AMBIENT,
                     lightDiffuseCoeff=DIFFUSE, flags=0, renderer=None, threads=None):
    """PyBullet's getCameraImage: (width, height, rgba (H, W, 4) uint8, depth buffer (H, W)
    float32 -- OpenGL's non-linear one, far n / (far - (far - near) buffer) gives metres, 1.0
    where nothing is seen --, segmentation (H, W) int32: the entity ID, or entity + ((link + 1)
    << 24) with flags & ER_SEGMENTATION_MASK_OBJECT_AND_LINKINDEX, -1 background; None with
    ER_NO_SEGMENTATION_MASK). view_matrix None: a camera 2 m from the origin at yaw 50, pitch
    -35 degrees, z up; projection_matrix None: 60 degrees vertical, near 0.01, far 100.
    `renderer` is accepted and ignored (there is one renderer)."""
    width, height = _image_size(width, height)
    if view_matrix is None:
        view_matrix = view_matrix_from_yaw_pitch_roll((0, 0, 0), 2.0, 50.0, -35.0, 0.0, 2)
    if projection_matrix is None:
        projection_matrix = projection_matrix_fov(60.0, width / height, 0.01, 100.0)
    R, t, K, (near, far) = camera_from_matrices(width, height, view_matrix, projection_matrix)
    camera = Camera(sim, width, height, K=K, near=near, far=far,
                    light_direction=LIGHT_DIRECTION if lightDirection is None else lightDirection,
                    ambient=lightAmbientCoeff, diffuse=lightDiffuseCoeff)
    want_segmentation = not flags & ER_NO_SEGMENTATION_MASK
    image = camera.render(R, t, segmentation=want_segmentation, threads=threads)
    rgba = np.empty((height, width, 4), dtype=np.uint8)
    rgba[..., :3] = image.rgb
    rgba[..., 3] = 255
    z = image.depth.astype(np.float64)
    seen = np.isfinite(z)
    buffer = np.ones_like(z)
    buffer[seen] = far * (z[seen] - near) / (z[seen] * (far - near))
    segmentation = image.segmentation
    if segmentation is not None and not flags & ER_SEGMENTATION_MASK_OBJECT_AND_LINKINDEX:
        segmentation = np.where(segmentation < 0, -1, segmentation & 0xFFFFFF).astype(np.int32)
    return width, height, rgba, buffer.astype(np.float32), segmentation
