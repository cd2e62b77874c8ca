"""sim_node.pybullet.debug: DIRECT answers as PyBullet 3.2.7's DIRECT; GUI bookkeeping; the
viewer interface."""
import math
import warnings

import numpy as np
import pybullet as pb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_node.pybullet as p


class RecordingViewer:
    """The viewer interface of debug.py's docstring, recording every call."""

    size = (640, 480)

    def __init__(self):
        self.calls = []
        self.slider_values = {}

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args: self.calls.append((name, args))

    def read_slider(self, item_id):
        return self.slider_values[item_id]

    def keyboard_events(self):
        return {ord("q"): p.KEY_WAS_TRIGGERED | p.KEY_IS_DOWN}

    def mouse_events(self):
        return [(1, 10, 20, -1, 0)]


@pytest.fixture
def pyb():
    """The real PyBullet in DIRECT mode (the reference)."""
    cid = pb.connect(pb.DIRECT)
    yield cid
    pb.disconnect(cid)


@pytest.fixture
def direct():
    cid = p.connect(p.DIRECT)
    yield cid
    p.disconnect(cid)


@pytest.fixture
def gui():
    """connect(GUI) with no viewer: sim_node's headless GUI (debug items kept)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # "GUI is not available here" when headless
        cid = p.connect(p.GUI)
    yield cid
    p.disconnect(cid)


def _client(cid):
    from sim_node.pybullet.client import get_client
    return get_client(cid)


# -- DIRECT: PyBullet's answers -------------------------------------------------------------------
def test_direct_answers_are_pybullets(pyb, direct):
    calls = [
        ("addUserDebugLine", ([0, 0, 0], [1, 1, 1]), {}),
        ("addUserDebugLine", ([0, 0, 0], [1, 1, 1], [1, 0, 0], 2, 0), {}),
        ("addUserDebugText", ("hi", [0, 0, 1]), {}),
        ("addUserDebugPoints", ([[0, 0, 0]], [[1, 0, 0]]), {}),
        ("addUserDebugParameter", ("p", 0, 1, 0.5), {}),
        ("removeUserDebugItem", (0,), {}),
        ("removeUserDebugItem", (99,), {}),
        ("removeAllUserDebugItems", (), {}),
        ("removeAllUserParameters", (), {}),
        ("getDebugVisualizerCamera", (), {}),
        ("resetDebugVisualizerCamera", (3, 30, -40, [0, 0, 0]), {}),
        ("getDebugVisualizerCamera", (), {}),
        ("configureDebugVisualizer", (p.COV_ENABLE_GUI, 0), {}),
        ("configureDebugVisualizer", (), dict(lightPosition=[1, 2, 3])),
        ("getKeyboardEvents", (), {}),
        ("getMouseEvents", (), {}),
    ]
    for name, args, kwargs in calls:
        ours = getattr(p, name)(*args, **kwargs, physicsClientId=direct)
        theirs = getattr(pb, name)(*args, **kwargs, physicsClientId=pyb)
        assert ours == theirs, name
        assert type(ours) is type(theirs), name


def test_direct_parameter_read_fails_as_pybullets(pyb, direct):
    assert pb.addUserDebugParameter("p", 0, 1, 0.5, physicsClientId=pyb) == -1
    with pytest.raises(pb.error):
        pb.readUserDebugParameter(0, physicsClientId=pyb)
    assert p.addUserDebugParameter("p", 0, 1, 0.5, physicsClientId=direct) == -1
    with pytest.raises(p.error, match="readUserDebugParameter: failed to read parameter 0.*"
                                      "DIRECT"):
        p.readUserDebugParameter(0, physicsClientId=direct)


def test_keyword_names_are_pybullets(pyb, direct):
    calls = [
        ("addUserDebugLine", dict(lineFromXYZ=[0, 0, 0], lineToXYZ=[1, 1, 1],
                                  lineColorRGB=[1, 0, 0], lineWidth=1, lifeTime=0,
                                  parentObjectUniqueId=-1, parentLinkIndex=-1,
                                  replaceItemUniqueId=-1)),
        ("addUserDebugText", dict(text="a", textPosition=[0, 0, 0], textColorRGB=[1, 1, 1],
                                  textSize=1, lifeTime=0, textOrientation=[0, 0, 0, 1],
                                  parentObjectUniqueId=-1, parentLinkIndex=-1,
                                  replaceItemUniqueId=-1)),
        ("addUserDebugPoints", dict(pointPositions=[[0, 0, 0]], pointColorsRGB=[[1, 0, 0]],
                                    pointSize=1, lifeTime=0, parentObjectUniqueId=-1,
                                    parentLinkIndex=-1, replaceItemUniqueId=-1)),
        ("addUserDebugParameter", dict(paramName="a", rangeMin=0, rangeMax=1, startValue=0)),
        ("removeUserDebugItem", dict(itemUniqueId=0)),
        ("resetDebugVisualizerCamera", dict(cameraDistance=1, cameraYaw=2, cameraPitch=3,
                                            cameraTargetPosition=[0, 0, 0])),
        ("configureDebugVisualizer", dict(flag=p.COV_ENABLE_SHADOWS, enable=1,
                                          lightPosition=[1, 2, 3], shadowMapResolution=1024,
                                          shadowMapWorldSize=10, shadowMapIntensity=0.5,
                                          remoteSyncTransformInterval=0.1)),
    ]
    for name, kwargs in calls:
        assert getattr(p, name)(**kwargs, physicsClientId=direct) == \
            getattr(pb, name)(**kwargs, physicsClientId=pyb), name


# -- GUI (headless): the items are kept ---------------------------------------------------------
def test_gui_ids_count_from_zero_across_kinds(gui):
    assert p.addUserDebugLine([0, 0, 0], [1, 0, 0]) == 0
    assert p.addUserDebugText("t", [0, 0, 1]) == 1
    assert p.addUserDebugParameter("gain", 0, 10, 2.5) == 2
    assert p.addUserDebugPoints([[0, 0, 0], [1, 1, 1]], [[1, 0, 0], [0, 1, 0]]) == 3
    assert sorted(_client(gui).debug.items) == [0, 1, 2, 3]


def test_gui_parameter_reads_its_start_value(gui):
    slider = p.addUserDebugParameter("gain", 0, 10, 2.5)
    button = p.addUserDebugParameter("button", 1, 0, 1)       # min > max: a button
    assert p.readUserDebugParameter(slider) == 2.5
    assert p.readUserDebugParameter(itemUniqueId=button) == 1.0
    with pytest.raises(p.error, match=r"no debug parameter with id 77.*\[0, 1\]"):
        p.readUserDebugParameter(77)
    line = p.addUserDebugLine([0, 0, 0], [1, 0, 0])
    with pytest.raises(p.error, match="no debug parameter with id"):
        p.readUserDebugParameter(line)
    # PyBullet's defaults (pybullet.c: rangeMin 0, rangeMax 1, startValue 0)
    default = p.addUserDebugParameter("x")
    assert p.readUserDebugParameter(default) == 0.0
    assert _client(gui).debug.items[default].data == dict(name="x", range_min=0.0,
                                                          range_max=1.0, value=0.0)


def test_gui_remove_and_remove_all(gui):
    line = p.addUserDebugLine([0, 0, 0], [1, 0, 0])
    text = p.addUserDebugText("t", [0, 0, 1])
    param = p.addUserDebugParameter("gain", 0, 10, 2.5)
    p.removeUserDebugItem(line)
    p.removeUserDebugItem(1234)                                 # unknown: nothing, as PyBullet
    assert sorted(_client(gui).debug.items) == [text, param]
    p.removeAllUserDebugItems()
    assert sorted(_client(gui).debug.items) == [param]
    assert p.readUserDebugParameter(param) == 2.5
    p.removeAllUserParameters()
    assert _client(gui).debug.items == {}


def test_gui_replace_keeps_the_id(gui):
    line = p.addUserDebugLine([0, 0, 0], [1, 0, 0])
    assert p.addUserDebugLine([0, 0, 0], [0, 2, 0], replaceItemUniqueId=line) == line
    assert _client(gui).debug.items[line].data["line_to"] == (0.0, 2.0, 0.0)
    with pytest.raises(p.error, match="replaceItemUniqueId 5 is not a debug line"):
        p.addUserDebugLine([0, 0, 0], [1, 0, 0], replaceItemUniqueId=5)


def test_gui_life_time_counts_simulated_time(gui):
    p.setTimeStep(0.01)
    short = p.addUserDebugLine([0, 0, 0], [1, 0, 0], lifeTime=0.05)
    forever = p.addUserDebugText("t", [0, 0, 1])
    for _ in range(4):
        p.stepSimulation()
    assert short in _client(gui).debug.items          # 0.04 s < 0.05 s
    p.stepSimulation()
    assert short not in _client(gui).debug.items      # 0.05 s reached
    assert forever in _client(gui).debug.items


def test_gui_camera_default_and_reset(gui):
    width, height, view, proj, up, forward, horizontal, vertical, yaw, pitch, dist, target = \
        p.getDebugVisualizerCamera()
    assert (width, height) == (1024, 768)
    assert (yaw, pitch, dist, target) == (50.0, -35.0, 5.0, (0.0, 0.0, 0.0))
    # the view is PyBullet's yaw-pitch-roll view of that camera (z up)
    np.testing.assert_allclose(view, pb.computeViewMatrixFromYawPitchRoll(
        [0, 0, 0], 5.0, 50.0, -35.0, 0.0, 2), atol=1e-6)
    # PyBullet's GUI projection: 90 degrees vertical field of view, near 0.01, far 1000
    np.testing.assert_allclose(proj, [0.75, 0, 0, 0, 0, 1, 0, 0, 0, 0, -1.0000200271606445, -1,
                                      0, 0, -0.02000020071864128, 0], rtol=1e-7)
    assert up == (0.0, 0.0, 1.0)
    # forward points from the eye to the target: pitch -35 looks down
    assert np.linalg.norm(forward) == pytest.approx(1.0)
    assert forward[2] == pytest.approx(-math.sin(math.radians(35)))
    assert np.dot(horizontal, forward) == pytest.approx(0.0, abs=1e-9)
    assert np.linalg.norm(vertical) == pytest.approx(20000.0)
    assert np.linalg.norm(horizontal) == pytest.approx(20000.0 * 1024 / 768)
    p.resetDebugVisualizerCamera(cameraDistance=2, cameraYaw=-90, cameraPitch=-10,
                                 cameraTargetPosition=[1, 2, 3])
    cam = p.getDebugVisualizerCamera()
    assert cam[8:] == (-90.0, -10.0, 2.0, (1.0, 2.0, 3.0))
    np.testing.assert_allclose(cam[2], pb.computeViewMatrixFromYawPitchRoll(
        [1, 2, 3], 2.0, -90.0, -10.0, 0.0, 2), atol=1e-6)


def test_configure_and_object_colour_are_kept(gui):
    p.configureDebugVisualizer(p.COV_ENABLE_SHADOWS, 0, lightPosition=[1, 2, 3])
    state = _client(gui).debug
    assert state.flags == {p.COV_ENABLE_SHADOWS: 0}
    assert state.settings == {"lightPosition": (1.0, 2.0, 3.0)}
    with pytest.raises(p.error, match="flag 999 is not a COV_ENABLE_"):
        p.configureDebugVisualizer(999, 1)


# -- the viewer interface -------------------------------------------------------------------------
def test_every_change_reaches_the_viewer(gui):
    viewer = RecordingViewer()
    _client(gui).viewer = viewer
    line = p.addUserDebugLine([0, 0, 0], [1, 0, 0], [1, 0, 0], 2.0)
    slider = p.addUserDebugParameter("gain", 0, 10, 2.5)
    viewer.slider_values[slider] = 7.0
    assert p.readUserDebugParameter(slider) == 7.0
    p.addUserDebugText("t", [0, 0, 1], replaceItemUniqueId=-1)
    p.removeUserDebugItem(line)
    p.resetDebugVisualizerCamera(2, 30, -20, [0, 0, 0])
    p.configureDebugVisualizer(p.COV_ENABLE_GUI, 0)
    assert p.getKeyboardEvents() == {ord("q"): p.KEY_WAS_TRIGGERED | p.KEY_IS_DOWN}
    assert p.getMouseEvents() == ((1, 10.0, 20.0, -1, 0),)
    assert p.getDebugVisualizerCamera()[:2] == (640, 480)
    names = [name for name, _ in viewer.calls]
    assert names == ["add_line", "add_slider", "add_text", "remove", "set_camera", "configure"]
    assert viewer.calls[0][1] == (line, (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (1.0, 0.0, 0.0), 2.0,
                                  None)
    assert viewer.calls[4][1] == (2.0, 30.0, -20.0, (0.0, 0.0, 0.0))


# -- hostile input ---------------------------------------------------------------------------
hostile = st.one_of(st.none(), st.text(max_size=3), st.integers(), st.floats(),
                    st.lists(st.one_of(st.floats(), st.none(), st.text(max_size=1)), max_size=5))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([
    lambda a: p.addUserDebugLine(a, [0, 0, 0]),
    lambda a: p.addUserDebugLine([0, 0, 0], [1, 1, 1], a),
    lambda a: p.addUserDebugLine([0, 0, 0], [1, 1, 1], lineWidth=a),
    lambda a: p.addUserDebugLine([0, 0, 0], [1, 1, 1], lifeTime=a),
    lambda a: p.addUserDebugLine([0, 0, 0], [1, 1, 1], parentObjectUniqueId=a),
    lambda a: p.addUserDebugText(a, [0, 0, 0]), lambda a: p.addUserDebugText("x", a),
    lambda a: p.addUserDebugText("x", [0, 0, 0], textOrientation=a),
    lambda a: p.addUserDebugPoints(a, [[1, 0, 0]]), lambda a: p.addUserDebugPoints([[0, 0, 0]], a),
    lambda a: p.addUserDebugParameter(a, 0, 1, 0), lambda a: p.addUserDebugParameter("x", a, 1, 0),
    lambda a: p.readUserDebugParameter(a), lambda a: p.removeUserDebugItem(a),
    lambda a: p.resetDebugVisualizerCamera(a, 0, 0, [0, 0, 0]),
    lambda a: p.resetDebugVisualizerCamera(1, 0, 0, a), lambda a: p.configureDebugVisualizer(a, 1),
    lambda a: p.configureDebugVisualizer(lightPosition=a),
    lambda a: p.setDebugObjectColor(a, -1)]), hostile)
def test_hostile_input_raises_pybullet_error(call, argument):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cid = p.connect(p.GUI)
    try:
        call(argument)
    except p.error:
        pass
    finally:
        p.disconnect(cid)


@pytest.mark.parametrize("call, message", [
    (lambda: p.addUserDebugLine([0, 0, 0], [1, 0, 0], [2, 0, 0]), r"lineColorRGB .* \[0, 1\]"),
    (lambda: p.addUserDebugLine([0, 0, 0], [1, 0, 0], lifeTime=-1), "lifeTime = -1.0 must be"),
    (lambda: p.addUserDebugLine([0, 0, 0], [1, 0, float("nan")]), r"lineToXYZ\[2\] must be fin"),
    (lambda: p.addUserDebugLine([0, 0, 0], [1, 0, 0], parentObjectUniqueId=42),
     "no body with unique id 42"),
    (lambda: p.addUserDebugPoints([[0, 0, 0]], [[1, 0, 0], [0, 1, 0]]),
     "1 pointPositions but 2 pointColorsRGB"),
    (lambda: p.addUserDebugText("x", [0, 0, 0], textOrientation=[0, 0, 0, 0]), "zero length"),
    (lambda: p.resetDebugVisualizerCamera(0, 0, 0, [0, 0, 0]), "cameraDistance = 0.0"),
    (lambda: p.configureDebugVisualizer(enable=1), "enable given without a flag"),
    (lambda: p.setDebugObjectColor(3, -1, [1, 0, 0]), "no body with unique id 3"),
])
def test_bad_arguments_say_what_is_valid(gui, call, message):
    with pytest.raises(p.error, match=message):
        call()


def test_items_attached_to_a_link_and_object_colours_check_the_body(gui):
    import pybullet_data
    p.setAdditionalSearchPath(pybullet_data.getDataPath())
    kuka = p.loadURDF("kuka_iiwa/model.urdf")
    line = p.addUserDebugLine([0, 0, 0], [0, 0, 0.2], parentObjectUniqueId=kuka,
                              parentLinkIndex=6)
    assert _client(gui).debug.items[line].data["parent"] == (kuka, 6)
    with pytest.raises(p.error, match=r"parentLinkIndex 7 is out of range .* -1 \(base\) to 6"):
        p.addUserDebugText("x", [0, 0, 0], parentObjectUniqueId=kuka, parentLinkIndex=7)
    p.setDebugObjectColor(kuka, 3, [1, 0, 0])
    assert _client(gui).debug.object_colors == {(kuka, 3): (1.0, 0.0, 0.0)}
    p.setDebugObjectColor(objectUniqueId=kuka, linkIndex=3)           # no colour: removed
    assert _client(gui).debug.object_colors == {}
    with pytest.raises(p.error, match="linkIndex -2 is out of range"):
        p.setDebugObjectColor(kuka, -2, [1, 0, 0])
