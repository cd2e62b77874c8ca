"""User data against the real PyBullet: random sequences of add / get / remove / lookups on
pybullet_data bodies give the same ids, values and infos in both."""
import pybullet as pb
import pytest
from core_reference import ours, quiet, reference
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_node.pybullet as p

BODIES = ["r2d2.urdf", "cube_small.urdf"]
LINKS = {0: range(-1, 15), 1: range(-1, 0)}          # r2d2 has 15 links, the cube only a base
KEYS = st.sampled_from(["MyKey1", "MyKey2", "", "é ключ"])
VALUES = st.text(max_size=20)

OPERATIONS = st.one_of(
    st.tuples(st.just("add"), st.integers(0, 1), KEYS, VALUES, st.integers(0, 14),
              st.integers(-1, 1)),
    st.tuples(st.just("get"), st.integers(-1, 8)),
    st.tuples(st.just("id"), st.integers(0, 1), KEYS, st.integers(0, 14), st.integers(-1, 1)),
    st.tuples(st.just("num"), st.integers(0, 1)),
    st.tuples(st.just("info"), st.integers(0, 1), st.integers(0, 6)),
    st.tuples(st.just("remove"), st.integers(-1, 8)),
    st.tuples(st.just("save_restore"), KEYS),
)


def _play(api, cid, operations) -> list:
    """What every operation returned (or "error"), with the bodies' user data at the end."""
    uids = [quiet(api.loadURDF, name, physicsClientId=cid) for name in BODIES]
    out = []
    for op, *args in operations:
        try:
            if op == "add":
                b, key, value, link, visual = args
                link = LINKS[b][link % len(LINKS[b])]
                out.append(api.addUserData(uids[b], key, value, linkIndex=link,
                                           visualShapeIndex=visual, physicsClientId=cid))
            elif op == "get":
                out.append(api.getUserData(args[0], physicsClientId=cid))
            elif op == "id":
                b, key, link, visual = args
                link = LINKS[b][link % len(LINKS[b])]
                out.append(api.getUserDataId(uids[b], key, linkIndex=link,
                                             visualShapeIndex=visual, physicsClientId=cid))
            elif op == "num":
                out.append(api.getNumUserData(uids[args[0]], physicsClientId=cid))
            elif op == "info":
                # valid indices only: PyBullet 3.2.7 reads past its table for others (an
                # unrelated entry, or a crash for -1); ours refuse them (test below)
                n = api.getNumUserData(uids[args[0]], physicsClientId=cid)
                out.append(api.getUserDataInfo(uids[args[0]], args[1] % n, physicsClientId=cid)
                           if n else None)
            elif op == "remove":
                out.append(api.removeUserData(args[0], physicsClientId=cid))
            elif op == "save_restore":          # user data is no part of a saved state
                state = api.saveState(physicsClientId=cid)
                api.addUserData(uids[0], args[0], "after the save", physicsClientId=cid)
                api.restoreState(state, physicsClientId=cid)
                out.append(api.getUserData(
                    api.getUserDataId(uids[0], args[0], physicsClientId=cid),
                    physicsClientId=cid))
        except (p.error, pb.error, ValueError):      # PyBullet: ValueError for a NUL
            out.append("error")
    for uid in uids:
        n = api.getNumUserData(uid, physicsClientId=cid)
        out.append([api.getUserDataInfo(uid, k, physicsClientId=cid) for k in range(n)])
    return out


@settings(max_examples=80, deadline=None)
@given(st.lists(OPERATIONS, max_size=25))
def test_user_data_operations_match_pybullet(operations):
    with ours() as a, reference() as b:
        assert _play(p, a, operations) == _play(pb, b, operations)


def test_remove_body_and_reset_simulation_drop_user_data_as_pybullet():
    for api, connection in ((p, ours), (pb, reference)):
        with connection() as cid:
            r2d2 = api.loadURDF("r2d2.urdf", physicsClientId=cid)
            cube = api.loadURDF("cube_small.urdf", physicsClientId=cid)
            kept = api.addUserData(r2d2, "k", "r2d2", physicsClientId=cid)
            dropped = api.addUserData(cube, "k", "cube", linkIndex=-1, visualShapeIndex=0,
                                      physicsClientId=cid)
            api.removeBody(cube, physicsClientId=cid)
            assert api.getUserData(dropped, physicsClientId=cid) is None
            assert api.getUserData(kept, physicsClientId=cid) == b"r2d2"
            api.syncUserData(physicsClientId=cid)
            api.resetSimulation(physicsClientId=cid)
            assert api.getUserData(kept, physicsClientId=cid) is None


@pytest.mark.parametrize("call, message", [
    (lambda uid: p.addUserData(uid, 5, "v"), "key must be a str, got int"),
    (lambda uid: p.addUserData(uid, "k", b"v"), "value must be a str, got bytes"),
    (lambda uid: p.addUserData(uid, "k", "\ud800"), "not encodable as UTF-8"),
    (lambda uid: p.addUserData(uid, "k\0", "v"), "key holds a NUL character at byte 1"),
    (lambda uid: p.addUserData(uid, "k", "v" * (p.userdata.MAX_TEXT_BYTES + 1)),
     "more than the 1048576 bytes"),
    (lambda uid: p.addUserData(uid, "k", "v", linkIndex=15), "linkIndex 15 out of range"),
    (lambda uid: p.addUserData(uid + 7, "k", "v"), "no body with unique id 7"),
    (lambda uid: p.getUserData("0"), "userDataId must be an integer"),
    (lambda uid: p.getUserDataInfo(uid, 0), "userDataIndex 0 out of range"),
    (lambda uid: p.removeUserData(2 ** 70), "no user data with id"),
])
def test_hostile_arguments_are_refused_with_what_and_where(call, message):
    with ours() as cid:
        uid = p.loadURDF("r2d2.urdf", physicsClientId=cid)
        with pytest.raises(p.error, match=message):
            call(uid)
        assert p.getNumUserData(uid, physicsClientId=cid) == 0      # nothing half-applied
