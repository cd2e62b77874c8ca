"""PyBullet's debug GUI functions: user debug lines, text, points, sliders; the visualizer camera.

Two behaviours, chosen per client (README "The PyBullet API: math, debug drawing, logging
(decisions)"):

* DIRECT (not a GUI mode and no viewer): what PyBullet's DIRECT does, measured on
  PyBullet 3.2.7: the add functions return -1 and keep nothing, readUserDebugParameter raises,
  the remove functions do nothing, getDebugVisualizerCamera returns its 12-tuple of zeros,
  getKeyboardEvents ``{}`` and getMouseEvents ``()``. resetDebugVisualizerCamera is still kept
  (STATE_LOGGING_VIDEO_MP4 films through that camera).
* GUI (``connect(GUI)``, GUI_SERVER or GUI_MAIN_THREAD; live viewer or not): items are kept
  on the client (``client.debug``, a DebugState) with ids 0, 1, 2 ... shared by lines, text,
  points and parameters; a parameter reads its start value until a viewer moves it; the
  camera is PyBullet's GUI camera (1024 x 768, distance 5, yaw 50, pitch -35 at the origin
  until reset).
  lifeTime > 0 removes an item after that much *simulated* time (PyBullet's GUI counts wall
  time; a headless run has none worth counting).

The viewer (``client.viewer``: sim_node.viewer.pybullet_gui.PyBulletGUI, which connect(GUI)
attaches through the ``sim_node.pybullet_gui`` entry points; None in DIRECT or headless GUI)
receives every change through this interface; every method is called with plain Python values:

    viewer.add_line(item_id, line_from, line_to, color_rgb, width, parent)    # parent: (uid,
    viewer.add_text(item_id, text, position, color_rgb, size, orientation, parent)  # link) or None
    viewer.add_points(item_id, positions, colors_rgb, size, parent)
    viewer.add_slider(item_id, name, range_min, range_max, start_value)
    viewer.read_slider(item_id) -> float
    viewer.remove(item_id)
    viewer.set_camera(distance, yaw_deg, pitch_deg, target)
    viewer.configure(flag, enable, settings)        # settings: dict of the keyword options given
    viewer.set_object_color(uid, link_index, color_rgb or None)
    viewer.keyboard_events() -> dict[int, int]      # keycode -> KEY_* bit flags
    viewer.mouse_events() -> tuple                  # (eventType, x, y, buttonIndex, buttonState)
    viewer.size -> (width, height)                  # pixels

Re-adding an item with replaceItemUniqueId calls ``remove`` then ``add_*`` with the same id.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

from sim_node.pybullet import constants as C
from sim_node.pybullet.client import get_client
from sim_node.pybullet.errors import error
from sim_node.pybullet.transforms import (_client_id, _number, _unit_quaternion, _vector,
                                          computeViewMatrixFromYawPitchRoll)

__all__ = [
    "addUserDebugLine", "addUserDebugText", "addUserDebugPoints", "addUserDebugParameter",
    "readUserDebugParameter", "removeUserDebugItem", "removeAllUserDebugItems",
    "removeAllUserParameters", "resetDebugVisualizerCamera", "getDebugVisualizerCamera",
    "configureDebugVisualizer", "getKeyboardEvents", "getMouseEvents", "setDebugObjectColor",
]

# PyBullet's GUI: window size [px] and the camera PhysicsServerExample::resetCamera sets
GUI_WIDTH, GUI_HEIGHT = 1024, 768
DEFAULT_CAMERA_DISTANCE, DEFAULT_CAMERA_YAW, DEFAULT_CAMERA_PITCH = 5.0, 50.0, -35.0
DEFAULT_CAMERA_TARGET = (0.0, 0.0, 0.0)
# the GUI camera's frustum: z near / far [m]; the window spans +-near vertically at the near
# plane (90 degrees vertical field of view), so projection[5] = 1, projection[0] = 1 / aspect
GUI_NEAR, GUI_FAR = 0.01, 1000.0
# getDebugVisualizerCamera's horizontal / vertical ray-picking vectors span the far plane of a
# 10 km camera ray (PyBullet's farPlane for picking)
PICKING_RAY_LENGTH = 10000.0
# bounds that keep a script's typo from allocating a huge item (PyBullet: none)
MAX_TEXT_LENGTH = 1 << 16
MAX_POINTS = 1 << 20
# the connect modes that open PyBullet's in-process GUI
GUI_MODES = (C.GUI, C.GUI_SERVER, C.GUI_MAIN_THREAD)
COV_FLAGS = {getattr(C, name) for name in dir(C) if name.startswith("COV_ENABLE_")}
_PARAMETER = "parameter"


@dataclass
class DebugItem:
    """One user debug item: kind is "line", "text", "points" or "parameter"; data holds the
    arguments as given (validated); expires_at [s of simulated time since connect] or None."""
    kind: str
    data: dict
    expires_at: float | None = None


@dataclass
class DebugState:
    """A client's debug drawing, parameters and visualizer camera (``client.debug``)."""
    items: dict = field(default_factory=dict)            # item id -> DebugItem
    next_id: int = 0
    time: float = 0.0                                    # simulated time [s], lifeTime's clock
    camera_distance: float = DEFAULT_CAMERA_DISTANCE    # [m]
    camera_yaw: float = DEFAULT_CAMERA_YAW              # [deg]
    camera_pitch: float = DEFAULT_CAMERA_PITCH          # [deg]
    camera_target: tuple = DEFAULT_CAMERA_TARGET        # [m]
    flags: dict = field(default_factory=dict)            # COV_ENABLE_* -> 0 / 1 as last set
    settings: dict = field(default_factory=dict)         # lightPosition, shadowMap... as set
    object_colors: dict = field(default_factory=dict)    # (uid, link index) -> rgb
    clock_installed: bool = False


def debug_state(client) -> DebugState:
    """The client's DebugState, created on first use."""
    state = getattr(client, "debug", None)
    if state is None:
        state = DebugState()
        client.debug = state
    return state


def _gui(client) -> bool:
    return client.mode in GUI_MODES or getattr(client, "viewer", None) is not None


def _viewer(client):
    return getattr(client, "viewer", None)


# -- the simulated clock of lifeTime ------------------------------------------------------------
def _advance_clock(client) -> None:
    """post_step hook: advance the debug clock and drop expired items."""
    state = debug_state(client)
    state.time += client.time_step
    expired = [i for i, item in state.items.items()
               if item.expires_at is not None and item.expires_at <= state.time + 1e-12]
    for item_id in expired:
        _remove(client, state, item_id)


def _expiry(client, state: DebugState, life_time: float):
    if life_time <= 0.0:
        return None
    if not state.clock_installed:
        client.post_step.append(_advance_clock)
        state.clock_installed = True
    return state.time + life_time


def _remove(client, state: DebugState, item_id: int) -> None:
    if state.items.pop(item_id, None) is not None and _viewer(client) is not None:
        client.viewer.remove(item_id)


# -- argument checks ----------------------------------------------------------------------------
def _color(value, function: str, argument: str) -> tuple:
    rgb = _vector(value, 3, function, argument, " [red, green, blue] in [0, 1]")
    if not all(0.0 <= c <= 1.0 for c in rgb):
        raise error(f"{function}: {argument} {list(rgb)} must have each component in [0, 1]")
    return rgb


def _non_negative(value, function: str, argument: str) -> float:
    value = _number(value, function, argument)
    if value < 0.0:
        raise error(f"{function}: {argument} = {value} must be >= 0")
    return value


def _int(value, function: str, argument: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise error(f"{function}: {argument} must be an int, got {value!r}")
    return int(value)


def _parent(client, uid, link, function: str):
    """(uid, link index) of the frame the item is drawn in, or None for the world frame."""
    uid = _int(uid, function, "parentObjectUniqueId")
    link = _int(link, function, "parentLinkIndex")
    if uid < 0:
        return None
    body = client.body(uid)
    if not -1 <= link < body.num_joints:
        raise error(f"{function}: parentLinkIndex {link} is out of range for body {uid} with "
                    f"{body.num_joints} links; valid: -1 (base) to {body.num_joints - 1}")
    return uid, link


def _new_id(state: DebugState, replace: int, function: str, kind: str) -> int:
    if replace < 0:
        item_id = state.next_id
        state.next_id += 1
        return item_id
    old = state.items.get(replace)
    if old is None or old.kind != kind:
        ids = sorted(i for i, item in state.items.items() if item.kind == kind)
        raise error(f"{function}: replaceItemUniqueId {replace} is not a debug {kind} of this "
                    f"client; its {kind} ids: {ids}")
    return replace


def _add(client, function, kind, data, life_time, replace, viewer_call):
    """Keep a validated item (GUI) and hand it to the viewer; DIRECT returns -1 as PyBullet."""
    replace = _int(replace, function, "replaceItemUniqueId")
    if not _gui(client):
        return -1
    state = debug_state(client)
    item_id = _new_id(state, replace, function, kind)
    if item_id in state.items:
        _remove(client, state, item_id)
    state.items[item_id] = DebugItem(kind, data, _expiry(client, state, life_time))
    if _viewer(client) is not None:
        viewer_call(client.viewer, item_id)
    return item_id


# -- lines, text, points --------------------------------------------------------------------------
def addUserDebugLine(lineFromXYZ, lineToXYZ, lineColorRGB=(1.0, 1.0, 1.0), lineWidth=1.0,
                     lifeTime=0.0, parentObjectUniqueId=-1, parentLinkIndex=-1,
                     replaceItemUniqueId=-1, physicsClientId=0) -> int:
    """A line from lineFromXYZ to lineToXYZ [m] (in the parent link's frame when given);
    lifeTime [s] 0 = until removed. Returns the item id (-1 in DIRECT, as PyBullet)."""
    name = "addUserDebugLine"
    _client_id(physicsClientId, name)
    client = get_client(physicsClientId)
    data = dict(line_from=_vector(lineFromXYZ, 3, name, "lineFromXYZ", " [x, y, z]"),
                line_to=_vector(lineToXYZ, 3, name, "lineToXYZ", " [x, y, z]"),
                color=_color(lineColorRGB, name, "lineColorRGB"),
                width=_non_negative(lineWidth, name, "lineWidth"),
                parent=_parent(client, parentObjectUniqueId, parentLinkIndex, name))
    life_time = _non_negative(lifeTime, name, "lifeTime")
    return _add(client, name, "line", data, life_time, replaceItemUniqueId,
                lambda viewer, i: viewer.add_line(i, data["line_from"], data["line_to"],
                                                  data["color"], data["width"], data["parent"]))


def addUserDebugText(text, textPosition, textColorRGB=(1.0, 1.0, 1.0), textSize=1.0,
                     lifeTime=0.0, textOrientation=None, parentObjectUniqueId=-1,
                     parentLinkIndex=-1, replaceItemUniqueId=-1, physicsClientId=0) -> int:
    """Text at textPosition [m]; facing the camera unless textOrientation (x, y, z, w) is
    given. Returns the item id (-1 in DIRECT, as PyBullet)."""
    name = "addUserDebugText"
    _client_id(physicsClientId, name)
    client = get_client(physicsClientId)
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise error(f"{name}: text must be a str, got {text!r}")
    if len(text) > MAX_TEXT_LENGTH:
        raise error(f"{name}: text of {len(text)} characters; at most {MAX_TEXT_LENGTH}")
    orientation = None if textOrientation is None else _unit_quaternion(
        textOrientation, name, "textOrientation")
    data = dict(text=text, position=_vector(textPosition, 3, name, "textPosition", " [x, y, z]"),
                color=_color(textColorRGB, name, "textColorRGB"),
                size=_non_negative(textSize, name, "textSize"), orientation=orientation,
                parent=_parent(client, parentObjectUniqueId, parentLinkIndex, name))
    life_time = _non_negative(lifeTime, name, "lifeTime")
    return _add(client, name, "text", data, life_time, replaceItemUniqueId,
                lambda viewer, i: viewer.add_text(i, text, data["position"], data["color"],
                                                  data["size"], orientation, data["parent"]))


def addUserDebugPoints(pointPositions, pointColorsRGB, pointSize=1.0, lifeTime=0.0,
                       parentObjectUniqueId=-1, parentLinkIndex=-1, replaceItemUniqueId=-1,
                       physicsClientId=0) -> int:
    """Points (N x 3 positions [m], N x 3 colours). Returns the item id (-1 in DIRECT)."""
    name = "addUserDebugPoints"
    _client_id(physicsClientId, name)
    client = get_client(physicsClientId)
    positions = _vector_list(pointPositions, name, "pointPositions", " [x, y, z]")
    colors = _vector_list(pointColorsRGB, name, "pointColorsRGB", " [red, green, blue]")
    if len(colors) != len(positions):
        raise error(f"{name}: {len(positions)} pointPositions but {len(colors)} pointColorsRGB; "
                    f"one colour per point")
    for i, rgb in enumerate(colors):
        if not all(0.0 <= c <= 1.0 for c in rgb):
            raise error(f"{name}: pointColorsRGB[{i}] {list(rgb)} must have each component in "
                        f"[0, 1]")
    data = dict(positions=positions, colors=colors,
                size=_non_negative(pointSize, name, "pointSize"),
                parent=_parent(client, parentObjectUniqueId, parentLinkIndex, name))
    life_time = _non_negative(lifeTime, name, "lifeTime")
    return _add(client, name, "points", data, life_time, replaceItemUniqueId,
                lambda viewer, i: viewer.add_points(i, positions, colors, data["size"],
                                                    data["parent"]))


def _vector_list(value, function: str, argument: str, what: str) -> tuple:
    try:
        rows = list(value)
    except TypeError:
        raise error(f"{function}: {argument} must be a sequence of 3-vectors{what}, got "
                    f"{value!r}") from None
    if isinstance(value, (str, bytes)) or not rows or len(rows) > MAX_POINTS:
        raise error(f"{function}: {argument} must hold 1 to {MAX_POINTS} 3-vectors{what}, got "
                    f"{value!r:.200}")
    return tuple(_vector(row, 3, function, f"{argument}[{i}]", what)
                 for i, row in enumerate(rows))


# -- parameters ------------------------------------------------------------------------------
def addUserDebugParameter(paramName, rangeMin=0.0, rangeMax=1.0, startValue=0.0,
                          physicsClientId=0) -> int:
    """A slider from rangeMin to rangeMax starting at startValue (a button when rangeMin >
    rangeMax: its value counts presses from startValue). Returns the item id (-1 in DIRECT).
    The defaults are PyBullet's (0, 1, 0: pybullet.c)."""
    name = "addUserDebugParameter"
    _client_id(physicsClientId, name)
    client = get_client(physicsClientId)
    if isinstance(paramName, bytes):
        paramName = paramName.decode("utf-8", errors="replace")
    if not isinstance(paramName, str) or len(paramName) > MAX_TEXT_LENGTH:
        raise error(f"{name}: paramName must be a str of at most {MAX_TEXT_LENGTH} characters, "
                    f"got {paramName!r:.200}")
    data = dict(name=paramName, range_min=_number(rangeMin, name, "rangeMin"),
                range_max=_number(rangeMax, name, "rangeMax"),
                value=_number(startValue, name, "startValue"))
    return _add(client, name, _PARAMETER, data, 0.0, -1,
                lambda viewer, i: viewer.add_slider(i, paramName, data["range_min"],
                                                    data["range_max"], data["value"]))


def readUserDebugParameter(itemUniqueId, physicsClientId=0) -> float:
    """The parameter's current value: the viewer's when one shows it, else its start value."""
    name = "readUserDebugParameter"
    _client_id(physicsClientId, name)
    item_id = _int(itemUniqueId, name, "itemUniqueId")
    client = get_client(physicsClientId)
    if not _gui(client):
        raise error(f"{name}: failed to read parameter {item_id}: in DIRECT mode (as "
                    f"PyBullet's) addUserDebugParameter returns -1 and keeps no parameter; "
                    f"connect with GUI to use parameters")
    state = debug_state(client)
    item = state.items.get(item_id)
    if item is None or item.kind != _PARAMETER:
        ids = sorted(i for i, it in state.items.items() if it.kind == _PARAMETER)
        raise error(f"{name}: no debug parameter with id {item_id}; the ids of "
                    f"addUserDebugParameter on this client: {ids}")
    if _viewer(client) is not None:
        item.data["value"] = _number(client.viewer.read_slider(item_id), name, "viewer value")
    return float(item.data["value"])


# -- removal --------------------------------------------------------------------------------------
def removeUserDebugItem(itemUniqueId, physicsClientId=0) -> None:
    """Remove one item (line, text, points or parameter); an unknown id does nothing, as
    PyBullet's."""
    name = "removeUserDebugItem"
    _client_id(physicsClientId, name)
    item_id = _int(itemUniqueId, name, "itemUniqueId")
    client = get_client(physicsClientId)
    if _gui(client):
        _remove(client, debug_state(client), item_id)


def removeAllUserDebugItems(physicsClientId=0) -> None:
    """Remove every line, text and points item (parameters stay)."""
    _client_id(physicsClientId, "removeAllUserDebugItems")
    client = get_client(physicsClientId)
    state = debug_state(client)
    for item_id in [i for i, item in state.items.items() if item.kind != _PARAMETER]:
        _remove(client, state, item_id)


def removeAllUserParameters(physicsClientId=0) -> None:
    """Remove every parameter (slider or button)."""
    _client_id(physicsClientId, "removeAllUserParameters")
    client = get_client(physicsClientId)
    state = debug_state(client)
    for item_id in [i for i, item in state.items.items() if item.kind == _PARAMETER]:
        _remove(client, state, item_id)


# -- the visualizer camera ------------------------------------------------------------------------
def resetDebugVisualizerCamera(cameraDistance, cameraYaw, cameraPitch, cameraTargetPosition,
                               physicsClientId=0) -> None:
    """Place the visualizer camera cameraDistance [m] from cameraTargetPosition [m], turned by
    cameraYaw and cameraPitch [degrees] (z up); kept in DIRECT too (video logging uses it)."""
    name = "resetDebugVisualizerCamera"
    _client_id(physicsClientId, name)
    distance = _number(cameraDistance, name, "cameraDistance")
    yaw = _number(cameraYaw, name, "cameraYaw")
    pitch = _number(cameraPitch, name, "cameraPitch")
    target = _vector(cameraTargetPosition, 3, name, "cameraTargetPosition", " [x, y, z]")
    if not distance > 0.0:
        raise error(f"{name}: cameraDistance = {distance} m must be > 0")
    client = get_client(physicsClientId)
    state = debug_state(client)
    state.camera_distance, state.camera_yaw, state.camera_pitch = distance, yaw, pitch
    state.camera_target = target
    if _viewer(client) is not None:
        client.viewer.set_camera(distance, yaw, pitch, target)


def camera_view_projection(client, width: int, height: int) -> tuple:
    """(view, projection) matrices (16 floats each, column-major) of the client's visualizer
    camera for a width x height image: the GUI camera's (90 degrees vertical field of view,
    near 0.01 m, far 1000 m)."""
    state = debug_state(client)
    view = computeViewMatrixFromYawPitchRoll(state.camera_target, state.camera_distance,
                                             state.camera_yaw, state.camera_pitch, 0.0, 2)
    aspect = width / height
    n, f = GUI_NEAR, GUI_FAR
    projection = (1.0 / aspect, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0,
                  0.0, 0.0, -(f + n) / (f - n), -1.0, 0.0, 0.0, -2.0 * f * n / (f - n), 0.0)
    return view, projection


def getDebugVisualizerCamera(physicsClientId=0) -> tuple:
    """(width, height, viewMatrix, projectionMatrix, cameraUp, cameraForward, horizontal,
    vertical, yaw, pitch, dist, target), PyBullet's order; DIRECT: PyBullet's zeros."""
    name = "getDebugVisualizerCamera"
    _client_id(physicsClientId, name)
    client = get_client(physicsClientId)
    if not _gui(client):
        zero3, zero16 = (0.0,) * 3, (0.0,) * 16
        return (0, 0, zero16, zero16, zero3, zero3, zero3, zero3, 0.0, 0.0, 0.0, zero3)
    state = debug_state(client)
    width, height = (GUI_WIDTH, GUI_HEIGHT) if _viewer(client) is None else (
        tuple(int(v) for v in client.viewer.size))
    view, projection = camera_view_projection(client, width, height)
    # the camera's axes from the view matrix (rows of its rotation): x right, y up, -z forward
    forward = (-view[2], -view[6], -view[10])
    up = (0.0, 0.0, 1.0)
    horizontal = _cross(forward, up)
    norm = math.sqrt(sum(c * c for c in horizontal)) or 1.0
    # the ray-picking spans of PyBullet's GUI: far-plane width and height of a 10 km ray
    # through the 90-degree frustum (tan(fov / 2) = 1)
    horizontal = tuple(c / norm * 2.0 * PICKING_RAY_LENGTH * width / height for c in horizontal)
    vertical = _cross(horizontal, forward)
    norm_v = math.sqrt(sum(c * c for c in vertical)) or 1.0
    vertical = tuple(c / norm_v * 2.0 * PICKING_RAY_LENGTH for c in vertical)
    return (width, height, view, projection, up, forward, horizontal, vertical,
            float(state.camera_yaw), float(state.camera_pitch), float(state.camera_distance),
            tuple(float(c) for c in state.camera_target))


def _cross(a, b) -> tuple:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


# -- settings and input ---------------------------------------------------------------------------
def configureDebugVisualizer(flag=None, enable=None, lightPosition=None, shadowMapResolution=None,
                             shadowMapWorldSize=None, remoteSyncTransformInterval=None,
                             shadowMapIntensity=None, rgbBackgroundColor=None,
                             physicsClientId=0) -> None:
    """Turn a COV_ENABLE_* feature on (1) or off (0), and/or set the light and shadow map.
    Kept on the client and passed to the viewer; without one it changes nothing visible."""
    name = "configureDebugVisualizer"
    _client_id(physicsClientId, name)
    settings = {}
    if flag is not None:
        flag = _int(flag, name, "flag")
        if flag not in COV_FLAGS:
            raise error(f"{name}: flag {flag} is not a COV_ENABLE_* constant; valid: "
                        f"{sorted(COV_FLAGS)}")
        enable = 1 if enable is None else _int(enable, name, "enable")
        if enable not in (0, 1):
            raise error(f"{name}: enable must be 0 or 1, got {enable}")
    elif enable is not None:
        raise error(f"{name}: enable given without a flag; pass flag=COV_ENABLE_...")
    if lightPosition is not None:
        settings["lightPosition"] = _vector(lightPosition, 3, name, "lightPosition",
                                            " [x, y, z]")
    for key, value in (("shadowMapResolution", shadowMapResolution),
                       ("shadowMapWorldSize", shadowMapWorldSize)):
        if value is not None:
            value = _int(value, name, key)
            if value <= 0:
                raise error(f"{name}: {key} = {value} must be > 0")
            settings[key] = value
    if remoteSyncTransformInterval is not None:
        settings["remoteSyncTransformInterval"] = _non_negative(
            remoteSyncTransformInterval, name, "remoteSyncTransformInterval")
    if shadowMapIntensity is not None:
        intensity = _number(shadowMapIntensity, name, "shadowMapIntensity")
        if not 0.0 <= intensity <= 1.0:
            raise error(f"{name}: shadowMapIntensity = {intensity} must lie in [0, 1]")
        settings["shadowMapIntensity"] = intensity
    if rgbBackgroundColor is not None:
        settings["rgbBackgroundColor"] = _color(rgbBackgroundColor, name, "rgbBackgroundColor")
    client = get_client(physicsClientId)
    state = debug_state(client)
    if flag is not None:
        state.flags[flag] = enable
    state.settings.update(settings)
    if _viewer(client) is not None:
        client.viewer.configure(flag, enable, settings)


def getKeyboardEvents(physicsClientId=0) -> dict:
    """{keycode: KEY_IS_DOWN | KEY_WAS_TRIGGERED | KEY_WAS_RELEASED} since the last call; {}
    without a viewer (no keyboard)."""
    _client_id(physicsClientId, "getKeyboardEvents")
    client = get_client(physicsClientId)
    if _viewer(client) is None:
        return {}
    return {int(k): int(v) for k, v in client.viewer.keyboard_events().items()}


def getMouseEvents(physicsClientId=0) -> tuple:
    """((eventType, mousePosX, mousePosY, buttonIndex, buttonState), ...) since the last call;
    () without a viewer (no mouse)."""
    _client_id(physicsClientId, "getMouseEvents")
    client = get_client(physicsClientId)
    if _viewer(client) is None:
        return ()
    return tuple((int(e[0]), float(e[1]), float(e[2]), int(e[3]), int(e[4]))
                 for e in client.viewer.mouse_events())


def setDebugObjectColor(objectUniqueId, linkIndex, objectDebugColorRGB=None,
                        physicsClientId=0) -> None:
    """Override the wireframe colour of one link (linkIndex -1: the base); no colour removes
    the override."""
    name = "setDebugObjectColor"
    _client_id(physicsClientId, name)
    client = get_client(physicsClientId)
    uid = _int(objectUniqueId, name, "objectUniqueId")
    link = _int(linkIndex, name, "linkIndex")
    body = client.body(uid)
    if not -1 <= link < body.num_joints:
        raise error(f"{name}: linkIndex {link} is out of range for body {uid} with "
                    f"{body.num_joints} links; valid: -1 (base) to {body.num_joints - 1}")
    state = debug_state(client)
    if objectDebugColorRGB is None:
        state.object_colors.pop((uid, link), None)
        rgb = None
    else:
        rgb = _color(objectDebugColorRGB, name, "objectDebugColorRGB")
        state.object_colors[(uid, link)] = rgb
    if _viewer(client) is not None:
        client.viewer.set_object_color(uid, link, rgb)
