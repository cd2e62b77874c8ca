"""sim_node.viewer.pybullet_gui: connect(GUI) shows the client's world in the live viewer and
draws PyBullet's user debug items; PyBullet 3.2.7 (DIRECT) is the reference for the camera and
the link frames debug items are attached to. A slider is moved the way a browser moves it: a
GuiUpdateMessage over viser's websocket."""
import os
import time
import warnings

import numpy as np
import pytest

viser = pytest.importorskip("viser")
pb = pytest.importorskip("pybullet")
import msgspec  # noqa: E402
import pybullet_data  # noqa: E402
from websockets.sync.client import connect as ws_connect  # noqa: E402

import sim_node.pybullet as p  # noqa: E402
from sim_node.pybullet.client import get_client  # noqa: E402
from sim_node.viewer.pybullet_gui import PyBulletGUI, camera_eye  # noqa: E402

DATA = pybullet_data.getDataPath()


@pytest.fixture
def gui(monkeypatch):
    """A GUI client with its live viewer on a free port."""
    monkeypatch.delenv("SIM_NODE_PYBULLET_GUI", raising=False)
    monkeypatch.setenv("SIM_NODE_VIEWER_PORT", "0")
    cid = p.connect(p.GUI)
    try:
        yield cid, get_client(cid).viewer
    finally:
        p.disconnect(cid)


def _until(condition, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_connect_gui_attaches_a_viewer_and_prints_its_url(gui, capsys):
    cid, hook = gui
    assert isinstance(hook, PyBulletGUI)
    assert hook.url.startswith("http://localhost:")
    uid = p.loadURDF(os.path.join(DATA, "r2d2.urdf"), physicsClientId=cid)
    name = get_client(cid).body(uid).entity.getName()
    p.stepSimulation(physicsClientId=cid)
    hook.viewer.update()
    links = {n.split("/")[3] for n in hook.scene.nodes if n.startswith(f"/world/{name}/")}
    assert {"base_link", "head", "left_gripper", "box"} <= links
    assert p.getDebugVisualizerCamera(physicsClientId=cid)[:2] == (1024, 768)


def test_disconnect_stops_the_server(monkeypatch):
    monkeypatch.delenv("SIM_NODE_PYBULLET_GUI", raising=False)
    monkeypatch.setenv("SIM_NODE_VIEWER_PORT", "0")
    cid = p.connect(p.GUI)
    hook = get_client(cid).viewer
    server = hook.viewer.server
    p.disconnect(cid)
    assert hook.viewer.server is None and hook.viewer._thread is None
    with pytest.raises(OSError):
        ws_connect(f"ws://127.0.0.1:{server.get_port()}", open_timeout=2).close()


def test_headless_setting_keeps_gui_without_a_viewer(monkeypatch):
    monkeypatch.setenv("SIM_NODE_PYBULLET_GUI", "headless")
    with pytest.warns(UserWarning, match="running DIRECT"):
        cid = p.connect(p.GUI)
    try:
        assert get_client(cid).viewer is None
    finally:
        p.disconnect(cid)


def test_a_bad_port_setting_warns_and_runs_headless(monkeypatch):
    monkeypatch.delenv("SIM_NODE_PYBULLET_GUI", raising=False)
    monkeypatch.setenv("SIM_NODE_VIEWER_PORT", "eighty")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cid = p.connect(p.GUI)
    try:
        text = " ".join(str(w.message) for w in caught)
        assert "SIM_NODE_VIEWER_PORT='eighty'" in text and "0..65535" in text
        assert get_client(cid).viewer is None
    finally:
        p.disconnect(cid)


def test_a_slider_reads_what_the_browser_set(gui):
    cid, hook = gui
    sid = p.addUserDebugParameter("gain", 0.0, 10.0, 2.0, physicsClientId=cid)
    assert p.readUserDebugParameter(sid, physicsClientId=cid) == 2.0
    uuid = hook.scene._sliders[sid]._impl.uuid
    port = hook.viewer.server.get_port()
    with ws_connect(f"ws://127.0.0.1:{port}",
                    subprotocols=[f"viser-v{viser.__version__}"]) as browser:
        browser.send(msgspec.msgpack.encode(
            {"type": "GuiUpdateMessage", "uuid": uuid, "updates": {"value": 7.5}}))
        _until(lambda: p.readUserDebugParameter(sid, physicsClientId=cid) != 2.0)
    assert p.readUserDebugParameter(sid, physicsClientId=cid) == 7.5
    p.removeUserDebugItem(sid, physicsClientId=cid)
    assert sid not in hook.scene._sliders


@pytest.mark.parametrize("distance, yaw, pitch, target", [
    (5.0, 50.0, -35.0, (0, 0, 0)), (1.5, -120.0, -60.0, (0.3, -0.2, 0.5)),
    (3.0, 10.0, 20.0, (1, 2, 3))])
def test_camera_eye_is_pybullets(distance, yaw, pitch, target):
    view = np.array(pb.computeViewMatrixFromYawPitchRoll(target, distance, yaw, pitch, 0, 2))
    V = view.reshape(4, 4).T                          # column-major -> matrix
    eye = -V[:3, :3].T @ V[:3, 3]
    np.testing.assert_allclose(camera_eye(distance, yaw, pitch, target), eye, atol=1e-5)


def test_reset_camera_points_the_browser_camera(gui):
    cid, hook = gui
    p.resetDebugVisualizerCamera(2.0, 30.0, -40.0, [0.1, 0.2, 0.3], physicsClientId=cid)
    camera = hook.viewer.server.initial_camera
    np.testing.assert_allclose(camera.position, camera_eye(2.0, 30.0, -40.0, (0.1, 0.2, 0.3)))
    np.testing.assert_allclose(camera.look_at, (0.1, 0.2, 0.3))


def test_a_line_attached_to_a_link_lands_where_pybullet_puts_it(gui):
    """A debug line given in a kuka link's frame: PyBullet attaches it to the link's inertial
    frame (getLinkState's COM pose); the drawn line, placed by the link node's pose, has its
    end at that same world point."""
    cid, hook = gui
    path = os.path.join(DATA, "kuka_iiwa/model.urdf")
    q = [0.3, -0.5, 0.8, 1.1, -0.4, 0.6, 0.2]
    uid = p.loadURDF(path, useFixedBase=True, physicsClientId=cid)
    ref = pb.connect(pb.DIRECT)
    try:
        ref_uid = pb.loadURDF(path, useFixedBase=True, physicsClientId=ref)
        for j, value in enumerate(q):
            p.resetJointState(uid, j, value, physicsClientId=cid)
            pb.resetJointState(ref_uid, j, value, physicsClientId=ref)
        link, local = 3, np.array([0.1, -0.05, 0.2])
        com, orn = pb.getLinkState(ref_uid, link, physicsClientId=ref)[:2]
        expected = np.array(com) + np.array(pb.getMatrixFromQuaternion(orn)).reshape(3, 3) @ local
    finally:
        pb.disconnect(ref)
    item = p.addUserDebugLine([0, 0, 0], local, [1, 0, 0], parentObjectUniqueId=uid,
                              parentLinkIndex=link, physicsClientId=cid)
    hook.viewer.update()
    body = get_client(cid).body(uid)
    link_key = f"{body.entity.getName()}/{body.link(link).getName()}"
    line = hook.scene.nodes[f"/world/{link_key}/debug_{item}"]
    frame = hook.scene.nodes[f"/world/{link_key}"]
    R = np.array(pb.getMatrixFromQuaternion(
        (*frame.wxyz[1:], frame.wxyz[0]))).reshape(3, 3)
    end_world = np.asarray(frame.position) + R @ line.points[0, 1]
    np.testing.assert_allclose(end_world, expected, atol=1e-4)
    p.removeUserDebugItem(item, physicsClientId=cid)
    assert f"/world/{link_key}/debug_{item}" not in hook.scene.nodes


def test_text_points_and_object_colour(gui):
    cid, hook = gui
    uid = p.loadURDF(os.path.join(DATA, "r2d2.urdf"), physicsClientId=cid)
    text = p.addUserDebugText("hello", [0, 0, 1], [0, 1, 0], physicsClientId=cid)
    points = p.addUserDebugPoints([[0, 0, 0], [1, 1, 1]], [[1, 0, 0], [0, 0, 1]], 3.0,
                                  physicsClientId=cid)
    assert hook.scene.nodes[f"/world/debug/debug_{text}"].text == "hello"
    np.testing.assert_array_equal(hook.scene.nodes[f"/world/debug/debug_{points}"].colors,
                                  [[255, 0, 0], [0, 0, 255]])
    hook.viewer.update()
    body = get_client(cid).body(uid)
    head = hook.scene.nodes[f"/world/{body.entity.getName()}/head/visual/0"]
    blue = tuple(head.color)
    p.setDebugObjectColor(uid, body.entity.link("head").getIndex() - 1, [1, 0, 0],
                          physicsClientId=cid)
    assert tuple(head.color) == (255, 0, 0)
    p.setDebugObjectColor(uid, body.entity.link("head").getIndex() - 1, physicsClientId=cid)
    assert tuple(head.color) == blue
    p.removeAllUserDebugItems(physicsClientId=cid)
    assert not any("/debug_" in n for n in hook.scene.nodes)
