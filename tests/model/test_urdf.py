"""URDF loading: every element the issue lists, mesh formats and URIs, and a clear error that
names file, element, line and problem for each kind of malformed input."""
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

import sim_node
from sim_node.model.urdf import parse_urdf

REPO = Path(__file__).resolve().parents[2]
ARM = REPO / "data" / "robots" / "arm7" / "arm7.urdf"

INERTIAL = ('<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" '
            'izz="0.1"/></inertial>')


def robot(body: str, name="r") -> str:
    return f'<robot name="{name}">\n{body}\n</robot>'


def two_links(joint: str) -> str:
    return robot(f'<link name="a">{INERTIAL}</link>\n<link name="b">{INERTIAL}</link>\n{joint}')


def test_project_arm_loads_with_limits_dynamics_mimic_and_meshes():
    urdf = parse_urdf(ARM)
    j2 = urdf.joints["joint2"]
    assert j2.type == "revolute" and j2.limit.effort > 0 and j2.limit.velocity > 0
    assert j2.limit.lower < 0 < j2.limit.upper and j2.damping > 0 and j2.friction > 0
    assert urdf.joints["finger_joint2"].mimic.joint == "finger_joint1"
    suffixes = {Path(v.shape.path).suffix for link in urdf.links.values()
                for v in (*link.visuals, *link.collisions) if hasattr(v.shape, "path")}
    assert suffixes == {".stl", ".obj", ".dae"}
    for link in urdf.links.values():
        for element in (*link.visuals, *link.collisions):
            if hasattr(element.shape, "path"):
                assert element.shape.vertices.shape[1] == 3 and len(element.shape.faces) > 0


def test_dae_obj_and_stl_of_one_link_describe_the_same_solid():
    urdf = parse_urdf(ARM)
    link1 = urdf.links["link1"]
    visual = link1.visuals[0].shape
    collision = link1.collisions[0].shape
    assert Path(visual.path).suffix == ".dae" and Path(collision.path).suffix == ".stl"
    np.testing.assert_allclose(visual.vertices.min(0), collision.vertices.min(0), atol=2e-3)
    np.testing.assert_allclose(visual.vertices.max(0), collision.vertices.max(0), atol=2e-3)


def test_package_relative_and_scaled_mesh_uris_resolve(tmp_path):
    text = ARM.read_text()
    assert "package://sim_node/" in text
    urdf = parse_urdf(ARM)
    base = urdf.links["base_link"].collisions[0].shape
    assert base.scale == (0.001, 0.001, 0.001)
    assert np.abs(base.vertices).max() < 1.0     # millimetres scaled to metres
    # the same URDF outside the package finds package:// files through package_dirs
    copy = tmp_path / "arm.urdf"
    copy.write_text(text.replace('filename="meshes/', f'filename="{ARM.parent}/meshes/'))
    parse_urdf(copy, package_dirs=[REPO.parent])


def test_urdf_string_and_file_give_the_same_robot():
    xml = two_links('<joint name="j" type="continuous"><parent link="a"/><child link="b"/>'
                    '<axis xyz="0 0 2"/></joint>')
    urdf = parse_urdf(xml)
    assert urdf.source == "<string>" and urdf.root == "a"
    np.testing.assert_array_equal(urdf.joints["j"].axis, [0, 0, 1])
    assert urdf.joints["j"].limit.lower == -math.inf


def test_inertial_origin_rotation_is_applied():
    xml = robot('<link name="a"><inertial><origin xyz="1 2 3" rpy="0 0 1.5707963267948966"/>'
                '<mass value="2"/><inertia ixx="1" ixy="0" ixz="0" iyy="2" iyz="0" izz="3"/>'
                '</inertial></link>')
    inertial = parse_urdf(xml).links["a"].inertial
    np.testing.assert_allclose(inertial.com, [1, 2, 3])
    np.testing.assert_allclose(inertial.inertia, np.diag([2, 1, 3]), atol=1e-12)


def test_robot_whose_collision_meshes_have_no_mass_properties_loads(tmp_path):
    # a single open triangle: no volume, no inertia; links without <inertial>
    (tmp_path / "tri.stl").write_text(
        "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n"
        "endloop\nendfacet\nendsolid t\n")
    path = tmp_path / "r.urdf"
    path.write_text(robot(
        '<link name="world"/><link name="a"><collision><geometry><mesh filename="tri.stl"/>'
        '</geometry></collision></link><link name="b">' + INERTIAL + '</link>'
        '<joint name="j0" type="fixed"><parent link="world"/><child link="a"/></joint>'
        '<joint name="j1" type="revolute"><parent link="a"/><child link="b"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'))
    world = sim_node.WorldModel()
    r = world.loadRobot(str(path))
    assert r.link("a").getMass().getMass() == 0.0
    assert r.getMassMatrix().shape == (1, 1)


LINK_A = f'<link name="a">{INERTIAL}</link>'
MALFORMED = {
    "bad_xml": (robot('<link name="a">'), "XML", "line 3"),
    "root_not_robot": ("<model name='x'/>", "<model>", "the root element must be <robot>"),
    "missing_inertia_value": (robot('<link name="a"><inertial><mass value="1"/><inertia ixx="1" '
                                    'ixy="0" ixz="0" iyy="1" iyz="0"/></inertial></link>'),
                              "link 'a' <inertial> <inertia>", "missing attribute 'izz'"),
    "missing_mass": (robot('<link name="a"><inertial><inertia ixx="1" ixy="0" ixz="0" iyy="1" '
                           'iyz="0" izz="1"/></inertial></link>'),
                     "link 'a' <inertial>", "missing <mass>"),
    "not_a_number": (robot('<link name="a"><inertial><mass value="heavy"/></inertial></link>'),
                     "<mass>", "is not a number"),
    "unknown_joint_type": (two_links('<joint name="j" type="screw"><parent link="a"/>'
                                     '<child link="b"/></joint>'),
                           "joint 'j'", "unsupported joint type 'screw'"),
    "missing_link": (two_links('<joint name="j" type="fixed"><parent link="a"/>'
                               '<child link="c"/></joint>'),
                     "joint 'j' <child>", "names missing link 'c'"),
    "cycle": (robot(f'{LINK_A}<link name="b"/><link name="c"/>'
                    '<joint name="j1" type="fixed"><parent link="b"/><child link="c"/></joint>'
                    '<joint name="j2" type="fixed"><parent link="c"/><child link="b"/></joint>'),
              "robot 'r'", "cycle"),
    "two_parents": (robot(f'{LINK_A}<link name="b"/><link name="c"/>'
                          '<joint name="j1" type="fixed"><parent link="a"/><child link="c"/></joint>'
                          '<joint name="j2" type="fixed"><parent link="b"/><child link="c"/></joint>'),
                    "link 'c'", "two parent joints"),
    "two_roots": (robot(f'{LINK_A}<link name="b"/>'), "robot 'r'", "several root links"),
    "missing_mesh": (robot('<link name="a"><collision><geometry><mesh filename="nope.stl"/>'
                           '</geometry></collision></link>'),
                     "link 'a' <collision> <mesh>", "mesh file not found: nope.stl"),
    "revolute_without_limit": (two_links('<joint name="j" type="revolute"><parent link="a"/>'
                                         '<child link="b"/></joint>'),
                               "joint 'j'", "needs <limit>"),
    "zero_axis": (two_links('<joint name="j" type="continuous"><parent link="a"/>'
                            '<child link="b"/><axis xyz="0 0 0"/></joint>'),
                  "joint 'j' <axis>", "non-zero"),
    "duplicate_link": (robot(LINK_A + LINK_A), "link 'a'", "duplicate link name"),
    "unknown_collision_shape": (robot('<link name="a"><collision><geometry><cone radius="1"/>'
                                      '</geometry></collision></link>'), "<cone>", "unknown shape"),
    "zero_radius_collision": (robot('<link name="a"><collision><geometry><sphere radius="0"/>'
                                    '</geometry></collision></link>'), "<sphere>",
                              "radius must be positive"),
    "empty_collision_geometry": (robot('<link name="a"><collision><geometry/></collision></link>'),
                                 "<collision> <geometry>", "is empty"),
    "too_few_numbers": (robot('<link name="a"><collision><origin xyz="1 2"/><geometry><box '
                              'size="1 1 1"/></geometry></collision></link>'), "<origin>",
                        "needs 3 numbers"),
    "huge_number": (robot('<link name="a"><inertial><mass value="1e300"/><inertia ixx="1" ixy="0" '
                          'ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'), "<mass>",
                    "exceeds"),
    "not_utf8": (robot('<link name="caf\xe9"/>'), "document", "not valid utf-8"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_urdf_raises_an_error_naming_file_element_line_and_problem(case, tmp_path):
    xml, element, problem = MALFORMED[case]
    path = tmp_path / f"{case}.urdf"
    path.write_bytes(xml.encode("latin-1") if case == "not_utf8" else xml.encode())
    with pytest.raises(sim_node.URDFError) as info:
        parse_urdf(path)
    message = str(info.value)
    assert message.startswith(str(path)), message
    assert element in message and problem in message, message
    if case not in ("cycle", "two_parents", "two_roots", "bad_xml"):
        assert info.value.line is not None and info.value.line >= 1


def test_error_line_points_at_the_offending_element(tmp_path):
    path = tmp_path / "r.urdf"
    path.write_text('<robot name="r">\n<link name="a"/>\n<link name="b"/>\n'
                    '<joint name="j" type="ball">\n<parent link="a"/><child link="b"/>\n</joint>\n'
                    '</robot>\n')
    with pytest.raises(sim_node.URDFError) as info:
        parse_urdf(path)
    assert info.value.line == 4
    assert f"{path}:4: joint 'j'" in str(info.value)


def test_unreadable_collision_mesh_is_an_error(tmp_path):
    (tmp_path / "junk.stl").write_bytes(b"\x00\x01 not a mesh")
    path = tmp_path / "r.urdf"
    path.write_text(robot('<link name="a"><collision><geometry><mesh filename="junk.stl"/>'
                          '</geometry></collision></link>'))
    with pytest.raises(sim_node.URDFError, match=r"link 'a' <collision> <mesh>: mesh junk.stl"):
        parse_urdf(path)


def test_failed_load_leaves_the_world_unchanged(tmp_path):
    world = sim_node.WorldModel()
    world.loadRobot(str(ARM))
    before = (world.numRobots(), world.numIDs())
    bad = tmp_path / "bad.urdf"
    shutil.copy(ARM, bad)     # its relative meshes are missing next to the copy
    with pytest.raises(sim_node.URDFError, match="mesh file not found"):
        world.loadRobot(str(bad))
    assert (world.numRobots(), world.numIDs()) == before
