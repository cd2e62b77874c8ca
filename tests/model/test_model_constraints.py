"""WorldModel's user constraints (sim_node.model.constraints): unique ids, checks, and removal
with their entities."""
from pathlib import Path

import numpy as np
import pytest

import sim_node
from sim_node.model.constraints import Constraint
from sim_node.model.scene import build_scene, constraint_specs

REPO = Path(__file__).resolve().parents[2]
PENDULUM = REPO / "data" / "robots" / "pendulum" / "pendulum.urdf"


@pytest.fixture
def world(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text("""rigid_objects:
  - name: a
    geometry: {box: [0.1, 0.1, 0.1]}
    mass: 1.0
  - name: b
    geometry: {box: [0.1, 0.1, 0.1]}
    mass: 1.0
    pose: {position: [1, 0, 0]}
""")
    w = sim_node.WorldModel()
    w.readFile(path)
    w.loadRobot(str(PENDULUM))
    return w


def test_ids_count_up_and_are_never_reused(world):
    a, b = world.rigidObject(0), world.rigidObject(1)
    ids = [world.addConstraint(Constraint("point2point", a, b)) for _ in range(3)]
    assert ids == [0, 1, 2]
    world.removeConstraint(2)
    assert world.addConstraint(Constraint("fixed", a, None)) == 3
    assert [c.uid for c in world.constraints()] == [0, 1, 3]
    with pytest.raises(KeyError, match="no constraint with unique id 2"):
        world.removeConstraint(2)


def test_removing_an_entity_removes_its_constraints_links_included(world):
    a, b = world.rigidObject(0), world.rigidObject(1)
    robot = world.robot(0)
    world.addConstraint(Constraint("point2point", a, b))
    world.addConstraint(Constraint("fixed", robot.link(robot.numLinks() - 1), a))
    world.addConstraint(Constraint("fixed", b, None))
    world.remove(robot)
    assert [(c.parent, c.child) for c in world.constraints()] == [(a, b), (b, None)]
    world.remove(a)
    assert [(c.parent, c.child) for c in world.constraints()] == [(b, None)]


ARM = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="arm"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tip"><inertial><mass value="0.1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.5" rpy="0.1 0 0"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
  <joint name="weld" type="fixed"><parent link="arm"/><child link="tip"/><origin xyz="0.3 0.1 0" rpy="0.3 0.2 0.1"/></joint>
</robot>
"""


def test_a_link_frame_is_given_to_the_engine_in_its_body_frame(world, tmp_path):
    # a link merged into its parent's body across a rotated, offset fixed joint: the engine
    # frame = body placement x (link frame in the body) x the constraint frame must be the
    # link's own placement x the constraint frame
    path = tmp_path / "arm.urdf"
    path.write_text(ARM)
    robot = world.loadRobot(str(path), fixed_base=True)
    robot.setConfig([0.7])
    link = robot.link("tip")
    frame = (np.eye(3), np.array([0.1, 0.2, 0.3]))
    world.addConstraint(Constraint("point2point", link, None, parent_frame=frame))
    layout = build_scene(world)
    (spec,) = constraint_specs(world.constraints(), layout.body_of_id)
    assert spec["body_a"] == layout.body_of_id[robot.link("arm").getID()]
    R_body, p_body = layout.scene.body_pose(spec["body_a"])
    R_link, p_link = link.getTransform()
    np.testing.assert_allclose(p_body + R_body @ spec["p_a"], p_link + R_link @ frame[1],
                               atol=1e-12)
    np.testing.assert_allclose(R_body @ spec["R_a"], R_link, atol=1e-12)


@pytest.mark.parametrize("change, message", [
    (dict(kind="hinge"), "kind"),
    (dict(child="world"), "child"),
    (dict(parent_frame=(np.eye(3) * 2, np.zeros(3))), "rotation"),
    (dict(child_frame=(np.eye(3), np.array([0, np.nan, 0]))), "finite"),
    (dict(axis=np.zeros(3), kind="prismatic"), "axis"),
    (dict(max_force=-1.0), "max_force"),
    (dict(erp=-0.1), "erp"),
    (dict(gear_ratio=np.inf), "gear_ratio"),
    (dict(kind="gear"), "gear"),
])
def test_bad_constraints_are_refused_naming_the_field(world, change, message):
    c = Constraint(**{**dict(kind="fixed", parent=world.rigidObject(0), child=None), **change})
    with pytest.raises(ValueError, match=message):
        world.addConstraint(c)
    assert world.constraints() == []
