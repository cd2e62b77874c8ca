"""World files: the shipped worlds load with everything they state; every malformed entry is
an error naming file, line and entry; a failed load changes nothing; the Klamp't loaders."""
from pathlib import Path

import numpy as np
import pytest
from transforms3d.quaternions import quat2mat

import sim_node
from sim_node.model import geometry as geo

REPO = Path(__file__).resolve().parents[2]
WORLDS = REPO / "data" / "worlds"


def test_default_world_loads_robots_objects_terrains_and_parameters():
    world = sim_node.WorldModel()
    assert world.readFile(WORLDS / "default.yaml") is True
    assert world.simulation.physics_dt == 0.001 and world.simulation.max_contacts == 20
    assert [world.terrain(i).getName() for i in range(world.numTerrains())] == ["ground", "table"]
    assert isinstance(world.terrain("ground").getCollisionGeometry()[0].shape, geo.Plane)
    assert isinstance(world.terrain("table").getCollisionGeometry()[0].shape, geo.Mesh)
    assert world.numRigidObjects() == 4
    box = world.rigidObject("red_box")
    assert box.getMass().getMass() == pytest.approx(0.2)
    np.testing.assert_allclose(box.getMass().getInertia()[0], 0.2 * (0.05 ** 2 * 2) / 12)
    assert box.settings.surface.kFriction == 0.6
    arm = world.robot("arm")
    assert not arm.isFloatingBase() and arm.settings["namespace"] == "arm"
    assert arm.settings["controller"]["kp"]["joint2"] == 2000.0
    q = arm.getConfig()
    assert q[arm.structure.joint_q_index["joint2"]] == 0.5
    # the URDF root (world link) sits at the pose given in the file
    R, t = arm.link("world").getTransform()
    np.testing.assert_allclose(t, [-0.45, 0.0, 0.75])
    base = world.robot("mobile_base")
    assert base.isFloatingBase() and base.getConfig()[:3].tolist() == [0.0, -1.0, 0.085]


def test_ids_are_contiguous_and_named():
    world = sim_node.WorldModel()
    world.readFile(WORLDS / "default.yaml")
    n = world.numIDs()
    arm = world.robot("arm")
    assert n == 2 + 4 + (1 + arm.numLinks()) + (1 + world.robot("mobile_base").numLinks())
    assert world.terrain(0).getID() == 0 and world.rigidObject(0).getID() == 2
    assert world.getName(arm.getID()) == "arm"
    link = arm.link("link3")
    assert world.getName(link.getID()) == "arm/link3" and world.getEntity(link.getID()) is link
    assert sorted(world.getEntity(i).getID() for i in range(n)) == list(range(n))
    with pytest.raises(IndexError):
        world.getName(n)


def test_quadruped_and_pendulum_worlds_load():
    world = sim_node.WorldModel()
    world.readFile(WORLDS / "quadruped.yaml")
    quad = world.robot(0)
    assert quad.isFloatingBase() and quad.model.nv == 18
    world = sim_node.WorldModel()
    world.readFile(WORLDS / "pendulum.yaml")
    assert world.robot(0).settings["controller"]["kp"] == {"joint1": 20.0}


def write(tmp_path, text, name="w.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


ARM_ENTRY = f"""robots:
  - name: arm
    urdf: {REPO}/data/robots/arm7/arm7.urdf
"""

BAD_WORLDS = {
    "unknown_section": ("roobots: []\n", 1, "unknown key(s) ['roobots']; valid keys: "
                        "['rigid_objects', 'robots', 'simulation', 'terrains']"),
    "unknown_robot_key": (ARM_ENTRY + "    colour: red\n", 2, "robots[0]: unknown key(s) ['colour']"),
    "bad_dt": ("simulation: {physics_dt: -1}\n", None, "simulation.physics_dt: must be positive"),
    "bad_max_contacts": ("simulation: {max_contacts: 2.5}\n", 1, "expected an integer >= 1"),
    "unknown_joint": (ARM_ENTRY + "    initial_config: {elbow: 1.0}\n", 4,
                      "unknown key(s) ['elbow']"),
    "outside_limits": (ARM_ENTRY + "    initial_config: {joint2: 9.0}\n", 4,
                       "9.0 is outside the limits"),
    "quaternion": (ARM_ENTRY + "    pose: {orientation: [0, 0, 0, 2]}\n", 4, "must be unit"),
    "missing_urdf": ("robots:\n  - name: a\n    urdf: nope.urdf\n", 2, "no such file"),
    "name_given_twice": ("terrains:\n  - {name: t, geometry: {plane: {}}}\n"
                         "  - {name: t, geometry: {plane: {}}}\n", None, "duplicate entity names ['t']"),
    "missing_mesh": ("terrains:\n  - name: t\n    geometry: {mesh: nope.stl}\n", 3,
                     "mesh file not found"),
    "two_shapes": ("rigid_objects:\n  - name: o\n    mass: 1\n    geometry: {box: [1, 1, 1], "
                   "sphere: 1}\n", 4, "needs exactly one of"),
    "primitive_without_mass": ("rigid_objects:\n  - name: o\n    geometry: {sphere: 0.1}\n", 2,
                               "needs 'mass'"),
    "negative_friction": ("terrains:\n  - name: t\n    geometry: {plane: {}}\n"
                          "    surface: {kFriction: -1}\n", None, "must be non-negative"),
    "duplicate_names": ("terrains:\n  - {name: t, geometry: {plane: {}}}\n"
                        "  - {name: t, geometry: {plane: {}}}\n", None, "duplicate entity names"),
    "duplicate_key": ("simulation: {physics_dt: 0.1, physics_dt: 0.2}\n", 1, "duplicate key"),
    "yaml_syntax": ("robots: [\n", 2, "YAML"),
    "plugin_without_name": (ARM_ENTRY + "    plugins: [{config: {}}]\n", 4, "missing required key 'name'"),
}


@pytest.mark.parametrize("case", sorted(BAD_WORLDS))
def test_malformed_world_file_is_an_error_naming_file_line_and_entry(case, tmp_path):
    text, line, problem = BAD_WORLDS[case]
    path = write(tmp_path, text)
    world = sim_node.WorldModel()
    with pytest.raises(sim_node.WorldFileError) as info:
        world.readFile(path)
    message = str(info.value)
    assert message.startswith(str(path)) and problem in message, message
    if line is not None:
        assert info.value.line == line, message
    assert world.numIDs() == 0 and world.numRobots() == 0


def test_a_failed_world_file_adds_nothing_to_a_loaded_world(tmp_path):
    world = sim_node.WorldModel()
    world.readFile(WORLDS / "pendulum.yaml")
    before = (world.numIDs(), world.simulation)
    path = write(tmp_path, "simulation: {physics_dt: 0.5}\nterrains:\n  - name: extra\n"
                           "    geometry: {plane: {}}\n" + ARM_ENTRY + "    initial_config: {joint2: 9}\n")
    with pytest.raises(sim_node.WorldFileError):
        world.readFile(path)
    assert (world.numIDs(), world.simulation) == before


def test_primitive_shapes_and_poses(tmp_path):
    path = write(tmp_path, """
rigid_objects:
  - name: cyl
    geometry: {cylinder: [0.1, 0.4]}
    mass: 2.0
    pose: {position: [1, 2, 3], orientation: [0.0, 0.0, 0.7071067811865476, 0.7071067811865476]}
terrains:
  - name: slope
    geometry: {plane: {normal: [0, 1, 1], offset: 0.5}}
""")
    world = sim_node.WorldModel()
    world.readFile(path)
    cyl = world.rigidObject("cyl")
    R, t = cyl.getTransform()
    np.testing.assert_allclose(R, quat2mat([np.sqrt(0.5), 0, 0, np.sqrt(0.5)]), atol=1e-12)
    np.testing.assert_allclose(t, [1, 2, 3])
    inertia = cyl.getMass().getInertia().reshape(3, 3)
    np.testing.assert_allclose(np.diag(inertia), [2 * (3 * 0.01 + 0.16) / 12] * 2 + [0.01])
    plane = world.terrain("slope").getCollisionGeometry()[0].shape
    np.testing.assert_allclose(plane.normal, [0, np.sqrt(0.5), np.sqrt(0.5)])


def test_klampt_style_loaders(tmp_path):
    world = sim_node.WorldModel()
    terrain = world.loadTerrain(REPO / "data" / "meshes" / "table.stl")
    assert terrain.getName() == "table" and terrain.getID() == 0
    one_link = write(tmp_path, """<robot name="crate"><link name="crate">
      <inertial><mass value="3"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>
      <collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision></link></robot>""",
                     name="crate.urdf")
    crate = world.loadRigidObject(one_link)
    assert crate.getMass().getMass() == 3.0 and world.getName(crate.getID()) == "crate"
    mesh_object = world.loadRigidObject(REPO / "data" / "meshes" / "table.stl", mass=20.0,
                                        name="table_object")
    assert mesh_object.getMass().getMass() == 20.0
    assert world.readFile(REPO / "data" / "robots" / "pendulum" / "pendulum.urdf")
    assert world.numRobots() == 1 and world.numIDs() == 1 + 2 + (1 + 2)
    # the same file again: a unique name, unless one is given
    assert world.loadRigidObject(one_link).getName() == "crate_1"
    assert world.loadRigidObject(one_link).getName() == "crate_2"
    with pytest.raises(ValueError, match="already has an entity named 'crate'"):
        world.loadRigidObject(one_link, name="crate")
    with pytest.raises(sim_node.ModelLoadError, match="unknown world file type"):
        world.readFile(tmp_path / "world.txt")


def test_heightfield_terrains_inline_or_from_a_file_and_concave_meshes(tmp_path):
    np.save(tmp_path / "grid.npy", np.arange(12, dtype=float).reshape(3, 4) * 0.01)
    (tmp_path / "box.obj").write_text(
        "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n"
        "f 1 3 2\nf 1 4 3\nf 5 6 7\nf 5 7 8\nf 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\nf 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n")
    path = write(tmp_path, """
terrains:
  - name: inline
    geometry: {heightfield: {heights: [[0, 0.1], [0.2, 0.3]], size: [2.0, 1.0]}}
  - name: filed
    geometry: {heightfield: {file: grid.npy, size: [3.0, 2.0]}}
rigid_objects:
  - name: tray
    geometry: {mesh: box.obj, concave: true}
    mass: 1.0
""")
    world = sim_node.WorldModel()
    world.readFile(path)
    inline = world.terrain("inline").getCollisionGeometry()[0].shape
    assert isinstance(inline, geo.Heightfield) and inline.heights.shape == (2, 2)
    assert inline.spacing == (2.0, 1.0)
    filed = world.terrain("filed").getCollisionGeometry()[0].shape
    assert filed.heights.shape == (3, 4) and filed.spacing == (1.0, 1.0)
    assert world.rigidObject("tray").getCollisionGeometry()[0].shape.concave is True


@pytest.mark.parametrize("geometry, problem", [
    ("{heightfield: {heights: [[0, 1], [2]], size: [1, 1]}}", "rows have different lengths"),
    ("{heightfield: {heights: [[0, 1]], size: [1, 1]}}", "at least 2 x 2"),
    ("{heightfield: {heights: [[0, 1], [2, 3]]}}", "missing required key 'size'"),
    ("{heightfield: {heights: [[0, 1], [2, 3]], file: x.npy, size: [1, 1]}}", "exactly one of"),
    ("{heightfield: {file: missing.npy, size: [1, 1]}}", "cannot read"),
    ("{mesh: ../meshes/table.stl, concave: yes please}", "expected true or false"),
])
def test_malformed_heightfield_or_mesh_options_are_reported(tmp_path, geometry, problem):
    geometry = geometry.replace("../meshes/table.stl", str(REPO / "data" / "meshes" / "table.stl"))
    path = write(tmp_path, f"terrains:\n  - name: t\n    geometry: {geometry}\n")
    with pytest.raises(sim_node.WorldFileError, match=problem):
        sim_node.WorldModel().readFile(path)


# -- hostile world files: WorldFileError naming the file (and line), nothing raw escapes --------

def billion_laughs(levels=9, width=9) -> str:
    lines = ['a: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for k in range(1, levels):
        lines.append(f"b{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_fails_fast_in_bounded_memory(tmp_path):
    # 180 KB of nested aliases expanding to ~10^17 nodes. Run in a child process held to 1 GB of
    # address space and 10 s of CPU by the kernel: the bound, enforced, not timed here
    bomb = billion_laughs(levels=11, width=40)
    bomb += "#" * max(0, 180_000 - len(bomb)) + "\n"
    path = tmp_path / "bomb.yaml"
    path.write_text(bomb)
    assert 170_000 < path.stat().st_size < 200_000
    code = f"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
resource.setrlimit(resource.RLIMIT_CPU, (10, 10))
import sim_node
try:
    sim_node.WorldModel().readFile({str(path)!r})
except sim_node.WorldFileError as exc:
    print("WorldFileError", exc)
"""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith(f"WorldFileError {path}:"), out.stdout
    assert "aliases expand to more than" in out.stdout


def test_small_aliases_are_still_allowed(tmp_path):
    path = write(tmp_path, """
terrains:
  - name: floor
    geometry: {plane: {}}
    surface: &rubber {kFriction: 1.2, kRestitution: 0.1}
  - name: ramp
    geometry: {box: [1, 1, 0.1]}
    surface: *rubber
""")
    world = sim_node.WorldModel()
    world.readFile(path)
    assert world.terrain("ramp").settings.surface.kFriction == 1.2


HOSTILE = {
    # case: (bytes, line or None, text in the message)
    "not_utf8": (b"terrains:\n  - name: caf\xe9\n", 2, "not UTF-8 text (byte 0xe9"),
    "nul": (b"terrains:\n  - name: a\x00b\n", 2, "control character U+0000"),
    "deep_nesting": (b"terrains: " + b"[" * 5000 + b"]" * 5000 + b"\n", 1,
                     "nested deeper than 64 levels"),
    "deep_mappings": (b"".join(b"  " * i + b"k%d:\n" % i for i in range(200)), None,
                      "nested deeper than 64 levels"),
    "huge_integer": (b"simulation:\n  max_contacts: " + b"9" * 5000 + b"\n", None,
                     "a value cannot be read"),
    "huge_float": (b"simulation:\n  physics_dt: 1.0e+999\n", None, "expected a finite number"),
    "huge_int_as_float": (b"simulation:\n  gravity: [0, 0, " + b"9" * 400 + b"]\n", None,
                          "the number is too large"),
    "nan": (b"simulation:\n  gravity: [0, .nan, 0]\n", None, "expected a finite number"),
    "nan_heights": (b"terrains:\n  - name: h\n    geometry: {heightfield: {heights: [[0, .nan], "
                    b"[0, 0]], size: [1, 1]}}\n", 3, "NaN"),
    "ragged_heights": (b"terrains:\n  - name: h\n    geometry: {heightfield: {heights: [[0, 1], "
                       b"[0]], size: [1, 1]}}\n", None, "rows have different lengths"),
    "unhashable_key": (b"{[1, 2]: 3}\n", None, "a mapping key must be a plain value"),
    "flat_mesh_object": (b"rigid_objects:\n  - name: o\n    mass: 1\n    geometry: {mesh: flat.stl}\n",
                         2, "encloses no volume"),
    "list_root": (b"- 1\n- 2\n", None, "expected a mapping"),
    "undefined_alias": (b"terrains: *nothing\n", 1, "found undefined alias"),
    "binary_garbage": (bytes(range(128, 256)) * 10, 1, "not UTF-8 text"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_world_file_is_a_world_file_error_with_file_and_line(case, tmp_path):
    data, line, problem = HOSTILE[case]
    (tmp_path / "flat.stl").write_text(
        "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n"
        "endloop\nendfacet\nendsolid t\n")
    path = tmp_path / "w.yaml"
    path.write_bytes(data)
    with pytest.raises(sim_node.WorldFileError) as info:
        sim_node.WorldModel().readFile(path)
    message = str(info.value)
    assert message.startswith(str(path)) and problem in message, message
    assert len(message) < 1000
    if line is not None:
        assert info.value.line == line, message
