"""xacro files load directly (sim_node.model.xacro_files): arguments, includes through $(find) on
sim_node's package search, errors as URDFError with file and line, example-robot-data's hector
quadrotor against the URDF it ships, and no ROS needed."""
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import sim_node
from sim_node.model.urdf import parse_urdf

pytest.importorskip("xacro")
XACRO_NS = 'xmlns:xacro="http://www.ros.org/wiki/xacro"'


@pytest.fixture
def package(tmp_path):
    """A small description package: my_desc/urdf/robot.urdf.xacro includes parts.xacro through
    $(find my_desc) and takes the arguments length (default 0.5) and with_tool (default false)."""
    root = tmp_path / "src" / "my_desc"
    (root / "urdf").mkdir(parents=True)
    (root / "package.xml").write_text("<package format='3'><name>my_desc</name></package>")
    (root / "urdf" / "parts.xacro").write_text(textwrap.dedent(f"""\
        <robot {XACRO_NS}>
          <xacro:property name="mass" value="2.0"/>
          <xacro:macro name="rod" params="name length">
            <link name="${{name}}">
              <inertial><origin xyz="0 0 ${{length / 2}}"/><mass value="${{mass}}"/>
                <inertia ixx="${{mass * length**2 / 12}}" ixy="0" ixz="0"
                         iyy="${{mass * length**2 / 12}}" iyz="0" izz="0.001"/></inertial>
              <collision><origin xyz="0 0 ${{length / 2}}"/>
                <geometry><cylinder radius="0.02" length="${{length}}"/></geometry></collision>
            </link>
          </xacro:macro>
        </robot>
        """))
    (root / "urdf" / "robot.urdf.xacro").write_text(textwrap.dedent(f"""\
        <?xml version="1.0"?>
        <robot name="my_robot" {XACRO_NS}>
          <xacro:arg name="length" default="0.5"/>
          <xacro:arg name="with_tool" default="false"/>
          <xacro:include filename="$(find my_desc)/urdf/parts.xacro"/>
          <link name="world"/>
          <xacro:rod name="upper" length="$(arg length)"/>
          <joint name="shoulder" type="continuous"><parent link="world"/><child link="upper"/>
            <axis xyz="0 1 0"/></joint>
          <xacro:if value="$(arg with_tool)">
            <xacro:rod name="tool" length="0.1"/>
            <joint name="tool_joint" type="fixed"><parent link="upper"/><child link="tool"/>
              <origin xyz="0 0 $(arg length)"/></joint>
          </xacro:if>
        </robot>
        """))
    return root


def test_xacro_arguments_includes_and_find(package):
    world = sim_node.WorldModel()
    path = package / "urdf" / "robot.urdf.xacro"
    default = world.loadRobot(str(path))
    assert default.getName() == "my_robot" and default.numLinks() == 2
    assert default.urdf.links["upper"].collisions[0].shape.length == 0.5
    longer = world.loadRobot(str(path), xacro_args={"length": 0.8, "with_tool": "true"})
    assert longer.getName() == "my_robot_1" and longer.numLinks() == 3
    np.testing.assert_allclose(longer.urdf.joints["tool_joint"].origin.p, [0, 0, 0.8])
    # the pendulum's inertia about its axis: 2 kg rod of 0.8 m plus the 0.1 m tool on its end
    rod = 2.0 * 0.8 ** 2 / 12 + 2.0 * 0.4 ** 2
    tool = 2.0 * 0.1 ** 2 / 12 + 2.0 * 0.85 ** 2
    np.testing.assert_allclose(longer.getMassMatrix(), [[rod + tool]], rtol=1e-12)


def test_readfile_and_world_files_take_xacro(package, tmp_path):
    world = sim_node.WorldModel()
    world.readFile(package / "urdf" / "robot.urdf.xacro")
    world_file = tmp_path / "w.yaml"
    world_file.write_text(f"robots:\n  - urdf: {package}/urdf/robot.urdf.xacro\n"
                          "    xacro_args: {length: 0.3, with_tool: true}\n")
    world.readFile(world_file)
    assert [world.robot(i).getName() for i in range(2)] == ["my_robot", "my_robot_1"]
    assert world.robot(1).urdf.links["upper"].collisions[0].shape.length == 0.3


def test_find_uses_package_dirs_first(package, tmp_path):
    # another my_desc, given explicitly, wins over the one above the file
    other = tmp_path / "other" / "my_desc" / "urdf"
    other.mkdir(parents=True)
    text = (package / "urdf" / "parts.xacro").read_text().replace('value="2.0"', 'value="7.0"')
    (other / "parts.xacro").write_text(text)
    urdf = parse_urdf(package / "urdf" / "robot.urdf.xacro", package_dirs=[tmp_path / "other"])
    assert urdf.links["upper"].inertial.mass == 7.0


XACRO_ERRORS = {
    "undefined_arg": ('<robot name="r" {ns}><link name="$(arg nope)"/></robot>', "robot.xacro",
                      None, "Undefined substitution argument nope (pass it in xacro_args)"),
    "missing_include": ('<robot name="r" {ns}><xacro:include filename="gone.xacro"/></robot>',
                        "robot.xacro", None, "No such file or directory"),
    "bad_xml_in_include": ('<robot name="r" {ns}><xacro:include filename="part.xacro"/></robot>',
                           "part.xacro", 3, "mismatched tag"),
    "unknown_package": ('<robot name="r" {ns}><xacro:include filename="$(find nopkg)/a.xacro"/>'
                        '</robot>', "robot.xacro", None, "$(find nopkg): package 'nopkg' not found"),
    "bad_expression": ('<robot name="r" {ns}><link name="${{1/0}}"/></robot>', "robot.xacro",
                       None, "division by zero"),
}


@pytest.mark.parametrize("case", sorted(XACRO_ERRORS))
def test_xacro_errors_are_urdf_errors_with_file_and_line(case, tmp_path):
    text, file, line, problem = XACRO_ERRORS[case]
    (tmp_path / "robot.xacro").write_text(text.format(ns=XACRO_NS))
    (tmp_path / "part.xacro").write_text(f"<robot {XACRO_NS}>\n<link name='x'>\n</robot>\n")
    with pytest.raises(sim_node.URDFError) as info:
        sim_node.WorldModel().loadRobot(str(tmp_path / "robot.xacro"))
    assert info.value.source == str(tmp_path / file), str(info.value)
    assert problem in str(info.value)
    if line is not None:
        assert info.value.line == line


def example_robot_data():
    from urdf_corpus import example_robot_data_root
    root = example_robot_data_root()
    if root is None:
        pytest.skip("example-robot-data is not installed")
    return root


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "data"))


def test_hector_quadrotor_xacro_gives_the_urdf_example_robot_data_ships(tmp_path):
    hector = example_robot_data() / "robots" / "hector_description" / "robots"
    wrapper = tmp_path / "hector.urdf.xacro"
    wrapper.write_text(f'<robot name="quadrotor" {XACRO_NS}><xacro:include filename="$(find '
                       'example-robot-data)/robots/hector_description/robots/quadrotor_base.urdf'
                       '.xacro"/><xacro:quadrotor_base_macro/></robot>')
    # $(find example-robot-data): the package folder found through package_dirs
    expanded = parse_urdf(wrapper, package_dirs=[hector.parents[2]])
    shipped = parse_urdf(hector / "quadrotor_base.urdf")
    assert list(expanded.links) == list(shipped.links) == ["base_link"]
    a, b = expanded.links["base_link"], shipped.links["base_link"]
    assert a.inertial.mass == b.inertial.mass == 1.477
    np.testing.assert_array_equal(a.inertial.inertia, b.inertial.inertia)
    assert a.collisions[0].shape.path == b.collisions[0].shape.path
    np.testing.assert_array_equal(a.collisions[0].shape.vertices, b.collisions[0].shape.vertices)


def test_hector_top_level_xacro_reports_its_broken_include():
    # quadrotor_base.xacro includes package://.../urdf/quadrotor_base.urdf.xacro: xacro does not
    # resolve package:// in includes, and the file lives in robots/, not urdf/
    path = example_robot_data() / "robots" / "hector_description" / "robots" / "quadrotor_base.xacro"
    with pytest.raises(sim_node.URDFError) as info:
        sim_node.WorldModel().loadRobot(str(path))
    assert info.value.source == str(path) and "No such file" in str(info.value)


def test_xacro_works_without_ros(package):
    # ament_index_python made unimportable: $(find) still resolves through sim_node's search
    code = ("import sys; sys.modules['ament_index_python'] = None; "
            "sys.modules['ament_index_python.packages'] = None\n"
            "import sim_node\n"
            f"r = sim_node.WorldModel().loadRobot({str(package / 'urdf' / 'robot.urdf.xacro')!r})\n"
            "print(r.getName(), r.numLinks())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["my_robot", "2"]
