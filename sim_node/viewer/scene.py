"""The viewer's scene: what a viser server draws (robots, objects, terrains, frames, contacts,
sensors, status, controls, debug items). Drawing only: no simulator, no ROS, no threads.

The scene tree (viser node names; ``root`` defaults to ``/world``)::

    {root}/{robot}/{link}                     a link frame (posed by update_poses)
    {root}/{robot}/{link}/visual/{k}          the link's k-th URDF <visual> (URDF colour)
    {root}/{robot}/{link}/collision/{k}       the k-th <collision> (hidden until toggled)
    {root}/{object}  {root}/{object}/collision/{k}    rigid objects, terrains alike
    {root}/frames/{frame}                     TF frames (update_frames; "frames" toggle)
    {root}/contacts/points, /forces           contact points and force arrows
    {root}/sensors/{name}                     camera frustums, lidar point clouds
    {root}/debug/{item}                       PyBullet debug lines / text / points

Every pose is (xyz [m], quaternion (w, x, y, z)): viser's order. The public Python API's
quaternions are (x, y, z, w); sim_node.viewer.viewer converts. Colours given to this module
are RGB(A) in [0, 1]. Every method may be called from any thread (viser queues the messages),
but from one thread at a time.
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass, replace

import numpy as np

from sim_node.model import geometry as geo

# the grey of a visual without <material> (PyBullet's GUI draws such links light grey)
DEFAULT_COLOR = (0.75, 0.75, 0.75)
COLLISION_COLOR = (1.0, 0.55, 0.1)      # collision geometry: translucent orange
COLLISION_OPACITY = 0.45
CONTACT_POINT_COLOR = (1.0, 0.1, 0.1)
CONTACT_FORCE_COLOR = (0.1, 0.3, 1.0)
LIDAR_COLOR = (0.0, 160 / 255, 0.0)
# a pose that moved less than this since it was last sent is not sent again: every message
# makes each browser render a frame (0.1 mm, or ~0.01 degree in the quaternion's components)
POSE_TOLERANCE = 1e-4
# a contact force of 1 N draws an arrow of 5 mm (a 1 kg body resting on one contact: ~5 cm);
# set_contact_scale changes it
DEFAULT_CONTACT_SCALE = 0.005          # [m/N]
PLANE_HALF_SIZE = 10.0                 # an infinite plane is drawn as a 20 m x 20 m square
SPHERE_SUBDIVISIONS = 3
CYLINDER_SECTIONS = 32
# the RTF slider: 0 means "as fast as possible" (DESIGN.md §8: 0 or [1e-3, 1e3])
RTF_SLIDER_MAX, RTF_SLIDER_STEP = 10.0, 0.05


@dataclass
class ShapeMesh:
    """A shape as triangles in its own frame: vertices (V, 3) [m], faces (F, 3)."""
    vertices: np.ndarray
    faces: np.ndarray


def shape_mesh(shape) -> ShapeMesh:
    """Triangles of a sim_node.model.geometry shape (the frame conventions of that module:
    boxes centred, cylinders and capsules along z, planes n.x = offset drawn as a square of
    side 2 PLANE_HALF_SIZE, heightfields as their grid)."""
    import trimesh.creation  # imported lazily: loading trimesh costs ~0.3 s

    if isinstance(shape, geo.Box):
        m = trimesh.creation.box(extents=shape.size)
    elif isinstance(shape, geo.Sphere):
        m = trimesh.creation.icosphere(subdivisions=SPHERE_SUBDIVISIONS, radius=shape.radius)
    elif isinstance(shape, geo.Cylinder):
        m = trimesh.creation.cylinder(radius=shape.radius, height=shape.length,
                                      sections=CYLINDER_SECTIONS)
    elif isinstance(shape, geo.Capsule):
        m = trimesh.creation.capsule(height=shape.length, radius=shape.radius,
                                     count=[CYLINDER_SECTIONS, CYLINDER_SECTIONS])
    elif isinstance(shape, geo.Mesh):
        return ShapeMesh(np.asarray(shape.vertices, dtype=np.float32),
                         np.asarray(shape.faces, dtype=np.uint32))
    elif isinstance(shape, geo.Plane):
        return _plane_mesh(np.asarray(shape.normal, float), float(shape.offset))
    elif isinstance(shape, geo.Heightfield):
        return _heightfield_mesh(shape)
    else:
        raise TypeError(f"the viewer cannot draw a {type(shape).__name__}; shapes: Box, Sphere, "
                        "Cylinder, Capsule, Mesh, Plane, Heightfield")
    return ShapeMesh(np.asarray(m.vertices, dtype=np.float32),
                     np.asarray(m.faces, dtype=np.uint32))


def _plane_mesh(normal: np.ndarray, offset: float) -> ShapeMesh:
    n = normal / np.linalg.norm(normal)
    # two axes spanning the plane
    a = np.cross(n, [1.0, 0.0, 0.0] if abs(n[0]) < 0.9 else [0.0, 1.0, 0.0])
    a /= np.linalg.norm(a)
    b = np.cross(n, a)
    c = n * offset
    h = PLANE_HALF_SIZE
    vertices = np.array([c - h * a - h * b, c + h * a - h * b, c + h * a + h * b,
                         c - h * a + h * b], dtype=np.float32)
    return ShapeMesh(vertices, np.array([[0, 1, 2], [0, 2, 3]], dtype=np.uint32))


def _heightfield_mesh(hf: geo.Heightfield) -> ShapeMesh:
    heights = np.asarray(hf.heights, dtype=float)
    ny, nx = heights.shape
    x = np.linspace(-hf.size[0] / 2, hf.size[0] / 2, nx)
    y = np.linspace(-hf.size[1] / 2, hf.size[1] / 2, ny)
    X, Y = np.meshgrid(x, y)                        # (ny, nx): z = heights[j, i]
    vertices = np.stack([X, Y, heights], axis=-1).reshape(-1, 3).astype(np.float32)
    i = np.arange(nx - 1)
    j = np.arange(ny - 1)[:, None]
    v00 = (j * nx + i).ravel()
    v10, v01, v11 = v00 + 1, v00 + nx, v00 + nx + 1
    faces = np.concatenate([np.stack([v00, v10, v11], 1), np.stack([v00, v11, v01], 1)])
    return ShapeMesh(vertices, faces.astype(np.uint32))


def wxyz_of_matrix(R) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of a rotation matrix (3, 3), or of a stack (n, 3, 3)."""
    import viser.transforms as vtf

    return np.asarray(vtf.SO3.from_matrix(np.asarray(R, dtype=float)).wxyz)


def _rgb255(color) -> tuple:
    return tuple(int(round(255 * min(max(float(c), 0.0), 1.0))) for c in color[:3])


class ViewerScene:
    """The drawing of one world on a viser server (module docstring: the scene tree).

    Attributes a test or a user may read: ``nodes`` (scene name -> viser handle of every
    geometry, frame and debug item this scene made), ``contact_arrows`` ((N, 2, 3) start and
    end of the force arrows last drawn [m]), ``paused``, ``url``.
    """

    def __init__(self, server, root: str = "/world"):
        self.server = server
        self.root = root.rstrip("/")
        self.nodes: dict = {}
        self._links: dict = {}           # "robot/link" or "object" -> frame handle
        self._visuals: dict = {}         # "robot/link" -> [visual handles] (set_link_color)
        self._visual_colors: dict = {}   # visual handle name -> rgb as loaded
        self._collision: dict = {}       # path -> collision handle
        self._tf_frames: dict = {}
        self._sensors: dict = {}
        self._clouds: dict = {}          # path -> point cloud handle (set_point_cloud)
        self._sent_poses: dict = {}      # "robot/link" or "object" -> (xyz, wxyz) last sent
        self._status_sent = None         # the status markdown last sent
        self._sliders: dict = {}
        self._debug: dict = {}           # debug item key -> handle (scene or gui)
        self._parameters = None          # the "Parameters" gui folder, made with the 1st slider
        self.contact_scale = DEFAULT_CONTACT_SCALE
        self.contact_arrows = np.zeros((0, 2, 3))
        self._contacts = None
        self.paused = False
        self.controls: dict = {}         # label -> gui handle of the owner's controls
        server.scene.set_up_direction("+z")
        # no shadow maps, no shadow plane under the grid: a browser without a GPU (software
        # WebGL: servers, CI, many laptops' headless runs) renders each frame several times
        # faster, and while updates arrive viser's page renders continuously
        server.scene.configure_default_lights(True, cast_shadow=False)
        self._grid = server.scene.add_grid(f"{self.root}/grid", width=10.0, height=10.0,
                                           plane="xy", cell_size=0.25, section_size=1.0,
                                           shadow_opacity=0.0)
        gui = server.gui
        with gui.add_folder("View"):
            self.show_visual = gui.add_checkbox("visual geometry", True)
            self.show_collision = gui.add_checkbox("collision geometry", False)
            self.show_frames = gui.add_checkbox("frames", False)
            self.show_contacts = gui.add_checkbox("contacts", True)
        self.show_visual.on_update(lambda _: self._set_visible(
            [h for hs in self._visuals.values() for h in hs], self.show_visual.value))
        self.show_collision.on_update(lambda _: self._set_visible(
            self._collision.values(), self.show_collision.value))
        self.show_frames.on_update(lambda _: self._set_frames_visible(self.show_frames.value))
        self.show_contacts.on_update(lambda _: self._set_contacts_visible())
        self.status_text = gui.add_markdown(self._status_markdown(0.0, float("nan"), "idle"))
        # a click on a body in the page selects it (viser's click callbacks run on its own
        # threads: the lock keeps the selection and its text whole against the drawing thread)
        self.selected: str | None = None
        self._selection_lock = threading.Lock()
        self._selection_sent = None
        self.selection_text = gui.add_markdown(self._selection_markdown())

    @property
    def url(self) -> str:
        host = self.server.get_host()
        host = "localhost" if host in ("0.0.0.0", "127.0.0.1", "::", "") else host
        return f"http://{host}:{self.server.get_port()}"

    # -- bodies -----------------------------------------------------------------------------
    def set_robot(self, name: str, model) -> None:
        """Draw a sim_node RobotModel: per link a frame holding its URDF visuals (colours
        from the URDF's materials) and its collision geometry (hidden until the "collision
        geometry" toggle). Poses come later through update_poses ("{name}/{link}")."""
        self.remove(name)
        for link in model.links():
            key = f"{name}/{link.getName()}"
            self._add_body_frame(key)
            self._visuals[key] = self._add_elements(
                key, "visual", link.getVisualGeometry(), collision=False)
            self._add_elements(key, "collision", link.getCollisionGeometry(), collision=True)

    def set_object(self, name: str, geometry, color=None, pose=None) -> None:
        """Draw a rigid object or any extra geometry: `geometry` is a RigidObjectModel /
        TerrainModel (its collision elements), a tuple of GeometryElements or one shape;
        color RGB(A) in [0, 1] (None: an element's own colour, else for a world's body the
        colour the CPU camera and snapshots give it (sim_node.sim.camera.body_color), else
        grey); pose (xyz, wxyz) or None (the origin until update_poses moves "{name}")."""
        self.remove(name)
        elements = _elements(geometry)
        self._add_body_frame(name)
        if color is not None:
            elements = tuple(replace(e, color=tuple(color)) for e in elements)
        elif hasattr(geometry, "getCollisionGeometry") and hasattr(geometry, "getID"):
            from sim_node.sim.camera import body_color

            default = tuple(body_color(geometry))
            elements = tuple(e if e.color is not None else replace(e, color=default)
                             for e in elements)
        self._visuals[name] = self._add_elements(name, "visual", elements, collision=False)
        self._add_elements(name, "collision", elements, collision=True)
        if pose is not None:
            self.update_poses({name: pose})

    def set_terrain(self, name: str, terrain, color=None, pose=None) -> None:
        """Draw a terrain (a TerrainModel, GeometryElements or a shape: planes as a 20 m
        square, heightfields as their grid); coloured and placed like set_object (a bare
        shape without colour: the CPU camera's TERRAIN_COLOR)."""
        if color is None and not hasattr(terrain, "getID") \
                and not any(e.color is not None for e in _elements(terrain)):
            from sim_node.sim.camera import TERRAIN_COLOR

            color = TERRAIN_COLOR
        self.set_object(name, terrain, color=color, pose=pose)

    def remove(self, name: str) -> None:
        """Remove a robot, object, terrain or TF frame and everything drawn under it."""
        frame = self._tf_frames.pop(name, None)
        if frame is not None:
            self.nodes.pop(frame.name, None)
            frame.remove()
        prefix = f"{self.root}/{name}"
        debug = {id(h) for h in self._debug.values()}     # debug items keep their parent path
        paths = [p for p, h in self.nodes.items()
                 if (p == prefix or p.startswith(prefix + "/")) and id(h) not in debug]
        for path in paths:
            handle = self.nodes.pop(path)
            self._collision.pop(path, None)
            # viser removes a node's children with it
            if path == prefix or prefix not in paths:
                handle.remove()
        for key in [k for k in self._links if k == name or k.startswith(name + "/")]:
            del self._links[key]
            self._visuals.pop(key, None)
            self._sent_poses.pop(key, None)
        if self.selected is not None and self.selected not in self._links:
            with self._selection_lock:
                self._show_selection()

    def _add_body_frame(self, key: str):
        path = f"{self.root}/{key}"
        handle = self.server.scene.add_frame(path, show_axes=self.show_frames.value,
                                             axes_length=0.1, axes_radius=0.004)
        self.nodes[path] = self._links[key] = handle

    def _add_elements(self, key: str, kind: str, elements, collision: bool) -> list:
        handles = []
        for k, element in enumerate(elements):
            mesh = shape_mesh(element.shape)
            if collision:
                rgb, opacity = COLLISION_COLOR, COLLISION_OPACITY
                visible = self.show_collision.value
            else:
                rgba = element.color or DEFAULT_COLOR
                rgb = rgba[:3]
                opacity = float(rgba[3]) if len(rgba) > 3 and rgba[3] < 1.0 else None
                visible = self.show_visual.value
            path = f"{self.root}/{key}/{kind}/{k}"
            handle = self.server.scene.add_mesh_simple(
                path, mesh.vertices, mesh.faces, color=_rgb255(rgb), opacity=opacity,
                flat_shading=isinstance(element.shape, geo.Box),
                side="double" if isinstance(element.shape, (geo.Plane, geo.Heightfield))
                else "front",
                position=np.asarray(element.origin.p, dtype=float),
                wxyz=wxyz_of_matrix(element.origin.R), visible=visible)
            handle.on_click(lambda _event, key=key: self.select(key))
            self.nodes[path] = handle
            if collision:
                self._collision[path] = handle
            else:
                self._visual_colors[path] = tuple(rgb)
            handles.append(handle)
        return handles

    # -- selection (a click in the page) ----------------------------------------------------
    def select(self, key: str | None) -> None:
        """Select body "robot/link" or "object" (None, or a name not drawn: nothing): the
        panel below the status shows its name and pose, following it as it moves. A click
        on a body's visual (or shown collision) geometry in the page calls this."""
        with self._selection_lock:
            self.selected = key if key in self._links else None
            self._show_selection()

    def _selection_markdown(self) -> str:
        key = self.selected
        if key is None:
            return "**selected** – (click a body)"
        handle = self._links[key]
        p, q = handle.position, handle.wxyz
        return (f"**selected** {key}  \n**xyz** {p[0]:.3f}, {p[1]:.3f}, {p[2]:.3f} m  \n"
                f"**wxyz** {q[0]:.3f}, {q[1]:.3f}, {q[2]:.3f}, {q[3]:.3f}")

    def _show_selection(self) -> None:
        if self.selected is not None and self.selected not in self._links:
            self.selected = None                    # removed
        text = self._selection_markdown()
        if text != self._selection_sent:
            self._selection_sent = self.selection_text.content = text

    def update_poses(self, poses: dict, tolerance: float = POSE_TOLERANCE) -> None:
        """Move link / object frames: {"robot/link" or "object": (xyz, wxyz)}; unknown names
        are ignored (a body removed while its pose was on the way). A frame within
        `tolerance` of the pose last sent is not sent again (a resting body costs the
        browsers nothing; viser's own check only drops numerically equal poses); a caller
        that filters itself passes 0 (sim_node view sends the exact poses once at rest)."""
        sent = self._sent_poses
        with self.server.atomic():
            for key, (xyz, wxyz) in poses.items():
                handle = self._links.get(key)
                if handle is None:
                    continue
                xyz = np.asarray(xyz, dtype=float)
                wxyz = np.asarray(wxyz, dtype=float)
                last = sent.get(key)
                if last is not None and np.max(np.abs(last[0] - xyz)) <= tolerance \
                        and np.max(np.abs(last[1] - wxyz)) <= tolerance:
                    continue
                sent[key] = (xyz, wxyz)
                handle.position = xyz
                handle.wxyz = wxyz
            if self.selected is not None and self.selected in poses:
                with self._selection_lock:
                    self._show_selection()

    def set_link_color(self, key: str, color) -> None:
        """Recolour every visual of "robot/link" (or of an object): RGB in [0, 1], or None for
        the colours it was loaded with."""
        for handle in self._visuals.get(key, ()):
            handle.color = _rgb255(color if color is not None
                                   else self._visual_colors[handle.name])

    @staticmethod
    def _set_visible(handles, visible: bool):
        for h in handles:
            h.visible = visible

    # -- frames, contacts, sensors ----------------------------------------------------------
    def update_frames(self, frames: dict) -> None:
        """TF frames {name: (xyz, wxyz)} drawn as axes under {root}/frames (visible with the
        "frames" toggle); a name seen before moves, a new one is added."""
        with self.server.atomic():
            for name, (xyz, wxyz) in frames.items():
                handle = self._tf_frames.get(name)
                if handle is None:
                    path = f"{self.root}/frames/{name.strip('/')}"
                    handle = self.server.scene.add_frame(
                        path, axes_length=0.15, axes_radius=0.005,
                        visible=self.show_frames.value)
                    self._tf_frames[name] = self.nodes[path] = handle
                handle.position = xyz
                handle.wxyz = wxyz

    def _set_frames_visible(self, visible: bool):
        for handle in self._links.values():
            handle.show_axes = visible
        self._set_visible(self._tf_frames.values(), visible)

    def set_contact_scale(self, metres_per_newton: float) -> None:
        """Length of a force arrow per newton of contact force [m/N] (> 0)."""
        if not (math.isfinite(metres_per_newton) and metres_per_newton > 0):
            raise ValueError(f"contact scale must be a finite number > 0 [m/N], got "
                             f"{metres_per_newton!r}")
        self.contact_scale = float(metres_per_newton)

    def update_contacts(self, points, normals, forces) -> None:
        """Contacts: points (N, 3) [m], unit normals (N, 3), force magnitudes along the normal
        (N,) [N]. Each draws a point and an arrow from the point along the normal of length
        contact_scale * force."""
        points = np.asarray(points, dtype=float).reshape(-1, 3)
        normals = np.asarray(normals, dtype=float).reshape(-1, 3)
        forces = np.asarray(forces, dtype=float).reshape(-1)
        if not (len(points) == len(normals) == len(forces)):
            raise ValueError(f"update_contacts: points ({len(points)}), normals "
                             f"({len(normals)}) and forces ({len(forces)}) differ in length")
        ends = points + normals * (self.contact_scale * forces)[:, None]
        self.contact_arrows = np.stack([points, ends], axis=1)
        path = f"{self.root}/contacts"
        points_handle = self.nodes.get(f"{path}/points")
        arrows_handle = self.nodes.get(f"{path}/forces")
        with self.server.atomic():
            if len(points) == 0:
                # hidden, not removed: the next contacts update the same nodes in place
                self._contacts = None
                for handle in (points_handle, arrows_handle):
                    if handle is not None and handle.visible:
                        handle.visible = False
                return
            self._contacts = len(points)
            visible = bool(self.show_contacts.value)
            arrows = self.contact_arrows.astype(np.float32)
            if points_handle is None:
                self.nodes[f"{path}/points"] = self.server.scene.add_point_cloud(
                    f"{path}/points", points.astype(np.float32), _rgb255(CONTACT_POINT_COLOR),
                    point_size=0.015, point_shape="circle", visible=visible)
                self.nodes[f"{path}/forces"] = self.server.scene.add_arrows(
                    f"{path}/forces", arrows, _rgb255(CONTACT_FORCE_COLOR), shaft_radius=0.004,
                    head_radius=0.01, head_length=0.02, visible=visible)
                return
            # in place: a node re-added at every frame makes the browsers rebuild it
            _set_points(points_handle, points.astype(np.float32), CONTACT_POINT_COLOR)
            _set_points(arrows_handle, arrows, CONTACT_FORCE_COLOR)
            for handle in (points_handle, arrows_handle):
                if handle.visible != visible:
                    handle.visible = visible

    def _set_contacts_visible(self):
        for sub in ("points", "forces"):
            handle = self.nodes.get(f"{self.root}/contacts/{sub}")
            if handle is not None:
                handle.visible = bool(self.show_contacts.value) and self._contacts is not None

    def update_sensors(self, cameras: dict | None = None, lidars: dict | None = None) -> None:
        """Sensors: cameras {name: (xyz, wxyz, fov_y [rad], aspect w/h)} drawn as frustums
        (pose of the optical frame: +z forward, +x right, +y down, REP-103 optical / OpenCV);
        lidars {name: points (N, 3) in the world [m]} drawn as point clouds. A sensor drawn
        before is updated in place (its viser node keeps its identity: re-adding a node at
        every update stalls the browsers on a stream of new nodes)."""
        with self.server.atomic():
            for name, (xyz, wxyz, fov_y, aspect) in (cameras or {}).items():
                path = f"{self.root}/sensors/{name}"
                handle = self._sensors.get(path)
                if handle is None:
                    handle = self.server.scene.add_camera_frustum(
                        path, fov=float(fov_y), aspect=float(aspect), scale=0.15,
                        color=(40, 40, 40), position=tuple(map(float, xyz)),
                        wxyz=tuple(map(float, wxyz)))
                    self._sensors[path] = self.nodes[path] = handle
                    self._sent_poses[path] = (np.asarray(xyz, float), np.asarray(wxyz, float))
                    continue
                # shape props in place (viser sends them only when they differ)
                handle.fov = float(fov_y)
                handle.aspect = float(aspect)
                xyz, wxyz = np.asarray(xyz, dtype=float), np.asarray(wxyz, dtype=float)
                last = self._sent_poses.get(path)
                if last is None or np.max(np.abs(last[0] - xyz)) > POSE_TOLERANCE \
                        or np.max(np.abs(last[1] - wxyz)) > POSE_TOLERANCE:
                    self._sent_poses[path] = (xyz, wxyz)
                    handle.position = xyz
                    handle.wxyz = wxyz
            for name, points in (lidars or {}).items():
                path = f"{self.root}/sensors/{name}"
                self._sensors[path] = self.set_point_cloud(path, points)

    def set_point_cloud(self, path: str, points, color=LIDAR_COLOR,
                        point_size: float = 0.02):
        """Draw points (N, 3) [m, world] as the point cloud at scene path `path` (one colour,
        RGB in [0, 1]); a cloud drawn there before gets the new points in place (the same
        viser handle; re-adding the node at every scan stalled viser 1.1.1's client after a
        few seconds). Returns the handle."""
        points = np.asarray(points, dtype=np.float32).reshape(-1, 3)
        handle = self._clouds.get(path)
        if handle is None:
            handle = self.server.scene.add_point_cloud(path, points, _rgb255(color),
                                                       point_size=point_size)
            self._clouds[path] = self.nodes[path] = handle
        else:
            with self.server.atomic():
                _set_points(handle, points, color)
        return handle

    # -- status and controls ----------------------------------------------------------------
    @staticmethod
    def _status_markdown(sim_time: float, rtf: float, status: str) -> str:
        rtf_text = "–" if not math.isfinite(rtf) else f"{rtf:.2f}"
        return (f"**sim time** {sim_time:.3f} s  \n**RTF** {rtf_text}  \n"
                f"**status** {status}")

    def update_status(self, sim_time: float, rtf: float, status: str) -> None:
        """The status panel: simulated time [s], measured real-time factor (nan: unknown) and
        a status word (running, paused, the engine's status string)."""
        text = self._status_markdown(sim_time, rtf, status)
        if text != self._status_sent:     # unchanged: skip viser's markdown parsing
            self._status_sent = self.status_text.content = text

    def add_controls(self, on_pause=None, on_step=None, on_reset=None, on_rtf=None,
                     rtf: float = 1.0) -> None:
        """Pause / Step / Reset buttons and an RTF slider whose callbacks the owner supplies:
        on_pause(paused: bool), on_step(), on_reset(), on_rtf(rtf: float; 0 = as fast as
        possible). Pause toggles: its label reads "Resume" while paused."""
        gui = self.server.gui
        with gui.add_folder("Simulation"):
            pause = gui.add_button("Pause")
            step = gui.add_button("Step")
            reset = gui.add_button("Reset")
            slider = gui.add_slider("RTF (0: max)", 0.0, RTF_SLIDER_MAX, RTF_SLIDER_STEP,
                                    min(max(float(rtf), 0.0), RTF_SLIDER_MAX))
        self.controls = {"pause": pause, "step": step, "reset": reset, "rtf": slider}

        def pressed_pause(_):
            self.set_paused(not self.paused)
            if on_pause is not None:
                on_pause(self.paused)

        pause.on_click(pressed_pause)
        if on_step is not None:
            step.on_click(lambda _: on_step())
        if on_reset is not None:
            reset.on_click(lambda _: on_reset())
        if on_rtf is not None:
            slider.on_update(lambda _: on_rtf(float(slider.value)))

    def set_paused(self, paused: bool) -> None:
        """Show the paused state (the Pause button reads "Resume" while paused)."""
        self.paused = bool(paused)
        if "pause" in self.controls:
            self.controls["pause"].label = "Resume" if self.paused else "Pause"

    # -- debug drawing (PyBullet's user debug items) ----------------------------------------
    def _debug_path(self, key, parent: str | None) -> str:
        # items attached to a link live under its frame and move with it
        base = f"{self.root}/{parent}" if parent else f"{self.root}/debug"
        return f"{base}/debug_{key}"

    def add_debug_line(self, key, start, end, color, width: float = 1.0,
                       parent: str | None = None) -> None:
        """A line segment start -> end [m] (in the frame of body key `parent`, e.g.
        "robot/link", or the world), RGB in [0, 1], width in screen pixels."""
        self.remove_debug(key)
        path = self._debug_path(key, parent)
        handle = self.server.scene.add_line_segments(
            path, np.array([[start, end]], dtype=np.float32), _rgb255(color),
            thickness=max(float(width), 1.0), thickness_units="screen")
        self._debug[key] = self.nodes[path] = handle

    def add_debug_text(self, key, text: str, position, color, size: float = 1.0,
                       parent: str | None = None) -> None:
        """A text label at position [m] (parent as add_debug_line); size scales the font."""
        self.remove_debug(key)
        path = self._debug_path(key, parent)
        handle = self.server.scene.add_label(path, str(text), position=tuple(position),
                                             font_screen_scale=max(float(size), 0.1),
                                             anchor="center-center")
        self._debug[key] = self.nodes[path] = handle

    def add_debug_points(self, key, positions, colors, size: float = 1.0,
                         parent: str | None = None) -> None:
        """Points (N, 3) [m] with colours (N, 3) RGB in [0, 1]; size in screen pixels."""
        self.remove_debug(key)
        path = self._debug_path(key, parent)
        colors = np.asarray(colors, dtype=float).reshape(-1, 3)
        handle = self.server.scene.add_point_cloud(
            path, np.asarray(positions, dtype=np.float32).reshape(-1, 3),
            np.round(255 * np.clip(colors, 0, 1)).astype(np.uint8),
            point_size=0.005 * max(float(size), 1.0))
        self._debug[key] = self.nodes[path] = handle

    def add_slider(self, key, name: str, low: float, high: float, start: float) -> None:
        """A user slider in the "Parameters" folder; read_slider(key) reads what the browser
        set. low == high or low > high (PyBullet's button idiom) still gives a slider."""
        self.remove_debug(key)
        lo, hi = float(min(low, high)), float(max(low, high))
        if hi == lo:
            hi = lo + 1.0
        step = (hi - lo) / 1000.0
        folder = self._parameters_folder()
        with folder:
            handle = self.server.gui.add_slider(str(name), lo, hi, step,
                                                min(max(float(start), lo), hi))
        self._sliders[key] = handle
        self._debug[key] = handle

    def _parameters_folder(self):
        if self._parameters is None:
            self._parameters = self.server.gui.add_folder("Parameters")
        return self._parameters

    def read_slider(self, key) -> float:
        return float(self._sliders[key].value)

    def remove_debug(self, key) -> None:
        """Remove a debug item (line, text, points or slider); unknown keys are ignored."""
        handle = self._debug.pop(key, None)
        if handle is None:
            return
        self._sliders.pop(key, None)
        for path in [p for p, h in self.nodes.items() if h is handle]:
            del self.nodes[path]
        handle.remove()

    def set_camera(self, position, look_at, up=(0.0, 0.0, 1.0)) -> None:
        """Point every browser's camera (and the initial camera of browsers yet to come) from
        position to look_at [m]."""
        position, look_at = tuple(map(float, position)), tuple(map(float, look_at))
        self.server.initial_camera.position = position
        self.server.initial_camera.look_at = look_at
        self.server.initial_camera.up = tuple(map(float, up))
        for client in self.server.get_clients().values():
            with client.atomic():
                client.camera.position = position
                client.camera.look_at = look_at
                client.camera.up_direction = tuple(map(float, up))


def _set_points(handle, points: np.ndarray, color) -> None:
    """New points (a cloud's (N, 3) or arrows' (N, 2, 3)) of a one-colour viser handle, in
    place; the colours follow a change of N (viser checks (N, 3) colours against N)."""
    n_before = len(handle.points)
    handle.points = points
    if len(points) != n_before or handle.colors.shape not in ((3,), (len(points), 3)):
        handle.colors = np.tile(np.asarray(_rgb255(color), dtype=np.uint8), (len(points), 1))


def _elements(geometry) -> tuple:
    """GeometryElements of a body, an element tuple or a bare shape."""
    from sim_node.model.urdf import GeometryElement, Origin

    if hasattr(geometry, "getCollisionGeometry"):
        return tuple(geometry.getCollisionGeometry())
    if isinstance(geometry, GeometryElement):
        return (geometry,)
    if isinstance(geometry, (tuple, list)):
        return tuple(geometry)
    return (GeometryElement(origin=Origin(), shape=geometry),)
