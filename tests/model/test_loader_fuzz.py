"""Fuzzing the loaders with mutated URDF and world-file text (issue 10 §1, §4): whatever the
input, a loader either succeeds or raises a ModelLoadError subclass (URDFError, WorldFileError)
whose message names the file; no raw Python exception (UnicodeDecodeError, RecursionError,
QhullError, KeyError, numpy's shape messages...) escapes.

Examples per test: SIM_NODE_FUZZ_EXAMPLES (default 300, derandomized so CI replays the same
inputs); e.g. SIM_NODE_FUZZ_EXAMPLES=20000 for a long local run with fresh random inputs.
"""
import os
import warnings
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

import sim_node

REPO = Path(__file__).resolve().parents[2]
ARM = REPO / "data" / "robots" / "arm7" / "arm7.urdf"
TABLE = REPO / "data" / "meshes" / "table.stl"
EXAMPLES = int(os.environ.get("SIM_NODE_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 300,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

SMALL_URDF = f"""<?xml version="1.0"?>
<robot name="fuzz">
  <link name="world"/>
  <link name="base"><inertial><origin xyz="0 0 0.1" rpy="0 0 0"/><mass value="2"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>
    <visual><geometry><box size="0.1 0.2 0.3"/></geometry></visual>
    <collision><origin xyz="0 0 0.1"/><geometry><cylinder radius="0.05" length="0.2"/></geometry></collision>
  </link>
  <link name="arm"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><geometry><mesh filename="{TABLE}" scale="0.1 0.1 0.1"/></geometry></collision></link>
  <link name="finger"><inertial><mass value="0.1"/><inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial>
    <collision><geometry><sphere radius="0.02"/></geometry></collision></link>
  <joint name="fix" type="fixed"><parent link="world"/><child link="base"/><axis xyz="0 0 0"/></joint>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.2" rpy="0 0.5 0"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="2"/><dynamics damping="0.1" friction="0.2"/></joint>
  <joint name="slide" type="prismatic"><parent link="arm"/><child link="finger"/>
    <axis xyz="1 0 0"/><limit lower="0" upper="0.1" effort="5" velocity="1"/>
    <mimic joint="shoulder" multiplier="0.1" offset="0"/></joint>
</robot>
"""

WORLD = f"""simulation:
  physics_dt: 0.001
  gravity: [0, 0, -9.81]
  padding: 0.0025
  max_contacts: 8
terrains:
  - name: floor
    geometry: {{plane: {{normal: [0, 0, 1], offset: 0}}}}
    surface: &rubber {{kFriction: 1.0, kRestitution: 0.2}}
  - name: field
    geometry: {{heightfield: {{heights: [[0, 0.1], [0.2, 0]], size: [1, 1]}}}}
rigid_objects:
  - name: box
    mass: 1.5
    geometry: {{box: [0.1, 0.1, 0.1]}}
    pose: {{position: [0, 0, 1], orientation: [0, 0, 0, 1]}}
    surface: *rubber
  - name: table
    mass: 20
    geometry: {{mesh: {TABLE}}}
robots:
  - name: arm
    urdf: {ARM}
    fixed_base: true
    initial_config: {{joint2: 0.3}}
    controller: {{kp: 100, kd: 10}}
    plugins: [{{name: joint_state_publisher, config: {{rate: 100}}}}]
"""

TOKENS = ["<", ">", "/>", "</robot>", "<link name='x'/>", '"', "'", "=", " ", "\n", "\t", "nan",
          "inf", "-inf", "-1", "0", "1e308", "-1e308", "1e-320", "0 0 0", "1 2", "1,2,3", "\x00",
          "\xff", "\u202e", "&", "&amp;", "<!ENTITY a 'b'>", "<!--", "-->", "$(find x)",
          "$(arg y)", "package://", "package:///", "file://", "..", "/dev/zero", "*a", "&a ",
          "[", "]", "{", "}", ":", "- ", "  ", "!!python/object:os.system", "? ", "|", ">-",
          ".nan", ".inf", "~", "null", "yes", "9" * 400, "1e+999", "[[[[", "<![CDATA[x]]>",
          "xacro:", "<joint name='j' type='spherical'>", "type=\"floating\"", "mimic"]


@st.composite
def mutated(draw, text: str) -> bytes:
    """`text` after a few random edits: deletions, insertions of tricky tokens or bytes, number
    replacements and duplications."""
    data = text.encode("utf-8")
    for _ in range(draw(st.integers(1, 6))):
        n = len(data)
        i = draw(st.integers(0, n))
        kind = draw(st.sampled_from(["delete", "insert", "byte", "duplicate", "number"]))
        if kind == "delete":
            j = draw(st.integers(i, min(n, i + 40)))
            data = data[:i] + data[j:]
        elif kind == "insert":
            data = data[:i] + draw(st.sampled_from(TOKENS)).encode("utf-8", "surrogatepass") + data[i:]
        elif kind == "byte":
            data = data[:i] + bytes([draw(st.integers(0, 255))]) + data[i + 1:]
        elif kind == "duplicate":
            j = draw(st.integers(i, min(n, i + 200)))
            data = data[:i] + data[i:j] * draw(st.integers(2, 5)) + data[j:]
        else:
            digits = [k for k, c in enumerate(data) if chr(c).isdigit()]
            if digits:
                k = draw(st.sampled_from(digits))
                number = draw(st.sampled_from(["nan", "-0", "1e400", "-5", "3.5.", "0x10", "1_0",
                                               "", "99999999999999999999999"]))
                data = data[:k] + number.encode() + data[k + 1:]
    return data


def load_quietly(load):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sim_node.URDFWarning)
        try:
            load()
        except sim_node.ModelLoadError as exc:
            # an error names what it can: the message is a sentence, never a raw exception name
            assert str(exc) and "Traceback" not in str(exc)


@FUZZ
@given(data=mutated(SMALL_URDF))
def test_mutated_urdf_files_load_or_raise_model_load_errors(data, tmp_path_factory):
    path = tmp_path_factory.mktemp("urdf") / "r.urdf"
    path.write_bytes(data)
    load_quietly(lambda: sim_node.WorldModel().loadRobot(str(path)))
    load_quietly(lambda: sim_node.WorldModel().loadTerrain(path))


@FUZZ
@given(data=mutated(SMALL_URDF))
def test_mutated_urdf_strings_load_or_raise_model_load_errors(data):
    text = data.decode("utf-8", "replace")
    if not text.lstrip().startswith("<"):
        text = "<" + text
    load_quietly(lambda: sim_node.WorldModel().loadRobot(text))
    load_quietly(lambda: sim_node.WorldModel().loadRigidObject(text))


@FUZZ
@given(data=mutated(ARM.read_text()))
def test_mutated_project_robot_loads_or_raises_model_load_errors(data, tmp_path_factory):
    # beside its meshes, so the mutations reach the mesh references too
    path = ARM.parent / f"_fuzz_{os.getpid()}.urdf"
    try:
        path.write_bytes(data)
        load_quietly(lambda: sim_node.WorldModel().loadRobot(str(path)))
    finally:
        path.unlink(missing_ok=True)


@FUZZ
@given(data=mutated(WORLD))
def test_mutated_world_files_load_or_raise_world_file_errors(data, tmp_path_factory):
    path = tmp_path_factory.mktemp("world") / "w.yaml"
    path.write_bytes(data)
    world = sim_node.WorldModel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sim_node.URDFWarning)
        try:
            world.readFile(path)
        except sim_node.WorldFileError as exc:
            assert str(exc).startswith(str(path))
            assert world.numIDs() == 0          # all or nothing
