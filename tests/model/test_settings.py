"""Robot settings parsed once into a frozen RobotSettings (sim_node/model/settings.py): from
a world file, from a mapping, read as attributes or (the older face) by key; unknown keys
refused naming the valid ones."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sim_node import WorldModel
from sim_node.model.settings import BodySettings, PluginEntry, RobotSettings

WORLDS = Path(__file__).resolve().parents[2] / "data" / "worlds"


def test_a_world_files_robot_settings_are_typed_and_frozen():
    world = WorldModel()
    world.readFile(WORLDS / "default.yaml")
    base = world.robot("mobile_base").settings
    assert isinstance(base, RobotSettings) and isinstance(base.body, BodySettings)
    assert [p.name for p in base.plugins][:3] == ["joint_state_publisher", "joint_commands",
                                                 "joint_trajectory"]
    assert all(isinstance(p, PluginEntry) for p in base.plugins)
    with pytest.raises(dataclasses.FrozenInstanceError):
        base.namespace = "x"
    assert base["plugins"][0] == {"name": "joint_state_publisher", "config": None}
    assert base["namespace"] is base.namespace


def test_mappings_are_parsed_and_unknown_keys_refused():
    world = WorldModel()
    robot = world.loadRobot(str(WORLDS.parent / "robots" / "pendulum" / "pendulum.urdf"))
    robot.settings = {"namespace": "p", "plugins": [{"name": "imu", "config": {"rate": 10}}]}
    assert robot.settings == RobotSettings(namespace="p",
                                           plugins=(PluginEntry("imu", {"rate": 10}),))
    robot.settings = {}
    assert robot.settings == RobotSettings()
    with pytest.raises(ValueError, match="unknown key.s. gains; valid: body, controller"):
        robot.settings = {"gains": {}}
    with pytest.raises(TypeError, match="RobotSettings or a mapping, got list"):
        robot.settings = []
    with pytest.raises(KeyError):
        RobotSettings()["gains"]
