"""WorldModel loading rules: unique names for repeated loads, URDFs as terrains."""
from pathlib import Path

import numpy as np
import pytest
from transforms3d.euler import euler2mat

import sim_node

REPO = Path(__file__).resolve().parents[2]
PENDULUM = REPO / "data" / "robots" / "pendulum" / "pendulum.urdf"
TABLE = REPO / "data" / "meshes" / "table.stl"


def test_loading_the_same_file_again_gives_unique_names():
    world = sim_node.WorldModel()
    names = [world.loadRobot(str(PENDULUM)).getName() for _ in range(3)]
    assert names == ["pendulum", "pendulum_1", "pendulum_2"]
    assert [world.loadTerrain(TABLE).getName() for _ in range(2)] == ["table", "table_1"]
    assert world.loadRigidObject(TABLE, mass=1.0).getName() == "table_2"
    world.remove(world.robot("pendulum_1"))
    assert world.loadRobot(str(PENDULUM)).getName() == "pendulum_1"      # the first free one
    with pytest.raises(ValueError, match="already has an entity named 'pendulum'"):
        world.loadRobot(str(PENDULUM), name="pendulum")
    assert world.loadRobot(str(PENDULUM), name="mine").getName() == "mine"


def test_world_file_entries_without_names_get_unique_ones(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text(f"""
terrains:
  - geometry: {{mesh: {TABLE}}}
  - geometry: {{mesh: {TABLE}}}
    name: table_1
  - urdf: {PENDULUM}
robots:
  - urdf: {PENDULUM}
  - urdf: {PENDULUM}
    namespace: second
""")
    world = sim_node.WorldModel()
    world.loadRobot(str(PENDULUM))
    world.readFile(path)
    names = [world.getName(i) for i in range(world.numIDs()) if "/" not in world.getName(i)]
    # explicit names are reserved first; generated ones skip them and the world's own
    assert names == ["table", "table_1", "pendulum_1", "pendulum", "pendulum_2", "pendulum_3"]
    assert world.robot("pendulum_3").settings["namespace"] == "second"
    assert world.robot("pendulum_2").settings["namespace"] is None   # the node's rule decides


TWO_LINKS = """<robot name="stand">
  <link name="base"><collision><geometry><box size="1 1 0.1"/></geometry></collision></link>
  <link name="arm"><collision><origin xyz="0 0 0.25"/><geometry><cylinder radius="0.05" length="0.5"/>
  </geometry></collision></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0.2 0 0.05" rpy="0 0 0.5"/><axis xyz="1 0 0"/>
    <limit lower="0.3" upper="1.0" effort="1" velocity="1"/></joint>
</robot>"""


def test_a_urdf_is_a_terrain_made_of_its_links_collision_geometry(tmp_path):
    path = tmp_path / "stand.urdf"
    path.write_text(TWO_LINKS)
    world = sim_node.WorldModel()
    R_place, t_place = euler2mat(0, 0, 1.0), np.array([1.0, 2.0, 0.0])
    terrain = world.loadTerrain(path, R=R_place, t=t_place)
    assert terrain.getName() == "stand" and world.numTerrains() == 1 and world.numRobots() == 0
    base, arm = terrain.getCollisionGeometry()
    assert base.shape.size == (1.0, 1.0, 0.1)
    # the hinge at its default position, 0 clamped into [0.3, 1.0]: computed here by hand
    R_joint = euler2mat(0, 0, 0.5) @ euler2mat(0.3, 0, 0)
    np.testing.assert_allclose(arm.origin.R, R_joint, atol=1e-12)
    np.testing.assert_allclose(arm.origin.p, [0.2, 0, 0.05] + R_joint @ [0, 0, 0.25], atol=1e-12)
    R, t = terrain.getTransform()
    np.testing.assert_array_equal(R, R_place)
    np.testing.assert_array_equal(t, t_place)


def test_pybullet_plane_urdf_is_a_terrain():
    pybullet_data = pytest.importorskip("pybullet_data")
    world = sim_node.WorldModel()
    plane = world.loadTerrain(Path(pybullet_data.getDataPath()) / "plane.urdf")
    assert plane.getName() == "plane" and len(plane.getCollisionGeometry()) >= 1
    # the same file as a robot: a massless base, static as in PyBullet
    robot = world.loadRobot(str(Path(pybullet_data.getDataPath()) / "plane.urdf"))
    assert robot.getName() == "plane_1" and not robot.structure.floating


def test_a_terrain_urdf_without_collision_geometry_is_an_error(tmp_path):
    path = tmp_path / "ghost.urdf"
    path.write_text('<robot name="ghost"><link name="a"/></robot>')
    with pytest.raises(sim_node.URDFError, match="a terrain needs <collision> geometry"):
        sim_node.WorldModel().loadTerrain(path)
