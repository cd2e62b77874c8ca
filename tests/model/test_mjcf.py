"""MJCF loading (sim_node.model.mjcf): every pybullet_data/mjcf file against PyBullet 3.2.7's
loadMJCF (bodies, names, joint order, types, limits, masses, link frames) and against MuJoCo
(when importable: frames, masses, centres of mass and inertias, which PyBullet approximates);
closed-form masses; hostile input."""
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from loader_reference import PB_JOINT_TYPE, as_arrays, build

from sim_node.model.errors import ModelLoadError
from sim_node.model.mjcf import MJCFError, MJCFWarning, parse_mjcf
from sim_node.model.world import WorldModel

pb = pytest.importorskip("pybullet")
pybullet_data = pytest.importorskip("pybullet_data")

MJCF_DIR = Path(pybullet_data.getDataPath()) / "mjcf"
MJCF_FILES = sorted(p.name for p in MJCF_DIR.glob("*.xml"))
# Files whose link frames PyBullet 3.2.7 gets wrong (README "SDF and MJCF (decisions)"):
#  * humanoid*: PyBullet puts a floating base's centre of mass (its last fromto geom's
#    midpoint) at the body's pos, so the whole humanoid sits 0.12 m higher than in MuJoCo;
#  * striker, thrower: PyBullet reads only pos and quat of a body, and ignores euler and
#    axisangle.
PYBULLET_FRAMES_WRONG = {"humanoid.xml", "humanoid_symmetric.xml",
                         "humanoid_symmetric_no_ground.xml", "striker.xml", "thrower.xml"}


def quiet_parse(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MJCFWarning)
        return parse_mjcf(path, **kw)


def counter_free(name: str) -> str:
    # PyBullet numbers jointfix_N_K from a process-wide counter; K is the parent link's index
    return re.sub(r"^jointfix_\d+_", "jointfix_*_", name)


# PyBullet's MJCF importer corrupts the heap of the process it runs in now and then (a later
# garbage collection aborted the test run), so the reference runs in a subprocess
REFERENCE_SCRIPT = r"""
import json, sys
import pybullet as pb
sys.path.insert(0, sys.argv[1])
from loader_reference import pybullet_bodies
cid = pb.connect(pb.DIRECT)
out = {path: pybullet_bodies(pb, pb.loadMJCF(path, physicsClientId=cid), cid)
       for path in sys.argv[2:]}
sys.stdout.write("\nJSON" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def reference():
    """{file: [per body: dict]} from PyBullet's loadMJCF (one DIRECT connection, in a
    subprocess)."""
    import json
    import subprocess
    import sys

    paths = [str(MJCF_DIR / name) for name in MJCF_FILES]
    run = subprocess.run([sys.executable, "-c", REFERENCE_SCRIPT, str(Path(__file__).parent),
                          *paths], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    raw = json.loads(run.stdout.rsplit("\nJSON", 1)[1])
    return {name: as_arrays(raw[path]) for name, path in zip(MJCF_FILES, paths)}


@pytest.mark.parametrize("name", MJCF_FILES)
def test_every_pybullet_data_mjcf_file_matches_pybullet(name, reference):
    parsed = quiet_parse(MJCF_DIR / name, pybullet_masses=True)
    expected = reference[name]
    assert len(parsed.bodies) == len(expected)
    for body, ref in zip(parsed.bodies, expected):
        assert (body.urdf.root, body.urdf.name) == (ref["base"], ref["name"])
        robot = build(body)
        s = robot.structure
        # PyBullet's joint order is the URDF link order after the root
        assert s.link_names[1:] == [j["child"] for j in ref["joints"]]
        root = body.urdf.links[body.urdf.root].inertial
        # PyBullet keeps masses in float32
        assert (0.0 if root is None else root.mass) == pytest.approx(ref["mass"], rel=1e-6)
        frames_right = name not in PYBULLET_FRAMES_WRONG
        if frames_right:
            R0, p0 = robot.link(body.urdf.root).getTransform()
            np.testing.assert_allclose(p0, ref["base_p"], atol=1e-6)
            np.testing.assert_allclose(R0, ref["base_R"], atol=1e-6)
        for k, jref in enumerate(ref["joints"]):
            joint = body.urdf.joints[s.link_joint[k + 1]]
            assert counter_free(joint.name) == counter_free(jref["name"])
            assert PB_JOINT_TYPE[joint.type] == jref["type"], joint.name
            if joint.type in ("revolute", "prismatic") and math.isfinite(joint.limit.lower):
                assert (joint.limit.lower, joint.limit.upper) == pytest.approx(
                    (jref["lower"], jref["upper"]), abs=1e-6)
            if joint.type in ("revolute", "continuous", "prismatic"):
                # PyBullet reports the axis as written; ours is normalised
                np.testing.assert_allclose(joint.axis, jref["axis"] / np.linalg.norm(
                    jref["axis"]), atol=1e-12)
            link = body.urdf.links[jref["child"]]
            mass = 0.0 if link.inertial is None else link.inertial.mass
            assert mass == pytest.approx(jref["mass"], rel=1e-6, abs=1e-9), link.name
            if frames_right:
                R, p = robot.link(jref["child"]).getTransform()
                np.testing.assert_allclose(p, jref["frame_p"], atol=1e-6, err_msg=link.name)
                np.testing.assert_allclose(R, jref["frame_R"], atol=1e-6, err_msg=link.name)


def test_pybullet_frames_wrong_list_is_still_wrong(reference):
    # the exceptions above are PyBullet's defects, not ours: each still disagrees with MuJoCo's
    # placement (checked against MuJoCo itself in test_frames_and_masses_match_mujoco)
    for name in PYBULLET_FRAMES_WRONG:
        parsed = quiet_parse(MJCF_DIR / name, pybullet_masses=True)
        worst = 0.0
        for body, ref in zip(parsed.bodies, reference[name]):
            robot = build(body)
            for jref in ref["joints"]:
                R, p = robot.link(jref["child"]).getTransform()
                worst = max(worst, float(np.abs(p - jref["frame_p"]).max()),
                            float(np.abs(R - jref["frame_R"]).max()))
        assert worst > 1e-3, name


# -- MuJoCo as the second reference ---------------------------------------------------------

def mujoco_model(path):
    mujoco = pytest.importorskip("mujoco", reason="mujoco is a bench dependency "
                                 "(requirements/bench.txt); the MuJoCo comparison is skipped")
    try:
        return mujoco, mujoco.MjModel.from_xml_path(str(path))
    except ValueError as exc:
        pytest.skip(f"MuJoCo refuses {path.name}: {exc}")


@pytest.mark.parametrize("name", MJCF_FILES)
def test_frames_and_masses_match_mujoco(name):
    """Body frames, masses, centres of mass and inertias at qpos = 0 (free joints at their
    body's pose) against MuJoCo, with MuJoCo's mass rule (density, settotalmass)."""
    mujoco, model = mujoco_model(MJCF_DIR / name)
    data = mujoco.MjData(model)
    data.qpos[:] = model.qpos0        # the configuration as written (joint refs included)
    mujoco.mj_kinematics(model, data)
    mujoco.mj_comPos(model, data)
    parsed = quiet_parse(MJCF_DIR / name)
    # MuJoCo's bodies after the world are the MJCF <body> elements in document order
    ours = [(body, link) for body in parsed.bodies for link in body.body_links]
    assert len(ours) == model.nbody - 1
    robots = {id(body): build(body) for body in parsed.bodies if body.body_links}
    for b, (body, link) in enumerate(ours, start=1):
        assert mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) in (None, link)
        R, p = robots[id(body)].link(link).getTransform()
        np.testing.assert_allclose(p, data.xpos[b], atol=1e-6, err_msg=link)
        np.testing.assert_allclose(R, data.xmat[b].reshape(3, 3), atol=1e-6, err_msg=link)
        inertial = body.urdf.links[link].inertial
        assert inertial.mass == pytest.approx(model.body_mass[b], rel=1e-6), link
        np.testing.assert_allclose(R @ inertial.com + p, data.xipos[b], atol=1e-6,
                                   err_msg=link)
        Ri = data.ximat[b].reshape(3, 3)
        inertia_world = Ri @ np.diag(model.body_inertia[b]) @ Ri.T
        np.testing.assert_allclose(R @ inertial.inertia @ R.T, inertia_world,
                                   atol=1e-9 + 1e-6 * model.body_inertia[b].max(),
                                   err_msg=link)


# -- closed forms ---------------------------------------------------------------------------

def capsule_volume(r, length):
    return math.pi * r * r * length + 4.0 / 3.0 * math.pi * r ** 3


def test_ant_total_mass_is_geom_volumes_times_density():
    torso = 4.0 / 3.0 * math.pi * 0.25 ** 3
    leg = (2 * capsule_volume(0.08, math.hypot(0.2, 0.2))
           + capsule_volume(0.08, math.hypot(0.4, 0.4)))
    volume = torso + 4 * leg
    for pybullet_masses, density in ((True, 1000.0), (False, 5.0)):   # ant.xml: density="5.0"
        body, = quiet_parse(MJCF_DIR / "ant.xml", pybullet_masses=pybullet_masses).bodies
        total = sum(l.inertial.mass for l in body.urdf.links.values() if l.inertial)
        assert total == pytest.approx(volume * density, rel=1e-12)


def test_half_cheetah_settotalmass_scales_masses_in_mujoco_mode_only():
    mujoco_mode = quiet_parse(MJCF_DIR / "half_cheetah.xml").bodies[0]
    total = sum(l.inertial.mass for l in mujoco_mode.urdf.links.values() if l.inertial)
    assert total == pytest.approx(14.0, rel=1e-12)
    pybullet_mode = quiet_parse(MJCF_DIR / "half_cheetah.xml", pybullet_masses=True).bodies[0]
    assert sum(l.inertial.mass for l in pybullet_mode.urdf.links.values()
               if l.inertial) > 14.0


def write(tmp_path, body: str, name="m.xml", header="") -> Path:
    path = tmp_path / name
    path.write_text(f'<mujoco model="t">{header}<worldbody>{body}</worldbody></mujoco>')
    return path


def test_capsule_sphere_union_mass_com_and_inertia_closed_form(tmp_path):
    path = write(tmp_path, '<body name="b" pos="0 0 1"><freejoint/>'
                 '<geom type="sphere" size="0.1" pos="0.3 0 0"/>'
                 '<geom type="capsule" fromto="0 0 -0.2 0 0 0.2" size="0.05"/></body>')
    body, = quiet_parse(path).bodies
    inertial = body.urdf.links["b"].inertial
    ms = 1000 * 4 / 3 * math.pi * 0.1 ** 3
    mc = 1000 * capsule_volume(0.05, 0.4)
    assert inertial.mass == pytest.approx(ms + mc, rel=1e-12)
    com_x = ms * 0.3 / (ms + mc)
    np.testing.assert_allclose(inertial.com, [com_x, 0, 0], atol=1e-15)
    # about z: sphere 2/5 m r^2 + m d^2 (parallel axes), capsule's axial moment
    r = 0.05
    mcyl = mc * (math.pi * r * r * 0.4) / capsule_volume(r, 0.4)
    mhemi = (mc - mcyl) / 2
    izz_capsule = 0.5 * mcyl * r * r + 2 * 0.4 * mhemi * r * r
    izz = 0.4 * ms * 0.01 + ms * (0.3 - com_x) ** 2 + izz_capsule + mc * com_x ** 2
    assert inertial.inertia[2, 2] == pytest.approx(izz, rel=1e-12)
    assert not body.fixed_base and np.allclose(body.p, [0, 0, 1])


def test_several_joints_in_one_body_are_a_chain_of_massless_links(tmp_path):
    path = write(tmp_path, '<body name="b" pos="1 0 0">'
                 '<joint name="x" type="slide" axis="1 0 0" pos="0 0 0.5"/>'
                 '<joint name="h" type="hinge" axis="0 1 0" pos="0 0 0.2" range="-90 90"/>'
                 '<geom type="sphere" size="0.1"/></body>')
    body, = quiet_parse(path).bodies
    u = body.urdf
    assert body.fixed_base and u.root == "link0_1"
    assert [(j.name, j.type, j.parent, j.child) for j in u.joints.values()] == [
        ("x", "prismatic", "link0_1", "link0_2"), ("h", "revolute", "link0_2", "link0_3"),
        ("jointfix_0_3", "fixed", "link0_3", "b")]
    np.testing.assert_allclose(u.joints["x"].origin.p, [1, 0, 0.5])
    np.testing.assert_allclose(u.joints["h"].origin.p, [0, 0, -0.3])     # 0.2 - 0.5
    np.testing.assert_allclose(u.joints["jointfix_0_3"].origin.p, [0, 0, -0.2])
    assert u.joints["h"].limit.lower == pytest.approx(-math.pi / 2)
    assert u.links["link0_2"].inertial is None and u.links["b"].inertial.mass > 0
    robot = build(body)
    R, p = robot.link("b").getTransform()
    np.testing.assert_allclose(p, [1, 0, 0], atol=1e-12)


def test_defaults_childclass_radian_and_euler(tmp_path):
    header = ('<compiler angle="radian" eulerseq="zyx"/>'
              '<default><joint damping="2" limited="true" range="-1 1"/>'
              '<default class="soft"><joint damping="0.5"/><geom type="box"/></default>'
              '</default>')
    path = write(tmp_path, '<body name="a" childclass="soft" euler="0.3 0 0">'
                 '<joint name="j1" type="hinge"/><geom size="0.1 0.2 0.3"/>'
                 '<body name="b" pos="0 0 1"><joint name="j2" class="main" type="hinge"/>'
                 '<geom type="sphere" size="0.1"/></body></body>', header=header)
    body, = quiet_parse(path).bodies
    j1, j2 = body.urdf.joints["j1"], body.urdf.joints["j2"]
    assert (j1.damping, j2.damping) == (0.5, 2.0)
    assert (j1.limit.lower, j1.limit.upper) == (-1.0, 1.0)         # radians: not converted
    assert type(body.urdf.links["a"].collisions[0].shape).__name__ == "Box"
    np.testing.assert_allclose(body.urdf.links["a"].collisions[0].shape.size, [0.2, 0.4, 0.6])
    # eulerseq zyx (moving axes): the first angle about z
    c, s = math.cos(0.3), math.sin(0.3)
    np.testing.assert_allclose(j1.origin.R, [[c, -s, 0], [s, c, 0], [0, 0, 1]], atol=1e-12)


def test_contype_conaffinity_become_collision_filters_and_actuators_are_kept():
    parsed = quiet_parse(MJCF_DIR / "reacher.xml")
    ground = parsed.bodies[0]
    assert ground.collision_filters == {"ground": (0, 0)}
    arm = parsed.bodies[6]
    assert arm.collision_filters["body0"] == (0, 1)      # default contype="0", conaffinity 1
    assert [(a.joint, a.gear, a.ctrlrange) for a in parsed.actuators] == [
        ("joint0", 200.0, (-1.0, 1.0)), ("joint1", 200.0, (-1.0, 1.0))]


def test_ignored_joint_attributes_warn_once_naming_the_first_line():
    with pytest.warns(MJCFWarning) as record:
        parse_mjcf(MJCF_DIR / "humanoid.xml")
    armature = [w for w in record if "'armature'" in str(w.message)]
    assert len(armature) == 1 and armature[0].message.line is not None


# -- hostile input ----------------------------------------------------------------------------

@pytest.mark.parametrize("text, needle", [
    ("<mujoco><worldbody>", "XML"),
    ("<robot/>", "root element must be <mujoco>"),
    ("<mujoco><worldbody/></mujoco>", "has no <geom> or <body>"),
    ('<mujoco><worldbody><geom type="sphere" size="nan"/></worldbody></mujoco>', "not finite"),
    ('<mujoco><worldbody><geom type="sphere" size="-1"/></worldbody></mujoco>', "positive"),
    ('<mujoco><worldbody><geom type="torus" size="1"/></worldbody></mujoco>', "unknown geom"),
    ('<mujoco><worldbody><geom type="ellipsoid" size="1 2 3"/></worldbody></mujoco>',
     "ellipsoid"),
    ('<mujoco><worldbody><body><joint type="weird"/><geom size="1"/></body></worldbody>'
     '</mujoco>', "unknown joint type"),
    ('<mujoco><worldbody><body><geom class="nope" size="1"/></body></worldbody></mujoco>',
     "unknown default class"),
    ('<mujoco><worldbody><body name="a"><geom size="1"/></body><body name="a"><geom size="1"/>'
     '</body></worldbody></mujoco>', None),
    ('<mujoco><worldbody><body><joint name="j"/><joint name="j"/><geom size="1"/></body>'
     '</worldbody></mujoco>', "duplicate joint name"),
    ('<mujoco><worldbody><body><geom size="1" pos="1e300 0 0"/></body></worldbody></mujoco>',
     "exceeds"),
    ('<mujoco><worldbody><body><geom type="mesh" mesh="m"/></body></worldbody></mujoco>',
     "not an <asset><mesh>"),
])
def test_malformed_files_raise_errors_naming_file_and_problem(tmp_path, text, needle):
    path = tmp_path / "bad.xml"
    path.write_text(text)
    if needle is None:            # two top-level bodies may share a name: two robots
        quiet_parse(path)
        return
    with pytest.raises(MJCFError) as info:
        quiet_parse(path)
    assert needle in str(info.value) and str(path) in str(info.value)


def test_unknown_elements_warn_with_file_and_line(tmp_path):
    path = tmp_path / "m.xml"
    path.write_text('<mujoco>\n<worldbody>\n<body>\n<geom size="1"/>\n<gizmo/>\n</body>\n'
                    '</worldbody>\n</mujoco>')
    with pytest.warns(MJCFWarning, match=r"m\.xml:5: <gizmo>"):
        parse_mjcf(path)


def test_includes_inside_the_directory_load_and_outside_or_cycles_are_refused(tmp_path):
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "arm.xml").write_text(
        '<mujoco><worldbody><body name="arm"><geom size="0.1"/></body></worldbody></mujoco>')
    ok = tmp_path / "ok.xml"
    ok.write_text('<mujoco><include file="parts/arm.xml"/></mujoco>')
    assert [b.urdf.root for b in quiet_parse(ok).bodies] == ["arm"]
    outside = tmp_path / "parts" / "out.xml"
    outside.write_text('<mujoco><include file="../ok.xml"/></mujoco>')
    with pytest.raises(MJCFError, match="outside the model's directory"):
        quiet_parse(outside)
    loop = tmp_path / "loop.xml"
    loop.write_text('<mujoco><include file="loop.xml"/></mujoco>')
    with pytest.raises(MJCFError, match="includes itself"):
        quiet_parse(loop)
    missing = tmp_path / "missing.xml"
    missing.write_text('<mujoco><include file="nope.xml"/></mujoco>')
    with pytest.raises(MJCFError, match="no such file"):
        quiet_parse(missing)


def test_huge_and_deep_files_are_refused_with_a_clear_error(tmp_path):
    huge = tmp_path / "huge.xml"
    huge.write_text("<mujoco><worldbody>" + '<geom size="1"/>' * 100_001
                    + "</worldbody></mujoco>")
    with pytest.raises(MJCFError, match="elements"):
        quiet_parse(huge)
    deep = tmp_path / "deep.xml"
    deep.write_text("<mujoco><worldbody>" + '<body><geom size="1"/>' * 230
                    + "</body>" * 230 + "</worldbody></mujoco>")
    with pytest.raises(MJCFError, match="bodies nested deeper than 200"):
        quiet_parse(deep)
    deeper = tmp_path / "deeper.xml"
    deeper.write_text("<mujoco><worldbody>" + '<body><geom size="1"/>' * 3000
                      + "</body>" * 3000 + "</worldbody></mujoco>")
    with pytest.raises(MJCFError, match="Excessive depth"):
        quiet_parse(deeper)


def test_missing_file_is_an_error():
    with pytest.raises(MJCFError, match="no such file"):
        parse_mjcf("/nonexistent/model.xml")


ATTRIBUTE_TEXT = st.one_of(
    st.text(alphabet="0123456789 .-+eE,naif", max_size=24),
    st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=7).map(
        lambda xs: " ".join(repr(x) for x in xs)))


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(size=ATTRIBUTE_TEXT, pos=ATTRIBUTE_TEXT, axis=ATTRIBUTE_TEXT, range_=ATTRIBUTE_TEXT,
       gtype=st.sampled_from(["sphere", "capsule", "cylinder", "box", "plane", "x"]))
def test_random_attribute_values_load_or_raise_model_load_error(tmp_path, size, pos, axis,
                                                                range_, gtype):
    path = tmp_path / "fuzz.xml"
    path.write_text(f'<mujoco><worldbody><body pos="{pos}"><joint type="hinge" axis="{axis}" '
                    f'range="{range_}"/><geom type="{gtype}" size="{size}"/></body>'
                    '</worldbody></mujoco>')
    try:
        parsed = quiet_parse(path)
    except ModelLoadError as exc:
        assert str(path) in str(exc)
        return
    for body in parsed.bodies:
        build(body)


def test_world_reads_mjcf_and_klampt_xml_apart_by_root_element(tmp_path):
    world = WorldModel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        world.readFile(MJCF_DIR / "inverted_pendulum.xml")
    assert [world.robot(i).getName() for i in range(world.numRobots())] == [
        "inverted pendulum", "inverted pendulum_1"]
    assert world.robot(1).numLinks() == 5
    mass = sum(world.robot(1).link(i).getMass().getMass() for i in range(5))
    pole = 1000 * capsule_volume(0.049, math.hypot(0.001, 0.6))
    cart = 1000 * capsule_volume(0.1, 0.2)
    assert mass == pytest.approx(pole + cart, rel=1e-9)
    # a Klamp't world is still a Klamp't world, and nothing is added from a broken MJCF
    bad = tmp_path / "bad.xml"
    bad.write_text('<mujoco><worldbody><body><geom size="1"/></body>'
                   '<body><geom size="nan"/></body></worldbody></mujoco>')
    with pytest.raises(MJCFError):
        world.loadFile(bad)
    assert world.numRobots() == 2
