"""saveState / restoreState / removeState / saveBullet: bit-exact continuation."""
import numpy as np
import pybullet as pb
import pytest
from core_reference import ours, quiet

import sim_node.pybullet as p


def _scene(cid):
    p.setGravity(0, 0, -9.81, physicsClientId=cid)
    quiet(p.loadURDF, "plane.urdf", physicsClientId=cid)
    kuka = quiet(p.loadURDF, "kuka_iiwa/model.urdf", [0, 0, 0], physicsClientId=cid)
    r2d2 = quiet(p.loadURDF, "r2d2.urdf", [1.5, 0, 0.6], physicsClientId=cid)
    p.setJointMotorControlArray(kuka, list(range(7)), pb.POSITION_CONTROL,
                                targetPositions=[0.5, 0.3, -0.2, -1.0, 0.1, 0.6, 0.0],
                                physicsClientId=cid)
    return kuka, r2d2


def _run(cid, bodies, steps):
    out = []
    for _ in range(steps):
        p.stepSimulation(physicsClientId=cid)
        for uid in bodies:
            n = p.getNumJoints(uid, physicsClientId=cid)
            out.append([s[:2] for s in p.getJointStates(uid, list(range(n)), physicsClientId=cid)])
            out.append(p.getBasePositionAndOrientation(uid, physicsClientId=cid))
    return out


def test_restore_state_continues_bit_for_bit():
    with ours() as a:
        bodies = _scene(a)
        _run(a, bodies, 30)
        sid = p.saveState(physicsClientId=a)
        first = _run(a, bodies, 40)
        # change the motors after saving: the restore brings the saved ones back
        p.setJointMotorControl2(bodies[0], 2, pb.VELOCITY_CONTROL, targetVelocity=3.0,
                                physicsClientId=a)
        p.restoreState(sid, physicsClientId=a)
        again = _run(a, bodies, 40)
        assert again == first


def test_save_bullet_file_restores_bit_for_bit_and_other_files_are_refused(tmp_path):
    path = tmp_path / "state.bullet"
    with ours() as a:
        bodies = _scene(a)
        _run(a, bodies, 10)
        p.saveBullet(str(path), physicsClientId=a)
        first = _run(a, bodies, 20)
        p.restoreState(fileName=str(path), physicsClientId=a)
        assert _run(a, bodies, 20) == first
        other = tmp_path / "other.bullet"
        other.write_bytes(b"BULLETd_432" + bytes(100))
        with pytest.raises(p.error, match="not a state file of sim_node"):
            p.restoreState(fileName=str(other), physicsClientId=a)
        damaged = tmp_path / "damaged.bullet"
        damaged.write_bytes(path.read_bytes()[:60])
        with pytest.raises(p.error, match="damaged"):
            p.restoreState(fileName=str(damaged), physicsClientId=a)
        with pytest.raises(p.error, match="cannot read"):
            p.restoreState(fileName=str(tmp_path / "missing"), physicsClientId=a)


def test_a_state_restores_into_the_bodies_it_was_saved_with_only():
    with ours() as a:
        bodies = _scene(a)
        sid = p.saveState(physicsClientId=a)
        p.removeBody(bodies[1], physicsClientId=a)
        with pytest.raises(p.error, match="saved with bodies"):
            p.restoreState(sid, physicsClientId=a)


def test_remove_state_and_unknown_ids():
    with ours() as a:
        _scene(a)
        s0, s1 = p.saveState(physicsClientId=a), p.saveState(physicsClientId=a)
        assert (s0, s1) == (0, 1)
        p.removeState(s0, physicsClientId=a)
        with pytest.raises(p.error, match="no saved state 0"):
            p.restoreState(s0, physicsClientId=a)
        with pytest.raises(p.error, match="no saved state 0"):
            p.removeState(s0, physicsClientId=a)
        p.restoreState(s1, physicsClientId=a)


def test_reset_simulation_drops_saved_states():
    with ours() as a:
        _scene(a)
        sid = p.saveState(physicsClientId=a)
        p.resetSimulation(physicsClientId=a)
        with pytest.raises(p.error, match="no saved state"):
            p.restoreState(sid, physicsClientId=a)


# -- saveWorld -----------------------------------------------------------------------------------
def _world_state(api, cid) -> list:
    """Every body's base pose and velocity and joint positions and velocities."""
    out = []
    for k in range(api.getNumBodies(physicsClientId=cid)):
        uid = api.getBodyUniqueId(k, physicsClientId=cid)
        pos, orn = api.getBasePositionAndOrientation(uid, physicsClientId=cid)
        joints = [api.getJointState(uid, j, physicsClientId=cid)[:2]
                  for j in range(api.getNumJoints(uid, physicsClientId=cid))]
        out.append((pos, orn, api.getBaseVelocity(uid, physicsClientId=cid), joints))
    return out


def _close(a, b, atol) -> bool:
    return np.allclose(np.concatenate([np.ravel(x) for x in _flat(a)]),
                       np.concatenate([np.ravel(x) for x in _flat(b)]), atol=atol)


def _flat(state):
    for pos, orn, (lin, ang), joints in state:
        orn = np.asarray(orn) * np.sign(orn[3] or 1.0)      # q and -q are one rotation
        yield from (pos, orn, lin, ang, *[np.asarray(j, float) for j in joints])


def test_save_world_writes_a_script_that_rebuilds_the_world_here_and_in_pybullet(tmp_path):
    with ours() as cid:
        p.setGravity(0, 0, -9.81, physicsClientId=cid)
        p.setTimeStep(1 / 500, physicsClientId=cid)
        quiet(p.loadURDF, "plane.urdf", physicsClientId=cid)
        r2d2 = quiet(p.loadURDF, "r2d2.urdf", [0.3, -0.2, 0.6], [0, 0, 0.38268343, 0.92387953],
                     physicsClientId=cid)
        kuka = quiet(p.loadURDF, "kuka_iiwa/model.urdf", [1, 1, 0], useFixedBase=True,
                     physicsClientId=cid)
        for j in range(7):
            p.resetJointState(kuka, j, 0.2 * j - 0.5, 0.1 * j, physicsClientId=cid)
        p.resetBaseVelocity(r2d2, [0.1, 0, 0], [0, 0, 0.3], physicsClientId=cid)
        quiet(p.createMultiBody, 1.0, physicsClientId=cid)       # no file: listed, not rebuilt
        for _ in range(20):
            p.stepSimulation(physicsClientId=cid)
        saved = _world_state(p, cid)[:3]
        path = tmp_path / "world.py"
        p.saveWorld(str(path), physicsClientId=cid)
    script = path.read_text()
    assert "# body 3 (" in script and "not rebuilt" in script

    namespace = {}
    exec(compile(script, str(path), "exec"), namespace)      # on sim_node (GUI: headless here)
    rebuilt = namespace["cin"]
    try:
        assert p.getPhysicsEngineParameters(physicsClientId=rebuilt)["fixedTimeStep"] == 1 / 500
        assert p.getNumBodies(physicsClientId=rebuilt) == 3
        assert _close(_world_state(p, rebuilt), saved, 1e-12)
    finally:
        p.disconnect(rebuilt)

    # the same script on the real PyBullet (DIRECT): the same bodies in the same state
    script = script.replace("import sim_node.pybullet as p", "import pybullet as p")
    script = script.replace("p.connect(p.GUI)", "p.connect(p.DIRECT)")
    namespace = {}
    exec(compile(script, str(path), "exec"), namespace)
    try:
        assert _close(_world_state(pb, namespace["cin"]), saved, 1e-6)
    finally:
        pb.disconnect(namespace["cin"])


def test_save_world_to_an_unwritable_place_is_an_error(tmp_path):
    with ours() as cid:
        with pytest.raises(p.error, match="saveWorld: cannot write"):
            p.saveWorld(str(tmp_path / "missing" / "world.py"), physicsClientId=cid)
        with pytest.raises(p.error, match="saveWorld: cannot write"):
            p.saveWorld(None, physicsClientId=cid)
