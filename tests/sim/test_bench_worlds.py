"""The benchmark worlds S7 (data/worlds/bin_500.yaml) and S8 (data/worlds/talos.yaml) load and
simulate: checked against closed-form free fall, trimesh's mass properties and the SRDF's
standing height."""
from __future__ import annotations

import importlib.metadata
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import sim_node
from sim_node.model.errors import URDFWarning
from sim_node.model.scene import build_scene

REPO = Path(__file__).resolve().parents[2]
BIN_WORLD = REPO / "data" / "worlds" / "bin_500.yaml"
TALOS_WORLD = REPO / "data" / "worlds" / "talos.yaml"
G = 9.81


def test_bin_world_and_meshes_are_what_make_bin_writes(tmp_path):
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import make_bin
    finally:
        sys.path.remove(str(REPO / "bench"))
    meshes = make_bin.make_meshes(tmp_path)
    for path in meshes:
        assert path.read_bytes() == (make_bin.MESH_DIR / path.name).read_bytes(), path.name
    refs = [f"../meshes/bench/{path.name}" for path in meshes]
    assert make_bin.world_text(500, refs, meshes) == BIN_WORLD.read_text()


def test_bin_world_holds_the_mix_and_falls_freely_until_the_first_contact():
    world = sim_node.WorldModel()
    world.readFile(str(BIN_WORLD))
    names = [world.rigidObject(i).getName() for i in range(world.numRigidObjects())]
    assert len(names) == 500
    for kind in ("box", "sphere", "capsule", "mesh"):
        assert sum(name.startswith(kind) for name in names) == 125
    assert world.numTerrains() == 5                     # ground and four walls
    scene = build_scene(world).scene
    start = np.array(scene.free_state)
    scene.step(0.001, 10)
    state = np.asarray(scene.free_state)
    assert np.all(np.isfinite(state))
    # no layer above the first touches anything within 10 ms: v = g t exactly, no spin change
    upper = start[:, 2] > 0.1
    assert upper.sum() == 500 - 64
    np.testing.assert_allclose(state[upper, 7:10], [[0.0, 0.0, -G * 0.01]] * upper.sum(),
                               atol=1e-12)
    np.testing.assert_allclose(state[upper, 10:13], start[upper, 10:13], atol=1e-12)
    # the lowest layer starts 6 cm up: nothing reaches the floor's padding in 10 ms either
    assert state[:, 2].min() > 0.0


def test_bin_meshes_are_centred_convex_hulls_whose_mass_properties_sim_node_agrees_with():
    trimesh = pytest.importorskip("trimesh")
    world = sim_node.WorldModel()
    world.readFile(str(BIN_WORLD))
    checked = set()
    for i in range(world.numRigidObjects()):
        obj = world.rigidObject(i)
        if not obj.getName().startswith("mesh"):
            continue
        (element,) = obj.getCollisionGeometry()
        if element.shape.path in checked:
            continue
        checked.add(element.shape.path)
        reference = trimesh.load(element.shape.path, force="mesh")
        assert reference.is_convex
        mass = obj.getMass()
        np.testing.assert_allclose(mass.getCom(), reference.center_mass, atol=1e-6)
        np.testing.assert_allclose(mass.getCom(), 0.0, atol=1e-6)    # frame = centre of mass
        expected = reference.moment_inertia * mass.getMass() / reference.volume
        np.testing.assert_allclose(mass.inertiaMatrix(), expected, rtol=1e-6,
                                   atol=1e-6 * np.abs(expected).max())
    assert len(checked) == 4


def _example_robot_data_share() -> Path:
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")
    return Path(dist.locate_file("cmeel.prefix/share"))


def test_talos_stands_half_a_second_on_both_feet(monkeypatch):
    share = _example_robot_data_share()
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(share))
    world = sim_node.WorldModel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        world.readFile(str(TALOS_WORLD))
    robot = world.robot(0)
    assert len(robot.getJointNames()) == 32
    sim = sim_node.Simulator(world)
    ground = world.terrain(0).getID()
    feet = [robot.link(name).getID() for name in ("leg_left_6_link", "leg_right_6_link")]
    z0 = robot.getConfig()[2]
    for foot in feet:
        sim.enableContactFeedback(foot, ground)
    soles = [sim.body(foot) for foot in feet]
    start = [body.getTransform()[1].copy() for body in soles]
    for _ in range(50):
        sim.simulate(0.01)
    q = sim.controller(0).getSensedConfig()
    # the SRDF's half-sitting base height puts the soles on the ground: the robot keeps it to
    # within the boundary layer and the PD's sag, stays upright, and its feet do not slide
    assert z0 - 0.005 < q[2] < z0 + 0.001
    x, y, z, w = q[3:7]
    tilt = math.degrees(2 * math.asin(min(1.0, math.hypot(x, y))))
    assert tilt < 2.0
    for foot, body, p0 in zip(feet, soles, start):
        assert sim.inContact(foot, ground)
        assert np.linalg.norm(body.getTransform()[1] - p0) < 0.002


def test_talos_feet_keep_the_sole_vertices_that_hold_them_and_no_speculative_ones(monkeypatch):
    # Claim: standing, each ankle's contacts with the ground are vertices of its collision mesh
    # (read by trimesh, placed by the link's pose: the reference) and are exactly the ones that
    # may close their gap within a step: every vertex within the rest gap (0.5 mm) of the ground
    # is a contact, none higher than the band (rest gap + 10 %, + the step's approach) is; the
    # 36 vertices within the 5 mm padding were 20 contacts per foot before (README, "Contacts a
    # rigid pair keeps")
    import trimesh

    share = _example_robot_data_share()
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(share))
    world = sim_node.WorldModel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        world.readFile(str(TALOS_WORLD))
    robot = world.robot(0)
    sim = sim_node.Simulator(world)
    ground = world.terrain(0).getID()
    stl = share / "example-robot-data" / "robots" / "talos_data" / "meshes" / "v2" / "ankle_X_collision.stl"
    verts = np.asarray(trimesh.load(stl, force="mesh").vertices)
    sim.enableContactFeedbackAll()
    sim.simulate(0.5)
    # the URDF mirrors the left ankle's mesh for the right one (scale 1 -1 1)
    for name, scale in (("leg_left_6_link", [1, 1, 1]), ("leg_right_6_link", [1, -1, 1])):
        foot = robot.link(name).getID()
        R, t = sim.body(foot).getObjectTransform()          # the link frame
        world_verts = (verts * scale) @ np.asarray(R).T + t
        within_padding = world_verts[:, 2] <= 0.005
        assert np.count_nonzero(within_padding) >= 30
        contacts = sim.getContacts(foot, ground)
        matched = []
        for row in contacts:
            d = np.linalg.norm(world_verts[:, :2] - row[:2], axis=1)
            assert d.min() < 1e-6                            # a vertex of the mesh
            matched.append(int(np.argmin(d)))
        heights = world_verts[matched, 2]
        assert heights.max() <= 0.00055 + 0.00005        # within the band (approach < 50 um)
        holding = set(np.flatnonzero(world_verts[:, 2] <= 0.0005).tolist())
        assert holding and holding <= set(matched)
        assert len(contacts) <= 8
