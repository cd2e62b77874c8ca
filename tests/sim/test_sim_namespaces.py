"""The namespace rule written once (sim_node/sim/namespaces.py): one robot at the root,
several each under its name, an explicit namespace overriding; frames follow it. (The rule
against hypothesis-generated worlds and the node parameter: tests/ros/test_namespaces.py.)"""
from __future__ import annotations

from pathlib import Path

import pytest

from sim_node import WorldModel
from sim_node.sim.namespaces import (WORLD_FRAME, assign_namespaces, check_namespace,
                                     link_frame, namespace_owner, robot_namespace,
                                     robot_prefix)

PENDULUM_URDF = Path(__file__).resolve().parents[2] / "data" / "robots" / "pendulum" / \
    "pendulum.urdf"


def world_of(*robots) -> WorldModel:
    world = WorldModel()
    for name, namespace in robots:
        world.loadRobot(str(PENDULUM_URDF), name=name).settings = {"namespace": namespace}
    return world


def test_one_robot_at_the_root_several_under_their_names():
    alone = world_of(("a", None))
    assert robot_namespace(alone.robot("a")) == "" and robot_prefix(alone.robot("a")) == ""
    two = world_of(("a", None), ("b", "/ns/b/"))
    assert [robot_namespace(two.robot(n)) for n in "ab"] == ["a", "ns/b"]
    assert link_frame(two.robot("b"), 0) == "ns/b/" + two.robot("b").structure.link_names[0]
    assert namespace_owner(two, "ns/b") is two.robot("b") and namespace_owner(two, "x") is None
    assert WORLD_FRAME == "world"


def test_assigned_namespaces_are_kept_in_the_settings():
    world = world_of(("a", None), ("b", None))
    assert assign_namespaces(world, {"a": "/"}) == {"a": "", "b": "b"}
    assert world.robot("a").settings.namespace == ""
    world.remove(world.robot("b"))
    assert robot_namespace(world.robot("a")) == ""      # kept: not re-decided


@pytest.mark.parametrize("namespace", ["bad ns", "1x", "a//b", "a/-"])
def test_invalid_namespaces_are_refused(namespace):
    with pytest.raises(ValueError, match=f"robot 'r': namespace '{namespace}' is not a valid"):
        check_namespace(namespace, "robot 'r'")
    world = world_of(("a", None), ("b", None))
    with pytest.raises(ValueError, match="is not a valid ROS namespace"):
        assign_namespaces(world, {"a": namespace})
    assert [world.robot(n).settings.namespace for n in "ab"] == [None, None]   # unchanged


def test_two_robots_cannot_share_a_namespace():
    world = world_of(("a", "x"), ("b", "/x"))
    with pytest.raises(ValueError, match="robots 'a' and 'b' would share the namespace '/x'"):
        assign_namespaces(world)
