"""model/collide.py: WorldCollider with Klamp't's names and rules on a WorldModel (no
Simulator), against closed-form overlaps and against klampt 0.10.1 itself when installed (run in
a subprocess: klampt crashes at interpreter exit on this machine)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import sim_node
from sim_node.model.collide import WorldCollider, shape_owners
from sim_node.model.scene import build_scene

REPO = Path(__file__).resolve().parents[2]


def _world(tmp_path, text):
    path = tmp_path / "world.yaml"
    path.write_text(text)
    world = sim_node.WorldModel()
    world.readFile(path)
    return world


BALLS = """terrains:
  - {name: ground, geometry: {plane: {}}}
rigid_objects:
  - {name: a, geometry: {sphere: 0.1}, mass: 1, pose: {position: [0, 0, 0.09]}}
  - {name: b, geometry: {sphere: 0.1}, mass: 1, pose: {position: [0.19, 0, 0.5]}}
  - {name: c, geometry: {sphere: 0.1}, mass: 1, pose: {position: [0.19, 0.15, 0.5]}}
"""


def _names(pairs):
    return sorted(tuple(o.getName() for o in pair) for pair in pairs)


def test_collisions_of_spheres_and_the_ground(tmp_path):
    # a dips 1 cm into the ground; b and c: centres 0.15 apart (< 0.2): overlap
    world = _world(tmp_path, BALLS)
    collider = WorldCollider(world)
    pairs = sorted(sorted(p) for p in _names(collider.collisions()))
    assert pairs == [["a", "ground"], ["b", "c"]]
    a, b, c = (world.rigidObject(n) for n in "abc")
    ground = world.terrain(0)
    assert [sorted(o.getName() for o in p) for p in collider.objectTerrainCollisions(a)] == \
        [["a", "ground"]]
    assert list(collider.objectTerrainCollisions(b)) == []
    assert [tuple(o.getName() for o in p) for p in collider.objectObjectCollisions(b)] == \
        [("b", "c")]
    # ignoring the pair: tested no more
    collider.ignoreCollision((b, c))
    assert not collider.isCollisionEnabled((b, c)) and collider.isCollisionEnabled(b)
    assert list(collider.objectObjectCollisions(b)) == []
    collider.ignoreCollision(a)
    assert not collider.isCollisionEnabled(a)
    assert list(collider.collisions()) == []
    assert collider.isCollisionEnabled((ground, b))


def test_the_collider_follows_the_world_s_current_state(tmp_path):
    world = _world(tmp_path, BALLS)
    collider = WorldCollider(world)
    c = world.rigidObject("c")
    c.setTransform(np.eye(3), [3.0, 0.0, 0.5])
    assert sorted(sorted(p) for p in _names(collider.collisions())) == [["a", "ground"]]
    c.setTransform(np.eye(3), [0.1, 0.0, 0.25])     # now on a (0.16 apart)
    assert sorted(sorted(p) for p in _names(collider.collisions())) == [["a", "c"], ["a", "ground"]]


def test_a_changed_set_of_entities_asks_for_a_new_collider(tmp_path):
    world = _world(tmp_path, BALLS)
    collider = WorldCollider(world)
    world.remove(world.rigidObject("c"))
    with pytest.raises(ValueError, match="make a new WorldCollider"):
        list(collider.collisions())
    assert sorted(sorted(p) for p in _names(WorldCollider(world).collisions())) == \
        [["a", "ground"]]


def _chain_world(tmp_path, self_collision=False):
    # a 3-link planar chain folded back so that l2 overlaps base (not adjacent)
    urdf = tmp_path / "chain.urdf"
    urdf.write_text("""<robot name="chain">
  <link name="base"><collision><geometry><box size="0.4 0.1 0.1"/></geometry></collision>
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l1"><collision><origin xyz="0 0.15 0"/><geometry><box size="0.1 0.3 0.1"/></geometry></collision>
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l2"><collision><origin xyz="0 0.2 0"/><geometry><box size="0.1 0.4 0.1"/></geometry></collision>
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0.15 0.05 0"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0 0.3 0"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
</robot>""")
    world = sim_node.WorldModel()
    robot = world.loadRobot(str(urdf), fixed_base=True)
    return world, robot


def test_robot_self_collisions_skip_adjacent_links(tmp_path):
    world, robot = _chain_world(tmp_path)
    collider = WorldCollider(world)
    assert list(collider.robotSelfCollisions(robot)) == []
    # fold l2 back over base: l2 (0.4 long) reaches down across base; base-l1 and l1-l2 touch
    # at their joints but are adjacent: never reported
    robot.setConfig([0.0, 2.8])
    pairs = [tuple(l.getName() for l in p) for p in collider.robotSelfCollisions(robot)]
    assert [sorted(p) for p in pairs] == [["base", "l2"]]


def test_shape_owners_follow_the_scene_layout(tmp_path):
    world, robot = _chain_world(tmp_path)
    layout = build_scene(world)
    entity, link = shape_owners(layout)
    assert entity.tolist() == [robot.getID()] * 3
    # the base is welded to the world: its static body comes after the moving ones
    assert sorted(link.tolist()) == [0, 1, 2]


def test_bad_objects_are_refused(tmp_path):
    world = _world(tmp_path, BALLS)
    collider = WorldCollider(world)
    with pytest.raises(ValueError, match="unknown world ID 99"):
        collider.isCollisionEnabled(99)
    with pytest.raises(TypeError, match="needs a WorldModel"):
        WorldCollider("world")
    with pytest.raises(ValueError, match="a pair has 2 objects"):
        collider.ignoreCollision((1, 2, 3))


KLAMPT_SCRIPT = textwrap.dedent("""
    import json, sys
    from klampt import WorldModel, Geometry3D, GeometricPrimitive
    from klampt.model.collide import WorldCollider
    spec = json.loads(sys.stdin.read())
    world = WorldModel()
    robot = world.loadRobot(spec["urdf"])
    for name, centre, radius in spec["balls"]:
        obj = world.makeRigidObject(name)
        prim = GeometricPrimitive()
        prim.setSphere(centre, radius)
        obj.geometry().setGeometricPrimitive(prim)
    out = []
    for joints in spec["configs"]:
        q = robot.getConfig()
        for name, value in joints.items():
            q[robot.link(name).getIndex()] = value
        robot.setConfig(q)
        collider = WorldCollider(world)
        out.append(sorted(sorted([a.getName(), b.getName()])
                          for a, b in collider.robotObjectCollisions(robot)))
    print(json.dumps(out))
""")


def test_robot_object_collisions_agree_with_klampt(tmp_path):
    # kuka_iiwa (pybullet_data) among spheres at random configurations: the colliding
    # (link, sphere) pairs of klampt 0.10.1's WorldCollider and ours, away from grazing
    # contact (spheres whose distance to a link is within 2 mm of 0 are left out: Klamp't
    # collides the link's triangle mesh, we its convex hull)
    pytest.importorskip("pybullet_data")
    python = os.environ.get("KLAMPT_PYTHON", sys.executable)
    probe = subprocess.run([python, "-c", "import klampt"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("klampt is not installed (pip install klampt==0.10.1.post1 PyOpenGL)")
    import pybullet_data

    urdf = os.path.join(pybullet_data.getDataPath(), "kuka_iiwa", "model.urdf")
    rng = np.random.default_rng(3)
    world = sim_node.WorldModel()
    robot = world.loadRobot(urdf, fixed_base=True)
    balls = [(f"ball{i}", rng.uniform([-0.4, -0.4, 0.0], [0.4, 0.4, 1.2]).tolist(), 0.08)
             for i in range(40)]
    text = "rigid_objects:\n" + "".join(
        f"  - {{name: {n}, geometry: {{sphere: {r}}}, mass: 1, pose: {{position: {c}}}}}\n"
        for n, c, r in balls)
    extra = _world(tmp_path, text)
    for i in range(extra.numRigidObjects()):
        obj = extra.rigidObject(0)
        extra.remove(obj)
        world.add(obj)
    lower, upper = robot.getJointLimits()
    configs = [rng.uniform(np.maximum(lower, -2), np.minimum(upper, 2)).tolist() for _ in range(6)]
    # Klamp't's q has an entry per link: each joint's value goes to its child link
    child = {robot.link(l).getParentJoint(): robot.link(l).getName()
             for l in range(robot.numLinks())}
    joints = [dict(zip((child[j] for j in robot.getJointNames()), q)) for q in configs]
    result = subprocess.run([python, "-c", KLAMPT_SCRIPT], capture_output=True, text=True,
                            input=json.dumps({"urdf": urdf, "balls": balls, "configs": joints}),
                            timeout=300)
    lines = [l for l in result.stdout.splitlines() if l.startswith("[")]
    assert lines, result.stderr[-2000:]
    theirs_all = json.loads(lines[-1])
    collider = WorldCollider(world)
    compared = 0
    for q, theirs in zip(configs, theirs_all):
        robot.setConfig(q)
        ours = sorted(sorted([a.getName(), b.getName()])
                      for a, b in collider.robotObjectCollisions(robot))
        layout = build_scene(world)
        grazing = set()
        # grazing pairs: our distance within 2 mm of contact
        entity, link_of = shape_owners(layout)
        for name, _, _ in balls:
            obj = world.rigidObject(name)
            mine = np.flatnonzero(entity == obj.getID())
            for l in range(robot.numLinks()):
                linked = np.flatnonzero((entity == robot.getID()) & (link_of == l))
                if len(linked) == 0:
                    continue
                found = layout.scene.closest_points(mine, linked, 0.002)
                if len(found["distance"]) and found["distance"].min() > -0.002:
                    grazing.add(tuple(sorted([robot.link(l).getName(), name])))
        strip = lambda pairs: sorted(p for p in map(tuple, pairs) if p not in grazing)  # noqa: E731
        assert strip(ours) == strip(theirs)
        compared += len(strip(ours))
    assert compared >= 5


def test_ray_casts_hit_the_first_object_and_pass_those_left_out(tmp_path):
    # straight down at x = y = 0: sphere a's top (z = 0.19) first, the ground (z = 0) when only
    # the ground is asked for; nothing above b and c along +z from far away
    world = _world(tmp_path, BALLS)
    collider = WorldCollider(world)
    a, ground = world.rigidObject("a"), world.terrain(0)
    obj, point = collider.rayCast([0, 0, 2], [0, 0, -3])
    assert obj is a
    np.testing.assert_allclose(point, [0, 0, 0.19], atol=1e-12)
    obj, point = collider.rayCast([0, 0, 2], [0, 0, -1], indices=[collider.geomList.index(ground)])
    assert obj is ground
    np.testing.assert_allclose(point, [0, 0, 0], atol=1e-9)
    assert collider.rayCast([5, 5, 1], [0, 0, 1]) is None
    # b at (0.19, 0, 0.5) r 0.1, from the side along -x: its surface at x = 0.29
    obj, point = collider.rayCast([3, 0, 0.5], [-1, 0, 0])
    assert obj is world.rigidObject("b")
    np.testing.assert_allclose(point, [0.29, 0, 0.5], atol=1e-12)
    with pytest.raises(ValueError, match="rayCast: d must be 3 finite numbers"):
        collider.rayCast([0, 0, 0], [0, float("nan"), 1])
    with pytest.raises(ValueError, match="the direction d is zero"):
        collider.rayCast([0, 0, 0], [0, 0, 0])


def test_ray_cast_robot_hits_only_its_links(tmp_path):
    world, robot = _chain_world(tmp_path)
    collider = WorldCollider(world)
    # the base box spans x in [-0.2, 0.2], z in [-0.05, 0.05]: from above at x = -0.1
    link, point = collider.rayCastRobot(robot, [-0.1, 0, 1], [0, 0, -1])
    assert link is robot.link(0)
    np.testing.assert_allclose(point, [-0.1, 0, 0.05], atol=1e-12)
    assert collider.rayCastRobot(robot, [-0.1, 0, 1], [0, 0, 1]) is None


KLAMPT_RAYS = textwrap.dedent("""
    import json, sys
    from klampt import WorldModel, GeometricPrimitive
    from klampt.model.collide import WorldCollider
    spec = json.loads(sys.stdin.read())
    world = WorldModel()
    for name, centre, radius in spec["balls"]:
        obj = world.makeRigidObject(name)
        prim = GeometricPrimitive()
        prim.setSphere(centre, radius)
        obj.geometry().setGeometricPrimitive(prim)
    collider = WorldCollider(world)
    out = []
    for s, d in spec["rays"]:
        hit = collider.rayCast(s, d)
        out.append(None if hit is None else [hit[0].getName(), list(hit[1])])
    print(json.dumps(out))
""")


def test_ray_casts_agree_with_klampt(tmp_path):
    # 30 spheres, 200 rays from outside the cloud towards random points in it: the same first
    # sphere and hit point (to 1e-9 m) as klampt 0.10.1's WorldCollider.rayCast
    python = os.environ.get("KLAMPT_PYTHON", sys.executable)
    if subprocess.run([python, "-c", "import klampt"], capture_output=True).returncode != 0:
        pytest.skip("klampt is not installed (pip install klampt==0.10.1.post1 PyOpenGL)")
    rng = np.random.default_rng(5)
    balls = [(f"ball{i}", rng.uniform(-1, 1, 3).tolist(), float(rng.uniform(0.05, 0.2)))
             for i in range(30)]
    rays = []
    for _ in range(200):
        s = rng.normal(size=3)
        s = 3 * s / np.linalg.norm(s)
        d = rng.uniform(-1, 1, 3) - s
        rays.append((s.tolist(), (d / np.linalg.norm(d)).tolist()))  # Klamp't wants unit d
    result = subprocess.run([python, "-c", KLAMPT_RAYS], capture_output=True, text=True,
                            input=json.dumps({"balls": balls, "rays": rays}), timeout=300)
    lines = [l for l in result.stdout.splitlines() if l.startswith("[")]
    assert lines, result.stderr[-2000:]
    theirs = json.loads(lines[-1])
    world = _world(tmp_path, "rigid_objects:\n" + "".join(
        f"  - {{name: {n}, geometry: {{sphere: {r}}}, mass: 1, pose: {{position: {c}}}}}\n"
        for n, c, r in balls))
    collider = WorldCollider(world)
    hits = 0
    for (s, d), t in zip(rays, theirs):
        mine = collider.rayCast(s, d)
        if t is None:
            assert mine is None
            continue
        assert mine is not None and mine[0].getName() == t[0]
        np.testing.assert_allclose(mine[1], t[1], atol=1e-9)
        hits += 1
    assert 40 <= hits < 200
