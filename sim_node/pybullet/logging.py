"""PyBullet's state logging: startStateLogging, stopStateLogging, submitProfileTiming.

Each logger runs as a ``client.post_step`` hook (after every stepSimulation) and writes as it
goes (flushed every step, as PyBullet's fflush), so a log is complete up to the last step even
if the script never stops it.

* STATE_LOGGING_GENERIC_ROBOT: PyBullet's binary layout (PhysicsServerCommandProcessor's
  GenericRobotStateLogger, examples/Utils/RobotLoggingUtil.cpp): a line of comma-separated
  key names, a line with the struct format ("IfifffffffffffffI" + "f" * maxLogDof (q) +
  "f" * maxLogDof (u) [+ "f" * maxLogDof (t) with logFlags]), then per step and per body a
  record: the bytes 0xAA 0xBB and the values packed native-endian (``struct`` format without
  a prefix, as bullet3's readLogFile unpacks it): stepCount (steps since the logger started,
  from 0), timeStamp = stepCount * timeStep (float32), objectId, the base position and
  orientation (x, y, z, w) of getBasePositionAndOrientation (the base's inertial frame), the
  base linear and angular velocity (world frame), qNum (the body's joint degrees of freedom),
  q[maxLogDof] and u[maxLogDof] (the positions and velocities of the revolute and prismatic
  joints in joint order, zero-padded; PyBullet names the velocities "u"), and with logFlags
  STATE_LOG_JOINT_MOTOR_TORQUES / STATE_LOG_JOINT_USER_TORQUES t[maxLogDof], the joint's
  applied torque (getJointState's appliedJointMotorTorque: our motors and TORQUE_CONTROL
  torques are one number). A body with more than maxLogDof degrees of freedom is left out
  (PyBullet writes a bare 0xAA 0xBB for it, which its own C++ reader then misreads).
* STATE_LOGGING_CONTACT_POINTS: PyBullet's layout too (ContactPointsStateLogger): format
  "IfIiiiifffffffffff": stepCount, timeStamp, contactFlag (0), bodyUniqueIdA, bodyUniqueIdB,
  linkIndexA, linkIndexB, positionOnA (3), positionOnB (3), contactNormalOnB (3),
  contactDistance, normalForce, one record per contact point of getContactPoints after the
  step. Filters: bodyUniqueIdA / bodyUniqueIdB (>= 0) keep contacts that involve that body
  (either side, as PyBullet); linkIndexA / linkIndexB (>= -1) keep contacts whose side-A /
  side-B link is that index.
* STATE_LOGGING_VIDEO_MP4: frames of the CPU renderer (sim_node.sim.camera) through the
  debug visualizer camera (resetDebugVisualizerCamera; PyBullet's GUI camera until reset) at
  the visualizer's size (1024 x 768 unless a viewer says otherwise), written by imageio-ffmpeg
  (H.264, yuv420p) at VIDEO_FPS frames per second of *simulated* time: a frame at the start
  and one each 1 / VIDEO_FPS s of simulated time after, so the video plays at real-time speed
  whatever the time step (PyBullet films its GUI window in wall time).
* STATE_LOGGING_PROFILE_TIMINGS: a Chrome trace (JSON, about://tracing) of every
  stepSimulation and every submitProfileTiming span, wall-clock microseconds, written to
  fileName itself when the logger stops (PyBullet writes "<fileName>_0.json" of its internal
  timers).

Other logging types (MINITAUR, VR_CONTROLLERS, ALL_COMMANDS, REPLAY_ALL_COMMANDS,
CUSTOM_TIMER) are errors: sim_node does not support them. fileName is a user path as given
(this is a library); a directory, a non-regular file (device, pipe) or a path whose folder
does not exist is an error.
"""
from __future__ import annotations

import json
import os
import stat
import struct
import time

import numpy as np

from sim_node.pybullet import constants as C
from sim_node.pybullet.client import get_client
from sim_node.pybullet.errors import error
from sim_node.pybullet.transforms import _client_id

__all__ = ["startStateLogging", "stopStateLogging", "submitProfileTiming"]

ALIGNMENT_WORD = b"\xaa\xbb"
DEFAULT_MAX_LOG_DOF = 12          # PyBullet's default
MAX_LOG_DOF = 4096                # bound on the record width (PyBullet: none)
VIDEO_FPS = 60
GENERIC_ROBOT_KEYS = ("stepCount", "timeStamp", "objectId", "posX", "posY", "posZ", "oriX",
                      "oriY", "oriZ", "oriW", "velX", "velY", "velZ", "omegaX", "omegaY",
                      "omegaZ", "qNum")
GENERIC_ROBOT_FORMAT = "IfifffffffffffffI"
CONTACT_KEYS = ("stepCount", "timeStamp", "contactFlag", "bodyUniqueIdA", "bodyUniqueIdB",
                "linkIndexA", "linkIndexB", "positionOnAX", "positionOnAY", "positionOnAZ",
                "positionOnBX", "positionOnBY", "positionOnBZ", "contactNormalOnBX",
                "contactNormalOnBY", "contactNormalOnBZ", "contactDistance", "normalForce")
CONTACT_FORMAT = "IfIiiiifffffffffff"
_TYPE_NAMES = {getattr(C, n): n for n in dir(C) if n.startswith("STATE_LOGGING_")
               or n.startswith("STATE_REPLAY_")}
# joint types and their degrees of freedom (PyBullet's btMultiBody::getNumDofs)
_JOINT_DOFS = {C.JOINT_REVOLUTE: 1, C.JOINT_PRISMATIC: 1, C.JOINT_SPHERICAL: 3,
               C.JOINT_PLANAR: 3, C.JOINT_FIXED: 0}


# -- the client's loggers -----------------------------------------------------------------------
class _Loggers:
    """A client's state loggers (``client.state_loggers``): ids from 0 in start order."""

    def __init__(self):
        self.active = {}            # logging id -> logger
        self.next_id = 0
        self.profile_stack = []     # open submitProfileTiming names


def _loggers(client) -> _Loggers:
    loggers = getattr(client, "state_loggers", None)
    if loggers is None:
        loggers = client.state_loggers = _Loggers()
    return loggers


def _open_for_writing(path, function: str):
    """A binary file handle at the user's path; refuses directories and non-regular files."""
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise error(f"{function}: fileName must be a non-empty path, got {path!r}")
    path = os.fspath(path)
    if "\0" in path:
        raise error(f"{function}: fileName {path!r} contains a NUL character")
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise error(f"{function}: cannot use fileName {path!r}: {e.strerror}") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise error(f"{function}: fileName {path!r} is a directory; give a file path")
    if mode is not None and not stat.S_ISREG(mode):
        raise error(f"{function}: fileName {path!r} is not a regular file (a device, pipe or "
                    f"socket); give a file path")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise error(f"{function}: the folder of fileName {path!r} does not exist: {folder}")
    try:
        return path, open(path, "wb")
    except OSError as e:
        raise error(f"{function}: cannot open fileName {path!r} for writing: "
                    f"{e.strerror}") from None


# -- the binary logs (RobotLoggingUtil's layout) ------------------------------------------------
class _BinaryLog:
    """Header: keys joined by ',' and the struct format, each ending in '\\n'; records:
    ALIGNMENT_WORD + struct.pack(format, *values)."""

    def __init__(self, handle, keys, fmt: str):
        self.handle, self.format = handle, fmt
        self.record = struct.Struct(fmt)
        self.step_count = 0
        handle.write((",".join(keys) + "\n" + fmt + "\n").encode("ascii"))
        handle.flush()

    def write(self, values) -> None:
        self.handle.write(ALIGNMENT_WORD + self.record.pack(*values))

    def end_step(self) -> None:
        self.handle.flush()
        self.step_count += 1

    def time_stamp(self, client) -> float:
        # float32, as PyBullet's (m_loggingTimeStamp * timeStep stored in a float)
        return float(np.float32(self.step_count * client.time_step))

    def close(self) -> None:
        self.handle.close()


class GenericRobotLogger(_BinaryLog):
    """STATE_LOGGING_GENERIC_ROBOT (module docstring)."""

    def __init__(self, handle, object_ids, max_log_dof: int, log_flags: int):
        self.object_ids = None if not object_ids else set(object_ids)
        self.max_log_dof = max_log_dof
        self.log_torques = bool(log_flags & C.STATE_LOG_JOINT_TORQUES)
        self._layouts = {}          # uid -> (Body, degrees of freedom, 1-dof joint indices)
        keys = list(GENERIC_ROBOT_KEYS)
        fmt = GENERIC_ROBOT_FORMAT
        for prefix in ("q", "u") + (("t",) if self.log_torques else ()):
            keys += [f"{prefix}{i}" for i in range(max_log_dof)]
            fmt += "f" * max_log_dof
        super().__init__(handle, keys, fmt)

    def _layout(self, client, uid, bodies):
        """(degrees of freedom, indices of the revolute and prismatic joints) of a body, kept
        while the same Body object holds that uid (ids restart after resetSimulation)."""
        body = client.bodies[uid]
        cached = self._layouts.get(uid)
        if cached is None or cached[0] is not body:
            num_dofs, joints = 0, []
            for j in range(bodies.getNumJoints(uid, physicsClientId=client.id)):
                joint_type = bodies.getJointInfo(uid, j, physicsClientId=client.id)[2]
                num_dofs += _JOINT_DOFS.get(joint_type, 0)
                if joint_type in (C.JOINT_REVOLUTE, C.JOINT_PRISMATIC):
                    joints.append(j)
            cached = self._layouts[uid] = (body, num_dofs, joints)
        return cached[1], cached[2]

    def __call__(self, client) -> None:
        from sim_node.pybullet import bodies
        cid = client.id
        stamp = self.time_stamp(client)
        for uid in list(client.bodies):
            if self.object_ids is not None and uid not in self.object_ids:
                continue
            num_dofs, joints = self._layout(client, uid, bodies)
            if num_dofs > self.max_log_dof or len(joints) != num_dofs:
                continue        # no room in the record (PyBullet writes a bare alignment word)
            position, orientation = bodies.getBasePositionAndOrientation(uid, physicsClientId=cid)
            linear, angular = bodies.getBaseVelocity(uid, physicsClientId=cid)
            states = bodies.getJointStates(uid, joints, physicsClientId=cid) if joints else ()
            pad = [0.0] * (self.max_log_dof - num_dofs)
            values = [self.step_count, stamp, uid, *position, *orientation, *linear, *angular,
                      num_dofs, *(s[0] for s in states), *pad, *(s[1] for s in states), *pad]
            if self.log_torques:
                values += [*(s[3] for s in states), *pad]
            self.write(values)
        self.end_step()


class ContactPointsLogger(_BinaryLog):
    """STATE_LOGGING_CONTACT_POINTS (module docstring)."""

    def __init__(self, handle, body_a: int, body_b: int, link_a: int, link_b: int):
        from sim_node.pybullet import queries
        self.contact_points = getattr(queries, "getContactPoints", None)
        if self.contact_points is None:
            raise error("startStateLogging: STATE_LOGGING_CONTACT_POINTS not supported by "
                        "sim_node in this build (no getContactPoints)")
        self.body_a, self.body_b, self.link_a, self.link_b = body_a, body_b, link_a, link_b
        super().__init__(handle, CONTACT_KEYS, CONTACT_FORMAT)

    def __call__(self, client) -> None:
        stamp = self.time_stamp(client)
        for c in self.contact_points(physicsClientId=client.id):
            a, b, la, lb = c[1], c[2], c[3], c[4]
            if self.body_a >= 0 and self.body_a not in (a, b):
                continue
            if self.body_b >= 0 and self.body_b not in (a, b):
                continue
            if self.link_a >= -1 and la != self.link_a or self.link_b >= -1 and lb != self.link_b:
                continue
            self.write([self.step_count, stamp, 0, a, b, la, lb, *c[5], *c[6], *c[7], c[8],
                        c[9]])
        self.end_step()


# -- video -----------------------------------------------------------------------------------------
class VideoLogger:
    """STATE_LOGGING_VIDEO_MP4 (module docstring): frames at VIDEO_FPS of simulated time."""

    def __init__(self, client, path: str, handle):
        from sim_node.pybullet.debug import GUI_HEIGHT, GUI_WIDTH
        handle.close()              # ffmpeg writes the file itself; the handle proved the path
        try:
            import imageio_ffmpeg
        except ImportError:
            raise error("startStateLogging: STATE_LOGGING_VIDEO_MP4 needs the imageio-ffmpeg "
                        "package (pip install imageio-ffmpeg)") from None
        viewer = getattr(client, "viewer", None)
        width, height = (GUI_WIDTH, GUI_HEIGHT) if viewer is None else (
            int(v) for v in viewer.size)
        # H.264 in yuv420p halves the colour planes: even sides only
        self.width, self.height = max(2, width - width % 2), max(2, height - height % 2)
        self.path = path
        self.frames = 0
        self.elapsed = 0.0          # simulated time since the logger started [s]
        try:
            self.writer = imageio_ffmpeg.write_frames(
                path, (self.width, self.height), fps=VIDEO_FPS, codec="libx264",
                pix_fmt_in="rgb24", pix_fmt_out="yuv420p", macro_block_size=1,
                ffmpeg_log_level="error")
            self.writer.send(None)      # start ffmpeg
        except (OSError, RuntimeError) as e:
            raise error(f"startStateLogging: cannot start ffmpeg for {path!r}: {e}") from None
        self._send(self._render(client), 1)

    def _render(self, client) -> bytes:
        from sim_node.pybullet.debug import camera_view_projection
        from sim_node.sim.camera import Camera, camera_from_matrices
        view, projection = camera_view_projection(client, self.width, self.height)
        R, t, K, (near, far) = camera_from_matrices(self.width, self.height, view, projection)
        image = Camera(client.sim, self.width, self.height, K=K, near=near, far=far).render(
            R, t, depth=False)
        return np.ascontiguousarray(image.rgb).tobytes()

    def _send(self, frame: bytes, count: int) -> None:
        try:
            for _ in range(count):
                self.writer.send(frame)
        except (OSError, RuntimeError) as e:
            raise error(f"STATE_LOGGING_VIDEO_MP4: ffmpeg stopped taking frames for "
                        f"{self.path!r}: {e}") from None
        self.frames += count

    def __call__(self, client) -> None:
        self.elapsed += client.time_step
        # frame k shows the state at k / VIDEO_FPS s: every frame this step reached gets the
        # state now (one picture, repeated when a step spans several frames: real-time speed)
        due = int(self.elapsed * VIDEO_FPS + 1e-9) + 1 - self.frames
        if due > 0:
            self._send(self._render(client), due)

    def close(self) -> None:
        try:
            self.writer.close()
        except (OSError, RuntimeError) as e:
            raise error(f"stopStateLogging: ffmpeg failed to finish {self.path!r}: {e}") from None


# -- profile timings ---------------------------------------------------------------------------
class ProfileTimingsLogger:
    """STATE_LOGGING_PROFILE_TIMINGS: Chrome trace events, written when the logger stops."""

    def __init__(self, client, path: str, handle):
        handle.close()
        self.path = path
        self.events = []
        self._step_started = None
        client.pre_step.append(self.step_started)

    def event(self, name: str, phase: str) -> None:
        self.events.append({"cat": "timing", "pid": 1, "tid": 0,
                            "ts": time.perf_counter_ns() / 1000.0, "ph": phase, "name": name,
                            "args": {}})

    def step_started(self, client) -> None:
        self.event("stepSimulation", "B")

    def __call__(self, client) -> None:
        self.event("stepSimulation", "E")

    def close(self) -> None:
        with open(self.path, "w", encoding="utf-8") as f:
            json.dump({"traceEvents": self.events, "displayTimeUnit": "ns"}, f)


# -- the API ------------------------------------------------------------------------------------
def _int_argument(value, function: str, argument: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise error(f"{function}: {argument} must be an int, got {value!r}")
    return int(value)


def startStateLogging(loggingType, fileName, objectUniqueIds=None, maxLogDof=DEFAULT_MAX_LOG_DOF,
                      bodyUniqueIdA=-1, bodyUniqueIdB=-1, linkIndexA=-2, linkIndexB=-2,
                      deviceTypeFilter=C.VR_DEVICE_CONTROLLER, logFlags=0,
                      physicsClientId=0) -> int:
    """Start a logger (module docstring: the types and their files); returns its logging id
    (0, 1, 2 ... per client), for stopStateLogging."""
    name = "startStateLogging"
    _client_id(physicsClientId, name)
    logging_type = _int_argument(loggingType, name, "loggingType")
    supported = (C.STATE_LOGGING_GENERIC_ROBOT, C.STATE_LOGGING_CONTACT_POINTS,
                 C.STATE_LOGGING_VIDEO_MP4, C.STATE_LOGGING_PROFILE_TIMINGS)
    if logging_type not in supported:
        what = _TYPE_NAMES.get(logging_type)
        valid = ", ".join(_TYPE_NAMES[t] for t in supported)
        if what is None:
            raise error(f"{name}: loggingType {logging_type} is not a STATE_LOGGING_* constant; "
                        f"supported: {valid}")
        raise error(f"{name}: {what} not supported by sim_node (no VR, Minitaur or command "
                    f"logs); supported: {valid}")
    max_dof = _int_argument(maxLogDof, name, "maxLogDof")
    if not 0 <= max_dof <= MAX_LOG_DOF:
        raise error(f"{name}: maxLogDof = {max_dof} must lie in [0, {MAX_LOG_DOF}] (0: the "
                    f"default {DEFAULT_MAX_LOG_DOF})")
    max_dof = max_dof or DEFAULT_MAX_LOG_DOF         # PyBullet sets it only when > 0
    ids = [] if objectUniqueIds is None else objectUniqueIds
    if isinstance(ids, (str, bytes)) or not hasattr(ids, "__iter__"):
        raise error(f"{name}: objectUniqueIds must be a list of body unique ids, got {ids!r}")
    ids = [_int_argument(i, name, "objectUniqueIds[]") for i in ids]
    body_a = _int_argument(bodyUniqueIdA, name, "bodyUniqueIdA")
    body_b = _int_argument(bodyUniqueIdB, name, "bodyUniqueIdB")
    link_a = _int_argument(linkIndexA, name, "linkIndexA")
    link_b = _int_argument(linkIndexB, name, "linkIndexB")
    _int_argument(deviceTypeFilter, name, "deviceTypeFilter")       # VR only: no effect here
    flags = _int_argument(logFlags, name, "logFlags")
    if flags & ~C.STATE_LOG_JOINT_TORQUES:
        raise error(f"{name}: logFlags {flags} holds bits other than STATE_LOG_JOINT_MOTOR_"
                    f"TORQUES (1) and STATE_LOG_JOINT_USER_TORQUES (2)")
    client = get_client(physicsClientId)
    for uid in ids + [b for b in (body_a, body_b) if b >= 0]:
        client.body(uid)            # error("no body with unique id N") when unknown
    path, handle = _open_for_writing(fileName, name)
    try:
        if logging_type == C.STATE_LOGGING_GENERIC_ROBOT:
            logger = GenericRobotLogger(handle, ids, max_dof, flags)
        elif logging_type == C.STATE_LOGGING_CONTACT_POINTS:
            logger = ContactPointsLogger(handle, body_a, body_b, link_a, link_b)
        elif logging_type == C.STATE_LOGGING_VIDEO_MP4:
            logger = VideoLogger(client, path, handle)
        else:
            logger = ProfileTimingsLogger(client, path, handle)
    except BaseException:
        handle.close()
        raise
    loggers = _loggers(client)
    logging_id = loggers.next_id
    loggers.next_id += 1
    loggers.active[logging_id] = logger
    client.post_step.append(logger)
    return logging_id


def stopStateLogging(loggingId, physicsClientId=0) -> None:
    """Stop a logger and close its file."""
    name = "stopStateLogging"
    _client_id(physicsClientId, name)
    logging_id = _int_argument(loggingId, name, "loggingId")
    client = get_client(physicsClientId)
    loggers = _loggers(client)
    logger = loggers.active.pop(logging_id, None)
    if logger is None:
        raise error(f"{name}: no active logger with id {logging_id}; active: "
                    f"{sorted(loggers.active)}")
    client.post_step.remove(logger)
    if isinstance(logger, ProfileTimingsLogger):
        client.pre_step.remove(logger.step_started)
    logger.close()


def submitProfileTiming(eventName=None, physicsClientId=0) -> None:
    """Open a timing span named eventName, or close the innermost open one (no name): recorded
    by the STATE_LOGGING_PROFILE_TIMINGS loggers that run; nothing otherwise."""
    name = "submitProfileTiming"
    _client_id(physicsClientId, name)
    if eventName is not None and not isinstance(eventName, str):
        raise error(f"{name}: eventName must be a str or None (None ends the last timing), "
                    f"got {eventName!r}")
    client = get_client(physicsClientId)
    loggers = _loggers(client)
    if eventName is not None:
        loggers.profile_stack.append(eventName)
        phase, label = "B", eventName
    elif loggers.profile_stack:
        phase, label = "E", loggers.profile_stack.pop()
    else:
        return
    for logger in loggers.active.values():
        if isinstance(logger, ProfileTimingsLogger):
            logger.event(label, phase)
