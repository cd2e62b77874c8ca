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


def test_rtf_set_from_code_moves_the_slider_and_the_slider_sets_it():
    sim = Simulator(_world())
    viewer = Viewer(sim, port=0)
    viewer.rtf = 2.5                          # before show: the slider starts there
    viewer.show()
    slider = viewer.scene.controls["rtf"]
    try:
        assert slider.value == 2.5
        viewer.rtf = 0.0
        assert slider.value == 0.0 and viewer.rtf == 0.0
        viewer.rtf = 100.0                    # beyond the slider: it shows its end, 10
        assert slider.value == slider.max == 10.0 and viewer.rtf == 100.0
        viewer.rtf = 1e-6                     # DESIGN.md §8: [1e-3, 1e3] or 0
        assert viewer.rtf == 1e-3
        slider.value = 3.0                    # what moving it in the page does
        assert viewer.rtf == 3.0
        for bad in (-1.0, float("nan"), "fast"):
            with pytest.raises(ValueError, match="Viewer.rtf must be"):
                viewer.rtf = bad
        assert viewer.rtf == 3.0 == slider.value
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


# -- in a real headless browser (tests/viewer/headless_browser.py; skipped without chromium) --
def _sim_time_in_page(driver) -> float | None:
    text = driver.find_element("tag name", "body").text
    found = re.search(r"sim time\s+([0-9.]+) s", text)
    return None if found is None else float(found.group(1))


def _click(driver, xpath):
    # a DOM click on the element (what the mouse's click dispatches), which also works while
    # a slow software-rendered page has not finished laying out the element
    from selenium.webdriver.common.by import By

    driver.execute_script("arguments[0].click();", driver.find_element(By.XPATH, xpath))


def _click_text(driver, text):
    _click(driver, f"//*[normalize-space(text())='{text}']")


@pytest.fixture
def small_browser():
    """The browser fixture's chromium with an 800 x 600 window: SwiftShader renders every
    frame on the CPU, and a smaller canvas keeps the page responsive on a loaded machine."""
    from headless_browser import BrowserError, missing_reason, start_browser, stop_browser

    reason = missing_reason()
    if reason:
        pytest.skip(reason)
    try:
        driver = start_browser((800, 600))
    except BrowserError as error:
        pytest.fail(str(error), pytrace=False)
    try:
        yield driver
    finally:
        stop_browser(driver)


# waits for the page (never timing asserts): generous, as software WebGL on a machine shared
# with other test runs can take tens of seconds per frame
PAGE_TIMEOUT = 120.0


def test_the_default_world_in_a_headless_browser(small_browser):
    """The default world in chromium: the 3D canvas is drawn (many colours, not a blank
    clear colour), viser's scene tree lists the arm's links, the page's sim time advances
    with the simulator's, and pressing Pause in the page stops the simulator's clock."""
    from headless_browser import distinct_colours, screenshot_rgb, wait_until
    from selenium.webdriver.common.by import By

    from sim_node.resources import default_world

    world = WorldModel()
    world.readFile(str(default_world()))
    sim = Simulator(world)
    viewer = Viewer(sim, port=0, rate=10.0)
    viewer.show()
    thread = threading.Thread(target=viewer.run, kwargs={"dt": 0.01}, daemon=True)
    thread.start()
    browser = small_browser
    try:
        browser.get(viewer.url)
        wait_until(lambda: "Pause" in browser.find_element(By.TAG_NAME, "body").text,
                   timeout=PAGE_TIMEOUT, what="the viewer's controls in the page")
        canvas = wait_until(lambda: browser.find_element(By.TAG_NAME, "canvas"),
                            timeout=PAGE_TIMEOUT, what="the 3D canvas")
        # the canvas shows the world: far more colours than a cleared canvas's one
        wait_until(lambda: distinct_colours(screenshot_rgb(browser, canvas)) > 200,
                   timeout=PAGE_TIMEOUT, what="the canvas to draw the world")
        # the page's clock follows the simulator's
        first = wait_until(lambda: _sim_time_in_page(browser), timeout=PAGE_TIMEOUT,
                           what="the sim time in the page")
        wait_until(lambda: _sim_time_in_page(browser) > first + 0.05,
                   timeout=PAGE_TIMEOUT, what="the page's sim time to advance")
        assert _sim_time_in_page(browser) <= sim.getTime() + 1e-9
        # Pause in the page stops the simulator
        _click_text(browser, "Pause")
        wait_until(lambda: viewer.state == "paused", timeout=PAGE_TIMEOUT,
                   what="the runner to pause")
        wait_until(lambda: "Resume" in browser.find_element(By.TAG_NAME, "body").text,
                   timeout=PAGE_TIMEOUT, what="the button to read Resume")
        paused_at = sim.getTime()
        wait_until(lambda: "status paused" in browser.find_element(By.TAG_NAME, "body").text,
                   timeout=PAGE_TIMEOUT, what="the page to show paused")
        assert sim.getTime() == paused_at
        assert _sim_time_in_page(browser) == pytest.approx(paused_at, abs=1e-3)
        # Step in the page advances exactly one dt
        _click_text(browser, "Step")
        wait_until(lambda: sim.getTime() > paused_at, timeout=PAGE_TIMEOUT, what="the step")
        assert sim.getTime() == pytest.approx(paused_at + 0.01, abs=1e-12)
        # viser's scene tree (Configuration & diagnostics) lists the arm's links
        _click(browser, "//*[contains(@class, 'tabler-icon-adjustments')]/ancestor::button[1]")
        wait_until(lambda: "Scene tree" in browser.find_element(By.TAG_NAME, "body").text,
                   timeout=PAGE_TIMEOUT, what="the scene tree")
        _click_text(browser, "world")
        robot = world.robot(0)
        wait_until(lambda: browser.find_elements(
            By.XPATH, f"//*[normalize-space(text())='{robot.getName()}']"),
            timeout=PAGE_TIMEOUT, what="the robot in the scene tree")
        _click_text(browser, robot.getName())
        links = [link.getName() for link in robot.links()]

        def listed():
            rows = browser.find_element(By.TAG_NAME, "body").text.split("\n")
            return rows if all(f"/{name}" in rows for name in links) else None   # "/link1"

        wait_until(listed, timeout=PAGE_TIMEOUT, what=f"the links {links} in the scene tree")
    finally:
        viewer.close()
        thread.join(timeout=30)


def test_camera_frustums_and_lidar_points_of_the_robots_sensors():
    """A downward lidar 1 m beside r2d2 scans the ground: every drawn point lies on the plane
    z = 0 (closed form) at the scan's ranges; a camera's frustum sits at the sensor's world
    pose with its vertical field of view and aspect."""
    world = WorldModel()
    world.loadTerrain(os.path.join(DATA, "plane.urdf"))
    world.loadRobot(os.path.join(DATA, "r2d2.urdf"), fixed_base=True)
    sim = Simulator(world)
    controller = sim.controller(0)
    lidar = controller.addSensor("lidar", "LaserRangeSensor")
    lidar.setSetting("link", "0")
    lidar.setSetting("Tsensor", "1 0 0 0 -1 0 0 0 -1 1 0 1")     # z down, at (1, 0, 1) m
    lidar.setSetting("measurementCount", "21")
    lidar.setSetting("xSweepMagnitude", "0.6")
    camera = controller.addSensor("cam", "CameraSensor")
    camera.setSetting("link", "0")
    camera.setSetting("xres", "32")
    camera.setSetting("yres", "24")
    camera.setSetting("yfov", "0.8")
    sim.simulate(0.01)
    viewer = Viewer(sim, port=0)
    with viewer:
        viewer.update()
        robot = world.robot(0).getName()
        points = viewer.scene.nodes[f"/world/sensors/{robot}/lidar"].points
        assert points.shape == (21, 3)
        np.testing.assert_allclose(points[:, 2], 0.0, atol=2e-3)      # float16 on the wire
        ranges = lidar.getMeasurements()
        R, p = lidar.getTransformWorld()
        np.testing.assert_allclose(np.linalg.norm(points - p, axis=1), ranges, rtol=2e-3)
        frustum = viewer.scene.nodes[f"/world/sensors/{robot}/cam"]
        R, p = camera.getTransformWorld()
        np.testing.assert_allclose(frustum.position, p, atol=1e-9)
        assert frustum.fov == pytest.approx(0.8) and frustum.aspect == pytest.approx(32 / 24)


def test_world_file_bodies_have_the_cpu_snapshots_colours():
    """The default world's rigid objects and terrains (read from the yaml here, independently
    of the loader) are drawn in the colour the CPU snapshot paints them (one rule,
    sim_node.sim.camera.body_color; the world file gives none): the viser mesh colour is that
    colour, and the snapshot's pixels of each object are that colour times a grey shading."""
    import yaml

    from sim_node.resources import default_world
    from sim_node.sim.camera import PALETTE, TERRAIN_COLOR, Camera
    from sim_node.viewer.snapshot import framing_view

    path = default_world()
    spec = yaml.safe_load(path.read_text())
    world = WorldModel()
    world.readFile(str(path))
    sim = Simulator(world)
    ids = {world.rigidObject(i).getName(): world.rigidObject(i).getID()
           for i in range(world.numRigidObjects())}
    assert set(ids) == {o["name"] for o in spec["rigid_objects"]}
    viewer = Viewer(sim, port=0)
    viewer.show()
    try:
        nodes = viewer.scene.nodes
        colours = {}
        for entry in spec["rigid_objects"]:
            assert "color" not in entry and "color" not in entry["geometry"]
            name = entry["name"]
            expected = PALETTE[ids[name] % len(PALETTE)]
            colours[name] = tuple(nodes[f"/world/{name}/visual/0"].color)
            assert colours[name] == tuple(round(255 * c) for c in expected), name
        assert len(set(colours.values())) == len(colours)       # told apart
        for entry in spec["terrains"]:
            assert tuple(nodes[f"/world/{entry['name']}/visual/0"].color) == tuple(
                round(255 * c) for c in TERRAIN_COLOR)
        # the snapshot's pixels of an object: its colour scaled by the light (one grey factor)
        view = framing_view(sim, 320, 240)
        R, t = view.optical_pose()
        image = Camera(sim, 320, 240, fov_x=view.fov_x, near=view.near,
                       far=view.far).render(R, t, depth=False, segmentation=True)
        seen = 0
        for name, colour in colours.items():
            pixels = image.rgb[image.segmentation == ids[name]].astype(float)
            if len(pixels) < 5:
                continue                  # hidden behind the arm from this view
            seen += 1
            c = np.asarray(colour, dtype=float)
            scale = pixels @ c / (c @ c)
            np.testing.assert_allclose(pixels, scale[:, None] * c, atol=2.0, err_msg=name)
        assert seen >= 2
    finally:
        viewer.close()


def test_the_package_exports_the_viewer_scene_snapshot_and_recorder():
    """The package's names are the modules' (the function `snapshot` shadows the module of
    that name as an attribute of the package: the module is sim_node.viewer.snapshot in
    sys.modules and `from sim_node.viewer.snapshot import ...`)."""
    import importlib

    import sim_node.viewer as package
    from sim_node.viewer import scene, video, viewer

    module = importlib.import_module("sim_node.viewer.snapshot")
    assert (package.Viewer, package.ViewerScene, package.snapshot, package.Recorder) == (
        viewer.Viewer, scene.ViewerScene, module.snapshot, video.Recorder)
    assert package.View is module.View
    assert sorted(package.__all__) == ["Recorder", "View", "Viewer", "ViewerScene", "snapshot"]
