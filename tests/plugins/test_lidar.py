"""lidar: LaserScan ranges of a wall against the closed form d / cos(angle), a VLP-16-like cloud
whose points lie on the wall and the ground (and whose count is the closed form's), seeded
noise and dropout statistics, the sim-time rate, frames, and hostile configs (listed, and any
numbers hypothesis draws)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from plugin_helpers import DT, FakeRos, add_plugin, run, simulator, stamp
from sensor_msgs.msg import LaserScan, PointCloud2
from sensor_scene import MAST_HEIGHT, MAST_X, MAST_Y, WALL_X, write_scene

from sim_node.plugins.lidar import LidarSensor

VLP16 = {"horizontal_samples": 1800, "vertical_samples": 16,
         "vertical_min_angle": -math.radians(15), "vertical_max_angle": math.radians(15)}


def _lidar(tmp_path, yaw=0.0, **config):
    ros = FakeRos()
    sim = simulator(write_scene(tmp_path, "", yaw=yaw), ros)
    lidar = add_plugin(sim, LidarSensor, 0, {"link": "sensor", **config}, ros)
    return sim, ros, lidar


def _wall_ranges(yaw, angles, min_range=0.1, max_range=30.0):
    # horizontal rays from (MAST_X, MAST_Y, MAST_HEIGHT) at world angle yaw + angle: the wall
    # x = WALL_X at (WALL_X - MAST_X) / cos(yaw + angle) ahead, else nothing (the ground is
    # never reached by a horizontal ray)
    c = np.cos(yaw + np.asarray(angles))
    with np.errstate(divide="ignore"):
        r = np.where(c > 0.0, (WALL_X - MAST_X) / c, np.inf)
    return np.where((r >= min_range) & (r <= max_range), r, np.inf)


@pytest.mark.parametrize("yaw", [0.0, 0.6])
def test_a_scan_of_a_wall_has_the_closed_form_ranges(tmp_path, yaw):
    sim, ros, lidar = _lidar(tmp_path, yaw=yaw)
    sim.simulate(DT)
    [scan] = ros.messages("mast/scan")
    assert ros.types["mast/scan"] is LaserScan
    assert scan.header.frame_id == "mast/sensor" and stamp(scan) == 0.0
    assert (scan.angle_min, scan.range_min, scan.range_max) == (pytest.approx(-math.pi), 
                                                                pytest.approx(0.1), 30.0)
    assert scan.angle_increment == pytest.approx(2 * math.pi / 359)
    assert scan.angle_max == pytest.approx(math.pi, abs=1e-6)
    assert scan.time_increment == 0.0 and scan.scan_time == pytest.approx(0.1)
    angles = scan.angle_min + scan.angle_increment * np.arange(360)
    expected = _wall_ranges(yaw, angles)
    ranges = np.array(scan.ranges)
    assert len(ranges) == 360
    np.testing.assert_array_equal(np.isinf(ranges), np.isinf(expected))
    hit = np.isfinite(expected)
    assert hit.sum() > 150
    np.testing.assert_allclose(ranges[hit], expected[hit], rtol=1e-6)    # float32
    assert np.all(ranges[~hit] == np.inf)                                 # +inf, REP-117


def test_the_scan_turns_with_the_link(tmp_path):
    # pan the mast by 0.4 rad: the link frame turns, the ranges follow
    sim, ros, lidar = _lidar(tmp_path, horizontal_samples=91, horizontal_min_angle=-0.9,
                             horizontal_max_angle=0.9, rate=0.0)
    sim.setActualConfig(0, [0.4])
    sim.controller(0).setPIDCommand([0.4], [0.0])
    sim.simulate(DT)
    ranges = np.array(ros.messages("mast/scan")[0].ranges)
    np.testing.assert_allclose(ranges, _wall_ranges(0.4, np.linspace(-0.9, 0.9, 91)),
                               rtol=1e-6)


def test_a_vlp16_cloud_lies_on_the_wall_and_the_ground(tmp_path):
    yaw = 0.3
    sim, ros, lidar = _lidar(tmp_path, yaw=yaw, **VLP16)
    sim.simulate(DT)
    [cloud] = ros.messages("mast/points")
    assert ros.types["mast/points"] is PointCloud2 and cloud.header.frame_id == "mast/sensor"
    assert [(f.name, f.offset, f.datatype) for f in cloud.fields] == [
        ("x", 0, 7), ("y", 4, 7), ("z", 8, 7), ("ring", 12, 4)]
    assert cloud.point_step == 14 and cloud.height == 1 and cloud.is_dense
    points = np.frombuffer(bytes(cloud.data), dtype=[("x", "<f4"), ("y", "<f4"), ("z", "<f4"),
                                                     ("ring", "<u2")])
    assert cloud.width == len(points) == cloud.row_step // 14
    # the closed form: each ray's first surface, the wall x = WALL_X or the ground z = 0
    h = np.linspace(-math.pi, math.pi, 1800)
    v = np.linspace(-math.radians(15), math.radians(15), 16)
    d = np.stack(np.broadcast_arrays(np.cos(v)[:, None] * np.cos(yaw + h),
                                     np.cos(v)[:, None] * np.sin(yaw + h),
                                     np.sin(v)[:, None]), axis=-1).reshape(-1, 3)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_wall = np.where(d[:, 0] > 0, (WALL_X - MAST_X) / d[:, 0], np.inf)
        t_ground = np.where(d[:, 2] < 0, -MAST_HEIGHT / d[:, 2], np.inf)
    t = np.minimum(t_wall, t_ground)
    expected_hits = (t >= 0.1) & (t <= 30.0)
    # grazing rays aside (none here: the closest call is far from a tie), counts agree
    assert len(points) == expected_hits.sum() > 10000
    np.testing.assert_array_equal(points["ring"],
                                  np.repeat(np.arange(16), 1800)[expected_hits])
    c, s = math.cos(yaw), math.sin(yaw)
    local = np.stack([points["x"], points["y"], points["z"]], axis=1).astype(float)
    world = local @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]).T + [MAST_X, MAST_Y,
                                                                    MAST_HEIGHT]
    on_wall = np.abs(world[:, 0] - WALL_X) < 1e-5 * np.maximum(1.0, np.abs(world).max(axis=1))
    on_ground = np.abs(world[:, 2]) < 1e-5 * np.maximum(1.0, np.abs(world).max(axis=1))
    assert np.all(on_wall | on_ground)
    np.testing.assert_allclose(np.linalg.norm(local, axis=1), t[expected_hits], rtol=1e-5)


def _scans(ros, topic="mast/scan"):
    return np.array([m.ranges for m in ros.messages(topic)])


NOISE_SCAN = {"horizontal_samples": 201, "horizontal_min_angle": -1.0,
              "horizontal_max_angle": 1.0, "rate": 0.0}


def test_range_noise_has_the_configured_std_and_repeats_with_the_seed(tmp_path):
    sigma, sweeps = 0.02, 60
    sim, ros, _ = _lidar(tmp_path, range_noise=sigma, seed=11, **NOISE_SCAN)
    run(sim, sweeps * DT)
    scans = _scans(ros)
    assert scans.shape == (sweeps, 201)
    error = (scans - _wall_ranges(0.0, np.linspace(-1.0, 1.0, 201))).ravel()
    n = len(error)
    assert abs(error.mean()) < 5 * sigma / math.sqrt(n)
    assert error.std(ddof=1) == pytest.approx(sigma, abs=5 * sigma / math.sqrt(2 * (n - 1)))
    again = _lidar(tmp_path, range_noise=sigma, seed=11, **NOISE_SCAN)
    run(again[0], 5 * DT)
    np.testing.assert_array_equal(_scans(again[1]), scans[:5])
    other = _lidar(tmp_path, range_noise=sigma, seed=12, **NOISE_SCAN)
    run(other[0], 5 * DT)
    assert not np.allclose(_scans(other[1]), scans[:5])


def test_dropout_loses_that_fraction_of_the_returns(tmp_path):
    p, sweeps = 0.3, 50
    sim, ros, _ = _lidar(tmp_path, dropout=p, seed=3, **NOISE_SCAN)
    run(sim, sweeps * DT)
    scans = _scans(ros)
    expected = np.broadcast_to(_wall_ranges(0.0, np.linspace(-1.0, 1.0, 201)), scans.shape)
    assert np.all(np.isfinite(expected))
    lost = np.isinf(scans)
    n = lost.size
    assert lost.mean() == pytest.approx(p, abs=5 * math.sqrt(p * (1 - p) / n))
    np.testing.assert_allclose(scans[~lost], expected[~lost], rtol=1e-6)   # the rest exact


def test_it_publishes_on_its_sim_time_grid_and_min_range_hides_what_is_nearer(tmp_path):
    # 25 Hz over 0.2 s of 1 ms steps: stamps 0, 0.04, ..., 0.16; min_range beyond the wall
    sim, ros, _ = _lidar(tmp_path, rate=25.0, min_range=2.6, max_range=4.0,
                         topic="laser/front")
    run(sim, 0.2)
    scans = ros.messages("mast/laser/front")
    np.testing.assert_allclose([stamp(m) for m in scans], np.arange(5) * 0.04, atol=1e-9)
    ranges = np.array(scans[0].ranges)
    expected = _wall_ranges(0.0, scans[0].angle_min + scans[0].angle_increment
                            * np.arange(360), 2.6, 4.0)
    np.testing.assert_allclose(ranges, expected, rtol=1e-6)
    assert np.isfinite(ranges).sum() > 20 and np.all(ranges[np.isfinite(ranges)] >= 2.6)


def test_frame_id_and_a_single_sample(tmp_path):
    sim, ros, lidar = _lidar(tmp_path, frame_id="laser", horizontal_samples=1,
                             horizontal_min_angle=0.0, horizontal_max_angle=0.0)
    sim.simulate(DT)
    [scan] = ros.messages("mast/scan")
    assert scan.header.frame_id == "laser" and scan.angle_increment == 0.0
    assert list(scan.ranges) == [pytest.approx(WALL_X - MAST_X)]


@pytest.mark.parametrize("config, problem", [
    ("{}", "needs config key 'link'"),
    ("{link: sensor, min_range: .nan}", "config key 'min_range' of plugin LidarSensor must "
     "be float"),
    ("{link: sensor, min_range: 2.0, max_range: 1.0}", "0 <= min_range < max_range"),
    ("{link: sensor, max_range: 200000.0}", "max_range <= 100000 [m]"),
    ("{link: sensor, horizontal_samples: 0}", "horizontal_samples must be >= 1"),
    ("{link: sensor, vertical_samples: 100000, horizontal_samples: 100000}",
     "horizontal_samples x vertical_samples must be at most"),
    ("{link: sensor, horizontal_min_angle: 1.0, horizontal_max_angle: -1.0}",
     "horizontal_min_angle and horizontal_max_angle must satisfy"),
    ("{link: sensor, vertical_max_angle: 2.0}", "vertical_min_angle and vertical_max_angle"),
    ("{link: sensor, dropout: 1.5}", "dropout must be a probability in [0, 1]"),
    ("{link: sensor, range_noise: -0.1}", "range_noise must be a standard deviation >= 0"),
    ("{link: sensor, rate: -1.0}", "rate must be a frequency >= 0"),
    ("{link: sensor, horizontal_samples: 1.5}", "config key 'horizontal_samples' of plugin "
     "LidarSensor must be int"),
])
def test_bad_config_is_rejected_naming_the_key(tmp_path, config, problem):
    path = write_scene(tmp_path, f"      - {{name: lidar, config: {config}}}\n")
    with pytest.raises(ValueError) as error:
        simulator(path)
    assert problem in str(error.value)


def test_an_unknown_link_disables_the_sensor_naming_the_links(tmp_path):
    sim = simulator(write_scene(tmp_path, "      - {name: lidar, config: {link: nope}}\n"))
    [lidar] = sim.getPlugins()
    assert not lidar.enabled and "nope" in lidar.error and "sensor" in lidar.error
    run(sim, 0.01)
    assert sim.getTime() == pytest.approx(0.01)


NUMBERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                    st.floats(-10.0, 40.0), st.integers(-5, 50))


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.fixed_dictionaries({}, optional={
    "rate": NUMBERS, "min_range": NUMBERS, "max_range": NUMBERS, "horizontal_samples": NUMBERS,
    "horizontal_min_angle": NUMBERS, "horizontal_max_angle": NUMBERS,
    "vertical_samples": st.integers(-2, 4), "vertical_min_angle": NUMBERS,
    "vertical_max_angle": NUMBERS, "range_noise": NUMBERS, "dropout": NUMBERS}))
@example(values={"max_range": 9.0e5})   # once found: ray ends beyond the casts' 1e6 m bound
@example(values={"rate": 1e-300})       # once found: a period beyond LaserScan's float32
def test_any_config_is_refused_naming_a_key_or_gives_ranges_within_its_bounds(tmp_path, values):
    # hostile numbers: a ValueError that names one of the keys given, or a working sensor
    # whose every reading is +inf or within [min_range, max_range]
    try:
        sim, ros, lidar = _lidar(tmp_path, **values)
    except ValueError as error:
        assert any(key in str(error) for key in values), str(error)
        return
    sim.simulate(DT)
    config = lidar.config
    [message] = ros.messages(lidar.topic)
    if lidar.scan:
        ranges = np.array(message.ranges)
        assert len(ranges) == config.horizontal_samples
    else:               # the cloud's points: their distances from the sensor
        points = np.frombuffer(bytes(message.data), dtype=[("x", "<f4"), ("y", "<f4"),
                                                           ("z", "<f4"), ("ring", "<u2")])
        ranges = np.sqrt(points["x"].astype(float) ** 2 + points["y"].astype(float) ** 2
                         + points["z"].astype(float) ** 2)
        assert np.all(points["ring"] < config.vertical_samples)
    finite = ranges[np.isfinite(ranges)]
    assert np.all(ranges[~np.isfinite(ranges)] == np.inf)
    assert np.all((finite >= config.min_range * (1 - 1e-5))
                  & (finite <= config.max_range * (1 + 1e-5)))
