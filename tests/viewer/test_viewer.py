"""sim_node.viewer.Viewer: the in-process viewer's runner (pause stops simulated time, Step
advances exactly one dt, Reset restores the initial state, the RTF slider paces), its snapshots
(copies taken by the stepping thread, drawn by the drawing thread) and its one-line URL.

The page's controls are pressed the way the browser's messages press them: by setting the
viser GUI handle's value, which runs the same callbacks (the browser test presses the real
buttons). Waiting is on conditions, with generous time limits; nothing asserts wall time."""
import os
import re
import threading
import time

import numpy as np
import pytest

pytest.importorskip("viser")
import pybullet_data  # noqa: E402

from sim_node import Simulator, WorldModel  # noqa: E402
from sim_node.viewer import Viewer  # noqa: E402
from sim_node.viewer.scene import wxyz_of_matrix  # noqa: E402

DATA = pybullet_data.getDataPath()
DT = 0.01


def _world():
    world = WorldModel()
    world.loadTerrain(os.path.join(DATA, "plane.urdf"))
    world.loadRobot(os.path.join(DATA, "r2d2.urdf"))
    cube = world.loadRigidObject(os.path.join(DATA, "cube_small.urdf"))
    R, t = cube.getTransform()
    cube.setTransform(R, (1.0, 0.0, 0.3))             # falls: its state changes with time
    return world


def _until(condition, timeout=30.0, what="condition"):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


@pytest.fixture
def running():
    """A Viewer on a free port, run() stepping in a thread at full speed (RTF slider 0)."""
    sim = Simulator(_world())
    sim.setSimStep(0.005)
    viewer = Viewer(sim, port=0)
    viewer.show()
    viewer.scene.controls["rtf"].value = 0.0
    thread = threading.Thread(target=viewer.run, kwargs={"dt": DT}, daemon=True)
    thread.start()
    try:
        yield viewer
    finally:
        viewer.close()
        thread.join(timeout=30)
        assert not thread.is_alive()


def _press(viewer, button):
    viewer.scene.controls[button].value = True     # what a click in the page triggers


def test_show_prints_the_url_on_one_line(capsys):
    viewer = Viewer(Simulator(_world()), port=0)
    try:
        url = viewer.show()
        out = capsys.readouterr().out
        assert out.count("\n") == 1 and url in out
        assert re.fullmatch(r"http://localhost:\d+", url)
        assert int(url.rsplit(":", 1)[1]) == viewer.server.get_port() != 0
    finally:
        viewer.close()


def test_pause_stops_time_step_advances_one_dt_reset_restores(running):
    viewer, sim = running, running.sim
    initial = Simulator(_world()).getState()
    _until(lambda: sim.getTime() > 0.2, what="the simulation to run")
    _press(viewer, "pause")
    assert viewer.scene.controls["pause"].label == "Resume"
    _until(lambda: viewer.state == "paused", what="the runner to pause")
    t_paused = sim.getTime()
    state_paused = sim.getState()
    time.sleep(0.3)                                   # the runner keeps looping, paused
    assert sim.getTime() == t_paused
    assert sim.getState() == state_paused
    for k in range(1, 4):
        _press(viewer, "step")
        _until(lambda: viewer._step_requests == 0, what="the step")
        assert sim.getTime() == pytest.approx(t_paused + k * DT, abs=1e-12)
        assert viewer.state == "paused"
    _press(viewer, "reset")
    _until(lambda: not viewer._reset_requested, what="the reset")
    assert sim.getTime() == 0.0
    assert sim.getState() == initial                 # bit for bit the starting state
    _press(viewer, "pause")                           # resume
    _until(lambda: sim.getTime() > 0.05, what="the simulation to resume")
    assert viewer.scene.controls["pause"].label == "Pause"


def test_the_drawing_thread_draws_published_snapshots(running):
    viewer, sim = running, running.sim
    _until(lambda: sim.getTime() > 0.3, what="the simulation to run")
    _press(viewer, "pause")
    _until(lambda: viewer.state == "paused", what="the runner to pause")
    _until(lambda: viewer._drawn_seq == viewer._snapshot.seq, what="a frame")
    # the drawn cube is where the simulator has it; r2d2's head link where kinematics says
    pose = sim.getRigidObjectPoses()[0]
    cube = viewer.scene.nodes[f"/world/{sim.getWorld().rigidObject(0).getName()}"]
    np.testing.assert_allclose(cube.position, pose[:3], atol=1e-6)
    robot = sim.getWorld().robot(0)
    R, p = sim.getLinkTransforms(robot)
    head = robot.link("head").getIndex()
    drawn = viewer.scene.nodes[f"/world/{robot.getName()}/head"]
    np.testing.assert_allclose(drawn.position, p[head], atol=1e-6)
    np.testing.assert_allclose(np.abs(drawn.wxyz @ wxyz_of_matrix(R[head])), 1.0, atol=1e-9)
    assert f"{sim.getTime():.3f} s" in viewer.scene.status_text.content
    assert "paused" in viewer.scene.status_text.content


def test_rtf_slider_paces_simulated_time():
    """At RTF 0.5 a 0.2 s run takes at least 0.4 s of wall time (pacing only ever sleeps, so
    this lower bound is not a timing race); at RTF 0 the runner does not sleep."""
    sim = Simulator(_world())
    viewer = Viewer(sim, port=0)
    viewer.show()
    try:
        viewer.scene.controls["rtf"].value = 0.5
        assert viewer.rtf == 0.5
        start = time.perf_counter()
        viewer.run(duration=0.2, dt=DT)
        assert time.perf_counter() - start >= 0.4 - 1e-3
        assert sim.getTime() == pytest.approx(0.2, abs=1e-9)
    finally:
        viewer.close()


def test_run_steps_exactly_duration_with_the_control_callback():
    sim = Simulator(_world())
    viewer = Viewer(sim, port=0)
    calls = []
    viewer.rtf = 0.0
    end = viewer.run(duration=0.25, dt=0.05, control=lambda s: calls.append(s.getTime()))
    assert end == pytest.approx(0.25, abs=1e-9)
    np.testing.assert_allclose(calls, np.arange(5) * 0.05, atol=1e-9)


@pytest.mark.parametrize("kwargs, message", [
    ({"rate": 60.0}, r"rate must be in \(0, 30\] Hz"), ({"rate": 0.0}, "rate"),
    ({"port": 70000}, "port must be in 0..65535")])
def test_bad_arguments_say_what_is_valid(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Viewer(Simulator(WorldModel()), **kwargs)


def test_bad_run_arguments():
    viewer = Viewer(Simulator(WorldModel()), port=0)
    with pytest.raises(ValueError, match="dt must be a positive time"):
        viewer.run(duration=1.0, dt=-1.0)
    with pytest.raises(ValueError, match="duration must be a time"):
        viewer.run(duration=float("nan"), dt=0.01)


def test_spawned_and_deleted_entities_follow(running):
    viewer, sim = running, running.sim
    _press(viewer, "pause")
    _until(lambda: viewer.state == "paused", what="the runner to pause")
    sim.spawn(os.path.join(DATA, "sphere_small.urdf"), name="ball")
    viewer.publish()
    _until(lambda: any(p.startswith("/world/ball/") for p in viewer.scene.nodes),
           what="the spawned ball to be drawn")
    sim.delete("ball")
    viewer.publish()
    _until(lambda: not any(p.startswith("/world/ball") for p in viewer.scene.nodes),
           what="the deleted ball to go")


def test_add_extra_items():
    sim = Simulator(WorldModel())
    from sim_node.model import geometry as geo

    with Viewer(sim, port=0) as viewer:
        viewer.add("marker", geo.Sphere(0.1), color=(1, 0, 0))
        viewer.add("cloud", np.zeros((10, 3)))
        viewer.add("goal", (np.eye(3), np.array([1.0, 2.0, 3.0])))
        nodes = viewer.scene.nodes
        assert tuple(nodes["/world/marker/visual/0"].color) == (255, 0, 0)
        assert nodes["/world/debug/debug_cloud"].points.shape == (10, 3)
        np.testing.assert_allclose(nodes["/world/frames/goal"].position, (1, 2, 3))
        viewer.remove("marker")
        assert "/world/marker/visual/0" not in nodes
