"""Helpers of the scene tests: worlds, written as world-file YAML, and helpers over the engine scene."""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sim_node  # noqa: E402
from sim_node.model.scene import build_scene  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DT = 0.001


def world_from_yaml(text: str, tmp_path: Path, name="world.yaml"):
    path = tmp_path / name
    path.write_text(text)
    world = sim_node.WorldModel()
    world.readFile(path)
    return world


def quat_about(axis, angle):
    """(x, y, z, w) of a rotation by angle [rad] about a unit axis."""
    s = math.sin(angle / 2)
    return [axis[0] * s, axis[1] * s, axis[2] * s, math.cos(angle / 2)]


def shell_floor(tmp_path: Path, half=1.0, surface=""):
    """A `terrains:` section: a zero-thickness square of two triangles at z = 0, +-half wide
    (the diagonal from (-half, -half) to (half, half)); surface: a YAML flow mapping."""
    import trimesh

    h = half
    trimesh.Trimesh([[-h, -h, 0], [h, -h, 0], [h, h, 0], [-h, h, 0]], [[0, 1, 2], [0, 2, 3]]).export(
        tmp_path / "floor.stl")
    return f"""terrains:
  - name: floor
    geometry: {{mesh: {tmp_path / 'floor.stl'}}}
""" + (f"    surface: {surface}\n" if surface else "")


def ground(friction=0.5, restitution=0.0, extra=""):
    return f"""terrains:
  - name: ground
    geometry: {{plane: {{normal: [0, 0, 1], offset: 0.0}}}}
    surface: {{kFriction: {friction}, kRestitution: {restitution}{extra}}}
"""


def pendulum_box_world_text():
    """The pendulum robot (PID 20 / 8 / 5), a tilted 0.5 kg box 0.3 m above the ground beside
    it, the ground."""
    q = quat_about([1 / math.sqrt(2), 0, 1 / math.sqrt(2)], 0.4)
    urdf = REPO / "data" / "robots" / "pendulum" / "pendulum.urdf"
    return f"""
robots:
  - name: pendulum
    urdf: {urdf}
    initial_config: {{joint1: 0.25}}
    controller: {{kp: 20.0, ki: 8.0, kd: 5.0}}
rigid_objects:
  - name: box
    geometry: {{box: [0.1, 0.2, 0.1]}}
    mass: 0.5
    pose: {{position: [1.0, 0.0, 0.3], orientation: {q}}}
terrains:
  - name: ground
    geometry: {{plane: {{normal: [0, 0, 1], offset: 0.0}}}}
"""
