"""Spawn, delete and entity motion through the simulator API (sim_node/sim/entities.py),
without ROS: a spawn or delete that fails leaves the world and the Simulator exactly as they
were (getState() bytes and the entity names identical); a spawned robot or rigid object is
where it was asked to be, named and namespaced by the rules; a frame's twist is that of its
origin (v_origin = v_com - w x (com - origin), closed form)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from transforms3d.euler import euler2mat

from sim_node import Simulator, WorldModel
from sim_node.sim.entities import (EntityError, Kind, Problem, all_entities, frame_motion,
                                   kind_of, set_frame_motion, spawn_name, target_links)
from sim_node.sim.namespaces import robot_namespace

REPO = __import__("pathlib").Path(__file__).resolve().parents[2]
PENDULUM_WORLD = REPO / "data" / "worlds" / "pendulum.yaml"
ARM_URDF = REPO / "tests" / "ros" / "data" / "two_link_arm.urdf"
BLOCK_URDF = REPO / "tests" / "ros" / "data" / "block.urdf"
BASE_URDF = REPO / "data" / "robots" / "diff_drive" / "diff_drive.urdf"    # floating base
# a 0.2 kg box whose centre of mass sits 0.05 m off its link frame (x)
OFFSET_BOX = """<robot name="offset_box"><link name="offset_box">
  <inertial><origin xyz="0.05 0 0"/><mass value="0.2"/>
    <inertia ixx="1e-3" ixy="0" ixz="0" iyy="1e-3" iyz="0" izz="1e-3"/></inertial>
  <collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link></robot>"""


@pytest.fixture
def sim():
    world = WorldModel()
    world.readFile(PENDULUM_WORLD)
    sim = Simulator(world)
    sim.simulate(0.05)              # not the initial state: time, motion, warm starts
    return sim


def names(sim) -> list:
    return [e.getName() for e in all_entities(sim.getWorld())]


def test_a_spawned_robot_is_named_namespaced_and_placed(sim):
    R, t = euler2mat(0, 0, 0.3), np.array([1.0, -2.0, 0.5])
    arm = sim.spawn(str(ARM_URDF), name="arm", R=R, t=t)
    assert names(sim) == ["ground", "pendulum", "arm"]
    assert kind_of(arm) is Kind.ROBOT and robot_namespace(arm) == "arm"   # its name
    R_root, t_root, w, v = frame_motion(sim, arm)
    assert np.allclose(R_root, R, atol=1e-12) and np.allclose(t_root, t, atol=1e-12)
    assert not w.any() and not v.any()
    with pytest.raises(EntityError, match="the link frames world would be TF frames"):
        sim.spawn(str(ARM_URDF), name="arm_c", namespace="/")   # its root link 'world'
    root = sim.spawn(str(BASE_URDF), name="base", namespace="/")     # '/' is the root
    assert robot_namespace(root) == ""
    with pytest.raises(EntityError, match="namespace '/' is used by robot 'base'"):
        sim.spawn(str(BASE_URDF), name="base_2", namespace="/")



def test_a_single_link_urdf_becomes_a_rigid_object_falling_freely(sim):
    block = sim.spawn(str(BLOCK_URDF), t=[0.0, 3.0, 2.0])
    assert kind_of(block) is Kind.OBJECT and block.getName() == "block"
    dt, steps, g = sim.getSimStep(), 50, 9.81
    sim.simulate(dt * steps)
    # semi-implicit Euler from rest: z = z0 - g dt^2 k (k + 1) / 2 after k steps
    z = frame_motion(sim, block)[1][2]
    assert z == pytest.approx(2.0 - g * dt * dt * steps * (steps + 1) / 2, abs=1e-9)


def test_spawned_names_follow_the_rules():
    taken = {"box", "box_1", "arm"}
    assert spawn_name(taken, "", "crate", False) == "crate"
    assert spawn_name(taken, "box", "x", True) == "box_2"
    assert spawn_name(taken, "", "my-robot", True) == "my_robot_1"
    assert spawn_name(taken, "", "1st", True) == "entity_1st_1"
    with pytest.raises(EntityError) as error:
        spawn_name(taken, "arm", "x", False)
    assert error.value.problem is Problem.NAME_TAKEN


@pytest.mark.parametrize("source, options, problem", [
    (ARM_URDF, {"name": "bad name"}, Problem.NAME_INVALID),
    (ARM_URDF, {"name": "pendulum"}, Problem.NAME_TAKEN),
    (ARM_URDF, {"name": "arm", "namespace": "pendulum"}, Problem.NAMESPACE_INVALID),
    (ARM_URDF, {"name": "arm", "namespace": "//x"}, Problem.NAMESPACE_INVALID),
    (BLOCK_URDF, {"name": "world"}, Problem.NAME_INVALID),          # the world frame
    ("<robot name='x'><link name='a'/>", {}, Problem.PARSE_ERROR),
    ("<robot name='x'><link name='a'/></robot>", {}, Problem.PARSE_ERROR),  # no collision
    ("<robot name='m'><link name='m'><inertial><mass value='1'/><inertia ixx='1' ixy='0' "
     "ixz='0' iyy='1' iyz='0' izz='1'/></inertial><collision><geometry><mesh "
     "filename='missing.stl'/></geometry></collision></link></robot>", {},
     Problem.MISSING_ASSETS),
])
def test_a_failed_spawn_changes_nothing(sim, source, options, problem):
    before, entities = sim.getState(), names(sim)
    with pytest.raises(EntityError) as error:
        sim.spawn(str(source), **options)
    assert error.value.problem is problem
    assert sim.getState() == before and names(sim) == entities
    sim.simulate(0.01)          # and it still runs


def test_two_robots_cannot_share_frames():
    world = WorldModel()
    world.readFile(PENDULUM_WORLD)
    sim = Simulator(world)
    sim.spawn(str(BASE_URDF), name="a", namespace="")       # '' = its name: frames a/...
    sim.spawn(str(BLOCK_URDF), name="base_link", t=[0, 3, 1])   # a rigid object's frame
    before = sim.getState()
    with pytest.raises(EntityError, match="the link frames base_link would be TF frames of "
                       "the world already") as error:
        sim.spawn(str(BASE_URDF), name="c", namespace="/")  # its link base_link at the root
    assert error.value.problem is Problem.NAMESPACE_INVALID
    assert names(sim) == ["ground", "base_link", "pendulum", "a"] and sim.getState() == before


def test_delete_removes_and_an_unknown_name_changes_nothing(sim):
    block = sim.spawn(str(BLOCK_URDF), t=[0.0, 3.0, 1.0])
    before = sim.getState()
    with pytest.raises(EntityError, match="no entity named 'nobody'") as error:
        sim.delete("nobody")
    assert error.value.problem is Problem.NOT_FOUND and sim.getState() == before
    assert sim.delete("block") is block and block.getID() < 0
    assert names(sim) == ["ground", "pendulum"]


def test_a_frame_twist_is_that_of_its_origin():
    world = WorldModel()
    sim = Simulator(world)
    box = sim.spawn(OFFSET_BOX)
    R, t = euler2mat(0.2, -0.1, 0.7), np.array([0.5, 0.0, 3.0])
    w, v = np.array([0.3, -1.0, 2.0]), np.array([1.0, 2.0, -0.5])
    set_frame_motion(sim, box, (R, t), (w, v))
    R_out, t_out, w_out, v_out = frame_motion(sim, box)
    assert np.allclose(R_out, R, atol=1e-12) and np.allclose(t_out, t, atol=1e-12)
    assert np.allclose(w_out, w, atol=1e-12) and np.allclose(v_out, v, atol=1e-12)
    com_W = t + R @ np.array([0.05, 0.0, 0.0])
    w_com, v_com = sim.body(box).getVelocity()
    assert np.allclose(v_com, v + np.cross(w, com_W - t), atol=1e-12)


def test_static_entities_cannot_be_moved(sim):
    ground = sim.getWorld().terrain("ground")
    pendulum = sim.getWorld().robot("pendulum")
    for entity, reason in ((ground, "is a terrain"), (pendulum, "has a fixed base")):
        with pytest.raises(EntityError, match=reason) as error:
            set_frame_motion(sim, entity, twist=(np.zeros(3), np.ones(3)))
        assert error.value.problem is Problem.STATIC


def test_target_links_name_bodies_or_refuse(sim):
    world = sim.getWorld()
    [root] = target_links(world, "pendulum")
    assert root.getName() == world.robot("pendulum").link(0).getName()
    assert len(target_links(world, "pendulum", all_links=True)) == world.robot(
        "pendulum").numLinks()
    with pytest.raises(EntityError, match="has no link 'hand'") as error:
        target_links(world, "pendulum", "hand")
    assert error.value.problem is Problem.NOT_FOUND
    with pytest.raises(EntityError, match="is not a robot") as error:
        target_links(world, "ground", "x")
    assert error.value.problem is Problem.INVALID
    assert math.isfinite(sim.getTime())
