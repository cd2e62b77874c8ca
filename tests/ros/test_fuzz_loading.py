"""Fuzz of the node's loading path, in process (hypothesis): URDF and world-file texts mutated
from valid ones (slices deleted, duplicated or replaced, hostile numbers, random text and
non-UTF-8 bytes) go through what the node does at start (sim_node.ros.node.load_or_explain
around WorldModel.readFile and the SimpleSimulator with the default plugins). Each one either
loads and steps with a finite state, or fails as WorldLoadError: one line, naming the file,
no Python exception names. Nothing else may escape (the process-level behaviour: exit code 2
and that line, tests/ros/test_safety.py)."""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from node_harness import REPO
from sim_node.model.world import WorldModel
from sim_node.ros.node import DEFAULT_ROBOT_PLUGINS, WorldLoadError, load_or_explain
from sim_node.sim.simulation import SimpleSimulator

URDF = (REPO / "data" / "robots" / "pendulum" / "pendulum.urdf").read_bytes()
WORLD = f"""simulation: {{physics_dt: 0.001, gravity: [0.0, 0.0, -9.81]}}
robots:
  - name: pendulum
    urdf: robot.urdf
    initial_config: {{joint1: 0.5}}
    controller: {{kp: 20.0, ki: 8.0, kd: 5.0}}
    plugins:
      - {{name: joint_state_publisher, config: {{rate: 100.0, position_noise: 0.01}}}}
rigid_objects:
  - name: box
    geometry: {{box: [0.2, 0.2, 0.2]}}
    mass: 2.0
    pose: {{position: [1.0, 0.0, 0.1], orientation: [0, 0, 0, 1]}}
terrains:
  - name: ground
    geometry: {{plane: {{normal: [0, 0, 1], offset: 0.0}}}}
""".encode()
HOSTILE_NUMBERS = [b"nan", b"-nan", b"inf", b"-inf", b"1e308", b"-1e308", b"1e-320", b"0",
                   b"-1", b"1e999", b".nan", b"0x10", b"1,5", b""]
EXCEPTION_NAME = re.compile(r"\b[A-Z][A-Za-z]*(Error|Exception)\b|Traceback")


def _mutate(text: bytes, edits) -> bytes:
    for kind, at, length, payload in edits:
        at %= len(text) + 1
        if kind == "delete":
            text = text[:at] + text[at + length:]
        elif kind == "duplicate":
            text = text[:at] + text[at:at + length] * 2 + text[at + length:]
        elif kind == "insert":
            text = text[:at] + payload + text[at:]
        else:                       # a number replaced by a hostile one
            numbers = list(re.finditer(rb"-?\d+(\.\d+)?(e-?\d+)?", text))
            if numbers:
                m = numbers[at % len(numbers)]
                text = text[:m.start()] + HOSTILE_NUMBERS[length % len(HOSTILE_NUMBERS)] \
                    + text[m.end():]
    return text


edits = st.lists(st.tuples(
    st.sampled_from(["delete", "duplicate", "insert", "number", "number"]),
    st.integers(0, 10 ** 6), st.integers(0, 200),
    st.one_of(st.binary(max_size=20), st.sampled_from([b"<", b">", b"&", b"\xff\xfe", b"\x00",
                                                       b"*a", b"&a ", b"{", b"[", b"- ",
                                                       b"\n  ", b"'", b'"']))),
    min_size=1, max_size=5)


def _load(path):
    def load():
        world = WorldModel()
        world.readFile(path)
        return SimpleSimulator(world, default_plugins=[{"name": n}
                                                       for n in DEFAULT_ROBOT_PLUGINS])
    return load_or_explain(load, f"world {path}")


@settings(max_examples=200, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(urdf_edits=st.one_of(st.just([]), edits), world_edits=st.one_of(st.just([]), edits),
       as_world=st.booleans())
def test_mutated_urdf_and_world_files_load_or_fail_in_one_clean_line(tmp_path, urdf_edits,
                                                                     world_edits, as_world):
    (tmp_path / "robot.urdf").write_bytes(_mutate(URDF, urdf_edits))
    (tmp_path / "world.yaml").write_bytes(_mutate(WORLD, world_edits))
    path = tmp_path / ("world.yaml" if as_world else "robot.urdf")
    try:
        sim = _load(path)
    except WorldLoadError as error:
        message = str(error)
        assert "\n" not in message and message
        assert not EXCEPTION_NAME.search(message), message
        assert path.name in message or "robot.urdf" in message, message
        return
    sim.simulate(0.01)
    for r in range(sim.getWorld().numRobots()):
        assert np.all(np.isfinite(sim.getActualConfig(r)))
    sim.close()


def test_the_unmutated_files_load(tmp_path):
    (tmp_path / "robot.urdf").write_bytes(URDF)
    (tmp_path / "world.yaml").write_bytes(WORLD)
    for name in ("robot.urdf", "world.yaml"):
        sim = _load(tmp_path / name)
        sim.simulate(0.01)
        assert sim.getTime() == pytest.approx(0.01)
        sim.close()
