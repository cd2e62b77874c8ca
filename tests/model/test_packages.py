"""package:// resolution (sim_node.model.packages): the documented search order, each place
holding a different copy of the same file so the test sees which one won, and the error that
lists every place searched."""
from pathlib import Path

import numpy as np
import pytest

import sim_node
from sim_node.model.packages import PackageSearch, pybullet_data_dir
from sim_node.model.urdf import parse_urdf

# an ASCII STL tetrahedron scaled by `size`: the copies differ by size, so the winner is visible
def tetrahedron(path: Path, size: float):
    path.parent.mkdir(parents=True, exist_ok=True)
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]) * size
    faces = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]
    lines = ["solid t"]
    for f in faces:
        lines += ["facet normal 0 0 0", "outer loop"] + [f"vertex {' '.join(map(str, v[i]))}"
                                                         for i in f] + ["endloop", "endfacet"]
    path.write_text("\n".join(lines + ["endsolid t"]) + "\n")


def robot_using(uri: str) -> str:
    return (f'<robot name="r"><link name="a"><collision><geometry><mesh filename="{uri}"/>'
            '</geometry></collision></link></robot>')


def resolved_size(urdf_path, **kw) -> float:
    mesh = parse_urdf(urdf_path, **kw).links["a"].collisions[0].shape
    return float(mesh.vertices.max())


@pytest.fixture
def places(tmp_path, monkeypatch):
    """One copy of package 'pkg' per place of the search order, sizes 1..4."""
    given = tmp_path / "given"
    ros1 = tmp_path / "ros1"
    prefix = tmp_path / "prefix"
    workspace = tmp_path / "ws" / "src"
    tetrahedron(given / "pkg" / "m.stl", 1.0)
    tetrahedron(ros1 / "pkg" / "m.stl", 2.0)
    tetrahedron(prefix / "share" / "pkg" / "m.stl", 3.0)
    tetrahedron(workspace / "pkg" / "m.stl", 4.0)          # a sibling of the robot's package
    robot_dir = workspace / "robot_pkg" / "urdf"
    robot_dir.mkdir(parents=True)
    urdf = robot_dir / "r.urdf"
    urdf.write_text(robot_using("package://pkg/m.stl"))
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(ros1))
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(prefix))
    return dict(given=given, ros1=ros1, prefix=prefix, workspace=workspace, urdf=urdf)


def test_package_search_order(places, monkeypatch):
    urdf = places["urdf"]
    assert resolved_size(urdf, package_dirs=[places["given"]]) == 1.0     # (1) package_dirs
    assert resolved_size(urdf) == 2.0                                     # (2) ROS_PACKAGE_PATH
    monkeypatch.delenv("ROS_PACKAGE_PATH")
    assert resolved_size(urdf) == 3.0                                     # (3) AMENT_PREFIX_PATH
    monkeypatch.delenv("AMENT_PREFIX_PATH")
    assert resolved_size(urdf) == 4.0                                     # (4) the file's ancestors


def test_a_package_without_the_file_is_passed_over(places):
    (places["ros1"] / "pkg" / "m.stl").unlink()          # the package is there, the file is not
    assert resolved_size(places["urdf"]) == 3.0


def test_an_ancestor_is_found_by_folder_name_or_by_package_xml(tmp_path, monkeypatch):
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    named = tmp_path / "a" / "my_robot_description"
    tetrahedron(named / "meshes" / "m.stl", 5.0)
    (named / "urdf").mkdir()
    (named / "urdf" / "r.urdf").write_text(robot_using("package://my_robot_description/meshes/m.stl"))
    assert resolved_size(named / "urdf" / "r.urdf") == 5.0
    checkout = tmp_path / "b" / "some-checkout"
    tetrahedron(checkout / "meshes" / "m.stl", 6.0)
    (checkout / "package.xml").write_text('<?xml version="1.0"?>\n<package format="3"><name>'
                                          'other_name</name></package>')
    (checkout / "robots").mkdir()
    (checkout / "robots" / "r.urdf").write_text(robot_using("package://other_name/meshes/m.stl"))
    assert resolved_size(checkout / "robots" / "r.urdf") == 6.0


def test_pybullet_data_is_searched_last():
    data = pybullet_data_dir()
    if data is None:
        pytest.skip("pybullet_data is not installed")
    search = PackageSearch([], None)
    path, _ = search.resolve("kuka_iiwa", "meshes/link_0.obj")
    assert path == data / "kuka_iiwa" / "meshes" / "link_0.obj"
    assert search.find("pybullet_data") == data


def test_a_missing_collision_mesh_lists_every_place_searched(places, monkeypatch):
    urdf = places["urdf"]
    urdf.write_text(robot_using("package://nowhere/m.stl"))
    with pytest.raises(sim_node.URDFError) as info:
        parse_urdf(urdf, package_dirs=[places["given"]])
    message = str(info.value)
    assert message.startswith(f"{urdf}:1: link 'a' <collision> <mesh>: mesh file not found: "
                              "package://nowhere/m.stl; looked in: package 'nowhere' not found")
    for place in (str(places["given"]), "ROS_PACKAGE_PATH", str(places["ros1"]),
                  "AMENT_PREFIX_PATH", str(places["prefix"]), f"the folders above {urdf.parent}"):
        assert place in message, place
    # the package exists but lacks the file: each candidate path is listed
    urdf.write_text(robot_using("package://pkg/missing.stl"))
    with pytest.raises(sim_node.URDFError) as info:
        parse_urdf(urdf, package_dirs=[places["given"]])
    for base in (places["given"] / "pkg", places["ros1"] / "pkg", places["prefix"] / "share" / "pkg",
                 places["workspace"] / "pkg"):
        assert str(base / "missing.stl") in str(info.value)


def test_three_slashes_are_read_as_a_package_name(places):
    places["urdf"].write_text(robot_using("package:///pkg/m.stl"))
    with pytest.warns(sim_node.URDFWarning, match="names no package"):
        assert resolved_size(places["urdf"]) == 2.0


def test_package_dirs_in_a_world_file(places, tmp_path):
    world_file = tmp_path / "w.yaml"
    world_file.write_text(f"robots:\n  - urdf: {places['urdf']}\n    package_dirs: [given]\n")
    world = sim_node.WorldModel()
    world.readFile(world_file)
    mesh = world.robot(0).link("a").getCollisionGeometry()[0].shape
    assert float(mesh.vertices.max()) == 1.0
