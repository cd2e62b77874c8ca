"""`sim_node view` on a bag played by `sim_node replay --states`, end to end: three processes
(the node recording, then the replay and the viewer) on their own ROS domain and a real
headless chromium reading the page back.

A node on the pendulum world records ~1 s of a swing (a position command of 0.8 rad). Then
`sim_node view --port 0` and `sim_node replay --states BAG --rate 0.25` run on one domain,
and the page (the browser's own three.js scene, not the server's handles) is checked against
the bag read with rosbags:
  - the robot's links are listed (from the replayed, transient-local robot_description);
  - every sim time shown while the bag plays is one of the bag's /clock stamps (to the 1 ms the
    page shows), and the times shown never go back;
  - every pose of the link the page shows while it plays is the bag's /tf at one of its stamps
    (composed with /tf_static, with scipy), within 1e-6 m / 1e-6 of the rotation matrix, and the
    stamps found never go back: no interpolation, no pose mixed from two messages;
  - after the last message: the page shows the last /clock stamp and the link exactly where the
    last /tf put it (1e-6).
Every process is stopped by PID (its process group) whatever the outcome.
"""
from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from rosbags.highlevel import AnyReader
from scipy.spatial.transform import Rotation

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "viewer"))

from headless_browser import browser_session, scene_node_names, wait_until  # noqa: E402
from node_harness import DEEP, REPO, Client, next_domain, ns, ros_env, start_node  # noqa: E402

pytestmark = pytest.mark.ros

PENDULUM_WORLD = REPO / "data" / "worlds" / "pendulum.yaml"
LINK_FRAME = "pendulum/link1"               # TF frame of the swinging link
LINK_NODE = "/world/pendulum/link1"         # its scene node in the page
URL_LINE = re.compile(r"^sim_node viewer: (http://localhost:\d+)$", re.M)
PAGE_TIMEOUT = 90.0         # [s] of wall time for the page to show something (a loaded machine)
RATE = 0.25                 # playback speed x sim time: ~5 s of wall time for the bag


@pytest.fixture
def browser():
    yield from browser_session()


@pytest.fixture(scope="module")
def bag(tmp_path_factory):
    """A bag of the pendulum swinging toward 0.8 rad for ~1 s of sim time: its path."""
    from rosgraph_msgs.msg import Clock
    from std_msgs.msg import Float64MultiArray

    path = tmp_path_factory.mktemp("view_replay") / "bag"
    node, client = start_node(tmp_path_factory, "view_replay_node",
                              {"world": str(PENDULUM_WORLD), "real_time_factor": 1.0,
                               "record": str(path)})
    try:
        client.subscribe(Clock, "/clock", DEEP, keep=10)
        client.wait_for("/clock", timeout=60)
        command = client.publisher(Float64MultiArray, "/pendulum/position_commands")
        deadline = time.monotonic() + 30
        while command.get_subscription_count() == 0:
            assert time.monotonic() < deadline, "no subscriber on position_commands"
            time.sleep(0.01)
        command.publish(Float64MultiArray(data=[0.8]))
        start = ns(client.messages("/clock")[-1].clock)
        client.wait_for("/clock", timeout=60,
                        predicate=lambda m: ns(m.clock) > start + 1_000_000_000)
    finally:
        client.close()
        code = node.stop(timeout=30.0)
    assert code == 0, node.log()
    return path


def _read(bag, topic: str) -> list:
    """(stamp [ns], message) of `topic`, read with rosbags."""
    with AnyReader([bag]) as reader:
        connections = [c for c in reader.connections if c.topic == topic]
        return [(stamp, reader.deserialize(raw, c.msgtype))
                for c, stamp, raw in reader.messages(connections)]


def _transforms(message) -> dict:
    """{child: (parent, Rotation, translation (3,))} of a TFMessage read by rosbags."""
    out = {}
    for t in message.transforms:
        r, p = t.transform.rotation, t.transform.translation
        out[t.child_frame_id.lstrip("/")] = (t.header.frame_id.lstrip("/"),
                                             Rotation.from_quat([r.x, r.y, r.z, r.w]),
                                             np.array([p.x, p.y, p.z]))
    return out


def _world_pose(frames: dict, frame: str) -> tuple:
    """(R (3, 3), p (3,)) of `frame` in 'world' through the parents in `frames`."""
    rotation, translation = Rotation.identity(), np.zeros(3)
    while frame != "world":
        parent, R, p = frames[frame]
        rotation, translation = R * rotation, R.apply(translation) + p
        frame = parent
    return rotation.as_matrix(), translation


def _expected_link_poses(bag) -> list:
    """[(stamp [ns], R, p)] of the link at every /tf of the bag."""
    static = {}
    for _, message in _read(bag, "/tf_static"):
        static.update(_transforms(message))
    poses, moving = [], {}
    for _, message in _read(bag, "/tf"):
        moving.update(_transforms(message))
        stamp = ns(message.transforms[0].header.stamp)
        poses.append((stamp, *_world_pose({**static, **moving}, LINK_FRAME)))
    return poses


def _shown(browser) -> tuple:
    """(sim time shown [s] or None, the link's pose (R, p) in the page's /world or None), read
    in one script: three.js's own objects."""
    text, chain = browser.execute_script("""
        const mutable = window.__viserMutable.current || window.__viserMutable;
        // viser's page renders on demand and drains its message queue in the render loop; a
        // loaded machine's headless chromium may deliver no frame for seconds (README
        // "Replayed bags"): a frame is asked for here, harmless when frames flow
        mutable.requestRender();
        const nodes = mutable.nodeRefFromName;
        const body = document.body.innerText;
        // the local poses from the link up to the scene's /world node
        const chain = [];
        let name = arguments[0];
        while (name !== '/world') {
            const node = nodes[name];
            if (!node) return [body, null];
            chain.push([node.position.toArray(), node.quaternion.toArray()]);
            name = name.slice(0, name.lastIndexOf('/'));
        }
        return [body, chain];
        """, LINK_NODE)
    match = re.search(r"sim time\s+([\d.]+)\s*s", text)
    shown = float(match.group(1)) if match else None
    if chain is None:
        return shown, None
    rotation, translation = Rotation.identity(), np.zeros(3)
    for position, xyzw in chain:            # link first: parent * child
        R = Rotation.from_quat(xyzw)
        rotation, translation = R * rotation, R.apply(translation) + np.array(position)
    return shown, (rotation.as_matrix(), translation)


def _matching_stamp(expected: list, pose, tolerance: float = 1e-6):
    """The first stamp whose pose equals `pose` within `tolerance`, or None."""
    R, p = pose
    for stamp, R_e, p_e in expected:
        if np.abs(p - p_e).max() <= tolerance and np.abs(R - R_e).max() <= tolerance:
            return stamp
    return None


def _start(command: list, domain: int, log: Path) -> subprocess.Popen:
    with open(log, "w") as out:
        return subprocess.Popen(command, env=ros_env(domain), stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True, cwd=REPO)


def _stop(process: subprocess.Popen | None) -> None:
    if process is None or process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGINT)
        process.wait(15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    except ProcessLookupError:
        pass


def test_the_viewer_shows_a_replayed_bag_as_recorded(bag, tmp_path, browser):
    import sim_node

    clocks = [ns(m.clock) for _, m in _read(bag, "/clock")]
    expected = _expected_link_poses(bag)
    # the link turns about the pivot (its origin): its rotation changes, not its position
    swing = max(np.abs(R - expected[0][1]).max() for _, R, _ in expected)
    assert len(expected) > 500 and swing > 0.3, "the recorded pendulum did not swing"
    links = [link.getName() for link in sim_node.WorldModel().loadRobot(
        str(REPO / "data" / "robots" / "pendulum" / "pendulum.urdf")).links()]

    domain = next_domain()
    view = replay = None
    try:
        view = _start([sys.executable, "-m", "sim_node", "view", "--port", "0"], domain,
                      tmp_path / "view.log")

        def url():
            if view.poll() is not None:
                raise AssertionError(f"sim_node view exited with code {view.returncode}:\n"
                                     + (tmp_path / "view.log").read_text())
            return URL_LINE.search((tmp_path / "view.log").read_text())

        browser.get(wait_until(url, 120, what="the viewer's URL line").group(1))
        # the bag starts once the viewer listens to /tf and to the replayed description
        replay = _start([sys.executable, "-m", "sim_node", "replay", str(bag), "--states",
                         "--rate", str(RATE), "--wait-for", "/tf",
                         "--wait-for", "/pendulum/robot_description"], domain,
                        tmp_path / "replay.log")
        wait_until(lambda: all(f"/world/pendulum/{link}" in scene_node_names(browser)
                               for link in links), PAGE_TIMEOUT,
                   what="the pendulum's links in the page's scene tree")
        times, stamps = [], []
        while replay.poll() is None:
            shown, pose = _shown(browser)
            if shown is not None and shown > 0:
                times.append(shown)
            if pose is not None and times and not (
                    not stamps and np.allclose(pose[0], np.eye(3)) and not pose[1].any()):
                # (until the first /tf is drawn, the link is at the origin)
                stamp = _matching_stamp(expected, pose)
                assert stamp is not None, \
                    f"the page shows the link at {pose[1]}, at no /tf of the bag"
                stamps.append(stamp)
            time.sleep(0.25)
        assert replay.returncode == 0, (tmp_path / "replay.log").read_text()
        assert "played" in (tmp_path / "replay.log").read_text()
        # shown times: bag stamps to the page's 1 ms, advancing
        for shown in times:
            assert min(abs(shown - c * 1e-9) for c in clocks) <= 0.0005 + 1e-9, shown
        # (how many different ones the page shows depends on its render loop: see _shown)
        assert times and times == sorted(times), times
        assert stamps and stamps == sorted(stamps), stamps
        # at rest: the last stamp and the last pose, exactly
        last_time = round(clocks[-1] * 1e-9, 3)
        wait_until(lambda: _shown(browser)[0] == last_time, PAGE_TIMEOUT,
                   what=f"the last /clock stamp {last_time} s shown")
        _, R_last, p_last = expected[-1]

        def at_last_pose():
            pose = _shown(browser)[1]
            return pose is not None and np.abs(pose[1] - p_last).max() <= 1e-6 \
                and np.abs(pose[0] - R_last).max() <= 1e-6
        wait_until(at_last_pose, 30, what=f"the link at the bag's last /tf ({p_last})")
        assert math.isclose(_shown(browser)[0], last_time)
    finally:
        _stop(replay)
        _stop(view)
    assert view.returncode == 0, (tmp_path / "view.log").read_text()
