"""diff_drive on the default world's mobile base (its world-file entry, on open ground):
cmd_vel -> wheel velocity targets against v = r (wR + wL) / 2, w = r (wR - wL) / b; driving
straight then turning, odometry against the integral of the commanded twist and the simulated
base pose; odom -> base_link on /tf; the command timeout, non-finite commands, velocity limits,
reset, the odometry rate and config errors."""
from __future__ import annotations

import logging
import math

import numpy as np
import pytest
import yaml
from geometry_msgs.msg import Twist, Vector3
from nav_msgs.msg import Odometry
from plugin_helpers import DIFF_DRIVE_URDF, DT, GROUND, REPO, FakeRos, plugin_named, run, \
    simulator, stamp
from tf2_msgs.msg import TFMessage
from transforms3d.quaternions import quat2mat

from sim_node.plugins.diff_drive import DiffDriveController, DiffDriveOdometry

RADIUS, SEPARATION = 0.08, 0.34          # diff_drive.urdf
WHEEL_LIMIT = 20.0                       # [rad/s] diff_drive.urdf
CMD, ODOM = "mobile_base/cmd_vel", "mobile_base/odom"
WHEELS = slice(7, 9)                     # q: base position (3), quaternion (4), left, right


def _base_entry() -> dict:
    world = yaml.safe_load((REPO / "data" / "worlds" / "default.yaml").read_text())
    [base] = [r for r in world["robots"] if r["name"] == "mobile_base"]
    base["urdf"] = str(DIFF_DRIVE_URDF)
    base["pose"]["position"] = [0.0, 0.0, 0.085]
    return base


def _world(tmp_path, **changes) -> "Path":
    base = _base_entry()
    for index, entry in enumerate(base["plugins"]):
        if entry["name"] == "diff_drive":
            base["plugins"][index]["config"].update(changes)
    path = tmp_path / "base.yaml"
    path.write_text(yaml.safe_dump({"simulation": {"physics_dt": DT}, "robots": [base]})
                    + GROUND)
    return path


@pytest.fixture
def base(tmp_path):
    ros = FakeRos()
    sim = simulator(_world(tmp_path), ros)
    run(sim, 0.3)                                       # settle onto the ground
    return sim, ros


def _twist(v=0.0, w=0.0, **other) -> Twist:
    message = Twist(linear=Vector3(x=float(v)), angular=Vector3(z=float(w)))
    for key, value in other.items():
        part, axis = key.split("_")
        setattr(getattr(message, part), axis, value)
    return message


def _pose(sim) -> np.ndarray:
    """(x, y, yaw) of the simulated base_link."""
    q = sim.getActualConfig(0)
    x, y, z, w = q[3:7]
    return np.array([q[0], q[1], math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))])


def _odom(message) -> np.ndarray:
    p, o = message.pose.pose.position, message.pose.pose.orientation
    return np.array([p.x, p.y, 2 * math.atan2(o.z, o.w)])


def _relative(pose, start) -> np.ndarray:
    """pose in the frame of start (x, y, yaw)."""
    c, s = math.cos(start[2]), math.sin(start[2])
    dx, dy = pose[0] - start[0], pose[1] - start[1]
    return np.array([c * dx + s * dy, -s * dx + c * dy, pose[2] - start[2]])


def _drive(sim, ros, v, w, seconds, every=0.1):
    """Keep commanding (v, w) for `seconds` of sim time (re-sent within the timeout)."""
    for _ in range(int(round(seconds / every))):
        ros.deliver(CMD, _twist(v, w))
        run(sim, every)


def test_the_default_world_gives_the_mobile_base_its_plugins():
    sim = simulator(REPO / "data" / "worlds" / "default.yaml")
    names = {(p.ctx.name, type(p).__name__) for p in sim.getPlugins() if p.ctx.robot == 1}
    assert names == {("joint_state_publisher", "JointStatePublisher"),
                     ("joint_commands", "JointCommands"),
                     ("joint_trajectory", "JointTrajectoryActuator"),
                     ("diff_drive", "DiffDriveController"), ("diff_drive", "DiffDriveOdometry"),
                     ("imu", "ImuSensor"), ("lidar", "LidarSensor")}
    assert all(p.enabled for p in sim.getPlugins())


def test_wheel_radius_and_separation_are_read_from_the_urdf_or_configured(tmp_path):
    # diff_drive.urdf: wheel cylinders of radius 0.08 m, wheel joints at y = +-0.17 m
    for changes, expected in (({}, (RADIUS, SEPARATION)),
                              ({"wheel_radius": 0.1, "wheel_separation": 0.5}, (0.1, 0.5))):
        sim = simulator(_world(tmp_path, **changes))
        for kind in (DiffDriveController, DiffDriveOdometry):
            half = plugin_named(sim, "diff_drive", kind=kind)
            assert (half.radius, half.separation) == pytest.approx(expected, abs=1e-12)


def test_a_wheel_without_a_round_collision_shape_needs_a_configured_radius(tmp_path):
    urdf = tmp_path / "boxy.urdf"
    urdf.write_text(DIFF_DRIVE_URDF.read_text().replace(
        '<cylinder radius="0.08" length="0.03"/></geometry>\n    </collision>',
        '<box size="0.16 0.03 0.16"/></geometry>\n    </collision>'))
    path = _world(tmp_path)
    path.write_text(path.read_text().replace(str(DIFF_DRIVE_URDF), str(urdf)))
    sim = simulator(path)
    for half in [p for p in sim.getPlugins() if p.ctx.name == "diff_drive"]:
        assert not half.enabled
        assert "cannot read wheel_radius from the URDF" in half.error


@pytest.mark.parametrize("v, w", [(0.4, 0.0), (0.0, 1.0), (0.3, -0.8)])
def test_cmd_vel_sets_wheel_velocities_of_that_body_twist(base, v, w):
    sim, ros = base
    ros.deliver(CMD, _twist(v, w))
    sim.simulate(DT)
    left, right = sim.controller(0).getCommandedVelocity()[6:8]
    # the forward kinematics of a differential drive
    assert RADIUS * (right + left) / 2 == pytest.approx(v, abs=1e-12)
    assert RADIUS * (right - left) / SEPARATION == pytest.approx(w, abs=1e-12)
    _drive(sim, ros, v, w, 1.0)
    # the base's mean twist over 0.5 s from its displacement (an arc: chord -> arc length)
    start, wheels = _pose(sim), []
    for _ in range(5):
        ros.deliver(CMD, _twist(v, w))
        for _ in range(100):
            sim.simulate(DT)
            wheels.append(sim.getActualVelocity(0)[6:8])
    moved = _relative(_pose(sim), start)
    half = moved[2] / 2
    arc = np.hypot(*moved[:2]) * (half / math.sin(half) if half else 1.0)
    # rolling contact is not ideal: the wheels roll on their boundary layer (a slightly
    # larger radius) and the caster drags sideways in turns: within 5 %
    assert math.copysign(arc, moved[0]) / 0.5 == pytest.approx(v, rel=0.05, abs=1e-3)
    assert moved[2] / 0.5 == pytest.approx(w, rel=0.05, abs=1e-3)
    np.testing.assert_allclose(np.mean(wheels, axis=0), [left, right], atol=0.05)


def test_driving_straight_then_turning_odometry_follows_the_commanded_twist(base):
    sim, ros = base
    start, t0 = _pose(sim), sim.getTime()
    plan = [(0.4, 0.0, 1.5), (0.0, 0.8, 1.0), (0.3, 0.5, 1.5)]        # v, w, seconds
    for v, w, seconds in plan:
        _drive(sim, ros, v, w, seconds)
    sim.simulate(DT)                                    # publish at the end of the plan
    # the commanded path in closed form: straight, turn in place, circular arc
    x, y, heading = 0.0, 0.0, 0.0
    for v, w, seconds in plan:
        if w == 0.0:
            x, y = x + v * seconds * math.cos(heading), y + v * seconds * math.sin(heading)
        else:
            radius = v / w
            x += radius * (math.sin(heading + w * seconds) - math.sin(heading))
            y -= radius * (math.cos(heading + w * seconds) - math.cos(heading))
            heading += w * seconds
    commanded = np.array([x, y, heading])
    last = [m for m in ros.messages(ODOM) if stamp(m) <= sim.getTime() - DT + 1e-9][-1]
    odometry = _odom(last)
    actual = _relative(_pose(sim), start)
    # the wheels take a few tens of ms to reach each new speed: a few cm, a few degrees
    assert np.all(np.abs(odometry - commanded) <= [0.05, 0.05, 0.06]), (odometry, commanded)
    assert np.all(np.abs(odometry - actual) <= [0.03, 0.03, 0.04]), (odometry, actual)
    assert np.linalg.norm(commanded[:2]) > 0.8 and commanded[2] > 1.5
    assert stamp(last) > t0 + 3.9


def test_odometry_is_published_at_its_rate_with_the_odom_frame_on_tf(tmp_path):
    # /tf carries world -> odom; composed with the node's world -> base_link (the simulated
    # pose at the same stamp), odom -> base_link is the odometry pose (publish_tf: off in the
    # default world, whose /tf tests expect the node's frames only)
    ros = FakeRos()
    sim = simulator(_world(tmp_path, publish_tf=True), ros)
    run(sim, 0.3)
    link = sim.getWorld().robot(0).link("base_link")
    truth = {}
    for _ in range(5):
        ros.deliver(CMD, _twist(0.3, 0.4))
        for _ in range(100):
            truth[round(sim.getTime(), 6)] = sim.body(link).getObjectTransform()
            sim.simulate(DT)
    messages = ros.messages(ODOM)
    assert ros.types[ODOM] is Odometry and ros.types["/tf"] is TFMessage
    # 50 Hz from the reset at 0 (the default)
    np.testing.assert_allclose([stamp(m) for m in messages], np.arange(len(messages)) * 0.02,
                               atol=1e-9)
    transforms = ros.messages("/tf")
    assert len(transforms) == len(messages)
    checked = 0
    for message, tf in zip(messages, transforms):
        if round(stamp(message), 6) not in truth:     # before the recording (settling)
            continue
        checked += 1
        [transform] = tf.transforms
        assert (message.header.frame_id, message.child_frame_id) == ("mobile_base/odom",
                                                                     "mobile_base/base_link")
        assert (transform.header.frame_id, transform.child_frame_id) == ("world",
                                                                         "mobile_base/odom")
        assert stamp(transform) == stamp(message)
        p, r = transform.transform.translation, transform.transform.rotation
        R_wo, p_wo = quat2mat([r.w, r.x, r.y, r.z]), np.array([p.x, p.y, p.z])
        R_wb, p_wb = truth[round(stamp(message), 6)]
        x, y, theta = _odom(message)
        c, s = math.cos(theta), math.sin(theta)
        np.testing.assert_allclose(R_wo.T @ R_wb, [[c, -s, 0], [s, c, 0], [0, 0, 1]],
                                   atol=1e-9)
        np.testing.assert_allclose(R_wo.T @ (p_wb - p_wo), [x, y, 0.0], atol=1e-9)
    assert checked == 25 and np.hypot(*_odom(messages[-1])[:2]) > 0.05
    twist = messages[-1].twist.twist
    assert twist.linear.x == pytest.approx(0.3, abs=0.01)
    assert twist.angular.z == pytest.approx(0.4, abs=0.03)


def test_the_wheels_stop_when_commands_stop_for_the_timeout(base):
    sim, ros = base
    ros.deliver(CMD, _twist(0.4, 0.0))
    run(sim, 0.499)
    assert sim.controller(0).getCommandedVelocity()[6:8] == pytest.approx([5.0, 5.0])
    run(sim, 0.002)                                     # cmd_timeout 0.5 s (the default)
    np.testing.assert_array_equal(sim.controller(0).getCommandedVelocity()[6:8], [0.0, 0.0])
    run(sim, 1.0)
    assert np.abs(sim.getActualVelocity(0)[[0, 5, 6, 7]]).max() < 1e-2


@pytest.mark.parametrize("field", ["linear_x", "angular_z", "linear_y"])
@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_a_non_finite_cmd_vel_is_rejected_with_a_warning(base, caplog, field, value):
    sim, ros = base
    ros.deliver(CMD, _twist(0.2, 0.1))
    run(sim, 0.01)
    before = sim.controller(0).getCommandedVelocity()[6:8].copy()
    with caplog.at_level(logging.WARNING):
        ros.deliver(CMD, _twist(0.2, 0.1, **{field: value}))
    run(sim, 0.01)
    assert len(caplog.records) == 1
    assert caplog.records[0].getMessage().startswith(
        f"{CMD}: command rejected, nothing applied: values must be finite")
    np.testing.assert_array_equal(sim.controller(0).getCommandedVelocity()[6:8], before)
    assert plugin_named(sim, "diff_drive", kind=DiffDriveController).enabled


def test_wheel_speeds_are_scaled_to_their_limit_keeping_the_curvature(base):
    sim, ros = base
    ros.deliver(CMD, _twist(3.0, 4.0))                 # right wheel: (3 + 0.68) / 0.08 rad/s
    sim.simulate(DT)
    left, right = sim.controller(0).getCommandedVelocity()[6:8]
    assert right == pytest.approx(WHEEL_LIMIT)
    v, w = RADIUS * (right + left) / 2, RADIUS * (right - left) / SEPARATION
    assert w / v == pytest.approx(4.0 / 3.0)


def test_reset_restarts_odometry_at_zero_and_drops_the_command(base):
    sim, ros = base
    _drive(sim, ros, 0.4, 0.5, 0.6)
    odometry = plugin_named(sim, "diff_drive", kind=DiffDriveOdometry)
    controller = plugin_named(sim, "diff_drive", kind=DiffDriveController)
    assert np.abs(odometry.pose).max() > 0.1 and controller.get_state()["since"] is not None
    ros.deliver(CMD, _twist(0.4, 0.0))                  # received, not applied yet
    sim.reset()
    np.testing.assert_array_equal(odometry.pose, [0.0, 0.0, 0.0])
    assert controller.get_state() == {"since": None}
    count = len(ros.messages(ODOM))
    run(sim, 0.2)
    np.testing.assert_array_equal(sim.controller(0).getCommandedVelocity()[6:8], [0.0, 0.0])
    after = ros.messages(ODOM)[count:]
    assert stamp(after[0]) == 0.0
    assert np.abs(_odom(after[-1])).max() < 1e-3


@pytest.mark.parametrize("changes, problem", [
    ({"wheel_diameter": 0.16}, "unknown config key(s) wheel_diameter for plugins "
     "DiffDriveOdometry, DiffDriveController; valid keys: base_frame, cmd_timeout, "
     "cmd_vel_topic, left_joint, odom_frame, odom_topic, period, publish_tf, rate, right_joint, "
     "seed, wheel_radius, wheel_separation"),
    ({"wheel_radius": -0.1}, "wheel_radius and wheel_separation must be lengths >= 0 [m] (0: "
     "from the URDF), got -0.1 and 0.0"),
    ({"right_joint": "left_wheel_joint"}, "left_joint and right_joint must differ"),
    ({"cmd_timeout": -1.0}, "cmd_timeout must be a time >= 0 [s]"),
])
def test_bad_config_is_rejected_naming_the_problem(tmp_path, changes, problem):
    with pytest.raises(ValueError) as error:
        simulator(_world(tmp_path, **changes))
    assert problem in str(error.value)


def test_an_unknown_wheel_joint_disables_both_halves_naming_the_joints(tmp_path):
    sim = simulator(_world(tmp_path, left_joint="front_wheel"))
    halves = [p for p in sim.getPlugins() if p.ctx.name == "diff_drive"]
    assert len(halves) == 2
    for half in halves:
        assert not half.enabled
        assert "unknown joint 'front_wheel'; joints: left_wheel_joint, right_wheel_joint" \
            in half.error


def test_a_restored_state_continues_odometry_and_the_command_timeout_identically(base):
    sim, ros = base
    _drive(sim, ros, 0.3, 0.6, 0.4)
    ros.deliver(CMD, _twist(0.3, 0.6))
    run(sim, 0.2)                                       # the command times out 0.3 s on
    saved = sim.getState()

    def continuation():
        count = len(ros.messages(ODOM))
        run(sim, 0.5)
        return ([(stamp(m), *_odom(m)) for m in ros.messages(ODOM)[count:]],
                sim.controller(0).getCommandedVelocity()[6:8].copy())

    first = continuation()
    sim.setState(saved)
    second = continuation()
    assert first[0] == second[0] and len(first[0]) == 25
    np.testing.assert_array_equal(first[1], [0.0, 0.0])
    np.testing.assert_array_equal(second[1], [0.0, 0.0])
