"""Klamp't's sensor framework on SimRobotController (sim_node.sim.sensors): names, settings
and layouts as klampt 0.10.1's (subprocess reference), values against the simulator's own
state and closed-form geometry, noise statistics, schedule, state round trips, hostile
settings."""
import functools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from klampt_reference import ARM_URDF, run_klampt

import sim_node
from sim_node.sim import sensors as S

OUR_EXTRAS = {"seed", "dropout"}


def arm_sim(plane=False):
    world = sim_node.WorldModel()
    world.loadRobot(ARM_URDF, fixed_base=True)
    if plane:
        import pybullet_data
        world.loadTerrain(f"{pybullet_data.getDataPath()}/plane.urdf")
    return sim_node.Simulator(world)


def has_rays():
    return hasattr(sim_node.Simulator, "rayCast")


def has_camera():
    try:
        import sim_node.sim.camera  # noqa: F401
    except ImportError:
        return False
    return True


# -- names and settings as Klamp't's ---------------------------------------------------------
TYPES = ["LaserRangeSensor", "CameraSensor", "JointPositionSensor", "JointVelocitySensor",
         "DriverTorqueSensor", "ContactSensor", "ForceTorqueSensor", "Accelerometer",
         "GyroSensor", "IMUSensor"]
CASES = [("LaserRangeSensor", {}), ("LaserRangeSensor", {"measurementCount": "7"}),
         ("CameraSensor", {"xres": "4", "yres": "3"}),
         ("CameraSensor", {"xres": "5", "yres": "2", "rgb": "0"}),
         ("CameraSensor", {"xres": "3", "yres": "2", "depth": "0"}),
         ("Accelerometer", {}), ("GyroSensor", {}), ("IMUSensor", {}), ("ContactSensor", {}),
         ("ForceTorqueSensor", {})]


@pytest.fixture(scope="module")
def klampt_sensors(tmp_path_factory):
    return run_klampt(f"""
        w = WorldModel(); r = w.loadRobot(ARM)
        out = {{"settings": {{}}, "values": {{}}, "names": []}}
        for t in {TYPES!r}:
            s = r.addSensor("s_" + t, t)
            out["settings"][t] = sorted(s.settings())
            out["values"][t] = {{k: s.getSetting(k) for k in s.settings()}}
        for i, (t, kv) in enumerate({CASES!r}):
            s = r.addSensor("c%d" % i, t)
            for k, v in kv.items():
                s.setSetting(k, v)
            out["names"].append(list(s.measurementNames()))
        s = r.addSensor("tf", "LaserRangeSensor")
        s.setSetting("Tsensor", "0 1 0 -1 0 0 0 0 1 0.1 0.2 0.3")
        R, t = s.getTransform()
        out["T"] = [list(R), list(t), s.getSetting("Tsensor")]
        emit(out)
    """, tmp_path_factory.mktemp("klampt"))


@pytest.mark.parametrize("type_", TYPES)
def test_settings_are_klampts(type_, klampt_sensors):
    s = arm_sim().controller(0).addSensor("s", type_)
    ours = set(s.settings())
    assert ours - OUR_EXTRAS == set(klampt_sensors["settings"][type_])
    assert ours & OUR_EXTRAS == ({"seed", "dropout"} if type_ == "LaserRangeSensor"
                                 else {"seed"})


@pytest.mark.parametrize("type_", ["LaserRangeSensor", "CameraSensor"])
def test_default_setting_strings_are_klampts(type_, klampt_sensors):
    # klampt's defaults (its Cpp source's CameraSensor xfov 56 deg, yfov 43 deg)
    s = arm_sim().controller(0).addSensor("s", type_)
    for key, value in klampt_sensors["values"][type_].items():
        assert s.getSetting(key) == value, key


@pytest.mark.parametrize("case", range(len(CASES)))
def test_measurement_names_are_klampts(case, klampt_sensors):
    type_, kv = CASES[case]
    s = arm_sim().controller(0).addSensor("s", type_)
    for k, v in kv.items():
        s.setSetting(k, v)
    assert s.measurementNames() == klampt_sensors["names"][case]


def test_tsensor_string_reads_rows_as_klampt(klampt_sensors):
    s = arm_sim().controller(0).addSensor("s", "LaserRangeSensor")
    s.setSetting("Tsensor", "0 1 0 -1 0 0 0 0 1 0.1 0.2 0.3")
    R, t = s.getTransform()
    R_klampt = np.array(klampt_sensors["T"][0]).reshape(3, 3).T     # so3: column-major
    np.testing.assert_array_equal(R, R_klampt)
    np.testing.assert_allclose(t, klampt_sensors["T"][1])
    assert s.getSetting("Tsensor") == klampt_sensors["T"][2]
    s.setTransform(R_klampt.T.reshape(9), t)    # Klamp't's so3 list
    np.testing.assert_array_equal(s.getTransform()[0], R_klampt)


# -- controller API --------------------------------------------------------------------------
def test_controller_sensor_lookup():
    c = arm_sim().controller(0)
    a = c.addSensor("q", "JointPositionSensor")
    b = c.addSensor("v", "JointVelocitySensor")
    assert c.numSensors() == 2 and c.sensor(0) is a and c.sensor("v") is b
    assert (a.name(), a.type(), b.getName(), b.getType()) == \
        ("q", "JointPositionSensor", "v", "JointVelocitySensor")
    with pytest.raises(ValueError, match="no sensor 'w'.*'q', 'v'"):
        c.sensor("w")
    with pytest.raises(ValueError, match="already has a sensor 'q'"):
        c.addSensor("q", "JointPositionSensor")
    with pytest.raises(ValueError, match="unknown sensor type 'Lidar'.*LaserRangeSensor"):
        c.addSensor("x", "Lidar")


# -- joint sensors against the simulator's state ---------------------------------------------
def test_joint_sensors_read_the_simulated_state():
    sim = arm_sim()
    c = sim.controller(0)
    c.setTorqueCommand([0.5])
    q, dq, tq = (c.addSensor(n, t) for n, t in (("q", "JointPositionSensor"),
                                                 ("dq", "JointVelocitySensor"),
                                                 ("t", "DriverTorqueSensor")))
    assert q.getMeasurements().size == 0          # before the first update
    sim.simulate(0.05)
    np.testing.assert_array_equal(q.getMeasurements(), sim.getActualConfig(0))
    np.testing.assert_array_equal(dq.getMeasurements(), sim.getActualVelocity(0))
    np.testing.assert_array_equal(tq.getMeasurements(), sim.getActualTorque(0))
    assert sim.getActualVelocity(0)[0] > 0.0 and q.measurementNames() == ["q[0]"]


def test_noise_std_matches_the_variance_and_is_seeded():
    def readings(seed):
        sim = arm_sim()
        s = sim.controller(0).addSensor("q", "JointPositionSensor")
        s.setSetting("qvariance", "0.0004")     # std 0.02 rad
        s.setSetting("seed", str(seed))
        out = []
        for _ in range(2000):
            sim.simulate(0.001)
            out.append(s.getMeasurements()[0] - sim.getActualConfig(0)[0])
        return np.array(out)
    a = readings(1)
    assert abs(a.std() - 0.02) < 0.02 * 0.05 and abs(a.mean()) < 3 * 0.02 / math.sqrt(2000)
    np.testing.assert_array_equal(a, readings(1))
    assert not np.array_equal(a, readings(2))


def test_resolution_rounds():
    sim = arm_sim()
    sim.controller(0).setTorqueCommand([0.5])
    s = sim.controller(0).addSensor("q", "JointPositionSensor")
    s.setSetting("qresolution", "0.01")
    sim.simulate(0.3)
    m = s.getMeasurements()[0]
    assert m == pytest.approx(round(sim.getActualConfig(0)[0] / 0.01) * 0.01, abs=1e-15)


# -- schedule --------------------------------------------------------------------------------
def test_rate_updates_at_multiples_of_the_period():
    sim = arm_sim()
    sim.setSimStep(0.001)
    sim.controller(0).setTorqueCommand([0.5])
    s = sim.controller(0).addSensor("q", "JointPositionSensor")
    s.setSetting("rate", "40")
    seen = []
    for _ in range(12):
        sim.simulate(0.01)
        seen.append(s._last_t)
    # at 0, 0.025, 0.05, ... : the first substep boundary at or after each k / 40 s
    assert sorted(set(np.round(seen, 9))) == pytest.approx([0.0, 0.025, 0.05, 0.075, 0.1])
    # and the reading is the state then: replay without the sensor to t = 0.1
    other = arm_sim()
    other.setSimStep(0.001)
    other.controller(0).setTorqueCommand([0.5])
    other.simulate(0.1)
    assert s.getMeasurements()[0] == other.getActualConfig(0)[0]


def test_sensors_do_not_change_the_physics():
    # the substeps split at a 333 Hz sensor's update times give the same run bit for bit
    runs = []
    for with_sensor in (False, True):
        sim = arm_sim()
        sim.controller(0).setTorqueCommand([0.7])
        if with_sensor:
            s = sim.controller(0).addSensor("q", "JointPositionSensor")
            s.setSetting("rate", "333")
        for _ in range(20):
            sim.simulate(0.0137)
        runs.append(np.concatenate([sim.getActualConfig(0), sim.getActualVelocity(0),
                                    [sim.getTime()]]))
    assert runs[0][0] > 0.01 and np.array_equal(runs[0], runs[1])


def test_state_round_trip_continues_noisy_sensors_bit_for_bit():
    sim = arm_sim()
    sim.controller(0).setTorqueCommand([0.3])
    s = sim.controller(0).addSensor("q", "JointPositionSensor")
    s.setSetting("qvariance", "0.01")
    s.setSetting("rate", "50")
    sim.simulate(0.1)
    saved = sim.getState()
    first = []
    for _ in range(5):
        sim.simulate(0.033)
        first.append(s.getMeasurements())
    sim.setState(saved)
    again = []
    for _ in range(5):
        sim.simulate(0.033)
        again.append(s.getMeasurements())
    np.testing.assert_array_equal(first, again)


def test_reset_restarts_sensors():
    sim = arm_sim()
    s = sim.controller(0).addSensor("q", "JointPositionSensor")
    sim.simulate(0.01)
    sim.reset()
    assert s.getMeasurements().size == 0


# -- hostile settings ------------------------------------------------------------------------
@pytest.mark.parametrize("type_,key,value,match", [
    ("LaserRangeSensor", "measurementCount", "-3", "measurementCount.*valid: an integer"),
    ("LaserRangeSensor", "measurementCount", "1e9", "measurementCount"),
    ("LaserRangeSensor", "depthMinimum", "nan", "depthMinimum.*NaN"),
    ("LaserRangeSensor", "depthMaximum", "0.05", "depthMaximum must exceed depthMinimum"),
    ("LaserRangeSensor", "dropout", "1.5", "dropout.*fraction"),
    ("LaserRangeSensor", "Tsensor", "1 2 3", "Tsensor.*12 numbers"),
    ("LaserRangeSensor", "Tsensor", "2 0 0 0 1 0 0 0 1 0 0 0", "not a rotation"),
    ("LaserRangeSensor", "link", "7", "links 0..1"),
    ("LaserRangeSensor", "rate", "inf", "rate"),
    ("CameraSensor", "xres", "65536", "exceed the bound of 16777216 pixels"),
    ("CameraSensor", "xfov", "4", "xfov.*angle in \\(0, pi\\)"),
    ("CameraSensor", "zmin", "9", "0 < zmin < zmax"),
    ("JointPositionSensor", "indices", "0 5", "entries 0..0"),
    ("JointPositionSensor", "qvariance", "-1", "qvariance"),
    ("IMUSensor", "hasAxis", "1 1", "hasAxis.*three flags"),
])
def test_hostile_settings_are_refused(type_, key, value, match):
    s = arm_sim().controller(0).addSensor("s", type_)
    before = s.getSetting(key)
    with pytest.raises(ValueError, match=match):
        s.setSetting(key, value)
    assert s.getSetting(key) == before
    with pytest.raises(ValueError, match="no setting 'bogus'; settings: "):
        s.getSetting("bogus")


@settings(max_examples=200, deadline=None)
@given(key=st.sampled_from(sorted(S.LaserRangeSensor.SETTINGS)),
       value=st.one_of(st.text(max_size=40), st.floats(allow_nan=True).map(repr)))
def test_any_string_is_a_value_or_a_valueerror(key, value):
    s = laser()
    before = s.getSetting(key)
    try:
        s.setSetting(key, value)
    except ValueError as error:
        assert key in str(error) and s.getSetting(key) == before
    else:
        s.setSetting(key, before)


@functools.cache
def laser():
    return arm_sim().controller(0).addSensor("laser", "LaserRangeSensor")


# -- the laser and the camera on a known scene -----------------------------------------------
needs_rays = pytest.mark.skipif(not has_rays(), reason="needs sim.rayCast (branch rays)")
needs_camera = pytest.mark.skipif(not has_camera(), reason="needs sim_node.sim.camera")


@needs_rays
def test_laser_above_a_plane_closed_form():
    sim = arm_sim(plane=True)
    s = sim.controller(0).addSensor("laser", "LaserRangeSensor")
    s.setSetting("measurementCount", "7")
    s.setSetting("Tsensor", "1 0 0 0 -1 0 0 0 -1 0 0 1.5")   # z down, 1.5 m up
    s.setSetting("link", "-1")
    sim.simulate(0.01)
    a = np.linspace(-math.pi / 2, math.pi / 2, 7)
    expected = np.where(np.abs(a) < math.pi / 2 - 1e-9, 1.5 / np.cos(a), math.inf)
    np.testing.assert_allclose(s.getMeasurements(), expected, rtol=0, atol=1e-9)


@needs_rays
def test_laser_equals_klampts(tmp_path):
    ref = run_klampt("""
        w = WorldModel(); r = w.loadRobot(ARM); w.loadTerrain(PLANE)
        s = r.addSensor("las", "LaserRangeSensor")
        for k, v in {"measurementCount": "31", "xSweepMagnitude": "1.2",
                     "Tsensor": "0.6 0 0.8 0 -1 0 0.8 0 -0.6 0.2 0.1 1.3"}.items():
            s.setSetting(k, v)
        s.kinematicSimulate(w, 0.01)
        s.kinematicSimulate(w, 0.01)    # (its first scan wraps the last ray to -magnitude)
        emit(list(s.getMeasurements()))
    """, tmp_path)
    sim = arm_sim(plane=True)
    s = sim.controller(0).addSensor("las", "LaserRangeSensor")
    for k, v in {"measurementCount": "31", "xSweepMagnitude": "1.2", "link": "-1",
                 "Tsensor": "0.6 0 0.8 0 -1 0 0.8 0 -0.6 0.2 0.1 1.3"}.items():
        s.setSetting(k, v)
    sim.simulate(0.01)
    ours = s.getMeasurements()
    assert np.array_equal(np.isinf(ours), np.isinf(ref))
    np.testing.assert_allclose(ours[np.isfinite(ours)], np.array(ref)[np.isfinite(ref)],
                               atol=1e-4)


@needs_rays
def test_laser_dropout_fraction():
    sim = arm_sim(plane=True)
    s = sim.controller(0).addSensor("laser", "LaserRangeSensor")
    s.setSetting("Tsensor", "1 0 0 0 -1 0 0 0 -1 0 0 1.5")
    s.setSetting("xSweepMagnitude", "0.5")
    s.setSetting("measurementCount", "20000")
    s.setSetting("dropout", "0.25")
    sim.simulate(0.01)
    dropped = np.isinf(s.getMeasurements()).mean()
    assert abs(dropped - 0.25) < 4 * math.sqrt(0.25 * 0.75 / 20000)


@needs_rays
@pytest.mark.parametrize("period,kind", [("1", "2"), ("1", "0"), ("0.4", "1"), ("0", "0")])
def test_laser_sweeps_over_time_equal_klampts(tmp_path, period, kind):
    # Klamp't's scan k covers the part of the pattern swept between its updates k-1 and k:
    # kinematicSimulate calls at 0, 0.1, 0.2, 0.3 s; ours at rate 10 Hz
    settings_ = {"measurementCount": "9", "xSweepPeriod": period, "xSweepType": kind,
                 "xSweepMagnitude": "1.0", "xSweepPhase": "0.05",
                 "Tsensor": "0.8 0 0.6 0 -1 0 0.6 0 -0.8 0 0 1.2"}
    ref = run_klampt(f"""
        w = WorldModel(); r = w.loadRobot(ARM); w.loadTerrain(PLANE)
        s = r.addSensor("las", "LaserRangeSensor")
        for k, v in {settings_!r}.items():
            s.setSetting(k, v)
        out = []
        for i in range(4):
            s.kinematicSimulate(w, 0.1)
            out.append([x if x < 1e300 else None for x in s.getMeasurements()])
        emit(out)
    """, tmp_path)
    sim = arm_sim(plane=True)
    s = sim.controller(0).addSensor("las", "LaserRangeSensor")
    for k, v in dict(settings_, link="-1", rate="10").items():
        s.setSetting(k, v)
    for k in range(1, 4):
        sim.simulate(0.1)
        expected = np.array([math.inf if x is None else x for x in ref[k]])
        ours = s.getMeasurements()
        assert np.array_equal(np.isinf(ours), np.isinf(expected)), k
        np.testing.assert_allclose(ours[np.isfinite(ours)], expected[np.isfinite(expected)],
                                   atol=1e-4)


@needs_rays
def test_laser_noise_std_resolution_and_limits():
    sim = arm_sim(plane=True)
    s = sim.controller(0).addSensor("laser", "LaserRangeSensor")
    for k, v in {"Tsensor": "1 0 0 0 -1 0 0 0 -1 0 0 2", "link": "-1",
                 "xSweepMagnitude": "0", "measurementCount": "20000",
                 "depthVarianceConstant": "1e-4", "depthVarianceLinear": "2e-4"}.items():
        s.setSetting(k, v)
    sim.simulate(0.01)
    err = s.getMeasurements() - 2.0
    sigma = math.sqrt(1e-4 + 2e-4 * 2.0)
    assert abs(err.std() - sigma) < 0.03 * sigma and abs(err.mean()) < 4 * sigma / 141
    s.setSetting("depthVarianceConstant", "0")
    s.setSetting("depthVarianceLinear", "0")
    s.setSetting("depthResolution", "0.3")
    sim.simulate(0.01)
    np.testing.assert_allclose(s.getMeasurements(), 2.1, atol=1e-12)
    s.setSetting("depthMaximum", "1.5")            # beyond: depthMaximum, as Klamp't
    sim.simulate(0.01)
    np.testing.assert_array_equal(s.getMeasurements(), 1.5)


@needs_camera
def test_camera_depth_of_a_plane(tmp_path):
    ref = run_klampt("""
        w = WorldModel(); r = w.loadRobot(ARM); w.loadTerrain(PLANE)
        s = r.addSensor("cam", "CameraSensor")
        for k, v in {"xres": "16", "yres": "12", "zmax": "10",
                     "Tsensor": "1 0 0 0 -1 0 0 0 -1 0.3 0.1 2"}.items():
            s.setSetting(k, v)
        s.kinematicSimulate(w, 0.01)
        emit(list(s.getMeasurements()))
    """, tmp_path)
    sim = arm_sim(plane=True)
    s = sim.controller(0).addSensor("cam", "CameraSensor")
    for k, v in {"xres": "16", "yres": "12", "zmax": "10", "link": "-1",
                 "Tsensor": "1 0 0 0 -1 0 0 0 -1 0.3 0.1 2"}.items():
        s.setSetting(k, v)
    sim.simulate(0.01)
    m = s.getMeasurements()
    depth = m[16 * 12:]
    np.testing.assert_allclose(depth, 2.0, atol=1e-6)         # a plane 2 m ahead: z = 2
    np.testing.assert_allclose(depth, np.array(ref)[16 * 12:], atol=1e-3)


TILTED = "1 0 0 0 -0.28 0.96 0 -0.96 -0.28 0 0 2"   # 16 deg below the horizon, 2 m up


def plane_depth_closed_form(s):
    # z-depth of the plane z = 0 at every pixel (Klamp't's pixel rays), zmax where missed
    from sim_node.model.sensing import camera_to_intrinsics
    w, h = int(s.getSetting("xres")), int(s.getSetting("yres"))
    K = camera_to_intrinsics(s)
    R, p = s.getTransformWorld()
    i, j = np.meshgrid(np.arange(w), np.arange(h))
    d = np.stack([(i - K[0, 2]) / K[0, 0], (j - K[1, 2]) / K[1, 1], np.ones_like(i, float)], -1)
    dz = d @ R[2]
    z = np.where(dz < 0, -p[2] / np.where(dz < 0, dz, -1.0), np.inf)
    zmax = float(s.getSetting("zmax"))
    return np.where((z <= zmax) & (z >= float(s.getSetting("zmin"))), z, zmax)


@needs_camera
def test_camera_tilted_plane_closed_form_klampt_and_points(tmp_path):
    settings_ = {"xres": "40", "yres": "30", "zmax": "6", "xfov": "1.3", "Tsensor": TILTED}
    ref = run_klampt(f"""
        w = WorldModel(); r = w.loadRobot(ARM); w.loadTerrain(PLANE)
        s = r.addSensor("cam", "CameraSensor")
        for k, v in {settings_!r}.items():
            s.setSetting(k, v)
        s.kinematicSimulate(w, 0.01)
        emit(list(s.getMeasurements()))
    """, tmp_path)
    sim = arm_sim(plane=True)
    s = sim.controller(0).addSensor("cam", "CameraSensor")
    for k, v in dict(settings_, link="-1").items():
        s.setSetting(k, v)
    sim.simulate(0.01)
    from sim_node.model.sensing import camera_to_images, camera_to_points
    rgb, depth = camera_to_images(s)
    expected = plane_depth_closed_form(s)
    assert (expected < 6).any() and (expected == 6).any()       # the horizon is in view
    seen = np.abs(expected - 6) > 1e-3      # away from the zmax cut (float32 depth there)
    np.testing.assert_allclose(depth[seen], expected[seen], rtol=2e-6, atol=1e-6)
    np.testing.assert_array_equal(depth[~seen & (expected == 6)], 6.0)
    klampt_depth = np.array(ref[40 * 30:]).reshape(30, 40)
    np.testing.assert_allclose(depth[seen], klampt_depth[seen], atol=1e-3)
    # the points lie on the plane in the world
    pts = camera_to_points(s, color_format=None)
    R, p = s.getTransformWorld()
    assert len(pts) == seen.sum()
    np.testing.assert_allclose((pts @ R.T + p)[:, 2], 0.0, atol=1e-5)
    # rgb: the Camera's image packed as Klamp't's
    from sim_node.sim.camera import Camera
    cam = Camera(sim, width=40, height=30, K=s._make_camera().K, near=0.4, far=6.0)
    np.testing.assert_array_equal(rgb, cam.render(R, p, depth=False).rgb)
    assert int(s.getMeasurements()[0]) == (int(rgb[0, 0, 0]) << 16) | (int(rgb[0, 0, 1]) << 8) \
        | int(rgb[0, 0, 2])


@needs_camera
def test_camera_depth_noise_and_resolution():
    sim = arm_sim(plane=True)
    s = sim.controller(0).addSensor("cam", "CameraSensor")
    for k, v in {"xres": "64", "yres": "48", "rgb": "0", "zmax": "10", "link": "-1",
                 "Tsensor": "1 0 0 0 -1 0 0 0 -1 0 0 2", "zvarianceConstant": "1e-4",
                 "zvarianceLinear": "3e-4"}.items():
        s.setSetting(k, v)
    sim.simulate(0.01)
    err = s.getMeasurements() - 2.0
    # variance 1e-4 + 3e-4 * 2 = 7e-4 at z = 2 m
    assert abs(err.std() - math.sqrt(7e-4)) < 0.05 * math.sqrt(7e-4)
    s.setSetting("zvarianceConstant", "0")
    s.setSetting("zvarianceLinear", "0")
    s.setSetting("zresolution", "0.3")
    sim.simulate(0.01)
    np.testing.assert_allclose(s.getMeasurements(), 2.1, atol=1e-12)     # round(2 / 0.3) 0.3


# -- sensors defined in files ----------------------------------------------------------------
URDF_WITH_SENSORS = ARM_URDF.replace("</robot>", """  <klampt>
    <sensors>
      <LaserRangeSensor name="las" link="1" measurementCount="9"
                        Tsensor="1 0 0 0 1 0 0 0 1 0 0 0.1"/>
      <CameraSensor name="cam" link="l1" xres="32" yres="24"/>
    </sensors>
  </klampt>
</robot>""")


def test_urdf_klampt_sensors_as_klampt_reads_them(tmp_path):
    path = tmp_path / "arm_s.urdf"
    path.write_text(URDF_WITH_SENSORS)
    ref = run_klampt(f"""
        w = WorldModel(); r = w.loadRobot({str(path)!r})
        emit([[r.sensor(n).name, r.sensor(n).type,
               r.link(int(r.sensor(n).getSetting("link"))).getName(),
               r.sensor(n).getSetting("xres" if n == "cam" else "measurementCount")]
              for n in ("las", "cam")])
    """, tmp_path)
    world = sim_node.WorldModel()
    world.loadRobot(str(path), fixed_base=True)
    c = sim_node.Simulator(world).controller(0)
    robot = world.robot(0)
    ours = [[c.sensor(n).name(), c.sensor(n).type(),
             robot.link(int(c.sensor(n).getSetting("link"))).getName(),
             c.sensor(n).getSetting("xres" if n == "cam" else "measurementCount")]
            for n in ("las", "cam")]
    # (link "1" of the URDF is l1 here; Klamp't's index 1 is a virtual base link: its
    # floating base adds 6; by name both give l1)
    assert ours[1] == ref[1] and ours[0][0::3] == ref[0][0::3] and c.numSensors() == 2


def test_world_file_sensors(tmp_path):
    (tmp_path / "arm.urdf").write_text(URDF_WITH_SENSORS)
    (tmp_path / "w.yaml").write_text("""
robots:
  - urdf: arm.urdf
    fixed_base: true
    sensors:
      - {name: enc, type: JointPositionSensor, qvariance: 0.0001, rate: 100, seed: 7}
      - {name: imu, type: IMUSensor, link: l1, hasAxis: [1, 1, 1]}
""")
    world = sim_node.WorldModel()
    world.readFile(str(tmp_path / "w.yaml"))
    c = sim_node.Simulator(world).controller(0)
    assert [c.sensor(i).name() for i in range(c.numSensors())] == ["las", "cam", "enc", "imu"]
    assert (c.sensor("enc").getSetting("qvariance"), c.sensor("enc").getSetting("rate"),
            c.sensor("imu").getSetting("link")) == ("0.0001", "100", "1")


@pytest.mark.parametrize("entry,match", [
    ("{name: x, type: Lidar}", "sensor 'x': unknown sensor type 'Lidar'"),
    ("{name: x, type: LaserRangeSensor, measurementCount: -1}",
     "sensor 'x'.*measurementCount"),
    ("{name: las, type: LaserRangeSensor}", "already defined in the URDF"),
    ("{type: LaserRangeSensor}", "missing key 'name'"),
    ("{name: x, type: CameraSensor, xres: {a: 1}}", "sensors\\[0\\].xres"),
])
def test_world_file_sensor_errors(tmp_path, entry, match):
    (tmp_path / "arm.urdf").write_text(URDF_WITH_SENSORS)
    (tmp_path / "w.yaml").write_text(f"""
robots:
  - urdf: arm.urdf
    fixed_base: true
    sensors:
      - {entry}
""")
    with pytest.raises(ValueError, match=match):
        world = sim_node.WorldModel()
        world.readFile(str(tmp_path / "w.yaml"))
        sim_node.Simulator(world)


# -- inertial and contact sensors ------------------------------------------------------------
def test_inertial_sensors_at_rest_and_spinning():
    sim = arm_sim()
    c = sim.controller(0)
    acc = c.addSensor("acc", "Accelerometer")
    gyro = c.addSensor("gyro", "GyroSensor")
    imu = c.addSensor("imu", "IMUSensor")
    for s in (acc, gyro, imu):
        s.setLink("l1")
    acc.setSetting("Tsensor", "0 -1 0 1 0 0 0 0 1 0.5 0 0")   # 90 deg about z, 0.5 m out
    imu.setSetting("Tsensor", "1 0 0 0 1 0 0 0 1 0.5 0 0")
    sim.simulate(0.01)
    sim.simulate(0.01)
    np.testing.assert_allclose(acc.getMeasurements(), [0, 0, 9.81], atol=1e-9)   # at rest
    # spin the joint at 2 rad/s: centripetal acceleration 2^2 * 0.5 towards the axis
    sim.setActualVelocity(0, [2.0])
    c.setTorqueCommand([0.0])
    sim.simulate(0.001)
    sim.simulate(0.001)
    a = imu.getMeasurements()
    q = sim.getActualConfig(0)[0]
    R_WS = np.array([[math.cos(q), -math.sin(q), 0], [math.sin(q), math.cos(q), 0], [0, 0, 1]])
    np.testing.assert_allclose(a[0:3], R_WS.T @ np.array([0, 0, 9.81])
                               + [-2.0 ** 2 * 0.5, 0, 0], atol=0.02)
    np.testing.assert_allclose(a[6:9], [0.5 * math.cos(q), 0.5 * math.sin(q), 1.0], atol=1e-9)
    np.testing.assert_allclose(a[12:15], [0, 0, 2.0], atol=1e-3)          # angular velocity
    np.testing.assert_allclose(a[15:24], R_WS.reshape(9), atol=1e-9)
    g = gyro.getMeasurements()
    np.testing.assert_allclose(g[0:9], R_WS.reshape(9), atol=1e-9)
    np.testing.assert_allclose(g[9:12], [0, 0, 2.0], atol=1e-3)


BOX_URDF = """<robot name="box"><link name="b"><inertial><mass value="2"/><inertia ixx="0.02"
  iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial><collision><geometry>
  <box size="0.2 0.2 0.2"/></geometry></collision></link></robot>"""


def test_contact_and_force_torque_of_a_resting_box():
    import pybullet_data
    world = sim_node.WorldModel()
    robot = world.loadRobot(BOX_URDF, fixed_base=False)
    robot.setConfig([0, 0, 0.1, 0, 0, 0, 1])
    world.loadTerrain(f"{pybullet_data.getDataPath()}/plane.urdf")
    sim = sim_node.Simulator(world)
    c = sim.controller(0)
    contact = c.addSensor("contact", "ContactSensor")
    contact.setSetting("hasForce", "0 0 1")
    ft = c.addSensor("ft", "ForceTorqueSensor")
    air = c.addSensor("air", "ContactSensor")
    assert contact.measurementNames() == ["contact", "force_z"]
    for _ in range(100):
        sim.simulate(0.01)
    m = contact.getMeasurements()
    assert m[0] == 1.0 and m[1] == pytest.approx(2 * 9.81, rel=1e-3)   # the weight, held up
    f = ft.getMeasurements()
    np.testing.assert_allclose(f[:3], [0, 0, 2 * 9.81], atol=2e-2)
    np.testing.assert_allclose(f[3:], 0.0, atol=1e-2)                    # symmetric support
    sim.setActualConfig(0, [0, 0, 1.0, 0, 0, 0, 1])
    sim.simulate(0.01)
    assert air.getMeasurements().tolist() == [0.0]


@needs_rays
@pytest.mark.parametrize("frame", ["world", "link", "sensor"])
def test_laser_to_points_lie_on_the_plane(frame):
    from sim_node.model.sensing import laser_to_points
    sim = arm_sim(plane=True)
    c = sim.controller(0)
    s = c.addSensor("laser", "LaserRangeSensor")
    # on the turning link l1 (1 m up), 0.3 m out, looking down and out; a 3-D sweep
    for k, v in {"link": "l1", "Tsensor": "0.6 0 0.8 0 -1 0 0.8 0 -0.6 0.3 0 0",
                 "measurementCount": "200", "ySweepMagnitude": "0.4", "ySweepType": "0",
                 "ySweepPeriod": "0"}.items():
        s.setSetting(k, v)
    sim.setActualConfig(0, [0.7])
    sim.simulate(0.01)
    pts = laser_to_points(s, frame=frame)
    assert 50 < len(pts) < 200           # some rays see the plane, the rest the sky
    R_WS, p_WS = s.getTransformWorld()
    R_LS, p_LS = s.getTransform()
    world_pts = {"world": pts, "link": (pts - p_LS) @ R_LS @ R_WS.T + p_WS,
                 "sensor": pts @ R_WS.T + p_WS}[frame]
    np.testing.assert_allclose(world_pts[:, 2], 0.0, atol=1e-9)
    assert np.ptp(world_pts[:, 1]) > 0.3     # the y sweep spreads the points


def test_corrupt_sensor_states_are_refused_and_change_nothing():
    import json
    import struct
    sim = arm_sim()
    s = sim.controller(0).addSensor("q", "JointPositionSensor")
    s.setSetting("qvariance", "0.01")
    sim.simulate(0.01)
    good = sim.getState()
    size = struct.unpack_from("<Q", good, 8)[0]
    header = json.loads(good[16:16 + size])
    before = (s.getMeasurements(), s.getSetting("qvariance"))
    for key, value in (("settings", {"qvariance": "nan"}), ("rng", {"state": 1}),
                       ("measurements", "%%%"), ("type", "CameraSensor")):
        bad = json.loads(json.dumps(header))
        bad["controllers"][0]["sensors"][0][key] = value
        text = json.dumps(bad).encode()
        with pytest.raises(ValueError, match="sensor 'q'"):
            sim.setState(good[:8] + struct.pack("<Q", len(text)) + text + good[16 + size:])
        np.testing.assert_array_equal(s.getMeasurements(), before[0])
        assert s.getSetting("qvariance") == before[1]
