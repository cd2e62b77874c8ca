"""The client interface the other modules of sim_node.pybullet build on (issue14_api.md)."""
import inspect
import math

import numpy as np
import pybullet as pb
import pytest
from core_reference import ours, quiet, reference
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_node.pybullet as p
from sim_node.pybullet.client import get_client


def test_get_client_names_the_missing_id():
    with pytest.raises(p.error, match=r"not connected to a physics server \(physicsClientId=5\)"):
        get_client(5)


def test_client_starts_with_pybullets_defaults():
    with ours() as a:
        client = get_client(a)
        assert client.id == a and client.mode == pb.DIRECT
        assert client.gravity == (0.0, 0.0, 0.0)
        assert client.time_step == 1 / 240
        assert client.bodies == {} and client.viewer is None
        assert np.array_equal(client.sim.getGravity(), [0, 0, 0])


def test_body_maps_pybullet_indices_onto_the_robot():
    with ours() as a, reference() as b:
        uid = quiet(p.loadURDF, "r2d2.urdf", physicsClientId=a)
        ub = quiet(pb.loadURDF, "r2d2.urdf", physicsClientId=b)
        body = get_client(a).body(uid)
        assert body.uid == uid and body.num_joints == 15
        assert body.name == b"physics" and body.base_name == b"base_link"
        assert body.link(-1).getName() == "base_link"
        for j in range(body.num_joints):
            assert body.link(j).getName().encode() == pb.getJointInfo(ub, j, physicsClientId=b)[12]
        # joint coordinates: the floating base's 7 / 6 first, as PyBullet's qIndex / uIndex
        for j in range(body.num_joints):
            qs, vs = body.joint_coords(j)
            info = pb.getJointInfo(ub, j, physicsClientId=b)
            if info[3] < 0:
                assert qs.stop == qs.start and vs.stop == vs.start
            else:
                assert (qs.start, vs.start) == (info[3], info[4])
        with pytest.raises(p.error, match="jointIndex 15 out of range"):
            body.check_joint(15, "f")


def test_locate_inverts_world_id_after_rebuilds():
    with ours() as a:
        client = get_client(a)
        first = quiet(p.loadURDF, "r2d2.urdf", physicsClientId=a)
        second = quiet(p.loadURDF, "kuka_iiwa/model.urdf", physicsClientId=a)
        p.removeBody(first, physicsClientId=a)
        third = quiet(p.loadURDF, "sphere2.urdf", physicsClientId=a)
        for uid in (second, third):
            body = client.body(uid)
            for link in range(-1, body.num_joints):
                assert client.locate(body.world_id(link)) == (uid, link)
        assert client.locate(10 ** 6) == (-1, -1)


def test_hooks_and_rebuild_callbacks_run_in_order():
    with ours() as a:
        client = get_client(a)
        calls = []
        client.pre_step.append(lambda c: calls.append(("pre", c.sim.getTime())))
        client.post_step.append(lambda c: calls.append(("post", c.sim.getTime())))
        client.on_rebuild(lambda c: calls.append(("rebuild", len(c.bodies))))
        quiet(p.loadURDF, "sphere2.urdf", physicsClientId=a)
        p.stepSimulation(physicsClientId=a)
        assert calls == [("rebuild", 1), ("pre", 0.0), ("post", pytest.approx(1 / 240))]


def test_bodies_with_the_same_urdf_name_coexist():
    with ours() as a:
        ids = [quiet(p.loadURDF, "r2d2.urdf", [i, 0, 1], physicsClientId=a) for i in range(3)]
        assert [p.getBodyInfo(u, physicsClientId=a)[1] for u in ids] == [b"physics"] * 3
        names = {get_client(a).body(u).entity.getName() for u in ids}
        assert len(names) == 3


_GARBAGE = [None, "x", b"y", -1, 0, 1, 2, 99, 1e300, math.nan, math.inf, [], [1], [1, 2, 3],
            [math.nan] * 3, [1, 2, 3, 4], {"a": 1}, (0, 0, 0, 0), object(), 2 ** 70, -5.5, True]
_FUNCTIONS = [name for module in ("connection", "loading", "bodies", "control", "state")
              for name in __import__(f"sim_node.pybullet.{module}", fromlist=["x"]).__all__
              if name not in ("connect", "disconnect", "resetSimulation", "saveBullet")]


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(_FUNCTIONS), data=st.data())
def test_garbage_arguments_raise_error_only(name, data):
    # every function of the core, any argument of any type: p.error (or Python's TypeError for
    # a missing argument, as PyBullet's), never another exception
    function = getattr(p, name)
    signature = inspect.signature(function)
    with ours() as a:
        uid = quiet(p.loadURDF, "r2d2.urdf", physicsClientId=a)
        kwargs = {}
        for parameter in signature.parameters.values():
            if parameter.name == "physicsClientId":
                continue
            if parameter.default is inspect.Parameter.empty or data.draw(st.booleans()):
                kwargs[parameter.name] = data.draw(st.sampled_from(_GARBAGE + [uid, 3]))
        try:
            quiet(function, physicsClientId=a, **kwargs)
        except p.error:
            pass


def test_a_failing_step_warns_once_naming_the_time_and_the_deepest_contact():
    """PyBullet has no status: a step the engine cannot take (STATUS_UNSTABLE: the state stays
    at the last good step, time stops) gives a PhysicsWarning, once until the physics advances
    again (kuka_setup.py's scene froze silently). A cube resting on the plane, pushed sideways
    by 1e8 N: no substep down to 1/32 of the step keeps it under 0.5 m."""
    import warnings

    with ours() as a:
        quiet(p.loadURDF, "plane.urdf", physicsClientId=a)
        cube = quiet(p.loadURDF, "cube_small.urdf", [0, 0, 0.025], physicsClientId=a)
        p.setGravity(0, 0, -9.81, physicsClientId=a)
        for _ in range(24):
            p.stepSimulation(physicsClientId=a)
        rest = p.getBasePositionAndOrientation(cube, physicsClientId=a)
        t_good = get_client(a).sim.getTime()

        def push():
            p.applyExternalForce(cube, -1, [1e8, 0, 0], [0, 0, 0], p.WORLD_FRAME,
                                 physicsClientId=a)
            p.stepSimulation(physicsClientId=a)

        with pytest.warns(p.PhysicsWarning) as caught:
            push()
            push()
        assert len(caught) == 1
        message = str(caught[0].message)
        assert f"stepSimulation: the physics failed at t = {t_good:.6f} s" in message
        assert "the deepest contact: body 1 link -1 in body 0 link -1" in message
        assert p.getBasePositionAndOrientation(cube, physicsClientId=a) == rest
        assert get_client(a).sim.getTime() == t_good
        with warnings.catch_warnings():
            warnings.simplefilter("error", p.PhysicsWarning)
            p.stepSimulation(physicsClientId=a)         # no force: it advances, silently
        assert get_client(a).sim.getTime() > t_good
        with pytest.warns(p.PhysicsWarning, match="failed at t = "):
            push()                                      # a new failure warns again
