"""The README's main job, `sim_node demo` (./dev run): the node on the default world, commanded
over topics by the demo controller, recorded, summed up. Checked end to end as a user runs it
(a separate process, its own ROS domain), then against its bag read with rosbags: the arm went
where the joint trajectory sent it, the objects rest on the table, the summary's numbers are
the bag's.

The demo runs with --lockstep: the node steps only when the controller has answered the last
state, so what the bag holds does not depend on how fast this machine runs either process (a
free run's command count does): the controller's command for the state stamped t_k is in the
bag at t_{k+1} (the start of the step it acted in), for every step, with the values the
controller computes from that state.
It records with --record-exclude /depth/image_raw$ (the default leaves every image out) so that
the bag holds the rgb frames the camera published, to compare the demo's PNG with."""
import re
import subprocess
import sys

import numpy as np
import pytest
from rosbags.highlevel import AnyReader

from node_harness import REPO, next_domain, ros_env
from sim_node.model.world import WorldModel
from sim_node.resources import default_world
from sim_node.ros.demo import (OFFSET, RECORD_EXCLUDE, TRAJECTORY_TIME, DemoController, parse,
                               robots_of)
from sim_node.ros.recorder import exclusions

pytestmark = [pytest.mark.ros,
              pytest.mark.filterwarnings("ignore:module 'sre_:DeprecationWarning")]
DURATION = 3.0
DT_NS = 1_000_000                   # the default world's physics_dt


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    bag = tmp_path_factory.mktemp("demo") / "bag"
    done = subprocess.run([sys.executable, "-m", "sim_node", "demo", "--duration", str(DURATION),
                           "--real-time-factor", "0", "--lockstep", "--bag", str(bag),
                           "--record-exclude", "/depth/image_raw$"],
                          env=ros_env(next_domain()), cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    return done, bag


def _messages(bag, topic):
    with AnyReader([bag]) as reader:
        connections = [c for c in reader.connections if c.topic == topic]
        return [(t, reader.deserialize(raw, c.msgtype))
                for c, t, raw in reader.messages(connections=connections)]


def test_the_demo_runs_and_prints_its_summary(demo):
    done, bag = demo
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "node exited with code 0" in out
    assert "in lockstep with the controller" in out
    assert "lockstep: no command on" not in out + done.stderr      # it never stepped on alone
    assert re.search(r"real-time factor [0-9.]+ \(last ~/status; target 0\)", out)
    # the bag's table: topic, type, count, rate in sim time: every 1 ms step
    for topic in ("/arm/joint_states", "/clock", "/tf"):
        rate = float(re.search(rf"{topic} +\S+ +\d+ +([0-9.]+)", out).group(1))
        assert rate == pytest.approx(1000.0, rel=1e-3), topic
    contacts = float(re.search(r"/sim/contacts +\S+ +\d+ +([0-9.]+)", out).group(1))
    assert contacts == pytest.approx(50.0, rel=1e-3)      # contacts_rate
    for name in ("red_box", "green_cylinder", "blue_ball", "yellow_capsule"):
        assert re.search(rf"\b({name} - table|table - {name}): \d+", out), out
    assert f"bag {bag}:" in out


def _arm():
    """The demo's view of the arm (joints, limits)."""
    world = WorldModel()
    world.readFile(default_world())
    [arm] = [r for r in robots_of(world) if r.namespace == "arm"]
    return arm


def _state_time(t_ns: int) -> float:
    """A stamp [ns] as the controller reads it (sec + nanosec * 1e-9)."""
    sec, nanosec = divmod(t_ns, 1_000_000_000)
    return sec + nanosec * 1e-9


def test_the_bag_holds_the_run_and_a_command_for_every_step(demo):
    done, bag = demo
    # the recording starts after the node's first step (sim_node/ros/recorder.py)
    [(t0, _)] = _messages(bag, "/sim/recording/initial_state")
    states = _messages(bag, "/arm/joint_states")
    # every step from there (the node runs on for a step after the demo's end)
    assert len(states) >= round(DURATION * 1000)
    stamps = [t for t, _ in states]
    assert stamps == [t0 + k * DT_NS for k in range(len(states))]
    for t, message in states:       # bag time = the message's sim-time stamp
        assert t == message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec
    # the trajectory answers the first state (t = 0): it acts from step 1
    [(t_trajectory, trajectory)] = _messages(bag, "/arm/joint_trajectory")
    assert t_trajectory == DT_NS
    # lockstep: one command per state until the demo ends (the one answering the last state
    # may be cut off by the node stopping), each acting in the next step
    for topic in ("/arm/position_commands", "/mobile_base/cmd_vel"):
        commands = [t for t, _ in _messages(bag, topic)]
        assert commands == [(k + 1) * DT_NS for k in range(len(commands))], topic
        assert round(DURATION * 1000) <= len(commands) <= len(states) + 1, topic
    # the values the controller computes from the state each one answers: the trajectory's
    # goal (overridden while the trajectory runs), then the sinusoids about it
    arm = _arm()
    arm.pose = list(trajectory.points[-1].positions)
    for t, command in _messages(bag, "/arm/position_commands"):
        t_state = _state_time(t - DT_NS)
        expected = arm.pose if t_state < TRAJECTORY_TIME + 0.5 else \
            DemoController._sinusoid(arm, t_state)
        assert list(command.data) == expected, t


def test_the_arm_reached_the_trajectory_goal_then_followed_the_sinusoids(demo):
    done, bag = demo
    arm = _arm()
    states = _messages(bag, "/arm/joint_states")
    # the goal from the start (the first recorded state, one step after the controller's)
    start = dict(zip(states[0][1].name, states[0][1].position))
    start = [start[name] for name in arm.joints]
    goal = [arm.inside(j, q + arm.offset(j, OFFSET * (-1) ** j)) for j, q in enumerate(start)]
    [(_, trajectory)] = _messages(bag, "/arm/joint_trajectory")
    assert np.allclose(trajectory.points[-1].positions, goal, atol=1e-3)
    at_goal = [m for t, m in states if t == round((TRAJECTORY_TIME + 0.4) * 1e9)]
    assert at_goal, "no joint state at the end of the trajectory"
    q = dict(zip(at_goal[0].name, at_goal[0].position))
    error = np.abs(np.array([q[name] for name in arm.joints]) - goal)
    assert error.max() < 0.02, error
    assert np.abs(np.array(goal) - start).max() > 0.1          # it moved there
    # the sinusoid commands that follow: the joints leave the goal
    q_end = dict(zip(states[-1][1].name, states[-1][1].position))
    assert np.abs(np.array([q_end[name] for name in arm.joints]) - goal).max() > 0.02


def test_the_objects_rest_on_the_table(demo):
    done, bag = demo
    last = {}
    for _, message in _messages(bag, "/tf"):
        for transform in message.transforms:
            last[transform.child_frame_id] = transform.transform.translation.z
    table_top = 0.75
    for name, half_height in (("red_box", 0.025), ("green_cylinder", 0.05),
                              ("blue_ball", 0.03), ("yellow_capsule", 0.02)):
        assert abs(last[name] - half_height - table_top) < 0.003, (name, last[name])


def test_the_sensors_rates_are_reported_and_a_camera_frame_saved_as_png(demo):
    # the lidar sweeps on the physics thread: exactly its 10 Hz of sim time; the camera renders
    # on a worker and skips frames due while one renders: at most its 30 Hz, at least one frame
    import imageio.v3 as iio

    done, bag = demo
    out = done.stdout
    section = out[out.index("sensors (publication rate in sim time"):]
    scan = float(re.search(r"/mobile_base/scan +\S+ +\d+ +([0-9.]+) Hz", section).group(1))
    assert scan == pytest.approx(10.0, rel=1e-3)
    camera = re.search(r"/arm/camera/image_raw +\S+ +(\d+) +([0-9.]+|-)", section)
    assert int(camera.group(1)) >= 1
    if camera.group(2) != "-":
        assert float(camera.group(2)) <= 30.0 * 1.001
    # excluded from the bag, received by the demo itself
    depth = re.search(r"/arm/camera/depth/image_raw +\S+ +not recorded; (\d+) frames received",
                      section)
    assert depth and int(depth.group(1)) >= 1, section
    assert "/arm/camera/depth/image_raw" not in _topics(bag)
    # the PNG: the last frame the demo received, one the camera published (the bag's, taken
    # as published) with the stamp printed
    png = bag.parent / f"{bag.name}_arm_camera_image_raw.png"
    saved = re.search(rf"/arm/camera/image_raw: the frame stamped ([0-9.]+) s saved as {png}",
                      section)
    assert saved, section
    pixels = iio.imread(png)
    assert pixels.shape == (480, 640, 3)
    # (bag times are the sim time of publication; the header stamps are the capture steps)
    [frame] = [m for _, m in _messages(bag, "/arm/camera/image_raw")
               if abs(m.header.stamp.sec + m.header.stamp.nanosec * 1e-9
                      - float(saved.group(1))) < 0.6e-3]
    assert frame.encoding == "rgb8"
    np.testing.assert_array_equal(pixels, frame.data.reshape(480, 640, 3))
    assert pixels.std() > 5.0                       # a scene, not a blank frame


def _topics(bag) -> set:
    with AnyReader([bag]) as reader:
        return {c.topic for c in reader.connections}


def test_the_demo_leaves_images_and_point_clouds_out_of_its_bag_by_default():
    assert parse([]).record_exclude == list(RECORD_EXCLUDE)
    patterns = exclusions(RECORD_EXCLUDE)
    for topic in ("/arm/camera/image_raw", "/arm/camera/depth/image_raw",
                  "/arm/camera/segmentation/image_raw", "/arm/camera/points",
                  "/mobile_base/points", "/front/image_raw"):
        assert any(p.search(topic) for p in patterns), topic
    for topic in ("/arm/camera/camera_info", "/mobile_base/scan", "/arm/joint_states", "/tf",
                  "/clock", "/sim/contacts", "/points_of_interest"):
        assert not any(p.search(topic) for p in patterns), topic
    assert parse(["--record-all"]).record_exclude == []
    assert parse(["--record-exclude", "^/tf$", "--record-exclude", "a'b"]).record_exclude == [
        "^/tf$", "a'b"]
    with pytest.raises(SystemExit):
        parse(["--record-exclude", "(["])
    with pytest.raises(SystemExit):
        parse(["--record-all", "--record-exclude", "x"])
