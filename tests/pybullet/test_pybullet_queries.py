"""sim_node.pybullet's collision queries against the real PyBullet 3.2.7 on the same scenes
(pybullet_data's plane, sphere2, cube_small and kuka_iiwa): contact points after steps,
closest points, rays, boxes, overlap, filters (PyBullet's documented AND rule, not its OR
default) and hostile input."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sim_node.pybullet as p

pb = pytest.importorskip("pybullet")
pybullet_data = pytest.importorskip("pybullet_data")

KUKA_Q = [0.4, 0.7, -0.3, -1.2, 0.5, 0.9, 0.0]


def _scene(module, client, kuka=False):
    """plane at z = 0, sphere2 (r 0.5) at (1, 0, 2), a kuka at (-1, 0, 0) in KUKA_Q."""
    module.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
    plane = module.loadURDF("plane.urdf", physicsClientId=client)
    sphere = module.loadURDF("sphere2.urdf", [1.0, 0.0, 2.0], physicsClientId=client)
    ids = {"plane": plane, "sphere": sphere}
    if kuka:
        ids["kuka"] = k = module.loadURDF("kuka_iiwa/model.urdf", [-1.0, 0.0, 0.0],
                                          useFixedBase=True, physicsClientId=client)
        for j, q in enumerate(KUKA_Q):
            module.resetJointState(k, j, q, physicsClientId=client)
    return ids


@pytest.fixture
def clients():
    ours = p.connect(pb.DIRECT)
    ref = pb.connect(pb.DIRECT)
    yield ours, ref
    p.disconnect(physicsClientId=ours)
    pb.disconnect(physicsClientId=ref)


def _check_row(row):
    assert isinstance(row, tuple) and len(row) == 14
    flag, ua, ub, la, lb, pa, pb_, n, d, fn, f1, d1, f2, d2 = row
    assert all(isinstance(x, int) for x in (flag, ua, ub, la, lb))
    assert all(isinstance(x, float) for x in (d, fn, f1, f2))
    for v in (pa, pb_, n, d1, d2):
        assert isinstance(v, tuple) and len(v) == 3 and all(isinstance(x, float) for x in v)
    # PyBullet's relation: positionOnA - positionOnB = contactDistance * contactNormalOnB
    np.testing.assert_allclose(np.subtract(pa, pb_), d * np.array(n), atol=1e-9)
    assert abs(np.linalg.norm(n) - 1.0) < 1e-9


def test_contact_points_of_a_resting_cube_carry_its_weight_as_pybullets(clients):
    ours, ref = clients
    found = {}
    for module, client in ((p, ours), (pb, ref)):
        module.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
        module.setGravity(0.0, 0.0, -10.0, physicsClientId=client)
        plane = module.loadURDF("plane.urdf", physicsClientId=client)
        cube = module.loadURDF("cube_small.urdf", [0.0, 0.0, 0.03], physicsClientId=client)
        for _ in range(240):
            module.stepSimulation(physicsClientId=client)
        mass = module.getDynamicsInfo(cube, -1, physicsClientId=client)[0]
        rows = module.getContactPoints(cube, physicsClientId=client)
        found[module] = (plane, cube, mass, rows,
                         module.getContactPoints(physicsClientId=client),
                         module.getContactPoints(plane, cube, physicsClientId=client))
    for module in (p, pb):
        plane, cube, mass, rows, every, pair = found[module]
        assert rows and isinstance(rows, tuple)
        for row in rows:
            if module is p:
                _check_row(row)
            # seen from the cube: A is the cube, the normal from the plane (B) up into it
            assert row[1:5] == (cube, plane, -1, -1)
            np.testing.assert_allclose(row[7], (0.0, 0.0, 1.0), atol=1e-6)
            assert -2e-3 < row[8] < 1e-3                   # resting: touching
        assert sum(r[9] for r in rows) == pytest.approx(10.0 * mass, rel=0.02)
        assert len(every) == len(rows)
        for row in pair:                                    # A = the plane: normal down
            assert row[1:3] == (plane, cube) and row[7][2] < -0.999
    assert found[p][2] == found[pb][2]


def test_closest_points_of_sphere_and_plane_are_pybullets(clients):
    ours, ref = clients
    a, b = _scene(p, ours), _scene(pb, ref)
    for args in ((a["sphere"], a["plane"], 2.0), (a["plane"], a["sphere"], 2.0)):
        rows = p.getClosestPoints(*args, physicsClientId=ours)
        rows_ref = pb.getClosestPoints(*args, physicsClientId=ref)
        assert len(rows) == 1 and len(rows_ref) >= 1
        _check_row(rows[0])
        assert rows[0][1:5] == rows_ref[0][1:5]
        np.testing.assert_allclose(rows[0][7], rows_ref[0][7], atol=1e-6)      # normal
        assert rows[0][8] == pytest.approx(1.5, abs=1e-9)
        assert rows_ref[0][8] == pytest.approx(1.5, abs=1e-6)
        # the sphere's point is under its centre, the plane's below it (any x, y for
        # PyBullet's plane: compare z only there)
        s = 0 if args[0] == a["sphere"] else 1
        np.testing.assert_allclose(rows[0][5 + s], (1.0, 0.0, 1.5), atol=1e-9)
        assert rows[0][6 - s][2] == pytest.approx(0.0, abs=1e-9)
        assert rows[0][9:] == (0.0, 0.0, rows[0][11], 0.0, rows[0][13])
    assert p.getClosestPoints(a["sphere"], a["plane"], 1.4, physicsClientId=ours) == ()
    assert pb.getClosestPoints(b["sphere"], b["plane"], 1.4, physicsClientId=ref) == ()


def test_closest_points_per_kuka_link_are_pybullets_with_its_margin(clients):
    """sim_node's getClosestPoints grows the hulls by PyBullet's 1 mm collision margin, as
    PyBullet does for URDF meshes: equal to 5e-5 m (Bullet's GJK on hulls, measured 2.7e-5)."""
    ours, ref = clients
    a, b = _scene(p, ours, kuka=True), _scene(pb, ref, kuka=True)
    p.resetBasePositionAndOrientation(a["sphere"], [-0.6, 0.3, 0.9], [0, 0, 0, 1],
                                      physicsClientId=ours)
    pb.resetBasePositionAndOrientation(b["sphere"], [-0.6, 0.3, 0.9], [0, 0, 0, 1],
                                       physicsClientId=ref)
    compared = 0
    for link in range(-1, 7):
        rows = p.getClosestPoints(a["kuka"], a["sphere"], 5.0, link, -1, physicsClientId=ours)
        rows_ref = pb.getClosestPoints(b["kuka"], b["sphere"], 5.0, link, -1,
                                       physicsClientId=ref)
        assert [r[3] for r in rows] == [link]
        d_ref = min(r[8] for r in rows_ref)
        assert rows[0][8] == pytest.approx(d_ref, abs=5e-5), link
        compared += 1
    every = p.getClosestPoints(a["kuka"], a["sphere"], 5.0, physicsClientId=ours)
    assert sorted(r[3] for r in every) == list(range(-1, 7))
    assert compared == 8


def test_rays_hit_the_bodies_and_links_pybullet_hits(clients):
    ours, ref = clients
    a, b = _scene(p, ours, kuka=True), _scene(pb, ref, kuka=True)
    xs, ys = np.meshgrid(np.linspace(-1.6, 1.6, 33), np.linspace(-0.7, 0.7, 15))
    starts = np.column_stack([xs.ravel(), ys.ravel(), np.full(xs.size, 3.0)])
    ends = starts.copy()
    ends[:, 2] = -1.0
    hits = p.rayTestBatch(starts.tolist(), ends.tolist(), physicsClientId=ours)
    hits_ref = pb.rayTestBatch(starts.tolist(), ends.tolist(), physicsClientId=ref)
    assert len(hits) == len(hits_ref) == len(starts)
    to_ref = {a[k]: b[k] for k in a}
    gaps = []
    for h, r, s, e in zip(hits, hits_ref, starts, ends):
        assert isinstance(h[2], float) and len(h[3]) == 3 and len(h[4]) == 3
        if h[0] >= 0:
            np.testing.assert_allclose(h[3], s + h[2] * (e - s), atol=1e-9)
        if (to_ref.get(h[0], -1), h[1]) == (r[0], r[1]):
            gaps.append(abs(h[2] - r[2]) * 4.0)         # [m] along the 4 m rays
    # measured 486 of 495 (the others graze a silhouette); PyBullet's hull casts carry its
    # 1 mm margin and its GJK's tolerance (up to 17 mm on grazing hits)
    assert len(gaps) >= 0.97 * len(hits)
    assert np.median(gaps) < 1e-3 and max(gaps) < 0.02
    # the plane: exact
    one = p.rayTest([0.5, 0.5, 1.0], [0.5, 0.5, -1.0], physicsClientId=ours)
    one_ref = pb.rayTest([0.5, 0.5, 1.0], [0.5, 0.5, -1.0], physicsClientId=ref)
    assert one[0][:2] == (a["plane"], -1) and one_ref[0][:2] == (b["plane"], -1)
    assert one[0][2] == pytest.approx(one_ref[0][2], abs=1e-12)
    np.testing.assert_allclose(one[0][3], one_ref[0][3], atol=1e-12)
    np.testing.assert_allclose(one[0][4], one_ref[0][4], atol=1e-12)
    assert p.rayTest([5, 5, 5], [6, 6, 6], physicsClientId=ours) == \
        ((-1, -1, 1.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),)


def test_ray_batch_in_a_parent_frame_and_with_a_filter_mask(clients):
    ours, ref = clients
    a, b = _scene(p, ours), _scene(pb, ref)
    # in the sphere's frame: from 3 m above its centre straight down
    args = dict(parentObjectUniqueId=None, parentLinkIndex=-1)
    for module, ids, client in ((p, a, ours), (pb, b, ref)):
        args["parentObjectUniqueId"] = ids["sphere"]
        hit = module.rayTestBatch([[0, 0, 3]], [[0, 0, -3]], physicsClientId=client, **args)[0]
        assert hit[0] == ids["sphere"]
        np.testing.assert_allclose(hit[3], (1.0, 0.0, 2.5), atol=1e-6)
        assert hit[2] == pytest.approx(0.5 / 6.0 + 2.0 / 6.0, abs=1e-6)
    # PyBullet puts static bodies (the plane) in group 2 (Bullet's StaticFilter), sim_node
    # every body in group 1 (README): a mask of 1 misses PyBullet's plane
    assert pb.rayTestBatch([[3, 0, 5]], [[3, 0, -1]], collisionFilterMask=1,
                           physicsClientId=ref)[0][0] == -1
    assert p.rayTestBatch([[3, 0, 5]], [[3, 0, -1]], collisionFilterMask=1,
                          physicsClientId=ours)[0][0] == a["plane"]
    # the plane in group 1, the sphere in group 2: a mask of 1 sees the plane below it only
    for module, ids, client in ((p, a, ours), (pb, b, ref)):
        module.setCollisionFilterGroupMask(ids["plane"], -1, 1, -1, physicsClientId=client)
        module.setCollisionFilterGroupMask(ids["sphere"], -1, 2, -1, physicsClientId=client)
        hit = module.rayTestBatch([[1, 0, 5]], [[1, 0, -1]], collisionFilterMask=1,
                                  physicsClientId=client)[0]
        assert hit[0] == ids["plane"], module
        assert module.rayTestBatch([[1, 0, 5]], [[1, 0, -1]], collisionFilterMask=3,
                                   physicsClientId=client)[0][0] == ids["sphere"]
        # rayTest takes the same mask
        assert module.rayTest([1, 0, 5], [1, 0, -1], collisionFilterMask=1,
                              physicsClientId=client)[0][0] == ids["plane"]
        assert module.rayTest([1, 0, 5], [1, 0, -1], collisionFilterMask=3, reportHitNumber=-1,
                              physicsClientId=client)[0][0] == ids["sphere"]


def test_aabb_and_overlapping_objects_as_pybullet(clients):
    ours, ref = clients
    a, b = _scene(p, ours, kuka=True), _scene(pb, ref, kuka=True)
    lo, hi = p.getAABB(a["sphere"], physicsClientId=ours)
    lo_ref, hi_ref = pb.getAABB(b["sphere"], physicsClientId=ref)
    np.testing.assert_allclose(lo, (0.5, -0.5, 1.5), atol=1e-9)
    np.testing.assert_allclose(hi, (1.5, 0.5, 2.5), atol=1e-9)
    np.testing.assert_allclose(lo, lo_ref, atol=0.021)      # Bullet's box margins
    for link in range(-1, 7):
        lo, hi = p.getAABB(a["kuka"], link, physicsClientId=ours)
        lo_ref, hi_ref = pb.getAABB(b["kuka"], link, physicsClientId=ref)
        # PyBullet: the hull box grown by its margins; ours inside, within 6 mm (3-5.1 mm)
        assert np.all(np.array(lo_ref) <= np.array(lo) + 1e-9), link
        assert np.all(np.array(hi) <= np.array(hi_ref) + 1e-9), link
        assert np.all(np.array(lo) - lo_ref < 6e-3) and np.all(np.subtract(hi_ref, hi) < 6e-3)
    box = ([0.9, -0.1, 1.9], [1.1, 0.1, 2.1])                # inside the sphere's box
    assert p.getOverlappingObjects(*box, physicsClientId=ours) == ((a["sphere"], -1),)
    assert pb.getOverlappingObjects(*box, physicsClientId=ref) == ((b["sphere"], -1),)
    assert p.getOverlappingObjects([5, 5, 5], [6, 6, 6], physicsClientId=ours) is None
    assert pb.getOverlappingObjects([5, 5, 5], [6, 6, 6], physicsClientId=ref) is None
    # around the kuka's upper arm: its links there, as PyBullet finds them
    lo, hi = p.getAABB(a["kuka"], 3, physicsClientId=ours)
    found = p.getOverlappingObjects(lo, hi, physicsClientId=ours)
    found_ref = pb.getOverlappingObjects(lo, hi, physicsClientId=ref)
    assert (a["kuka"], 3) in found
    assert {l for u, l in found if u == a["kuka"]} <= \
        {l for u, l in found_ref if u == b["kuka"]} | {-1}


def _drop_cube(module, client, setup):
    module.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
    module.setGravity(0.0, 0.0, -10.0, physicsClientId=client)
    plane = module.loadURDF("plane.urdf", physicsClientId=client)
    cube = module.loadURDF("cube_small.urdf", [0.0, 0.0, 0.1], physicsClientId=client)
    setup(module, plane, cube, client)
    for _ in range(120):
        module.stepSimulation(physicsClientId=client)
    return module.getBasePositionAndOrientation(cube, physicsClientId=client)[0][2]


def test_group_mask_follows_pybullets_documented_and_rule_not_its_or_default(clients):
    """The cube in group 1 with mask 0 against the plane (group 1, mask all): AND says no
    collision (it falls through), PyBullet 3.2.7's default OR says collide. PyBullet with
    collisionFilterMode=0 (AND) agrees with sim_node."""
    ours, ref = clients

    def mask_zero(module, plane, cube, client):
        module.setCollisionFilterGroupMask(cube, -1, 1, 0, physicsClientId=client)

    assert _drop_cube(p, ours, mask_zero) < -0.5                  # ours: AND, falls
    assert _drop_cube(pb, ref, mask_zero) > 0.0                   # PyBullet's OR: rests
    and_client = pb.connect(pb.DIRECT)
    try:
        pb.setPhysicsEngineParameter(collisionFilterMode=0, physicsClientId=and_client)
        assert _drop_cube(pb, and_client, mask_zero) < -0.5       # PyBullet's AND: falls
    finally:
        pb.disconnect(physicsClientId=and_client)


def test_pair_filter_overrides_group_and_mask_both_ways(clients):
    ours, ref = clients

    def off(module, plane, cube, client):
        module.setCollisionFilterPair(plane, cube, -1, -1, 0, physicsClientId=client)

    def on_despite_groups(module, plane, cube, client):
        module.setCollisionFilterGroupMask(cube, -1, 0, 0, physicsClientId=client)
        module.setCollisionFilterPair(plane, cube, -1, -1, 1, physicsClientId=client)

    assert _drop_cube(p, ours, off) < -0.5
    assert _drop_cube(pb, ref, off) < -0.5
    for module in (p, pb):
        client = module.connect(pb.DIRECT)
        try:
            assert _drop_cube(module, client, on_despite_groups) > 0.0, module
        finally:
            module.disconnect(physicsClientId=client)


def test_perform_collision_detection_reports_contacts_without_a_step(clients):
    ours, ref = clients
    for module, client in ((p, ours), (pb, ref)):
        module.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
        plane = module.loadURDF("plane.urdf", physicsClientId=client)
        sphere = module.loadURDF("sphere2.urdf", [0.0, 0.0, 0.49], physicsClientId=client)
        assert module.getContactPoints(physicsClientId=client) == ()
        module.performCollisionDetection(physicsClientId=client)
        rows = module.getContactPoints(sphere, plane, physicsClientId=client)
        assert len(rows) == 1
        assert rows[0][8] == pytest.approx(-0.01, abs=1e-6)
        assert rows[0][9] == 0.0
        np.testing.assert_allclose(rows[0][7], (0, 0, 1), atol=1e-9)


# -- hostile input ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def scene():
    client = p.connect(pb.DIRECT)
    ids = _scene(p, client, kuka=True)
    yield client, ids
    p.disconnect(physicsClientId=client)


junk = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-2**40, 2**40),
                 st.text(max_size=2), st.none(), st.lists(st.floats(), max_size=4))


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(uid=st.integers(-3, 6), link=st.integers(-4, 9), other=junk,
       points=st.lists(st.lists(junk, max_size=4), max_size=3))
def test_hostile_query_arguments_raise_pybullet_error(scene, uid, link, other, points):
    client, _ = scene
    calls = [
        lambda: p.getContactPoints(uid, -1, link, physicsClientId=client),
        lambda: p.getClosestPoints(uid, 1, other, link, physicsClientId=client),
        lambda: p.getAABB(uid, link, physicsClientId=client),
        lambda: p.getOverlappingObjects(points[:1] and points[0], [1, 1, 1],
                                        physicsClientId=client),
        lambda: p.rayTestBatch(points, points, physicsClientId=client),
        lambda: p.rayTest(other, [0, 0, 0], physicsClientId=client),
        lambda: p.setCollisionFilterGroupMask(uid, link, other, -1, physicsClientId=client),
        lambda: p.setCollisionFilterPair(uid, 1, link, -1, other, physicsClientId=client),
    ]
    for call in calls:
        try:
            call()
        except p.error as e:       # anything else (a raw Python exception) fails the test
            assert str(e).split(":")[0] in {"getContactPoints", "getClosestPoints", "getAABB",
                                            "getOverlappingObjects", "rayTestBatch", "rayTest",
                                            "setCollisionFilterGroupMask",
                                            "setCollisionFilterPair"}, str(e)


def test_errors_name_the_function_argument_and_what_is_valid(scene):
    client, ids = scene
    with pytest.raises(p.error, match=r"getAABB: linkIndex 7 out of range for body 2 "
                                      r"\(valid: -1 for the base, 0..6\)"):
        p.getAABB(ids["kuka"], 7, physicsClientId=client)
    with pytest.raises(p.error, match="getClosestPoints: distance nan must be finite"):
        p.getClosestPoints(0, 1, math.nan, physicsClientId=client)
    with pytest.raises(p.error, match="rayTestBatch: reportHitNumber 2 is not supported"):
        p.rayTestBatch([[0, 0, 1]], [[0, 0, -1]], reportHitNumber=2, physicsClientId=client)
    with pytest.raises(p.error, match="rayTest: reportHitNumber 1 is not supported"):
        p.rayTest([0, 0, 1], [0, 0, -1], reportHitNumber=1, physicsClientId=client)
    with pytest.raises(p.error, match="rayTest: collisionFilterMask 4294967296 is not a 32-bit"):
        p.rayTest([0, 0, 1], [0, 0, -1], collisionFilterMask=2**32, physicsClientId=client)
    with pytest.raises(p.error, match=r"getClosestPoints: collisionShapeA 0 is not a collision "
                                      r"shape of this client \(its ids: none yet"):
        p.getClosestPoints(-1, 1, 1.0, collisionShapeA=0, collisionShapePositionA=[0, 0, 1],
                           physicsClientId=client)
    with pytest.raises(p.error, match="getClosestPoints: side B is empty: give bodyB"):
        p.getClosestPoints(0, -1, 1.0, physicsClientId=client)
    with pytest.raises(p.error, match="must have as many rays"):
        p.rayTestBatch([[0, 0, 1]], [[0, 0, -1]] * 2, physicsClientId=client)
    with pytest.raises(p.error, match="bodyB 1 needs a bodyA"):
        p.getContactPoints(-1, 1, physicsClientId=client)
    assert p.rayTestBatch([], [], physicsClientId=client) == ()


WELDED = """<robot name="welded">
  <link name="top">
    <inertial><mass value="1"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision>
  </link>
  <link name="foot">
    <inertial><mass value="0.5"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision>
  </link>
  <joint name="weld" type="fixed"><parent link="top"/><child link="foot"/>
    <origin xyz="0.3 0 -0.1"/></joint>
</robot>
"""


def test_contacts_of_links_welded_by_a_fixed_joint_name_the_touching_link(clients, tmp_path):
    """The engine welds "top" and "foot" into one body; a contact still names the link that
    touches, as PyBullet (whose links are separate colliders): only the foot reaches down."""
    ours, ref = clients
    path = tmp_path / "welded.urdf"
    path.write_text(WELDED)
    for module, client in ((p, ours), (pb, ref)):
        module.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
        plane = module.loadURDF("plane.urdf", physicsClientId=client)
        body = module.loadURDF(str(path), [0.0, 0.0, 0.5], physicsClientId=client)
        module.resetBasePositionAndOrientation(body, [0.0, 0.0, 0.1], [0, 0, 0, 1],
                                               physicsClientId=client)
        module.setGravity(0.0, 0.0, -10.0, physicsClientId=client)
        for _ in range(30):
            module.stepSimulation(physicsClientId=client)
        rows = module.getContactPoints(body, plane, physicsClientId=client)
        named = {(r[1], r[3], r[2], r[4]) for r in rows}
        assert (body, 0, plane, -1) in named, module
