"""PyBullet's GUI mode on the viewer: ``connect(GUI)`` shows the client's world in the browser
and draws its user debug items (the hook interface of sim_node/pybullet/debug.py).

How it is attached without a same-layer import (sim_node.pybullet and sim_node.viewer are both
layer 3): the package declares the entry point ``sim_node.pybullet_gui: viewer =
sim_node.viewer.pybullet_gui:attach`` (setup.cfg); connect(GUI) looks the group up and calls
``attach(client)`` — the same discovery the emulator plugins use. A user can also attach by
hand: ``attach(client)`` or ``PyBulletGUI(client, Viewer(...))``. The environment variable
SIM_NODE_PYBULLET_GUI=headless keeps connect(GUI) headless (no server; the test suite sets it);
SIM_NODE_VIEWER_PORT picks the port (default 8080; a busy port moves on to the next free one).

The client is duck-typed (this module never imports sim_node.pybullet): it needs ``sim``,
``bodies`` (uid -> body with ``entity``, ``link(i)``, ``robot_link(i)``, ``inertial_frames``),
``post_step`` (a list of callables), ``on_rebuild(callback)`` and ``options``.
"""
from __future__ import annotations

import math
import os
import re

import numpy as np

from sim_node.viewer.viewer import Viewer

ENV_MODE = "SIM_NODE_PYBULLET_GUI"        # "headless": connect(GUI) starts no viewer
ENV_PORT = "SIM_NODE_VIEWER_PORT"
# PyBullet's GUI window [px]: getDebugVisualizerCamera's size and the MP4 log's frame size
# unless connect's options say --width=W --height=H
DEFAULT_SIZE = (1024, 768)


def attach(client):
    """Start a live viewer for a PyBullet client (connect(GUI)) and return the hook it sets as
    ``client.viewer``; None when SIM_NODE_PYBULLET_GUI=headless."""
    if os.environ.get(ENV_MODE, "").strip().lower() == "headless":
        return None
    port_text = os.environ.get(ENV_PORT, "8080")
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f"{ENV_PORT}={port_text!r}: a port number in 0..65535 "
                         "(0: any free port)") from None
    viewer = Viewer(client.sim, port=port, controls=False)
    hook = PyBulletGUI(client, viewer)
    viewer.show()
    client.viewer = hook
    return hook


def camera_eye(distance: float, yaw_deg: float, pitch_deg: float, target) -> np.ndarray:
    """PyBullet's visualizer camera position [m] (z up): the eye sits at `distance` from
    `target`, at offset Rz(yaw) Rx(pitch) (0, -distance, 0) (bullet3's
    b3ComputeViewMatrixFromYawPitchRoll with upAxis 2)."""
    yaw, pitch = math.radians(yaw_deg), math.radians(pitch_deg)
    offset = distance * np.array([math.cos(pitch) * math.sin(yaw),
                                  -math.cos(pitch) * math.cos(yaw),
                                  -math.sin(pitch)])
    return np.asarray(target, dtype=float) + offset


class PyBulletGUI:
    """The viewer hook of a PyBullet client (interface: sim_node/pybullet/debug.py).

    Debug items with a parent (uid, link) are drawn in that link's frame and move with it;
    PyBullet gives their coordinates in Bullet's link frame (the inertial frame), converted
    here to the URDF link frame the scene poses. Text always faces the camera (viser labels:
    textOrientation is not drawn). Keyboard and mouse events are not forwarded from the
    browser: getKeyboardEvents returns {} and getMouseEvents () as in DIRECT."""

    def __init__(self, client, viewer: Viewer):
        self.client = client
        self.viewer = viewer
        self.size = _window_size(getattr(client, "options", ""))
        self.flags: dict = {}
        client.post_step.append(self._stepped)
        client.on_rebuild(self._rebuilt)

    @property
    def scene(self):
        return self.viewer.scene

    @property
    def url(self) -> str | None:
        return self.viewer.url

    # -- following the client -----------------------------------------------------------
    def _stepped(self, client):
        # stepSimulation's post-step hook: copy the state for the drawing thread, at most at
        # the viewer's rate (the copy is cheap; skipping it keeps fast loops fast)
        self.viewer.publish_at_rate()

    def _rebuilt(self, client):
        # loadURDF / removeBody / resetSimulation rebuild the simulator: follow the new one
        self.viewer.sim = client.sim
        self.viewer.update()        # new bodies drawn before debug items name their links

    def close(self):
        if self._stepped in self.client.post_step:
            self.client.post_step.remove(self._stepped)
        self.viewer.close()

    def _parent_key(self, parent) -> str | None:
        if parent is None:
            return None
        uid, link = parent
        body = self.client.bodies[uid]
        return f"{body.entity.getName()}/{body.link(link).getName()}"

    def _to_link_frame(self, parent, points) -> np.ndarray:
        """Points given in Bullet's link (inertial) frame -> the URDF link frame."""
        points = np.asarray(points, dtype=float).reshape(-1, 3)
        if parent is None:
            return points
        uid, link = parent
        body = self.client.bodies[uid]
        p_LC, R_LC = body.inertial_frames[body.robot_link(link)]
        return points @ np.asarray(R_LC).T + np.asarray(p_LC)

    # -- the hook interface ---------------------------------------------------------------
    def add_line(self, item_id, line_from, line_to, color_rgb, width, parent):
        a, b = self._to_link_frame(parent, [line_from, line_to])
        self.scene.add_debug_line(item_id, a, b, color_rgb, width, self._parent_key(parent))

    def add_text(self, item_id, text, position, color_rgb, size, orientation, parent):
        (p,) = self._to_link_frame(parent, [position])
        self.scene.add_debug_text(item_id, text, p, color_rgb, size, self._parent_key(parent))

    def add_points(self, item_id, positions, colors_rgb, size, parent):
        self.scene.add_debug_points(item_id, self._to_link_frame(parent, positions),
                                    colors_rgb, size, self._parent_key(parent))

    def add_slider(self, item_id, name, range_min, range_max, start_value):
        self.scene.add_slider(item_id, name, range_min, range_max, start_value)

    def read_slider(self, item_id) -> float:
        return self.scene.read_slider(item_id)

    def remove(self, item_id):
        self.scene.remove_debug(item_id)

    def set_camera(self, distance, yaw_deg, pitch_deg, target):
        self.scene.set_camera(camera_eye(distance, yaw_deg, pitch_deg, target), target)

    def configure(self, flag, enable, settings):
        # kept for getDebugVisualizerCamera-like queries; the browser view has its own
        # toggles (COV_ENABLE_GUI, shadows, wireframe ... change nothing drawn)
        if flag is not None:
            self.flags[int(flag)] = int(bool(enable))

    def set_object_color(self, uid, link_index, color_rgb):
        body = self.client.bodies[uid]
        key = f"{body.entity.getName()}/{body.link(link_index).getName()}"
        self.scene.set_link_color(key, color_rgb)

    def keyboard_events(self) -> dict:
        return {}

    def mouse_events(self) -> tuple:
        return ()


def _window_size(options: str) -> tuple:
    """(width, height) from connect's options ("--width=1280 --height=720"), else 1024 x 768."""
    width, height = DEFAULT_SIZE
    for key, value in re.findall(r"--(width|height)=(\d+)", str(options or "")):
        if 16 <= int(value) <= 8192:
            width, height = (int(value), height) if key == "width" else (width, int(value))
    return width, height
