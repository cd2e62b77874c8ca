"""sim_node.pybullet.logging: state logs in PyBullet 3.2.7's binary layout, read back by bullet3's
own readLogFile; the same scene logged by the real PyBullet has the same header and records;
MP4 video read back with imageio."""
import json
import os
import struct

import numpy as np
import pybullet as pb
import pybullet_data
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_node.pybullet as p


def read_log_file(filename):
    """bullet3's readLogFile (examples/pybullet/examples/kuka_with_cube_playback.py, zlib
    licence), kept as written there minus its prints: the reader PyBullet users have."""
    f = open(filename, 'rb')
    keys = f.readline().decode('utf8').rstrip('\n').split(',')
    fmt = f.readline().decode('utf8').rstrip('\n')
    # The byte number of one record
    sz = struct.calcsize(fmt)
    # The type number of one record
    ncols = len(fmt)
    # Read data
    wholeFile = f.read()
    # split by alignment word
    chunks = wholeFile.split(b'\xaa\xbb')
    log = list()
    for chunk in chunks:
        if len(chunk) == sz:
            values = struct.unpack(fmt, chunk)
            record = list()
            for i in range(ncols):
                record.append(values[i])
            log.append(record)
    f.close()
    return keys, fmt, log


def read_records(filename):
    """Every record by its alignment word and size (no split on bytes that happen to be 0xAABB
    inside a record, which read_log_file drops)."""
    with open(filename, "rb") as f:
        keys = f.readline().decode().rstrip("\n").split(",")
        fmt = f.readline().decode().rstrip("\n")
        data = f.read()
    size = struct.calcsize(fmt)
    assert len(data) % (size + 2) == 0
    records = []
    for start in range(0, len(data), size + 2):
        assert data[start:start + 2] == b"\xaa\xbb"
        records.append(struct.unpack(fmt, data[start + 2:start + 2 + size]))
    return keys, fmt, records


def header(filename):
    with open(filename, "rb") as f:
        return f.readline(), f.readline()


SCENE = [("plane.urdf", [0, 0, 0]), ("kuka_iiwa/model.urdf", [0, 0, 0.5]),
         ("cube_small.urdf", [1, 1, 0.3])]


def build(api, cid):
    api.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=cid)
    api.setGravity(0, 0, -10, physicsClientId=cid)
    return [api.loadURDF(name, pos, physicsClientId=cid) for name, pos in SCENE]


@pytest.fixture
def ours():
    cid = p.connect(p.DIRECT)
    yield cid
    p.disconnect(cid)


@pytest.fixture
def theirs():
    cid = pb.connect(pb.DIRECT)
    yield cid
    pb.disconnect(cid)


# -- STATE_LOGGING_GENERIC_ROBOT ------------------------------------------------------------------
def test_generic_robot_log_is_read_by_bullet3s_reader(ours, tmp_path):
    uids = build(p, ours)
    kuka = uids[1]
    for j in range(7):
        p.setJointMotorControl2(kuka, j, p.POSITION_CONTROL, targetPosition=0.1 * (j + 1))
    path = tmp_path / "generic.bin"
    log_id = p.startStateLogging(p.STATE_LOGGING_GENERIC_ROBOT, str(path))
    expected = []
    for step in range(5):
        p.stepSimulation()
        for uid in uids:
            pos, orn = p.getBasePositionAndOrientation(uid)
            lin, ang = p.getBaseVelocity(uid)
            q = [p.getJointState(uid, j)[0] for j in range(p.getNumJoints(uid))
                 if p.getJointInfo(uid, j)[2] in (p.JOINT_REVOLUTE, p.JOINT_PRISMATIC)]
            expected.append((step, uid, pos, orn, lin, ang, q))
    p.stopStateLogging(log_id)
    keys, fmt, log = read_log_file(path)
    assert keys[:17] == ["stepCount", "timeStamp", "objectId", "posX", "posY", "posZ", "oriX",
                         "oriY", "oriZ", "oriW", "velX", "velY", "velZ", "omegaX", "omegaY",
                         "omegaZ", "qNum"]
    assert keys[17:] == [f"q{i}" for i in range(12)] + [f"u{i}" for i in range(12)]
    assert fmt == "IfifffffffffffffI" + "f" * 24
    assert len(read_records(path)[2]) == len(expected)
    by_key = {(r[0], r[2]): r for r in log}      # read_log_file may drop a record with 0xAABB
    assert len(by_key) >= len(expected) - 2
    for step, uid, pos, orn, lin, ang, q in expected:
        r = by_key.get((step, uid))
        if r is None:
            continue
        assert r[1] == pytest.approx(step / 240.0, rel=1e-6)
        np.testing.assert_allclose(r[3:6], pos, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(r[6:10], orn, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(r[10:13], lin, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(r[13:16], ang, rtol=1e-6, atol=1e-6)
        assert r[16] == len(q)
        np.testing.assert_allclose(r[17:17 + len(q)], q, rtol=1e-6, atol=1e-6)
        assert all(v == 0.0 for v in r[17 + len(q):29])      # zero padding to maxLogDof


def test_generic_robot_log_has_pybullets_layout(ours, theirs, tmp_path):
    """The same scene and calls under the real PyBullet: byte-identical header, same record
    size, same records per step in the same body order, same qNum per body."""
    files = {}
    for api, cid, name in ((p, ours, "ours"), (pb, theirs, "theirs")):
        uids = build(api, cid)
        files[name] = []
        for i, kwargs in enumerate([dict(), dict(objectUniqueIds=[uids[1]], maxLogDof=7,
                                                 logFlags=pb.STATE_LOG_JOINT_MOTOR_TORQUES)]):
            path = str(tmp_path / f"{name}{i}.bin")
            log_id = api.startStateLogging(pb.STATE_LOGGING_GENERIC_ROBOT, path, **kwargs,
                                           physicsClientId=cid)
            assert log_id == i
            for _ in range(3):
                api.stepSimulation(physicsClientId=cid)
            api.stopStateLogging(log_id, physicsClientId=cid)
            files[name].append(path)
    for mine, reference in zip(files["ours"], files["theirs"]):
        assert header(mine) == header(reference)
        _, _, records = read_records(mine)
        _, _, records_pb = read_records(reference)
        assert [(r[0], r[2], r[16]) for r in records] == [(r[0], r[2], r[16]) for r in records_pb]
        np.testing.assert_allclose([r[1] for r in records], [r[1] for r in records_pb], rtol=0)
    # the second log carries t0..t6 (motor torques) after u0..u6
    assert header(files["ours"][1])[0].decode().rstrip("\n").split(",")[-7:] == \
        [f"t{i}" for i in range(7)]


@pytest.mark.parametrize("logging_type, kwargs", [
    (pb.STATE_LOGGING_GENERIC_ROBOT, dict()),
    (pb.STATE_LOGGING_GENERIC_ROBOT, dict(maxLogDof=7, logFlags=pb.STATE_LOG_JOINT_MOTOR_TORQUES)),
    (pb.STATE_LOGGING_GENERIC_ROBOT, dict(maxLogDof=0)),          # 0: PyBullet's default 12
    (pb.STATE_LOGGING_GENERIC_ROBOT, dict(maxLogDof=30, logFlags=pb.STATE_LOG_JOINT_TORQUES)),
    pytest.param(pb.STATE_LOGGING_CONTACT_POINTS, dict(), marks=pytest.mark.skipif(
        not hasattr(p, "getContactPoints"), reason="needs getContactPoints (H-query)")),
])
def test_empty_world_log_is_byte_identical_to_pybullets(ours, theirs, tmp_path, logging_type,
                                                          kwargs):
    mine, reference = str(tmp_path / "ours.bin"), str(tmp_path / "theirs.bin")
    p.stopStateLogging(p.startStateLogging(logging_type, mine, **kwargs))
    pb.stopStateLogging(pb.startStateLogging(logging_type, reference, **kwargs,
                                             physicsClientId=theirs), physicsClientId=theirs)
    with open(mine, "rb") as a, open(reference, "rb") as b:
        assert a.read() == b.read()


def test_robot_wider_than_max_log_dof_is_left_out(ours, tmp_path):
    uids = build(p, ours)
    path = tmp_path / "narrow.bin"
    log_id = p.startStateLogging(p.STATE_LOGGING_GENERIC_ROBOT, str(path), maxLogDof=3)
    p.stepSimulation()
    p.stopStateLogging(log_id)
    _, fmt, records = read_records(path)
    assert fmt == "IfifffffffffffffI" + "f" * 6
    assert [r[2] for r in records] == [uids[0], uids[2]]      # the 7-dof kuka is not logged


# -- STATE_LOGGING_CONTACT_POINTS -----------------------------------------------------------------
@pytest.mark.skipif(not hasattr(p, "getContactPoints"),
                    reason="needs getContactPoints (sim_node.pybullet.queries, issue 14's H-query)")
def test_contact_log_has_pybullets_layout_and_the_resting_cube(ours, theirs, tmp_path):
    paths = {}
    for api, cid, name in ((p, ours, "ours"), (pb, theirs, "theirs")):
        plane, _, cube = build(api, cid)
        for _ in range(240):                    # the cube lands and settles
            api.stepSimulation(physicsClientId=cid)
        paths[name] = str(tmp_path / f"contacts_{name}.bin")
        log_id = api.startStateLogging(pb.STATE_LOGGING_CONTACT_POINTS, paths[name],
                                       bodyUniqueIdA=cube, physicsClientId=cid)
        for _ in range(10):
            api.stepSimulation(physicsClientId=cid)
        api.stopStateLogging(log_id, physicsClientId=cid)
    assert header(paths["ours"]) == header(paths["theirs"])
    _, _, records = read_records(paths["ours"])
    assert records, "the resting cube touches the plane"
    mass = p.getDynamicsInfo(cube, -1)[0]
    for step in range(10):
        rows = [r for r in records if r[0] == step]
        assert rows and all({r[3], r[4]} == {plane, cube} for r in rows)
        assert all(r[1] == pytest.approx(step / 240.0, rel=1e-6) for r in rows)
        # the plane carries the cube's weight; normals vertical
        assert sum(r[17] for r in rows) == pytest.approx(10.0 * mass, rel=0.05)
        assert all(abs(r[15]) == pytest.approx(1.0, abs=1e-3) for r in rows)


# -- STATE_LOGGING_VIDEO_MP4 ----------------------------------------------------------------------
class SmallViewer:
    """A viewer of 160 x 120 pixels that ignores drawing (the video takes the viewer's size)."""
    size = (160, 120)

    def __getattr__(self, name):
        return lambda *args: None


def test_video_has_a_frame_per_sixtieth_of_simulated_time(ours, tmp_path):
    import imageio.v2 as imageio
    from sim_node.pybullet.client import get_client
    from sim_node.sim.camera import get_camera_image
    build(p, ours)
    client = get_client(ours)
    client.viewer = SmallViewer()
    p.resetDebugVisualizerCamera(2.0, 30.0, -30.0, [0, 0, 0.5])
    path = tmp_path / "video.mp4"
    first_view = p.getDebugVisualizerCamera()
    expected_first = get_camera_image(client.sim, 160, 120, first_view[2], first_view[3])[2]
    log_id = p.startStateLogging(p.STATE_LOGGING_VIDEO_MP4, str(path))
    for _ in range(60):                          # 0.25 s at 240 Hz: frames at 0, 1/60 ... 15/60
        p.stepSimulation()
    p.stopStateLogging(log_id)
    reader = imageio.get_reader(str(path), format="FFMPEG")
    frames = [frame for frame in reader]
    reader.close()
    assert len(frames) == 16
    assert frames[0].shape == (120, 160, 3)
    # the first frame is the renderer's picture through the visualizer camera (H.264 loses a
    # little): mean difference a few grey levels, where another camera differs by tens
    diff = np.abs(frames[0].astype(float) - expected_first[..., :3].astype(float)).mean()
    assert diff < 6.0
    assert frames[0].std() > 5.0                 # not a blank picture


def test_video_keeps_real_time_speed_with_long_steps(ours, tmp_path):
    import imageio.v2 as imageio
    from sim_node.pybullet.client import get_client
    build(p, ours)
    get_client(ours).viewer = SmallViewer()
    p.setTimeStep(0.05)                          # 3 frames per step at 60 fps
    path = tmp_path / "slow.mp4"
    log_id = p.startStateLogging(p.STATE_LOGGING_VIDEO_MP4, str(path))
    for _ in range(4):
        p.stepSimulation()
    p.stopStateLogging(log_id)
    reader = imageio.get_reader(str(path), format="FFMPEG")
    assert reader.count_frames() == 1 + 4 * 3    # 0.2 s of simulated time at 60 fps
    reader.close()


# -- STATE_LOGGING_PROFILE_TIMINGS ----------------------------------------------------------------
def test_profile_timings_are_a_chrome_trace(ours, tmp_path):
    path = tmp_path / "timings.json"
    log_id = p.startStateLogging(p.STATE_LOGGING_PROFILE_TIMINGS, str(path))
    p.submitProfileTiming("control")
    p.stepSimulation()
    p.submitProfileTiming()
    p.stepSimulation()
    p.stopStateLogging(log_id)
    events = json.loads(path.read_text())["traceEvents"]
    assert [(e["name"], e["ph"]) for e in events] == [
        ("control", "B"), ("stepSimulation", "B"), ("stepSimulation", "E"), ("control", "E"),
        ("stepSimulation", "B"), ("stepSimulation", "E")]
    assert all(a["ts"] <= b["ts"] for a, b in zip(events, events[1:]))


def test_submit_profile_timing_without_a_logger_does_nothing(ours):
    p.submitProfileTiming("x")
    p.submitProfileTiming()
    p.submitProfileTiming()                      # nothing open: nothing to close


# -- errors -------------------------------------------------------------------------------------
@pytest.mark.parametrize("make_path, message", [
    (lambda tmp: str(tmp), "is a directory"),
    (lambda tmp: "/dev/null", "not a regular file"),
    (lambda tmp: str(tmp / "missing" / "log.bin"), "folder of fileName .* does not exist"),
    (lambda tmp: "", "non-empty path"),
    (lambda tmp: None, "non-empty path"),
])
def test_bad_file_names_are_refused(ours, tmp_path, make_path, message):
    with pytest.raises(p.error, match=f"startStateLogging: .*{message}"):
        p.startStateLogging(p.STATE_LOGGING_GENERIC_ROBOT, make_path(tmp_path))


@pytest.mark.parametrize("kwargs, message", [
    (dict(loggingType=p.STATE_LOGGING_VR_CONTROLLERS), "STATE_LOGGING_VR_CONTROLLERS not supp"),
    (dict(loggingType=p.STATE_LOGGING_MINITAUR), "STATE_LOGGING_MINITAUR not supported"),
    (dict(loggingType=77), "loggingType 77 is not a STATE_LOGGING_"),
    (dict(maxLogDof=-1), "maxLogDof = -1"),
    (dict(objectUniqueIds=[5]), "no body with unique id 5"),
    (dict(logFlags=8), "logFlags 8"),
    (dict(loggingType=1.5), "loggingType must be an int"),
])
def test_bad_arguments_are_refused_before_any_file_is_made(ours, tmp_path, kwargs, message):
    args = dict(loggingType=p.STATE_LOGGING_GENERIC_ROBOT, fileName=str(tmp_path / "x.bin"))
    args.update(kwargs)
    with pytest.raises(p.error, match=message):
        p.startStateLogging(**args)
    assert not os.path.exists(tmp_path / "x.bin")


def test_stop_of_an_unknown_logger_is_an_error(ours, tmp_path):
    log_id = p.startStateLogging(p.STATE_LOGGING_GENERIC_ROBOT, str(tmp_path / "a.bin"))
    p.stopStateLogging(loggingId=log_id)
    with pytest.raises(p.error, match=r"no active logger with id 0; active: \[\]"):
        p.stopStateLogging(log_id)


def test_a_stopped_logger_writes_no_more(ours, tmp_path):
    build(p, ours)
    path = tmp_path / "a.bin"
    log_id = p.startStateLogging(p.STATE_LOGGING_GENERIC_ROBOT, str(path))
    p.stepSimulation()
    p.stopStateLogging(log_id)
    size = path.stat().st_size
    p.stepSimulation()
    assert path.stat().st_size == size


# -- hostile input ---------------------------------------------------------------------------
hostile = st.one_of(st.none(), st.text(max_size=3), st.binary(max_size=3), st.integers(),
                    st.floats(), st.booleans(),
                    st.lists(st.one_of(st.integers(-3, 3), st.none(), st.floats()), max_size=4))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["loggingType", "fileName", "objectUniqueIds", "maxLogDof",
                        "bodyUniqueIdA", "bodyUniqueIdB", "linkIndexA", "linkIndexB",
                        "deviceTypeFilter", "logFlags", "physicsClientId"]), hostile)
def test_hostile_arguments_raise_pybullet_error_or_log(tmp_path_factory, argument, value):
    folder = tmp_path_factory.mktemp("hostile")
    kwargs = dict(loggingType=p.STATE_LOGGING_GENERIC_ROBOT, fileName=str(folder / "log.bin"))
    if argument == "fileName" and isinstance(value, (str, bytes)) and value:
        # a name inside the test's folder, never the working directory
        if isinstance(value, bytes):
            value = os.path.join(os.fsencode(folder), value.lstrip(b"/"))
        else:
            value = os.path.join(str(folder), value.lstrip("/"))
    kwargs[argument] = value
    cid = p.connect(p.DIRECT)
    try:
        kwargs.setdefault("physicsClientId", cid)
        log_id = p.startStateLogging(**kwargs)
        p.stepSimulation(physicsClientId=cid)
        p.stopStateLogging(log_id, physicsClientId=cid)
    except p.error:
        pass
    finally:
        p.disconnect(cid)
