"""SDF loading (sim_node.model.sdf): every pybullet_data .sdf file against PyBullet 3.2.7's
loadSDF (models, names, joint order, types, limits, axes, masses, link frames), globalScaling,
SDFormat's frame rules on hand-written files, and hostile input."""
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from loader_reference import PB_JOINT_TYPE, as_arrays, build, pybullet_bodies

from sim_node.model.errors import ModelLoadError
from sim_node.model.sdf import SDFError, SDFWarning, parse_sdf
from sim_node.model.world import WorldModel

pb = pytest.importorskip("pybullet")
pybullet_data = pytest.importorskip("pybullet_data")

DATA = Path(pybullet_data.getDataPath())
SDF_FILES = sorted(str(p.relative_to(DATA)) for p in DATA.rglob("*.sdf"))
# PyBullet 3.2.7 crashes (segmentation fault) loading this one: no reference, ours must load
PYBULLET_CRASHES = {"gripper/wsg50_one_motor_gripper_free_base.sdf"}
# files whose meshes (meshes/coarse/*.stl) pybullet_data does not ship: PyBullet fails too
MISSING_MESHES = {"kuka_iiwa/kuka_world.sdf", "kuka_iiwa/model2.sdf"}


def quiet_parse(path, scale=1.0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SDFWarning)
        return parse_sdf(path, scale)


def pybullet_reference(name, scale=1.0):
    cid = pb.connect(pb.DIRECT)
    try:
        uids = pb.loadSDF(str(DATA / name), globalScaling=scale, physicsClientId=cid)
        return as_arrays(pybullet_bodies(pb, uids, cid))
    finally:
        pb.disconnect(cid)


def compare(parsed, expected):
    assert len(parsed.bodies) == len(expected)
    for body, ref in zip(parsed.bodies, expected):
        assert (body.urdf.root, body.urdf.name) == (ref["base"], ref["name"])
        robot = build(body)
        s = robot.structure
        assert s.link_names[1:] == [j["child"] for j in ref["joints"]]
        R0, p0 = robot.link(body.urdf.root).getTransform()
        np.testing.assert_allclose(p0, ref["base_p"], atol=1e-6)
        np.testing.assert_allclose(R0, ref["base_R"], atol=1e-6)
        root = body.urdf.links[body.urdf.root].inertial
        assert (0.0 if root is None else root.mass) == pytest.approx(ref["mass"], rel=1e-6)
        for k, jref in enumerate(ref["joints"]):
            joint = body.urdf.joints[s.link_joint[k + 1]]
            assert joint.name == jref["name"]
            assert PB_JOINT_TYPE[joint.type] == jref["type"], joint.name
            if joint.type in ("revolute", "prismatic"):
                assert (joint.limit.lower, joint.limit.upper) == pytest.approx(
                    (jref["lower"], jref["upper"]), abs=1e-6)
                assert (joint.limit.effort, joint.limit.velocity) == pytest.approx(
                    (jref["effort"], jref["velocity"]))
                assert joint.damping == pytest.approx(jref["damping"])
                np.testing.assert_allclose(joint.axis, jref["axis"], atol=1e-9)
            link = body.urdf.links[jref["child"]]
            mass = 0.0 if link.inertial is None else link.inertial.mass
            assert mass == pytest.approx(jref["mass"], rel=1e-6, abs=1e-9), link.name
            R, p = robot.link(jref["child"]).getTransform()
            np.testing.assert_allclose(p, jref["frame_p"], atol=1e-6, err_msg=link.name)
            np.testing.assert_allclose(R, jref["frame_R"], atol=1e-6, err_msg=link.name)


@pytest.mark.parametrize("name", SDF_FILES)
def test_every_pybullet_data_sdf_file(name):
    """Every .sdf of pybullet_data: the same bodies, joints and frames as PyBullet, or (where
    PyBullet fails) a clear error / a load PyBullet cannot do."""
    if name in MISSING_MESHES:
        with pytest.raises(SDFError, match=r"mesh file not found: meshes/coarse/link_0\.stl"):
            quiet_parse(DATA / name)
        cid = pb.connect(pb.DIRECT)
        try:
            with pytest.raises(pb.error):
                pb.loadSDF(str(DATA / name), physicsClientId=cid)
        finally:
            pb.disconnect(cid)
        return
    parsed = quiet_parse(DATA / name)
    if name in PYBULLET_CRASHES:
        body, = parsed.bodies
        robot = build(body)
        assert robot.numLinks() == 9        # its massless "world" link: a fixed base
        return
    compare(parsed, pybullet_reference(name))


def test_global_scaling_matches_pybullet():
    compare(quiet_parse(DATA / "kuka_iiwa/model.sdf", 2.0),
            pybullet_reference("kuka_iiwa/model.sdf", 2.0))
    one = quiet_parse(DATA / "kuka_iiwa/model.sdf").bodies[0].urdf.links["lbr_iiwa_link_1"]
    two = quiet_parse(DATA / "kuka_iiwa/model.sdf", 2.0).bodies[0].urdf.links["lbr_iiwa_link_1"]
    assert two.inertial.mass == one.inertial.mass
    np.testing.assert_allclose(two.inertial.inertia, 4 * one.inertial.inertia)
    np.testing.assert_allclose(two.collisions[0].shape.scale, [2, 2, 2])


def write(tmp_path, model: str, version="1.6", name="m.sdf") -> Path:
    path = tmp_path / name
    path.write_text(f"<sdf version='{version}'><world name='w'>{model}</world></sdf>")
    return path


LINK = ("<link name='{n}'><pose>{pose}</pose><inertial><mass>1</mass><inertia><ixx>0.1</ixx>"
        "<iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>"
        "<collision name='c'><geometry><box><size>0.1 0.2 0.3</size></box></geometry>"
        "</collision></link>")


def link(name, pose="0 0 0 0 0 0"):
    return LINK.format(n=name, pose=pose)


def test_joint_pose_and_axis_frames_follow_sdformat(tmp_path):
    """Link poses in the model frame, the joint pose in the child's frame, the axis in the
    joint frame or (use_parent_model_frame) in the model frame."""
    joint = ("<joint name='j' type='revolute'><parent>a</parent><child>b</child>"
             "<pose>0 0 0.1 0 0 0</pose><axis><xyz>1 0 0</xyz>{flag}"
             "<limit><lower>-1</lower><upper>1</upper></limit></axis></joint>")
    for flag, axis in (("", [1, 0, 0]),
                       ("<use_parent_model_frame>1</use_parent_model_frame>", [0, -1, 0])):
        path = write(tmp_path, "<model name='m'><pose>1 0 0 0 0 0</pose>"
                     + link("a") + link("b", f"0 0 1 0 0 {math.pi / 2}")
                     + joint.format(flag=flag) + "</model>")
        body, = quiet_parse(path).bodies
        j = body.urdf.joints["j"]
        np.testing.assert_allclose(j.origin.p, [0, 0, 1.1], atol=1e-12)
        np.testing.assert_allclose(j.axis, axis, atol=1e-12)
        # the URDF link frame is the joint frame; the child's box stays where the SDF puts
        # it: at the SDF link pose, 0.1 below the joint
        box = body.urdf.links["b"].collisions[0]
        np.testing.assert_allclose(box.origin.p, [0, 0, -0.1], atol=1e-12)
        robot = build(body)
        R, p = robot.link("b").getTransform()
        np.testing.assert_allclose(p, [1, 0, 1.1], atol=1e-12)
        np.testing.assert_allclose(R @ box.origin.p + p, [1, 0, 1.0], atol=1e-12)
        assert body.fixed_base is None and robot.isFloatingBase()


def test_static_model_and_world_joints_fix_the_base(tmp_path):
    static = write(tmp_path, "<model name='s'><static>1</static>" + link("a") + "</model>")
    body, = quiet_parse(static).bodies
    assert body.fixed_base and body.urdf.links["a"].inertial.mass == 0
    fixed = write(tmp_path, "<model name='f'>" + link("a") + "<joint name='w' type='fixed'>"
                  "<parent>world</parent><child>a</child></joint></model>", name="f.sdf")
    body, = quiet_parse(fixed).bodies
    assert body.fixed_base and not body.urdf.joints
    hinge = write(tmp_path, "<model name='h'>" + link("a") + "<joint name='w' type='revolute'>"
                  "<parent>world</parent><child>a</child><axis><xyz>0 0 1</xyz></axis>"
                  "</joint></model>", name="h.sdf")
    body, = quiet_parse(hinge).bodies
    assert body.urdf.root == "world" and body.urdf.joints["w"].type == "continuous"
    assert not build(body).isFloatingBase()


@pytest.mark.parametrize("model, needle", [
    ("", "has no <model>"),
    ("<model name='m'></model>", "has no <link>"),
    ("<model name='m'>" + link("a") + link("a") + "</model>", "duplicate link name"),
    ("<model name='m'>" + link("a") + "<joint name='j' type='fixed'><parent>a</parent>"
     "<child>zz</child></joint></model>", "names missing link 'zz'"),
    ("<model name='m'>" + link("a") + link("b") + "<joint name='j1' type='fixed'><parent>a"
     "</parent><child>b</child></joint><joint name='j2' type='fixed'><parent>b</parent>"
     "<child>a</child></joint></model>", "cycle"),
    ("<model name='m'>" + link("a") + link("b") + "</model>", "several root links"),
    ("<model name='m'>" + link("a") + link("b") + "<joint name='j' type='universal'><parent>a"
     "</parent><child>b</child></joint></model>", "not supported"),
    ("<model name='m'>" + link("a", "0 nan 0 0 0 0") + "</model>", "not finite"),
    ("<model name='m'>" + link("a", "0 0 0") + "</model>", "needs 6 numbers"),
    ("<include><uri>model://x</uri></include>", "<include>"),
    ("<model name='m'><model name='n'/></model>", "nested models"),
    ("<model name='m'><link name='a'><pose relative_to='x'>0 0 0 0 0 0</pose></link></model>",
     "relative_to"),
    ("<model name='m'><link name='a'><collision name='c'><geometry><mesh><uri>nope.stl</uri>"
     "</mesh></geometry></collision></link></model>", "mesh file not found"),
])
def test_malformed_files_raise_errors_naming_file_and_problem(tmp_path, model, needle):
    path = write(tmp_path, model)
    with pytest.raises(SDFError) as info:
        quiet_parse(path)
    assert needle in str(info.value) and str(path) in str(info.value)


@pytest.mark.parametrize("text, needle", [
    ("<sdf><world>", "XML"), ("<robot/>", "root element must be <sdf>"),
    ("<sdf version='one'/>", "version")])
def test_malformed_documents(tmp_path, text, needle):
    path = tmp_path / "bad.sdf"
    path.write_text(text)
    with pytest.raises(SDFError, match=needle):
        quiet_parse(path)


def test_unknown_elements_warn_with_file_and_line(tmp_path):
    path = tmp_path / "m.sdf"
    path.write_text("<sdf version='1.6'>\n<model name='m'>\n<link name='a'>\n<gizmo/>\n"
                    "</link>\n</model>\n</sdf>")
    with pytest.warns(SDFWarning, match=r"m\.sdf:4: link 'a' <gizmo>"):
        parse_sdf(path)


def test_bad_scale_and_missing_file():
    with pytest.raises(ValueError, match="scale"):
        parse_sdf(DATA / "kuka_iiwa/model.sdf", float("nan"))
    with pytest.raises(SDFError, match="no such file"):
        parse_sdf("/nonexistent/model.sdf")


TEXT = st.one_of(st.text(alphabet="0123456789 .-+eEnaif", max_size=30),
                 st.lists(st.floats(), min_size=6, max_size=6).map(
                     lambda xs: " ".join(repr(x) for x in xs)))


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pose=TEXT, size=TEXT, xyz=TEXT, lower=TEXT)
def test_random_values_load_or_raise_model_load_error(tmp_path, pose, size, xyz, lower):
    path = write(tmp_path, f"<model name='m'><link name='a'><pose>{pose}</pose></link>"
                 f"<link name='b'><collision name='c'><geometry><box><size>{size}</size></box>"
                 f"</geometry></collision></link><joint name='j' type='revolute'><parent>a"
                 f"</parent><child>b</child><axis><xyz>{xyz}</xyz><limit><lower>{lower}"
                 f"</lower></limit></axis></joint></model>", name="fuzz.sdf")
    try:
        parsed = quiet_parse(path)
    except ModelLoadError as exc:
        assert str(path) in str(exc)
        return
    for body in parsed.bodies:
        build(body)


def test_world_reads_sdf_files_as_robots():
    world = WorldModel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        world.readFile(DATA / "stadium.sdf")
        world.readFile(DATA / "kuka_iiwa" / "model.sdf")
    names = [world.robot(i).getName() for i in range(world.numRobots())]
    assert names == ["roboschool/models_outdoor/stadium/part0.obj",
                     "roboschool/models_outdoor/stadium/part1.obj", "part2.obj", "lbr_iiwa"]
    kuka = world.robot("lbr_iiwa")
    assert kuka.numJoints() == 7 and not kuka.isFloatingBase()
    assert kuka.getTotalMass() == pytest.approx(4 + 4 + 3 + 2.7 + 1.7 + 1.8 + 0.3)
