"""The viewer on ROS: what a simulation node publishes, drawn in a sim_node.viewer ViewerScene.

Translation only (DESIGN.md §1): ROS messages in, ViewerScene calls out, and the page's buttons
out again as the node's services and parameters. Two ways in share it:

  ``sim_node view``   (`main`): a separate process that attaches to a running node (or to a bag
                      played by ``sim_node replay --states``): it subscribes robot_description
                      (transient local, every ``*/robot_description`` topic), /tf, /tf_static,
                      /clock, <node>/contacts, <node>/status and the sensor topics (CameraInfo
                      -> frustums, LaserScan and PointCloud2 -> points), found as they appear.
  ``viewer:=true``    (sim_node/ros/view_node.py): the node serves the page itself, fed with
                      the messages it publishes.

Messages only land in a `Latest` store (the newest of each kind, no work beyond keeping a
reference); a drawing thread turns the store into scene updates at most MAX_RATE times a
second of wall time: the simulation never waits for the viewer.

Controls (pause/step/reset buttons, RTF slider) call <node>/set_simulation_state
(PAUSED / PLAYING), <node>/step_simulation (1 step), <node>/reset_simulation (SCOPE_DEFAULT)
and set the node's real_time_factor parameter (<node>/set_parameters; 0 = as fast as
possible), asynchronously; a refusal is printed, and ~/status shows the state that holds.
"""
from __future__ import annotations

import argparse
import errno
import math
import re
import signal
import socket
import struct
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from sim_node.viewer.scene import wxyz_of_matrix

MAX_RATE = 30.0                 # [Hz] of wall time: the drawing thread's ceiling (issue 15)
SENSOR_PERIOD = 0.2             # [s] of wall time between two redraws of a point cloud
MAX_CLOUD_POINTS = 5000         # a point cloud is drawn with at most this many points
DISCOVERY_PERIOD = 1.0          # [s] of wall time between looks for new topics (sim_node view)
MIN_FRAMED_RADIUS = 0.5         # [m] the first view shows at least this much around the bodies
# a pose or contact that moved less than this since it was last sent is not sent again: every
# update makes each browser render a frame (0.1 mm, or ~0.01 degree; 1 mm of a force arrow)
POSE_TOLERANCE = 1e-4
ARROW_TOLERANCE = 1e-3          # [m]
TF_BACKLOG = 256                # /tf messages kept between two draws (sim_node view)
MAX_FRAMES = 10_000             # TF frames kept; more are ignored (a hostile publisher's flood)
MAX_COORDINATE = 1e6            # [m] a TF translation beyond this is ignored, as NaN is
MAX_DESCRIPTION_BYTES = 8 << 20     # a robot_description larger than this is not drawn
MAX_DESCRIPTION_LINKS = 1000        # nor one with more links
MAX_DESCRIPTION_RETRIES = 20        # geometry elements left out one by one, at most
MAX_WARNINGS = 1000             # different problems of messages said (each once)
WORLD_FRAME = "world"
DESCRIPTION_SUFFIX = "robot_description"
CAMERA_INFO_TYPE = "sensor_msgs/msg/CameraInfo"
SCAN_TYPE = "sensor_msgs/msg/LaserScan"
CLOUD_TYPE = "sensor_msgs/msg/PointCloud2"
STRING_TYPE = "std_msgs/msg/String"


# -- poses ---------------------------------------------------------------------------------------
def matrix_of_xyzw(q) -> np.ndarray:
    """Rotation matrix (3, 3) of a quaternion (x, y, z, w) (normalised here)."""
    x, y, z, w = np.asarray(q, dtype=float) / (np.linalg.norm(q) or 1.0)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


class FrameTree:
    """TF frames as received: child -> (parent, R (3, 3), p (3,)), static and moving apart
    (a moving transform of a frame overrides a static one, as tf2 does)."""

    def __init__(self):
        self.static: dict = {}
        self.moving: dict = {}

    def update(self, message, static: bool) -> list:
        """Take a tf2_msgs/TFMessage, or its serialized bytes. Returns what was ignored, each a
        line naming the frame: a non-finite or farther than MAX_COORDINATE translation, a
        quaternion that is not finite or not of unit length (tf2's test: |q|^2 within 0.01 of
        1), frames beyond MAX_FRAMES."""
        frames = self.static if static else self.moving
        ignored = []
        for parent, child, xyz, xyzw in tf_entries(message):
            xyz, xyzw = np.asarray(xyz, dtype=float), np.asarray(xyzw, dtype=float)
            child = child.lstrip("/")
            if not (np.all(np.isfinite(xyz)) and np.all(np.isfinite(xyzw))
                    and np.abs(xyz).max() <= MAX_COORDINATE
                    and abs(float(xyzw @ xyzw) - 1.0) <= 0.01):
                ignored.append(f"frame '{child}': translation {xyz.tolist()}, rotation "
                               f"{xyzw.tolist()} (finite, within {MAX_COORDINATE:g} m, unit "
                               f"quaternion) ignored")
                continue
            if child not in frames and len(self.static) + len(self.moving) >= MAX_FRAMES:
                ignored.append(f"frame '{child}': more than {MAX_FRAMES} frames; ignored")
                continue
            frames[child] = (parent.lstrip("/"), matrix_of_xyzw(xyzw), xyz)
        return ignored

    def world_poses(self) -> dict:
        """{frame: (R (3, 3), p (3,)) [m]} of every frame connected to the world frame
        (iteratively: a chain of any length; a loop is not connected)."""
        parents = {**self.static, **self.moving}
        poses = {WORLD_FRAME: (np.eye(3), np.zeros(3))}
        for frame in parents:
            chain, seen = [], set()
            while frame not in poses and frame in parents and frame not in seen:
                seen.add(frame)
                chain.append(frame)
                frame = parents[frame][0]
            base = poses.get(frame)
            if base is None:
                continue            # off the world, or a loop
            for child in reversed(chain):
                _, R, p = parents[child]
                base = poses[child] = (base[0] @ R, base[0] @ p + base[1])
        return poses


def tf_entries(message) -> list:
    """[(parent, child, (x, y, z), (qx, qy, qz, qw))] of a tf2_msgs/TFMessage or of its CDR
    bytes (read here directly: rclpy's deserialization builds a Python object per field and
    cost ~2 ms for the default world's 30 frames)."""
    if not isinstance(message, (bytes, bytearray, memoryview)):
        return [(t.header.frame_id, t.child_frame_id,
                 (t.transform.translation.x, t.transform.translation.y,
                  t.transform.translation.z),
                 (t.transform.rotation.x, t.transform.rotation.y, t.transform.rotation.z,
                  t.transform.rotation.w)) for t in message.transforms]
    data = bytes(message)
    if len(data) < 8 or data[1] != 1:
        raise ValueError("TFMessage: not little-endian CDR")
    # XCDR1: a 4-byte encapsulation header, primitives aligned to their size from its end
    offset = 4
    entries = []

    def uint32():
        nonlocal offset
        offset += (-(offset - 4)) % 4
        (value,) = _UINT32.unpack_from(data, offset)
        offset += 4
        return value

    def string():
        nonlocal offset
        size = uint32()
        text = data[offset:offset + size - 1].decode()
        offset += size
        return text

    try:
        for _ in range(uint32()):
            uint32(), uint32()                          # header.stamp
            parent, child = string(), string()
            offset += (-(offset - 4)) % 8
            values = _SEVEN_DOUBLES.unpack_from(data, offset)
            offset += 56
            entries.append((parent, child, values[:3], values[3:]))
    except (struct.error, UnicodeDecodeError):
        raise ValueError(f"TFMessage: malformed at byte {offset} of {len(data)}") from None
    return entries


_UINT32 = struct.Struct("<I")
_SEVEN_DOUBLES = struct.Struct("<7d")


# -- robot descriptions ----------------------------------------------------------------------------
def description_model(xml: str, name: str | None = None):
    """A RobotModel of a robot_description for drawing: geometry that cannot be loaded here
    (a mesh path relative to a file this process does not know, a package not installed) is
    left out, each named in the returned list with the loader's other repairs. (model, [what
    was left out or repaired])."""
    import warnings

    from lxml import etree

    from sim_node.model.errors import ModelLoadError, URDFWarning
    from sim_node.model.world import WorldModel

    from sim_node.model.urdf import parse_urdf

    if not xml.lstrip().startswith("<"):
        # (the loader would take other text for a file path on this machine)
        raise ValueError("not URDF XML (it does not start with '<')")
    if len(xml.encode()) > MAX_DESCRIPTION_BYTES:
        raise ValueError(f"{len(xml.encode())} bytes, more than the "
                         f"{MAX_DESCRIPTION_BYTES >> 20} MB drawn")
    if xml.count("<link") > MAX_DESCRIPTION_LINKS:
        raise ValueError(f"{xml.count('<link')} links, more than the {MAX_DESCRIPTION_LINKS} "
                         f"drawn")
    left_out = []
    text = xml
    for _ in range(MAX_DESCRIPTION_RETRIES):
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                # no $(env ...) / $(find ...): a topic's text must not read this machine
                urdf = parse_urdf(text, substitutions=False)
                model = WorldModel().loadRobot(urdf, fixed_base=True, name=name)
            # the loader's own repairs (an unusable <visual> left out, ...)
            return model, left_out + [str(w.message) for w in caught
                                      if issubclass(w.category, URDFWarning)]
        except ModelLoadError as error:
            line = getattr(error, "line", None)
            try:
                root = etree.fromstring(text.encode(), etree.XMLParser(
                    resolve_entities=False, no_network=True))
            except etree.XMLSyntaxError:
                raise error from None
            culprit = next((el for el in root.iter("visual", "collision")
                            if line is not None and el.sourceline is not None
                            and el.sourceline <= line <= _last_line(el)), None)
            if culprit is None:
                raise
            left_out.append(f"{error.element}: {error.problem}")
            culprit.getparent().remove(culprit)
            text = etree.tostring(root, encoding="unicode")
    raise ValueError(f"more than {MAX_DESCRIPTION_RETRIES} geometry elements cannot be loaded")


def _last_line(element) -> int:
    last = element.sourceline or 0
    for child in element.iter():
        last = max(last, child.sourceline or 0)
    return last


# -- the latest messages -------------------------------------------------------------------------
@dataclass
class Latest:
    """What the drawing thread has not drawn yet: the newest message of each kind (references;
    filled from ROS callbacks or the node's publishers, emptied by `RosScene.draw`)."""
    descriptions: dict = field(default_factory=dict)    # topic -> xml
    tf: deque = field(default_factory=lambda: deque(maxlen=TF_BACKLOG))  # TFMessage / bytes
    tf_static: deque = field(default_factory=lambda: deque(maxlen=TF_BACKLOG))
    clock: object = None            # rosgraph_msgs/Clock or bytes
    contacts: object = None         # sim_node/Contacts or bytes
    status: object = None           # sim_node/SimStatus or bytes
    sensors: dict = field(default_factory=dict)  # topic -> (type name, message, class)
    # the world's bodies when the viewer runs in the node: (kind, name, model, frame prefix)
    # with kind "robot" / "object" / "terrain" (None: unchanged since the last draw)
    entities: tuple | None = None


def _message(value, msg_type):
    """A message object from what a publisher published or a raw subscription received."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        from rclpy.serialization import deserialize_message

        return deserialize_message(bytes(value), msg_type)
    return value


def _seconds(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


# -- translation -----------------------------------------------------------------------------------
class RosScene:
    """Turns the messages of a `Latest` store into ViewerScene updates (`draw`, from one
    thread). Robots are keyed in the scene by name, their links by "<robot>/<link>"; a TF
    frame "<prefix><link>" of a robot drawn with that prefix poses that link, any other frame
    named like a drawn body (a rigid object, a terrain) poses it; every frame is drawn as axes
    under the scene's "frames" toggle."""

    def __init__(self, scene, latest: Latest | None = None, log=print):
        self.scene = scene
        self.latest = latest if latest is not None else Latest()
        self.log = log
        self.frames = FrameTree()
        self._link_keys: dict = {}          # TF frame -> scene key ("robot/link" or body)
        self._entities: dict = {}           # name -> (kind, model, prefix) drawn (in the node)
        self._sent_links: dict = {}         # scene key -> (p, wxyz) last sent
        self._sent_frames: dict = {}        # TF frame -> (p, wxyz) last sent
        self._frames_shown = False
        self._camera_set = False
        self._sent_contacts = None          # (points, arrow ends) last sent
        self._sent_status = None
        self._robots_of_topic: dict = {}    # description topic -> (robot name, xml)
        self._sensor_drawn: dict = {}       # topic -> wall time of its last point cloud
        self.sim_time = 0.0
        self.rtf = math.nan
        self.status_word = "waiting for the node"
        self.paused: bool | None = None     # as ~/status says (None: no status yet)
        self._status_time = -math.inf       # wall time the last ~/status was taken
        self.control_time = -math.inf       # wall time of the last control's answer
        self.drawn = 0
        self._warned: set = set()           # (topic, what) said once (_warn)
        self._contacts_topic = "~/contacts"     # as named in warnings

    # -- bodies ------------------------------------------------------------------------------
    def add_robot(self, name: str, model, frame_prefix: str) -> None:
        """Draw a RobotModel whose link frames are "<frame_prefix><link>"."""
        self.scene.set_robot(name, model)
        self._sent_links = {k: v for k, v in self._sent_links.items()
                            if not k.startswith(name + "/")}
        for key in [k for k, v in self._link_keys.items() if v.startswith(name + "/")]:
            del self._link_keys[key]
        for link in model.links():
            self._link_keys[frame_prefix + link.getName()] = f"{name}/{link.getName()}"

    def add_body(self, name: str, model, terrain: bool = False) -> None:
        """Draw a rigid object or terrain model posed by the TF frame of its name."""
        (self.scene.set_terrain if terrain else self.scene.set_object)(name, model)
        self._sent_links.pop(name, None)
        self._link_keys[name] = name

    def _sync_entities(self, entities) -> None:
        """Draw the bodies that appeared (spawn), remove those gone (delete)."""
        current = {name: (kind, model, prefix) for kind, name, model, prefix in entities}
        for name in [n for n, drawn in self._entities.items()
                     if current.get(n, (None, None))[1] is not drawn[1]]:
            self.scene.remove(name)
            del self._entities[name]
            self._link_keys = {f: k for f, k in self._link_keys.items()
                               if k != name and not k.startswith(name + "/")}
        for name, (kind, model, prefix) in current.items():
            if name in self._entities:
                continue
            if kind == "robot":
                self.add_robot(name, model, prefix)
            else:
                self.add_body(name, model, terrain=kind == "terrain")
            self._entities[name] = (kind, model, prefix)

    def _description(self, topic: str, xml: str) -> None:
        namespace = topic.rstrip("/")[:-len(DESCRIPTION_SUFFIX)].strip("/")
        previous = self._robots_of_topic.get(topic)
        if previous is not None and previous[1] == xml:
            return
        try:
            model, left_out = description_model(xml)
        except Exception as error:      # noqa: BLE001 (a bad description is reported, skipped)
            self.log(f"sim_node view: {topic}: cannot draw this robot: {error}")
            return
        for problem in left_out:
            self.log(f"sim_node view: {topic}: left out or repaired: {problem}")
        name = namespace.replace("/", "_") or model.getName()
        if previous is not None and previous[0] != name:
            self.scene.remove(previous[0])
        self._robots_of_topic[topic] = (name, xml)
        self.add_robot(name, model, f"{namespace}/" if namespace else "")

    # -- drawing -----------------------------------------------------------------------------
    def draw(self) -> None:
        """Take what arrived since the last draw and update the scene."""
        # one batch: the browsers apply it at once, and viser's sending thread is woken once
        with self.scene.server.atomic():
            self._draw()
        self.drawn += 1

    def _draw(self) -> None:
        from sim_node.msg import Contacts, SimStatus

        latest = self.latest
        entities, latest.entities = latest.entities, None
        if entities is not None:
            self._sync_entities(entities)
        for topic, xml in list(latest.descriptions.items()):
            latest.descriptions.pop(topic, None)
            self._description(topic, xml)
        # while TF streams in, a pose that moved less than POSE_TOLERANCE is not sent again;
        # at the first draw without new TF (paused, the bag's end) each is sent exactly
        tolerance = POSE_TOLERANCE if latest.tf or latest.tf_static else 0.0
        for queue, static in ((latest.tf_static, True), (latest.tf, False)):
            topic = "/tf_static" if static else "/tf"
            while queue:
                try:
                    ignored = self.frames.update(queue.popleft(), static)
                except ValueError as error:
                    ignored = [str(error)]
                for problem in ignored:
                    self._warn(topic, problem)
        clock, latest.clock = latest.clock, None
        if clock is not None:
            if isinstance(clock, (bytes, bytearray, memoryview)):   # after the CDR header
                sec, nanosec = struct.unpack_from("<iI", clock, 4)
                self.sim_time = sec + nanosec * 1e-9
            else:
                self.sim_time = _seconds(clock.clock)
        status, latest.status = latest.status, None
        if status is not None:
            self._status(_message(status, SimStatus))
        contacts, latest.contacts = latest.contacts, None
        poses = self.frames.world_poses()
        self._draw_poses(poses, tolerance)
        if contacts is not None:
            self._draw_contacts(_message(contacts, Contacts))
        self._draw_sensors(poses)
        status = (round(self.sim_time, 3), self.rtf, self.status_word)
        if status != self._sent_status:
            self._sent_status = status
            self.scene.update_status(*status)

    def _warn(self, topic: str, problem: str) -> None:
        """Say a problem of a topic's message once per kind (the first line per topic and
        frame; at most MAX_WARNINGS different ones)."""
        key = (topic, problem.split(":", 1)[0])
        if key in self._warned or len(self._warned) >= MAX_WARNINGS:
            return
        self._warned.add(key)
        self.log(f"sim_node view: {topic}: {problem}")

    def _status(self, status) -> None:
        self.rtf = float(status.real_time_factor)
        self.sim_time = max(self.sim_time, _seconds(status.sim_time))
        engine = status.engine_status_string
        self.status_word = ("paused" if status.paused else "running") + (
            "" if engine in ("", "normal") else f" ({engine})")
        self.paused = bool(status.paused)
        self._status_time = time.monotonic()
        # the node's word wins, unless a button was pressed after this status was sent
        if self._status_time > self.control_time + 1.0 and self.scene.paused != self.paused:
            self.scene.set_paused(self.paused)

    def _draw_poses(self, poses: dict, tolerance: float = POSE_TOLERANCE) -> None:
        # only what moved goes to the browsers (a resting body costs nothing per frame), and
        # TF axes only while the "frames" toggle shows them
        show_frames = bool(self.scene.show_frames.value)
        if show_frames and not self._frames_shown:
            self._sent_frames.clear()
        self._frames_shown = show_frames
        names = [frame for frame in poses if frame != WORLD_FRAME
                 and (frame in self._link_keys or show_frames)]
        if not names:
            return
        p = np.stack([poses[frame][1] for frame in names])
        wxyz = wxyz_of_matrix(np.stack([poses[frame][0] for frame in names]))
        links, frames = {}, {}
        for i, frame in enumerate(names):
            key = self._link_keys.get(frame)
            if key is not None and _moved(self._sent_links.get(key), p[i], wxyz[i], tolerance):
                links[key] = self._sent_links[key] = (p[i], wxyz[i])
            if show_frames and _moved(self._sent_frames.get(frame), p[i], wxyz[i], tolerance):
                frames[frame] = self._sent_frames[frame] = (p[i], wxyz[i])
        if links:
            # filtered above (exactly at rest): the scene must not filter again
            self.scene.update_poses(links, tolerance=0.0)
        if frames:
            self.scene.update_frames(frames)
        if not self._camera_set and links:
            self._camera_set = True
            self.scene.set_camera(*framing_camera(p))

    def _draw_contacts(self, message) -> None:
        n = len(message.contacts)
        points, normals, forces = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros(n)
        for i, c in enumerate(message.contacts):
            points[i] = (c.position.x, c.position.y, c.position.z)
            normals[i] = (c.normal.x, c.normal.y, c.normal.z)
            # the arrow shows the normal (pressing) part of the force on body 1
            forces[i] = abs(c.force.x * c.normal.x + c.force.y * c.normal.y
                            + c.force.z * c.normal.z)
        finite = np.all(np.isfinite(points), axis=1) & np.all(np.isfinite(normals), axis=1) \
            & np.isfinite(forces) & (np.abs(points).max(axis=1, initial=0) <= MAX_COORDINATE)
        if not finite.all():
            self._warn(self._contacts_topic, f"contacts: {int((~finite).sum())} with a "
                       f"non-finite or farther than {MAX_COORDINATE:g} m value left out")
            points, normals, forces = points[finite], normals[finite], forces[finite]
            n = len(points)
        ends = points + normals * (self.scene.contact_scale * forces)[:, None]
        sent = self._sent_contacts
        if sent is not None and sent[0].shape == points.shape \
                and (n == 0 or (np.max(np.abs(sent[0] - points)) <= POSE_TOLERANCE
                                and np.max(np.abs(sent[1] - ends)) <= ARROW_TOLERANCE)):
            return
        self._sent_contacts = (points, ends)
        self.scene.update_contacts(points, normals, forces)

    def _draw_sensors(self, poses: dict) -> None:
        cameras, lidars = {}, {}
        now = time.monotonic()
        for topic, (kind, message, msg_type) in list(self.latest.sensors.items()):
            message = _message(message, msg_type)
            frame = message.header.frame_id.lstrip("/")
            if frame not in poses:
                continue            # its frame is not (yet) connected to the world
            R, p = poses[frame]
            name = topic.strip("/").replace("/", "_")
            if kind == CAMERA_INFO_TYPE:
                fy = float(message.k[4])
                if math.isfinite(fy) and fy > 0 and message.height > 0 and message.width > 0:
                    fov = 2.0 * math.atan(0.5 * message.height / fy)
                    if 0.0 < fov < math.pi:
                        cameras[name] = (p, wxyz_of_matrix(R), fov,
                                         message.width / message.height)
                        continue
                self._warn(topic, f"camera_info: fy {fy!r}, {message.width}x{message.height}: "
                           f"no frustum")
                continue
            if now - self._sensor_drawn.get(topic, -math.inf) < SENSOR_PERIOD:
                continue
            del self.latest.sensors[topic]
            self._sensor_drawn[topic] = now
            try:
                local = scan_points(message) if kind == SCAN_TYPE else cloud_points(message)
            except ValueError as error:
                self._warn(topic, str(error))
                continue
            world = local @ R.T + p
            kept = np.all(np.isfinite(world), axis=1) & (np.abs(world).max(axis=1, initial=0)
                                                          <= MAX_COORDINATE)
            if not kept.all():
                self._warn(topic, f"points: {int((~kept).sum())} non-finite or farther than "
                           f"{MAX_COORDINATE:g} m left out")
            lidars[name] = world[kept]
        if cameras:
            self.scene.update_sensors(cameras=cameras)
        if lidars:
            # a cloud drawn before gets its new points in place (ViewerScene.set_point_cloud)
            self.scene.update_sensors(lidars=lidars)


def _moved(sent, p, wxyz, tolerance: float = POSE_TOLERANCE) -> bool:
    """Whether a pose differs from the one last sent by more than `tolerance` (m, or the
    quaternion's components)."""
    return sent is None or np.max(np.abs(sent[0] - p)) > tolerance \
        or np.max(np.abs(sent[1] - wxyz)) > tolerance


def framing_camera(points) -> tuple:
    """(eye, target) of a camera looking at the points (N, 3) [m] from the direction of
    PyBullet's default view (yaw 50, pitch -35 degrees), at a distance that shows them."""
    points = np.asarray(points, dtype=float).reshape(-1, 3)
    lo, hi = points.min(axis=0), points.max(axis=0)
    target = 0.5 * (lo + hi)
    radius = max(0.5 * float(np.linalg.norm(hi - lo)), MIN_FRAMED_RADIUS)
    yaw, pitch = math.radians(50.0), math.radians(-35.0)
    forward = np.array([-math.sin(yaw) * math.cos(pitch), math.cos(yaw) * math.cos(pitch),
                        math.sin(pitch)])
    return tuple(target - 2.5 * radius * forward), tuple(target)


def scan_points(scan) -> np.ndarray:
    """The returns of a sensor_msgs/LaserScan as points (N, 3) in its frame [m] (rays without
    a return, +-inf / NaN / outside [range_min, range_max], left out)."""
    ranges = np.asarray(scan.ranges, dtype=float)
    angles = scan.angle_min + scan.angle_increment * np.arange(len(ranges))
    hit = np.isfinite(ranges) & np.isfinite(angles) & (ranges >= scan.range_min) \
        & (ranges <= scan.range_max)
    r, a = ranges[hit], angles[hit]
    stride = max(1, -(-len(r) // MAX_CLOUD_POINTS))     # at most MAX_CLOUD_POINTS drawn
    r, a = r[::stride], a[::stride]
    return np.column_stack([r * np.cos(a), r * np.sin(a), np.zeros_like(r)])


def cloud_points(cloud) -> np.ndarray:
    """x, y, z (float32 fields) of a sensor_msgs/PointCloud2 as points (N, 3) in its frame,
    finite ones only, at most MAX_CLOUD_POINTS (evenly thinned). ValueError for a cloud whose
    fields do not fit its point_step or whose data is shorter than width x height points."""
    offsets = {f.name: f.offset for f in cloud.fields if f.datatype == 7}   # FLOAT32
    count = cloud.width * cloud.height
    if not {"x", "y", "z"} <= offsets.keys() or count == 0 or cloud.point_step == 0:
        return np.zeros((0, 3))
    if any(offsets[a] + 4 > cloud.point_step for a in "xyz"):
        raise ValueError(f"point cloud: x/y/z at offsets {[offsets[a] for a in 'xyz']} do not "
                         f"fit a point_step of {cloud.point_step} bytes")
    data = np.frombuffer(cloud.data, dtype=np.uint8)
    if len(data) < count * cloud.point_step:
        raise ValueError(f"point cloud: {len(data)} bytes of data for {cloud.width}x"
                         f"{cloud.height} points of {cloud.point_step} bytes")
    rows = data[:count * cloud.point_step].reshape(-1, cloud.point_step)
    stride = max(1, len(rows) // MAX_CLOUD_POINTS)
    rows = rows[::stride][:MAX_CLOUD_POINTS]
    dtype = np.dtype(">f4" if cloud.is_bigendian else "<f4")
    xyz = np.column_stack([rows[:, offsets[a]:offsets[a] + 4].copy().view(dtype).ravel()
                           for a in "xyz"]).astype(float)
    return xyz[np.all(np.isfinite(xyz), axis=1)][:MAX_CLOUD_POINTS]


# -- the page's controls, as the node's services -------------------------------------------------
class ServiceControls:
    """The ViewerScene's buttons and slider as calls to a simulation node's services and its
    real_time_factor parameter, made from `client` (an rclpy node spun elsewhere)."""

    def __init__(self, client, node_name: str, scene_ref: RosScene, log=print):
        from rcl_interfaces.srv import SetParameters
        from simulation_interfaces.srv import (ResetSimulation, SetSimulationState,
                                               StepSimulation)

        base = node_name.rstrip("/")
        self.client = client
        self.ros_scene = scene_ref
        self.log = log
        self._set_state = client.create_client(SetSimulationState, f"{base}/set_simulation_state")
        self._step = client.create_client(StepSimulation, f"{base}/step_simulation")
        self._reset = client.create_client(ResetSimulation, f"{base}/reset_simulation")
        self._parameters = client.create_client(SetParameters, f"{base}/set_parameters")
        self.answers = 0                  # answered calls (tests)

    def attach(self, scene) -> None:
        scene.add_controls(on_pause=self.pause, on_step=self.step, on_reset=self.reset,
                           on_rtf=self.set_real_time_factor, rtf=1.0)

    def _call(self, client, request, what: str) -> None:
        self.ros_scene.control_time = time.monotonic()
        if not client.service_is_ready():
            self.log(f"sim_node view: {what}: the node's {client.srv_name} is not available")
            return

        def done(future):
            self.ros_scene.control_time = time.monotonic()
            self.answers += 1
            try:
                response = future.result()
            except Exception as error:      # noqa: BLE001 (reported)
                self.log(f"sim_node view: {what} failed: {error}")
                return
            result = getattr(response, "result", None)
            if result is not None and hasattr(result, "result") and result.result != 0 \
                    and result.error_message:
                self.log(f"sim_node view: {what}: {result.error_message}")
            for item in getattr(response, "results", ()):
                if not item.successful:
                    self.log(f"sim_node view: {what}: {item.reason}")

        client.call_async(request).add_done_callback(done)

    def pause(self, paused: bool) -> None:
        from simulation_interfaces.msg import SimulationState
        from simulation_interfaces.srv import SetSimulationState

        state = SimulationState.STATE_PAUSED if paused else SimulationState.STATE_PLAYING
        self._call(self._set_state, SetSimulationState.Request(
            state=SimulationState(state=state)), "pause" if paused else "resume")

    def step(self) -> None:
        from simulation_interfaces.srv import StepSimulation

        self._call(self._step, StepSimulation.Request(steps=1), "step")

    def reset(self) -> None:
        from simulation_interfaces.srv import ResetSimulation

        self._call(self._reset, ResetSimulation.Request(
            scope=ResetSimulation.Request.SCOPE_DEFAULT), "reset")

    def set_real_time_factor(self, factor: float) -> None:
        from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
        from rcl_interfaces.srv import SetParameters

        value = ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=float(factor))
        self._call(self._parameters, SetParameters.Request(
            parameters=[Parameter(name="real_time_factor", value=value)]),
            f"real_time_factor {factor:g}")


# -- the drawing thread ------------------------------------------------------------------------------
class DrawingThread:
    """Calls draw() at most `rate` times a second of wall time until stop()."""

    def __init__(self, draw, rate: float = MAX_RATE, log=print):
        if not 0.0 < rate <= MAX_RATE:
            raise ValueError(f"viewer rate must be in (0, {MAX_RATE:g}] Hz, got {rate!r}")
        self.draw, self.period, self.log = draw, 1.0 / rate, log
        self.frames = 0                 # draws done
        self.cpu = 0.0                  # [s] CPU time of this thread in them
        self.started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sim_node viewer", daemon=True)

    def start(self) -> None:
        self.started = time.monotonic()
        self._thread.start()

    def summary(self) -> str:
        """The drawing cost so far, one line."""
        wall = max(time.monotonic() - self.started, 1e-9)
        per_frame = 1e3 * self.cpu / self.frames if self.frames else 0.0
        return (f"viewer: {self.frames} frames drawn in {wall:.0f} s, {per_frame:.2f} ms of "
                f"CPU per frame ({100.0 * self.cpu / wall:.1f} % of one core)")

    def _run(self) -> None:
        failures = 0
        while not self._stop.wait(self.period):
            try:
                cpu = time.thread_time()
                self.draw()
                self.cpu += time.thread_time() - cpu
                self.frames += 1
                failures = 0
            except Exception as error:      # noqa: BLE001 (the view goes on; said once)
                if self._stop.is_set():
                    return
                failures += 1
                if failures == 1:
                    self.log(f"sim_node view: drawing failed: {error}")

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)


_HOST_NAME = re.compile(r"(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                        r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?")


def check_address(host: str, port: int, what: str = "viewer") -> None:
    """ValueError, naming what is wrong and what is valid, unless `host` is an IPv4 / IPv6
    address or a host name (RFC 1123) and `port` a TCP port in 0..65535."""
    import ipaddress

    if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
        raise ValueError(f"{what} port {port!r}: not a TCP port; valid: 0..65535 (0: any free "
                         f"port)")
    try:
        ipaddress.ip_address(host)
        return
    except ValueError:
        pass
    if not isinstance(host, str) or not _HOST_NAME.fullmatch(host) \
            or host.rstrip(".").rsplit(".", 1)[-1].isdigit():       # 300.1.1.1
        raise ValueError(f"{what} host {host!r}: not an IP address or host name; valid: e.g. "
                         f"127.0.0.1 (this machine only), 0.0.0.0 (every interface), ::1, "
                         f"localhost")


def serve(host: str, port: int, what: str = "viewer"):
    """A quiet viser server on host:port (port 0: any free port). ValueError for a malformed
    address (check_address); OSError naming host and port when it cannot be served there,
    a port in use included (viser would move on to the next free port: the URL a user was
    given would then show something else, or nothing)."""
    from sim_node.viewer.viewer import quiet_server

    check_address(host, port, what)
    # bound here first: viser 1.1.1 answers an address it cannot bind by trying the next port,
    # forever for an address that is not this machine's
    try:
        family, kind, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as error:
        in_use = error.errno == errno.EADDRINUSE
        raise OSError(error.errno, f"{what}: cannot serve on {host}:{port}: " + (
            f"port {port} is in use (another viewer or program); choose another port, or 0 "
            f"for any free one" if in_use else f"{error.strerror or error}")) from None
    server = quiet_server(host, port)
    if port and server.get_port() != port:
        stop_server(server)
        raise OSError(errno.EADDRINUSE, f"{what}: cannot serve on {host}:{port}: port {port} "
                      f"is in use (another viewer or program); choose another port, or 0 for "
                      f"any free one")
    return server


def stop_server(server) -> None:
    """Stop a viser server without its "Server stopped" line."""
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        server.stop()


# -- sim_node view -----------------------------------------------------------------------------------
class TopicFeed:
    """`client`'s subscriptions filling a Latest store: the fixed topics at once, description
    and sensor topics as they appear (look(), every DISCOVERY_PERIOD)."""

    def __init__(self, client, node_name: str, latest: Latest):
        from rclpy.qos import (DurabilityPolicy, QoSProfile, ReliabilityPolicy,
                               qos_profile_sensor_data)
        from rosgraph_msgs.msg import Clock
        from tf2_msgs.msg import TFMessage

        from sim_node.msg import Contacts, SimStatus

        self.client, self.latest = client, latest
        self._latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                                   reliability=ReliabilityPolicy.RELIABLE)
        # /tf_static: every publisher's last message (the node's and each camera's)
        static = QoSProfile(depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                            reliability=ReliabilityPolicy.RELIABLE)
        self._sensor_qos = qos_profile_sensor_data
        base = node_name.rstrip("/")
        client.create_subscription(TFMessage, "/tf", self._tf, 100, raw=True)
        client.create_subscription(TFMessage, "/tf_static", self._tf_static, static, raw=True)
        client.create_subscription(Clock, "/clock", self._clock, 10, raw=True)
        client.create_subscription(Contacts, f"{base}/contacts", self._contacts, 10, raw=True)
        client.create_subscription(SimStatus, f"{base}/status", self._status, 10, raw=True)
        self._subscribed: set = set()
        self._next_look = 0.0

    def _tf(self, data):
        self.latest.tf.append(data)

    def _tf_static(self, data):
        self.latest.tf_static.append(data)

    def _clock(self, data):
        self.latest.clock = data

    def _contacts(self, data):
        self.latest.contacts = data

    def _status(self, data):
        self.latest.status = data

    def look(self) -> None:
        from sensor_msgs.msg import CameraInfo, LaserScan, PointCloud2
        from std_msgs.msg import String

        now = time.monotonic()
        if now < self._next_look:
            return
        self._next_look = now + DISCOVERY_PERIOD
        kinds = {CAMERA_INFO_TYPE: CameraInfo, SCAN_TYPE: LaserScan, CLOUD_TYPE: PointCloud2}
        for topic, types in self.client.get_topic_names_and_types():
            if topic in self._subscribed:
                continue
            if STRING_TYPE in types and topic.rstrip("/").endswith(DESCRIPTION_SUFFIX):
                self._subscribed.add(topic)
                self.client.create_subscription(
                    String, topic, lambda m, t=topic: self.latest.descriptions.__setitem__(
                        t, m.data), self._latched)
            for kind, msg_type in kinds.items():
                if kind in types:
                    self._subscribed.add(topic)
                    # raw: a camera's point cloud is deserialized only when it is drawn
                    self.client.create_subscription(
                        msg_type, topic, lambda m, t=topic, k=kind, c=msg_type:
                        self.latest.sensors.__setitem__(t, (k, m, c)), self._sensor_qos,
                        raw=True)


def parse(argv):
    parser = argparse.ArgumentParser(
        prog="sim_node view", description="Show a running simulation node (or a bag played "
        "by `sim_node replay --states`) in the browser: robots from robot_description, /tf, "
        "contacts, sensors and status; pause/step/reset and the real-time factor act on the "
        "node.")
    parser.add_argument("--node", default="/sim",
                        help="the simulation node's full name (/sim): its ~/contacts, ~/status "
                             "and services")
    parser.add_argument("--port", type=int, default=8080,
                        help="HTTP port of the page (8080; 0: any free port; a port in use is "
                             "an error)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to serve on (127.0.0.1: this machine only; 0.0.0.0: "
                             "every interface)")
    parser.add_argument("--rate", type=float, default=MAX_RATE,
                        help=f"drawing rate ceiling [Hz] in (0, {MAX_RATE:g}] ({MAX_RATE:g})")
    args = parser.parse_args(argv)
    try:
        check_address(args.host, args.port, "--host / --port:")
    except ValueError as error:
        parser.error(str(error))
    if not (math.isfinite(args.rate) and 0.0 < args.rate <= MAX_RATE):
        parser.error(f"--rate must be in (0, {MAX_RATE:g}] Hz, got {args.rate}")
    if not args.node.startswith("/"):
        args.node = "/" + args.node
    return args


def main(argv=None) -> int:
    """`sim_node view`: until SIGINT / SIGTERM."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from sim_node.viewer.scene import ViewerScene

    args = parse(argv)
    stop = threading.Event()
    previous = {s: signal.signal(s, lambda *_: stop.set())
                for s in (signal.SIGINT, signal.SIGTERM)}
    context = rclpy.Context()
    rclpy.init(context=context)
    client = rclpy.create_node("sim_view", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(client)
    server = None
    drawing = None
    try:
        try:
            server = serve(args.host, args.port, "sim_node view")
        except OSError as error:
            print(error.strerror, file=sys.stderr)
            return 2
        scene = ViewerScene(server)
        latest = Latest()
        ros_scene = RosScene(scene, latest)
        feed = TopicFeed(client, args.node, latest)
        ServiceControls(client, args.node, ros_scene).attach(scene)
        drawing = DrawingThread(ros_scene.draw, args.rate)
        drawing.start()
        print(f"sim_node viewer: {scene.url}", flush=True)
        while not stop.is_set():
            executor.spin_once(timeout_sec=0.05)
            feed.look()
    finally:
        if drawing is not None:
            drawing.stop()
        if server is not None:
            stop_server(server)
        executor.shutdown()
        client.destroy_node()
        context.try_shutdown()
        for s, handler in previous.items():
            signal.signal(s, handler)
    return 0
