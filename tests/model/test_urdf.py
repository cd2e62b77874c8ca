"""URDF loading: every element the issue lists, mesh formats and URIs, and a clear error that
names file, element, line and problem for each kind of malformed input."""
import math
import os
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
    "eval_substitution": (robot('<link name="a"><collision><origin xyz="$(eval 9**9**9) 0 0"/>'
                                '<geometry><box size="1 1 1"/></geometry></collision></link>'),
                          "<origin>", "only $(env ...), $(optenv ...) and $(find ...) are expanded"),
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


# -- repaired defects: a URDFWarning naming file, line and what was done ---------------------

BOX = '<geometry><box size="0.1 0.2 0.3"/></geometry>'
REPAIRED = {
    # case: (document, line of the warning, element, text of the repair)
    "xml_version_0": ('<?xml version="0.0"?>\n' + robot(f'<link name="a">{INERTIAL}</link>'),
                      1, "XML declaration", 'version "0.0": read as XML 1.0'),
    "blank_lines_before_declaration": ('\n\n\n<?xml version="1.0"?>\n'
                                       + robot(f'<link name="a">{INERTIAL}</link>'),
                                       4, "XML declaration", "3 blank line(s) before"),
    "trailing_nul": (robot(f'<link name="a">{INERTIAL}</link>') + "\r\n\x00", 3, "document",
                     "NUL byte(s) after the end of the document: ignored"),
    "zero_radius_visual": (robot(f'<link name="a">{INERTIAL}<visual><geometry><sphere radius="0"/>'
                                 f'</geometry></visual><collision>{BOX}</collision></link>'), 2,
                           "link 'a' <visual> <sphere>", "visual dropped"),
    "empty_visual_geometry": (robot(f'<link name="a">{INERTIAL}<visual><geometry/></visual>'
                                    f'<collision>{BOX}</collision></link>'), 2,
                              "link 'a' <visual> <geometry>", "visual dropped"),
    "missing_visual_mesh": (robot(f'<link name="a">{INERTIAL}<visual><geometry><mesh '
                                  'filename="nope.stl"/></geometry></visual>'
                                  f'<collision>{BOX}</collision></link>'), 2,
                            "link 'a' <visual> <mesh>", "visual dropped"),
    "material_in_geometry": (robot(f'<link name="a">{INERTIAL}<collision><geometry><box '
                                   'size="1 1 1"/><material name="m"/></geometry></collision>'
                                   '</link>'), 2, "link 'a' <collision> <geometry>",
                             "<material> is not a shape: ignored"),
    "zero_axis_on_fixed_joint": (two_links('<joint name="j" type="fixed"><parent link="a"/>'
                                           '<child link="b"/>\n<axis xyz="0 0 0"/></joint>'), 5,
                                 "joint 'j' <axis>", "axis 0 0 0 on a fixed joint"),
    "lower_above_upper": (two_links('<joint name="j" type="prismatic"><parent link="a"/>'
                                    '<child link="b"/>\n<limit lower="1" upper="-1" effort="1" '
                                    'velocity="1"/></joint>'), 5, "joint 'j' <limit>",
                          "lower 1 > upper -1: no position limit"),
    "mimic_of_missing_joint": (two_links('<joint name="j" type="continuous"><parent link="a"/>'
                                         '<child link="b"/><mimic joint="k"/></joint>'), 4,
                               "joint 'j' <mimic>", "names missing joint 'k': mimic dropped"),
    "mimic_on_fixed_joint": (two_links('<joint name="j" type="fixed"><parent link="a"/>'
                                       '<child link="b"/><mimic joint="k"/></joint>'), 4,
                             "joint 'j' <mimic>", "a fixed joint cannot mimic"),
    "commas": (robot(f'<link name="a">{INERTIAL}<collision><origin xyz="0.07, 0, -0.69"/>{BOX}'
                     '</collision></link>'), 2, "link 'a' <collision> <origin>",
               "numbers separated by commas"),
    "stray_period": (two_links('<joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
                               '\n<limit lower="-1.57." upper="1" effort="1" velocity="1"/></joint>'),
                     5, "joint 'j' <limit>", "'-1.57.' read as -1.57"),
    "extra_numbers": (robot(f'<link name="a">{INERTIAL}<collision><origin rpy="0 1 0 0"/>{BOX}'
                            '</collision></link>'), 2, "link 'a' <collision> <origin>",
                      "has 4 numbers, 3 expected: the first 3 are used"),
    "xacro_substitution": (robot(f'<link name="a">{INERTIAL}<collision><origin '
                                 'xyz="$(optenv SIM_NODE_TEST_UNSET_VARIABLE 0.19 0 0.149)"/>'
                                 f'{BOX}</collision></link>'), 2, "link 'a' <collision> <origin>",
                           'expanded to "0.19 0 0.149"'),
    "missing_robot_name": ('<robot>\n' + f'<link name="a">{INERTIAL}</link></robot>', 1,
                           "<robot>", "missing attribute 'name': named 'missing_robot_name'"),
    "inertia_not_psd": (robot('<link name="a"><inertial><mass value="1"/><inertia ixx="1" ixy="5" '
                              'ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'), 2,
                        "link 'a' <inertial> <inertia>", "set to the nearest valid ones"),
}


@pytest.mark.parametrize("case", sorted(REPAIRED))
def test_harmless_defect_is_repaired_with_a_warning_naming_file_line_and_repair(case, tmp_path):
    xml, line, element, repair = REPAIRED[case]
    path = tmp_path / f"{case}.urdf"
    path.write_bytes(xml.encode())
    with pytest.warns(sim_node.URDFWarning) as caught:
        urdf = parse_urdf(path)
    matching = [w.message for w in caught if w.message.element == element]
    assert matching, [str(w.message) for w in caught]
    warning = matching[0]
    assert repair in warning.problem, str(warning)
    assert warning.line == line and str(warning).startswith(f"{path}:{line}: {element}: ")
    assert "a" in urdf.links


def test_repaired_documents_load_the_same_robot_as_clean_ones(tmp_path):
    clean = ARM.read_text()
    body = clean[clean.index("<robot"):]
    defective = '\n\n<?xml version="0.0" encoding="utf-8"?>\n' + body + "\x00"
    path = ARM.parent / "_defective_copy.urdf"     # beside the meshes it references
    try:
        path.write_bytes(defective.encode())
        with pytest.warns(sim_node.URDFWarning):
            repaired = parse_urdf(path)
    finally:
        path.unlink()
    original = parse_urdf(ARM)
    assert list(repaired.links) == list(original.links)
    assert list(repaired.joints) == list(original.joints)
    shift = 3 - clean[:clean.index("<robot")].count("\n")       # lines above <robot>
    for name, joint in original.joints.items():
        assert repaired.joints[name].line == joint.line + shift
        np.testing.assert_array_equal(repaired.joints[name].origin.p, joint.origin.p)


def test_a_dropped_visual_keeps_the_collision_geometry():
    xml = robot(f'<link name="a">{INERTIAL}<visual><geometry><sphere radius="0"/></geometry>'
                f'</visual><collision>{BOX}</collision></link>')
    with pytest.warns(sim_node.URDFWarning, match="visual dropped"):
        link = parse_urdf(xml).links["a"]
    assert link.visuals == () and link.collisions[0].shape.size == (0.1, 0.2, 0.3)


def test_collision_plane_of_pybullet_is_read():
    xml = robot('<link name="a"><collision><origin xyz="0 0 1"/><geometry><plane normal="0 0 2"/>'
                '</geometry></collision></link>')
    shape = parse_urdf(xml).links["a"].collisions[0].shape
    assert shape.normal == (0.0, 0.0, 1.0) and shape.offset == 0.0


def test_lower_above_upper_means_no_limit_as_in_pybullet():
    p = pytest.importorskip("pybullet")
    import pybullet_data
    path = Path(pybullet_data.getDataPath()) / "cube_no_rotation.urdf"
    with pytest.warns(sim_node.URDFWarning, match="no position limit"):
        robot = sim_node.WorldModel().loadRobot(str(path))
    lower, upper = robot.getJointLimits()
    client = p.connect(p.DIRECT)
    try:
        body = p.loadURDF(str(path), physicsClientId=client)
        for j in range(p.getNumJoints(body, physicsClientId=client)):
            info = p.getJointInfo(body, j, physicsClientId=client)
            if info[2] == p.JOINT_PRISMATIC:
                assert info[8] > info[9]        # PyBullet keeps lower > upper: unlimited
                name = info[1].decode()
                qi = robot.structure.joint_q_index[name]
                assert lower[qi] == -math.inf and upper[qi] == math.inf
    finally:
        p.disconnect(client)


def test_entity_bombs_in_urdf_are_an_error_not_an_expansion():
    lol = ('<?xml version="1.0"?>\n<!DOCTYPE robot [<!ENTITY a "aaaaaaaaaa">'
           + "".join(f'<!ENTITY {chr(98 + i)} "' + f"&{chr(97 + i)};" * 10 + '">' for i in range(8))
           + ']>\n<robot name="&i;"><link name="x"/></robot>')
    try:
        urdf = parse_urdf(lol)
    except sim_node.URDFError:
        return
    assert len(urdf.name) < 1000      # entities are not expanded


@pytest.mark.parametrize("attribute", ['<link name="$(env HOME)"/>',
                                       '<link name="a"><collision><geometry><mesh filename='
                                       '"$(find sim_node)/data/x.stl"/></geometry></collision>'
                                       '</link>'])
def test_a_urdf_parsed_without_substitutions_refuses_them_with_file_and_line(attribute):
    # Claim: substitutions=False (a URDF a ROS client sent) refuses $(env)/$(find) with a
    # URDFError naming the element and line, instead of expanding them into the model
    text = f'<robot name="r">\n{attribute}\n</robot>'
    with pytest.raises(sim_node.URDFError, match=r"<string>:2: .*holds a substitution arg") as caught:
        parse_urdf(text, substitutions=False)
    assert os.environ["HOME"] not in str(caught.value)


def test_visual_material_colours_inline_named_and_missing():
    # robot-level materials may come after the links naming them; a texture-only or unknown
    # material leaves the colour unset (the renderer's default grey); a bad rgba is a warning
    with pytest.warns(sim_node.URDFWarning, match=r"<string>:10: .*colour ignored: .*needs 4"):
        urdf = parse_urdf(MATERIALS)
    colors = [v.color for v in urdf.links["a"].visuals]
    assert colors == [(1.0, 0.5, 0.0, 1.0), (0.1, 0.2, 0.3, 0.5), None, None, None]


MATERIALS = """<robot name="r">
      <link name="a">
        <visual><geometry><box size="1 1 1"/></geometry><material name="late"/></visual>
        <visual><geometry><sphere radius="1"/></geometry>
          <material name="inline"><color rgba="0.1 0.2 0.3 0.5"/></material></visual>
        <visual><geometry><sphere radius="1"/></geometry>
          <material name="wood"><texture filename="wood.png"/></material></visual>
        <visual><geometry><sphere radius="1"/></geometry></visual>
        <visual><geometry><sphere radius="1"/></geometry>
          <material name="x"><color rgba="1 2"/></material></visual>
      </link>
      <material name="late"><color rgba="1 0.5 0 1"/></material>
    </robot>"""


def test_a_named_colour_defined_in_a_visual_serves_later_references():
    # urdfdom and PyBullet register a link's named <material><color> for later <material
    # name=.../> references (r2d2.urdf defines "black" in its first wheel); a robot-level
    # material of the same name wins
    urdf = parse_urdf("""<robot name="r">
      <material name="top"><color rgba="0 1 0 1"/></material>
      <link name="a">
        <visual><geometry><box size="1 1 1"/></geometry>
          <material name="black"><color rgba="0.5 0.5 0.5 1"/></material></visual>
        <visual><geometry><box size="1 1 1"/></geometry>
          <material name="top"><color rgba="1 0 0 1"/></material></visual>
      </link>
      <link name="b">
        <visual><geometry><box size="1 1 1"/></geometry><material name="black"/></visual>
        <visual><geometry><box size="1 1 1"/></geometry><material name="top"/></visual>
      </link>
      <joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>
    </robot>""")
    assert [v.color for v in urdf.links["b"].visuals] == [(0.5, 0.5, 0.5, 1.0),
                                                         (0.0, 1.0, 0.0, 1.0)]


def test_kuka_materials_are_read():
    pybullet_data = pytest.importorskip("pybullet_data")
    with pytest.warns(Warning):
        urdf = parse_urdf(os.path.join(pybullet_data.getDataPath(), "kuka_iiwa", "model.urdf"))
    assert urdf.links["lbr_iiwa_link_0"].visuals[0].color == (0.2, 0.2, 0.2, 1.0)
    assert urdf.links["lbr_iiwa_link_1"].visuals[0].color == (0.5, 0.7, 1.0, 1.0)
    assert urdf.links["lbr_iiwa_link_3"].visuals[0].color == pytest.approx(
        (1.0, 0.423529411765, 0.0392156862745, 1.0))
