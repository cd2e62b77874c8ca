"""The viewer on a running node, end to end: real processes on their own ROS domain and a real
headless chromium (tests/viewer/headless_browser.py).

  - viewer:=true on the default world: the URL on one line; the page's scene lists every link
    of both robots, the canvas draws (three.js reports triangles, the screenshot is not one
    colour), the sim time shown advances; the Pause button pauses the node (its
    get_simulation_state says so and no /clock stamp advances after it), Step advances /clock by
    exactly one physics step, Resume lets it run again.
  - `sim_node view` attached to a node without a viewer shows the robots from
    robot_description and the sim time.
Every process is stopped by PID (its process group) whatever the outcome.
"""
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "viewer"))

from headless_browser import (browser_session, click_button, distinct_colours,  # noqa: E402
                              scene_node_names, screenshot_rgb, triangles_drawn, wait_until)
from node_harness import (DEEP, REPO, Client, NodeProcess, in_process_node,  # noqa: E402
                          next_domain, ns, ros_env)

import sim_node  # noqa: E402
from sim_node.resources import default_world  # noqa: E402

pytestmark = pytest.mark.ros
URL_LINE = re.compile(r"^sim_node viewer: (http://localhost:\d+)$", re.M)
PAGE_TIMEOUT = 90.0        # [s] of wall time for the page to show something (a loaded machine)


@pytest.fixture
def browser():
    yield from browser_session()


def _links() -> dict:
    """{robot name: [link names]} of the default world."""
    world = sim_node.WorldModel()
    world.readFile(default_world())
    return {world.robot(i).getName(): [link.getName() for link in world.robot(i).links()]
            for i in range(world.numRobots())}


def _url(log, process, timeout=120.0) -> str:
    def found():
        if process.poll() is not None:
            raise AssertionError(f"exited with code {process.returncode}:\n{log()}")
        return URL_LINE.search(log())
    return wait_until(found, timeout, what="the viewer's URL line").group(1)


def _sim_time_shown(browser) -> float | None:
    match = re.search(r"sim time\s+([\d.]+)\s*s", browser.find_element("tag name", "body").text)
    return float(match.group(1)) if match else None


def _shows_every_link(browser, prefix="/world"):
    names = set(scene_node_names(browser))
    return all(f"{prefix}/{robot}/{link}" in names
               for robot, links in _links().items() for link in links)


@pytest.fixture(scope="module")
def viewer_node(tmp_path_factory):
    domain = next_domain()
    log = tmp_path_factory.mktemp("viewer_node") / "node.log"
    node = NodeProcess(domain, {"viewer": True, "viewer_port": 0}, log_path=log)
    client = Client(domain)
    try:
        yield node, client, _url(node.log, node.process)
    finally:
        client.close()
        node.stop()


def test_the_node_prints_its_viewer_url_on_one_line(viewer_node):
    node, _, url = viewer_node
    assert len(URL_LINE.findall(node.log())) == 1
    assert url.startswith("http://localhost:")


def test_the_page_lists_every_link_draws_and_its_time_advances(viewer_node, browser):
    _, _, url = viewer_node
    browser.get(url)
    wait_until(lambda: _shows_every_link(browser), PAGE_TIMEOUT,
               what="every link of both robots in the page's scene tree")
    assert "/world/red_box" in scene_node_names(browser)
    wait_until(lambda: triangles_drawn(browser) > 1000, PAGE_TIMEOUT,
               what="three.js drawing the world")
    canvas = browser.find_element("tag name", "canvas")
    assert distinct_colours(screenshot_rgb(browser, canvas)) > 50
    first = wait_until(lambda: _sim_time_shown(browser), PAGE_TIMEOUT, what="a sim time shown")
    wait_until(lambda: (_sim_time_shown(browser) or 0) > first + 0.1, PAGE_TIMEOUT,
               what=f"the sim time shown advancing past {first} s")


def test_pause_stops_clock_step_takes_one_step_resume_runs(viewer_node, browser):
    from rosgraph_msgs.msg import Clock
    from simulation_interfaces.msg import SimulationState
    from simulation_interfaces.srv import GetSimulationState

    _, client, url = viewer_node
    client.subscribe(Clock, "/clock", DEEP)
    client.wait_for("/clock", 10, timeout=60)
    browser.get(url)
    wait_until(lambda: browser.find_elements("xpath", "//button[normalize-space(.)='Pause']"),
               PAGE_TIMEOUT, what="the Pause button")

    def state():
        return client.call(GetSimulationState, "/sim/get_simulation_state",
                           GetSimulationState.Request()).state.state

    assert state() == SimulationState.STATE_PLAYING
    click_button(browser, "Pause")
    wait_until(lambda: state() == SimulationState.STATE_PAUSED, 30, what="the node paused")
    wait_until(lambda: browser.find_elements(
        "xpath", "//button[normalize-space(.)='Resume']"), 30, what="the button reading Resume")
    # a message already on its way when the pause was answered may still arrive: take the
    # newest stamp after the node said it is paused, then none may pass it
    time.sleep(0.3)
    paused_at = max(ns(m.clock) for m in client.messages("/clock"))
    count = len(client.messages("/clock"))
    time.sleep(1.0)
    assert max(ns(m.clock) for m in client.messages("/clock")) == paused_at
    # Step: exactly one more /clock, one physics step (1 ms in the default world) later
    click_button(browser, "Step")
    new = client.wait_for("/clock", count + 1, timeout=30)[count:]
    time.sleep(0.5)
    new = client.messages("/clock")[count:]
    assert [ns(m.clock) - paused_at for m in new] == [1_000_000]
    assert state() == SimulationState.STATE_PAUSED
    click_button(browser, "Resume")
    wait_until(lambda: state() == SimulationState.STATE_PLAYING, 30, what="the node playing")
    client.wait_for("/clock", timeout=30,
                    predicate=lambda m: ns(m.clock) > paused_at + 10_000_000)


def test_the_rtf_slider_and_reset_act_on_the_node(viewer_node):
    """The page's slider and Reset button call these (what a browser's click does is the
    Pause / Step test's part): the real_time_factor parameter is set; the simulation time goes
    back to 0."""
    from types import SimpleNamespace

    from rosgraph_msgs.msg import Clock

    from node_harness import get_parameter
    from sim_node.ros.view import ServiceControls

    _, client, _ = viewer_node
    logged = []
    controls = ServiceControls(client.node, "/sim", SimpleNamespace(control_time=0.0),
                               log=logged.append)
    wait_until(lambda: controls._parameters.service_is_ready()
               and controls._reset.service_is_ready(), 30, what="the node's services")
    controls.set_real_time_factor(2.5)
    wait_until(lambda: get_parameter(client, "real_time_factor") == 2.5, 30,
               what="real_time_factor 2.5")
    client.subscribe(Clock, "/clock", DEEP)
    before = ns(client.wait_for("/clock", 1, timeout=30)[-1].clock)
    assert before > 500_000_000          # the node has run for a while
    controls.reset()
    client.wait_for("/clock", timeout=30, predicate=lambda m: ns(m.clock) < 100_000_000)
    controls.set_real_time_factor(0.0)
    wait_until(lambda: get_parameter(client, "real_time_factor") == 0.0, 30,
               what="real_time_factor 0")
    wait_until(lambda: controls.answers == 3, 30, what="three answers")
    assert logged == []


def test_sim_node_view_attached_to_a_node_shows_the_robots(tmp_path, browser):
    domain = next_domain()
    node = NodeProcess(domain, {}, log_path=tmp_path / "node.log")
    view_log = tmp_path / "view.log"
    with open(view_log, "w") as out:
        view = subprocess.Popen([sys.executable, "-m", "sim_node", "view", "--port", "0"],
                                env=ros_env(domain), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, cwd=REPO)
    try:
        url = _url(view_log.read_text, view)
        browser.get(url)
        # robots named by their namespaces (arm, mobile_base), links from robot_description
        wait_until(lambda: _shows_every_link(browser), PAGE_TIMEOUT,
                   what="every link of both robots (from robot_description)")
        wait_until(lambda: triangles_drawn(browser) > 1000, PAGE_TIMEOUT,
                   what="three.js drawing the robots")
        first = wait_until(lambda: _sim_time_shown(browser), PAGE_TIMEOUT,
                           what="a sim time shown")
        wait_until(lambda: (_sim_time_shown(browser) or 0) > first + 0.1, PAGE_TIMEOUT,
                   what=f"the sim time shown advancing past {first} s")
        assert len(URL_LINE.findall(view_log.read_text())) == 1
    finally:
        if view.poll() is None:
            os.killpg(view.pid, signal.SIGINT)
            try:
                view.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(view.pid, signal.SIGKILL)
                view.wait()
        node.stop()
    assert view.returncode == 0, view_log.read_text()


def test_the_node_viewer_poses_every_body_where_the_simulator_had_it():
    """In this process, the node without its simulation thread. The node publishes /tf and
    /clock at the start of a step, with the state about to be stepped: after 20 steps the
    viewer shows the state of t = 19 ms (the objects, released 5 mm above the table, and the
    mobile base still falling: ~0.2 mm per step), link for link as the simulator had it."""
    import numpy as np

    from sim_node.viewer.scene import wxyz_of_matrix

    with in_process_node(None, default_plugins=None, viewer=True, viewer_port=0) as node:
        world, sim = node.world, node.sim
        start = sim.getRigidObjectTransforms()[1].copy()
        node.request_steps(19)
        links = [sim.getLinkTransforms(r) for r in range(world.numRobots())]
        objects = sim.getRigidObjectTransforms()
        assert np.abs(objects[1] - start).max() > 1e-3     # they moved
        viewer = node.viewer
        viewer.idle_without_pages = False           # no browser here
        drawn = viewer.ros_scene.drawn
        node.request_steps(1)
        wait_until(lambda: viewer.ros_scene.drawn > drawn + 1, 30,
                   what="the viewer drawing the published state")
        for r in range(world.numRobots()):
            robot = world.robot(r)
            R, t = links[r]
            for i, link in enumerate(robot.links()):
                handle = viewer.scene.nodes.get(f"/world/{robot.getName()}/{link.getName()}")
                assert handle is not None, f"{robot.getName()}/{link.getName()} not drawn"
                np.testing.assert_allclose(handle.position, t[i], atol=1e-6)
                assert abs(np.dot(handle.wxyz, wxyz_of_matrix(R[i]))) == \
                    pytest.approx(1.0, abs=1e-6)
        for i in range(world.numRigidObjects()):
            handle = viewer.scene.nodes[f"/world/{world.rigidObject(i).getName()}"]
            np.testing.assert_allclose(handle.position, objects[1][i], atol=1e-6)
            assert abs(np.dot(handle.wxyz, wxyz_of_matrix(objects[0][i]))) == \
                pytest.approx(1.0, abs=1e-6)
        assert "**sim time** 0.019 s" in viewer.scene.status_text.content
        # the camera's frustum at its optical frame, which the camera plugin published on
        # /tf_static before the viewer existed
        wait_until(lambda: "/world/sensors/arm_camera_camera_info" in viewer.scene.nodes,
                   30, what="the camera's frustum")
