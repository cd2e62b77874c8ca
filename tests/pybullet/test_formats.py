"""p.loadSDF / p.loadMJCF against PyBullet 3.2.7 through the public API: body ids, getBodyInfo,
getJointInfo (names, types, indices, limits as PyBullet reports them), getDynamicsInfo masses,
initial link frames (getLinkState's worldLinkFrame); argument checks and rollback."""
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sim_node.pybullet as p
from sim_node.pybullet.client import get_client

pb = pytest.importorskip("pybullet")
pybullet_data = pytest.importorskip("pybullet_data")

DATA = Path(pybullet_data.getDataPath())
# (loader, file, compare link frames): frames of humanoid / striker / thrower differ on purpose
# (PyBullet's defects; tests/model/test_mjcf.py)
CASES = [("loadMJCF", "mjcf/ant.xml", True), ("loadMJCF", "mjcf/half_cheetah.xml", True),
         ("loadMJCF", "mjcf/reacher.xml", True), ("loadMJCF", "mjcf/humanoid.xml", False),
         ("loadMJCF", "mjcf/inverted_double_pendulum.xml", True),
         ("loadSDF", "kuka_iiwa/model.sdf", True),
         ("loadSDF", "kuka_iiwa/kuka_with_gripper2.sdf", True),
         ("loadSDF", "gripper/wsg50_one_motor_gripper_new.sdf", True),
         ("loadSDF", "stadium.sdf", True)]


@pytest.fixture
def client():
    cid = p.connect(pb.DIRECT)
    p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=cid)
    yield cid
    p.disconnect(physicsClientId=cid)


# PyBullet's MJCF / SDF importers corrupt the heap of the process they run in now and then
# (the test process aborted or crashed later, once at pb.disconnect), so PyBullet runs in a
# subprocess: REFERENCE's helpers, the value of one expression as JSON
REFERENCE = r"""
import json, sys
import pybullet as pb, pybullet_data

def connect():
    cid = pb.connect(pb.DIRECT)
    pb.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=cid)
    return cid

def text(x):
    return x.decode("latin-1") if isinstance(x, bytes) else x

def dump(loader, name, **kw):
    cid = connect()
    out = []
    for b in getattr(pb, loader)(name, physicsClientId=cid, **kw):
        joints = []
        for j in range(pb.getNumJoints(b, physicsClientId=cid)):
            state = pb.getLinkState(b, j, physicsClientId=cid)
            joints.append(dict(
                info=[text(x) for x in pb.getJointInfo(b, j, physicsClientId=cid)],
                mass=pb.getDynamicsInfo(b, j, physicsClientId=cid)[0], frame_p=state[4],
                frame_R=pb.getMatrixFromQuaternion(state[5])))
        out.append(dict(info=[text(x) for x in pb.getBodyInfo(b, physicsClientId=cid)],
                        mass=pb.getDynamicsInfo(b, -1, physicsClientId=cid)[0], joints=joints))
    return out

def height_after(steps, mjcf, plane_urdf=False, body=-1):
    cid = connect()
    pb.setGravity(0, 0, -10, physicsClientId=cid)
    if plane_urdf:
        pb.loadURDF("plane.urdf", physicsClientId=cid)
    uid = pb.loadMJCF(mjcf, physicsClientId=cid)[body]
    for _ in range(steps):
        pb.stepSimulation(physicsClientId=cid)
    return pb.getBasePositionAndOrientation(uid, physicsClientId=cid)[0][2]

sys.stdout.write("\nJSON" + json.dumps(eval(sys.argv[1])))
"""


def pybullet(expression: str):
    """The value of `expression` evaluated by REFERENCE in a PyBullet subprocess."""
    import json
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", REFERENCE, expression], capture_output=True,
                         text=True, timeout=300, cwd=str(DATA))
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.rsplit("\nJSON", 1)[1])


def counter_free(name: bytes) -> bytes:
    return re.sub(rb"^jointfix_\d+_", b"jointfix_*_", name)


def quiet(function, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kw)


@pytest.mark.parametrize("loader, name, frames", CASES)
def test_loaded_bodies_report_what_pybullet_reports(client, loader, name, frames):
    ours = quiet(getattr(p, loader), name, physicsClientId=client)
    theirs = pybullet(f"dump({loader!r}, {name!r})")
    assert isinstance(ours, tuple) and len(ours) == len(theirs)
    for a, ref in zip(ours, theirs):
        info = p.getBodyInfo(a, physicsClientId=client)
        assert tuple(x.decode("latin-1") for x in info) == tuple(ref["info"])
        n = len(ref["joints"])
        assert p.getNumJoints(a, physicsClientId=client) == n
        mass_a = p.getDynamicsInfo(a, -1, physicsClientId=client)[0]
        assert mass_a == pytest.approx(ref["mass"], rel=1e-6)
        for j, jref in enumerate(ref["joints"]):
            ja = p.getJointInfo(a, j, physicsClientId=client)
            jb = jref["info"]
            assert counter_free(ja[1]) == counter_free(jb[1].encode("latin-1"))
            assert ja[2:5] == tuple(jb[2:5]), ja[1]                 # type, qIndex, uIndex
            assert ja[8:12] == pytest.approx(jb[8:12], abs=1e-6), ja[1]   # limits, force, vel
            assert (ja[12].decode("latin-1"), ja[16]) == (jb[12], jb[16])  # link, parent
            ma = p.getDynamicsInfo(a, j, physicsClientId=client)[0]
            assert ma == pytest.approx(jref["mass"], rel=1e-6, abs=1e-9)
            if frames:
                la = p.getLinkState(a, j, physicsClientId=client)
                np.testing.assert_allclose(la[4], jref["frame_p"], atol=1e-6,
                                           err_msg=str(ja[12]))
                Ra = np.array(pb.getMatrixFromQuaternion(la[5])).reshape(3, 3)
                np.testing.assert_allclose(Ra, np.reshape(jref["frame_R"], (3, 3)), atol=1e-6,
                                           err_msg=str(ja[12]))


def test_ant_starts_at_zero_joint_angles_outside_its_limits(client):
    ant, = quiet(p.loadMJCF, "mjcf/ant.xml", physicsClientId=client)
    ankle = next(j for j in range(p.getNumJoints(ant, physicsClientId=client))
                 if p.getJointInfo(ant, j, physicsClientId=client)[1] == b"ankle_1")
    lower = p.getJointInfo(ant, ankle, physicsClientId=client)[8]
    assert lower == pytest.approx(math.radians(30))
    assert p.getJointState(ant, ankle, physicsClientId=client)[0] == 0.0     # as PyBullet


def test_global_scaling_and_ids_continue_after_other_bodies(client):
    first = quiet(p.loadMJCF, "mjcf/hello_mjcf.xml", physicsClientId=client)
    kuka = quiet(p.loadSDF, "kuka_iiwa/model.sdf", globalScaling=2.0, physicsClientId=client)
    assert first == (0, 1) and kuka == (2,)
    ref, = pybullet('dump("loadSDF", "kuka_iiwa/model.sdf", globalScaling=2.0)')
    for j in range(7):
        np.testing.assert_allclose(p.getLinkState(2, j, physicsClientId=client)[4],
                                   ref["joints"][j]["frame_p"], atol=1e-6)


@pytest.mark.parametrize("call, needle", [
    (lambda c: p.loadMJCF("mjcf/nope.xml", physicsClientId=c), "cannot find"),
    (lambda c: p.loadSDF(3.5, physicsClientId=c), "fileName must be a string"),
    (lambda c: p.loadSDF("kuka_iiwa/model.sdf", globalScaling=float("nan"), physicsClientId=c),
     "globalScaling"),
    (lambda c: p.loadSDF("kuka_iiwa/model.sdf", globalScaling=0.0, physicsClientId=c),
     "globalScaling"),
    (lambda c: p.loadMJCF("mjcf/ant.xml", flags="x", physicsClientId=c), "flags"),
    (lambda c: p.loadSDF("kuka_iiwa/kuka_world.sdf", physicsClientId=c), "mesh file not found"),
    (lambda c: p.loadMJCF("mjcf/ant.xml", physicsClientId=c + 7), "not connected"),
])
def test_bad_arguments_raise_pybullet_error_and_add_nothing(client, call, needle):
    with pytest.raises(p.error, match=needle):
        call(client)
    assert not get_client(client).bodies


def test_a_file_failing_in_its_second_model_adds_nothing(client, tmp_path):
    path = tmp_path / "two.xml"
    path.write_text('<mujoco><worldbody><body name="a"><geom size="0.1"/></body>'
                    '<body name="b"><geom type="box" size="0.1 nan 0.1"/></body>'
                    '</worldbody></mujoco>')
    with pytest.raises(p.error, match="two.xml"):
        p.loadMJCF(str(path), physicsClientId=client)
    assert not get_client(client).bodies


@pytest.mark.parametrize("filters, falls_through", [
    ('contype="0" conaffinity="0"', True), ('contype="1" conaffinity="0"', False),
    ('contype="0" conaffinity="1"', False), ("", False)])
def test_contype_conaffinity_decide_contacts_as_in_pybullet(client, tmp_path, filters,
                                                            falls_through):
    """A free sphere dropped on a worldbody plane: PyBullet 3.2.7 lets it through only when
    the plane has contype = conaffinity = 0 (its filter rule is group_a & mask_b OR
    group_b & mask_a, MuJoCo's; checked here against PyBullet itself): sim_node too."""
    from sim_node.pybullet import queries
    if not hasattr(queries, "setCollisionFilterGroupMask"):
        pytest.skip("setCollisionFilterGroupMask (H-query's) is not on this branch yet")
    path = tmp_path / "drop.xml"
    path.write_text(f'<mujoco><worldbody><geom type="plane" size="1 1 1" {filters}/>'
                    '<body pos="0 0 1"><freejoint/><geom type="sphere" size="0.1"/></body>'
                    '</worldbody></mujoco>')
    p.setGravity(0, 0, -10, physicsClientId=client)
    _, sphere = quiet(p.loadMJCF, str(path), physicsClientId=client)
    for _ in range(240):                                   # 1 s of simulated time
        p.stepSimulation(physicsClientId=client)
    ours = p.getBasePositionAndOrientation(sphere, physicsClientId=client)[0][2]
    theirs = pybullet(f"height_after(240, {str(path)!r})")
    assert (theirs < 0) == falls_through                   # the reference itself
    if falls_through:
        assert ours < 0
    else:
        assert ours == pytest.approx(0.1, abs=2e-3)


GARBAGE = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
                    st.binary(max_size=8), st.lists(st.integers(), max_size=3),
                    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2))


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=st.lists(GARBAGE, min_size=1, max_size=4), loader=st.sampled_from(
    ["loadSDF", "loadMJCF"]))
def test_garbage_arguments_raise_only_pybullet_error(client, args, loader):
    """Any argument values: a body tuple or p.error, never another exception, and nothing
    added on error."""
    before = dict(get_client(client).bodies)
    kwargs = {"physicsClientId": client}
    try:
        result = quiet(getattr(p, loader), *args, **kwargs)
    except p.error:
        assert get_client(client).bodies == before
        return
    except TypeError as exc:      # more positional arguments than the function takes
        assert "positional argument" in str(exc) or "multiple values" in str(exc)
        return
    assert isinstance(result, tuple)


def test_ant_stands_on_a_urdf_plane_as_in_pybullet(client):
    """pybullet_data's ant (every geom contype 1, conaffinity 0) rests on plane.urdf in
    PyBullet; a filter rule that dropped that contact would let it fall through. (The ankles
    start at 0, outside their 30..100 degree range: sim_node's limits bring them into range
    within the 2 s, lifting the torso on its feet; PyBullet's default motors hold them back,
    so its torso still lies on the plane.)"""
    p.setGravity(0, 0, -10, physicsClientId=client)
    p.loadURDF("plane.urdf", physicsClientId=client)
    ant, = quiet(p.loadMJCF, "mjcf/ant.xml", physicsClientId=client)
    for _ in range(480):                                   # 2 s of simulated time
        p.stepSimulation(physicsClientId=client)
    ours = p.getBasePositionAndOrientation(ant, physicsClientId=client)[0][2]
    theirs = pybullet('height_after(480, "mjcf/ant.xml", plane_urdf=True, body=0)')
    assert theirs == pytest.approx(0.25, abs=2e-3)        # the torso sphere's radius
    assert 0.24 < ours < 0.45                              # on the plane, on its feet
