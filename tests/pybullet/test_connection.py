"""connect / disconnect / settings / stepping of sim_node.pybullet, against the real PyBullet."""
import math
import warnings

import numpy as np
import pybullet as pb
import pytest
from core_reference import ours, quiet, reference
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_node.pybullet as p


def test_client_ids_are_the_smallest_free_ones_as_in_pybullet():
    ids = []
    for module in (p, pb):
        a = quiet(module.connect, pb.DIRECT)
        b = quiet(module.connect, pb.DIRECT)
        module.disconnect(a)
        c = quiet(module.connect, pb.DIRECT)
        ids.append((a, b, c))
        module.disconnect(b)
        module.disconnect(c)
    assert ids[0] == ids[1] == (0, 1, 0)


def test_connection_info_and_is_connected_match_pybullet():
    for module in (p, pb):
        cid = quiet(module.connect, pb.DIRECT)
        assert module.isConnected(cid) == 1
        assert module.getConnectionInfo(cid) == {"isConnected": 1, "connectionMethod": 2}
        module.disconnect(cid)
        assert module.isConnected(cid) == 0
        assert module.getConnectionInfo(cid) == {"isConnected": 0, "connectionMethod": 0}


def test_calls_without_a_connection_raise_error_as_pybullet():
    with pytest.raises(pb.error):
        pb.disconnect(7)
    with pytest.raises(p.error, match="not connected"):
        p.disconnect(7)
    with pytest.raises(p.error, match="physicsClientId=7"):
        p.stepSimulation(physicsClientId=7)


def test_shared_memory_returns_minus_one_as_pybullet_without_a_server():
    assert pb.connect(pb.SHARED_MEMORY) == -1
    assert p.connect(pb.SHARED_MEMORY) == -1


def test_gui_falls_back_to_direct_with_a_warning():
    with pytest.warns(UserWarning, match="DIRECT"):
        cid = p.connect(pb.GUI)
    try:
        assert p.getConnectionInfo(cid)["connectionMethod"] == pb.GUI
        p.stepSimulation(physicsClientId=cid)
    finally:
        p.disconnect(cid)


def test_unknown_mode_is_an_error():
    with pytest.raises(p.error, match="connection mode"):
        p.connect(99)


def test_engine_parameters_start_as_pybullets():
    with ours() as a, reference() as b:
        mine, theirs = p.getPhysicsEngineParameters(physicsClientId=a), \
            pb.getPhysicsEngineParameters(physicsClientId=b)
        assert set(mine) == set(theirs)
        for key in ("fixedTimeStep", "numSubSteps", "useRealTimeSimulation",
                    "gravityAccelerationX", "gravityAccelerationY", "gravityAccelerationZ",
                    "numNonContactInnerIterations"):
            assert mine[key] == theirs[key], key


def test_settings_read_back_as_pybullets():
    with ours() as a, reference() as b:
        for module, cid in ((p, a), (pb, b)):
            module.setGravity(0.5, -1.0, -9.8, physicsClientId=cid)
            module.setTimeStep(0.01, physicsClientId=cid)
            module.setPhysicsEngineParameter(numSubSteps=4, numSolverIterations=20,
                                             physicsClientId=cid)
        mine, theirs = p.getPhysicsEngineParameters(physicsClientId=a), \
            pb.getPhysicsEngineParameters(physicsClientId=b)
        assert mine == theirs


def test_reset_simulation_keeps_the_time_step_and_zeroes_gravity_as_pybullet():
    with ours() as a, reference() as b:
        for module, cid in ((p, a), (pb, b)):
            module.setGravity(0, 0, -10, physicsClientId=cid)
            module.setTimeStep(1 / 120, physicsClientId=cid)
            quiet(module.loadURDF, "r2d2.urdf", physicsClientId=cid)
            module.resetSimulation(physicsClientId=cid)
            assert module.getNumBodies(physicsClientId=cid) == 0
            assert quiet(module.loadURDF, "r2d2.urdf", physicsClientId=cid) == 0
        mine, theirs = p.getPhysicsEngineParameters(physicsClientId=a), \
            pb.getPhysicsEngineParameters(physicsClientId=b)
        # (numSolverIterations: each engine's own default cap)
        del mine["numSolverIterations"], theirs["numSolverIterations"]
        assert mine == theirs


def test_free_fall_follows_semi_implicit_euler_under_set_gravity():
    # a body in free fall, no contact: v_n = -g n dt, z_n = z_0 - g dt^2 n (n + 1) / 2
    with ours() as a:
        p.setGravity(0, 0, -9.81, physicsClientId=a)
        dt = 1 / 240
        uid = quiet(p.loadURDF, "sphere2.urdf", [0, 0, 10], physicsClientId=a)
        # (PyBullet's default link damping off: the closed form is undamped)
        p.changeDynamics(uid, -1, linearDamping=0, angularDamping=0, physicsClientId=a)
        z0 = p.getBasePositionAndOrientation(uid, physicsClientId=a)[0][2]
        for n in range(1, 61):
            p.stepSimulation(physicsClientId=a)
        z = p.getBasePositionAndOrientation(uid, physicsClientId=a)[0][2]
        vz = p.getBaseVelocity(uid, physicsClientId=a)[0][2]
        assert vz == pytest.approx(-9.81 * 60 * dt, abs=1e-9)
        assert z == pytest.approx(z0 - 9.81 * dt * dt * 60 * 61 / 2, abs=1e-9)


def test_step_advances_the_time_step_in_substeps():
    with ours() as a:
        p.setTimeStep(0.01, physicsClientId=a)
        p.setPhysicsEngineParameter(numSubSteps=5, physicsClientId=a)
        from sim_node.pybullet.client import get_client
        client = get_client(a)
        assert client.sim.getSimStep() == pytest.approx(0.002)
        for _ in range(3):
            assert p.stepSimulation(physicsClientId=a) == ()
        assert client.sim.getTime() == pytest.approx(0.03, abs=1e-12)


def test_ignored_engine_parameters_warn_once_and_keep_the_rest():
    with ours() as a:
        with pytest.warns(UserWarning, match="erp"):
            p.setPhysicsEngineParameter(erp=0.3, physicsClientId=a)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            p.setPhysicsEngineParameter(erp=0.2, physicsClientId=a)     # (no second warning)


def test_real_time_simulation_is_reported_but_does_not_step_as_pybullet_in_direct():
    with ours() as a, reference() as b:
        p.setRealTimeSimulation(1, physicsClientId=a)
        pb.setRealTimeSimulation(1, physicsClientId=b)
        assert p.getPhysicsEngineParameters(physicsClientId=a)["useRealTimeSimulation"] == \
            pb.getPhysicsEngineParameters(physicsClientId=b)["useRealTimeSimulation"] == 1
        from sim_node.pybullet.client import get_client
        assert get_client(a).sim.getTime() == 0.0


def test_time_out_and_sync_body_info_are_accepted_and_checked_as_pybullet():
    with ours() as a, reference() as b:
        assert p.setTimeOut(5.0, physicsClientId=a) is pb.setTimeOut(5.0, physicsClientId=b)
        assert p.syncBodyInfo(physicsClientId=a) is pb.syncBodyInfo(physicsClientId=b) is None
        with pytest.raises(TypeError):
            pb.setTimeOut("x", physicsClientId=b)
        with pytest.raises(p.error, match="setTimeOut: timeOutInSeconds"):
            p.setTimeOut("x", physicsClientId=a)
        with pytest.raises(p.error, match="setTimeOut: timeOutInSeconds"):
            p.setTimeOut(float("nan"), physicsClientId=a)
    for api in (p, pb):                                  # no connection: an error in both
        with pytest.raises(api.error):
            api.setTimeOut(1.0, physicsClientId=7)
        with pytest.raises(api.error):
            api.syncBodyInfo(physicsClientId=7)


def test_api_version_is_pybullets():
    with ours() as a:
        assert p.getAPIVersion(physicsClientId=a) == pb.getAPIVersion()


def test_missing_file_says_where_it_looked():
    with ours() as a:
        with pytest.raises(p.error, match="cannot find 'no_such_robot.urdf'.*"
                                          "setAdditionalSearchPath"):
            p.loadURDF("no_such_robot.urdf", physicsClientId=a)


_bad = st.one_of(st.just(math.nan), st.just(math.inf), st.just(-math.inf),
                 st.floats(min_value=1e4, max_value=1e300), st.just("x"), st.none())


@settings(max_examples=40, deadline=None)
@given(g=st.tuples(st.floats(-20, 20), st.floats(-20, 20), _bad), order=st.permutations(range(3)))
def test_hostile_gravity_is_refused_and_nothing_changes(g, order):
    values = [g[i] for i in order]
    with ours() as a:
        p.setGravity(0, 0, -1, physicsClientId=a)
        with pytest.raises(p.error, match="setGravity"):
            p.setGravity(*values, physicsClientId=a)
        params = p.getPhysicsEngineParameters(physicsClientId=a)
        assert (params["gravityAccelerationX"], params["gravityAccelerationY"],
                params["gravityAccelerationZ"]) == (0, 0, -1)


@settings(max_examples=40, deadline=None)
@given(dt=st.one_of(st.floats(max_value=0.0), st.floats(min_value=1.0001), st.just(math.nan),
                    st.just("0.01")),
       substeps=st.one_of(st.none(), st.integers(1, 10)))
def test_hostile_time_steps_are_refused_and_nothing_changes(dt, substeps):
    with ours() as a:
        with pytest.raises(p.error):
            p.setPhysicsEngineParameter(fixedTimeStep=dt, numSubSteps=substeps,
                                        physicsClientId=a)
        params = p.getPhysicsEngineParameters(physicsClientId=a)
        assert params["fixedTimeStep"] == 1 / 240 and params["numSubSteps"] == 0
        with pytest.raises(p.error):
            p.setTimeStep(dt, physicsClientId=a)


def test_several_clients_are_independent():
    with ours() as a, ours() as b:
        p.setGravity(0, 0, -10, physicsClientId=a)
        ua = quiet(p.loadURDF, "sphere2.urdf", [0, 0, 5], physicsClientId=a)
        ub = quiet(p.loadURDF, "sphere2.urdf", [0, 0, 5], physicsClientId=b)
        assert ua == ub == 0
        for _ in range(10):
            p.stepSimulation(physicsClientId=a)
        assert p.getBasePositionAndOrientation(ua, physicsClientId=a)[0][2] < 5
        assert p.getBasePositionAndOrientation(ub, physicsClientId=b)[0][2] == 5
        assert np.array_equal(p.getBaseVelocity(ub, physicsClientId=b), np.zeros((2, 3)))
