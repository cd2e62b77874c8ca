"""The inertia repair rules (sim_node.model.inertia_repair): what is valid agrees with PyBullet's
check, the repaired tensor is the nearest valid one (Moreau's decomposition of the projection onto
a convex cone), and moving bodies that would make the mass matrix singular get mass or inertia."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, example, given, settings, strategies as st
from scipy.optimize import nnls
from transforms3d.euler import euler2mat

import sim_node
import sim_node.model.urdf
from sim_node.engine import crba
from sim_node.model import inertia_repair as ir
from sim_node.model.urdf import Inertial

CONE = np.array([[1.0, -1.0, -1.0], [-1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]])
moments = st.lists(st.floats(-10, 10, allow_nan=False), min_size=3, max_size=3).map(np.array)


@settings(max_examples=300, deadline=None)
@given(moments)
@example(np.array([0.0, 5.96e-8, -3.0]))      # the nearest is (e/2, e/2, 0), not 0
def test_nearest_valid_moments_is_the_projection_onto_the_valid_cone(x):
    # Moreau: p = proj_K(x) iff p in K, x - p in the polar cone K° = {A^T mu, mu >= 0} and
    # p . (x - p) = 0 (K = {l : A l <= 0})
    p = ir.nearest_valid_moments(x)
    scale = max(1.0, np.abs(x).max())
    assert (CONE @ p).max() <= 1e-9 * scale
    mu, residual = nnls(CONE.T, x - p)
    assert residual <= 1e-9 * scale
    assert abs(p @ (x - p)) <= 1e-9 * scale * scale


@settings(max_examples=200, deadline=None)
@given(moments, st.lists(st.floats(-math.pi, math.pi), min_size=3, max_size=3),
       st.lists(st.floats(0.01, 5), min_size=3, max_size=3),
       st.lists(st.floats(-math.pi, math.pi), min_size=3, max_size=3))
def test_repaired_tensor_is_nearer_than_any_valid_tensor(x, rpy, half, rpy_other):
    # the valid set is spectral (unitarily invariant and convex): projecting the eigenvalues
    # gives the Frobenius-nearest valid tensor, nearer than any other valid one (here a box's);
    # except where the nearest is zero and Drake's sphere replaces it (tested below)
    assume(np.abs(ir.nearest_valid_moments(x)).max() > 1e-9 * max(1.0, np.abs(x).max()))
    R = euler2mat(*rpy)
    tensor = R @ np.diag(x) @ R.T
    repaired, _ = ir.repair_link_inertial(Inertial(1.0, np.zeros(3), tensor))
    a, b, c = half
    R2 = euler2mat(*rpy_other)
    other = R2 @ np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) @ R2.T / 3
    assert np.linalg.norm(repaired.inertia - tensor) <= np.linalg.norm(other - tensor) + 1e-9
    assert ir.is_valid_moments(np.linalg.eigvalsh(repaired.inertia))


def test_validity_agrees_with_pybullets_check(tmp_path):
    # PyBullet (URDF_USE_INERTIA_FROM_FILE) zeroes the inertia of exactly the tensors whose
    # principal moments violate the triangle inequality
    p = pytest.importorskip("pybullet")
    cases = [(1, 1, 1), (1, 2, 2.9), (1, 2, 3.2), (0.1, 0.1, 0.5), (1, 1, 0), (2, -0.5, 2),
             (0.3, 0.2, 0.1), (5, 1, 1)]
    client = p.connect(p.DIRECT)
    try:
        for k, (ixx, iyy, izz) in enumerate(cases):
            urdf = (f'<robot name="r"><link name="a"><inertial><mass value="1"/><inertia '
                    f'ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>'
                    '<collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision>'
                    '</link></robot>')
            path = tmp_path / f"{k}.urdf"
            path.write_text(urdf)
            body = p.loadURDF(str(path), flags=p.URDF_USE_INERTIA_FROM_FILE,
                              physicsClientId=client)
            pybullet_valid = any(v != 0 for v in p.getDynamicsInfo(body, -1,
                                                                  physicsClientId=client)[2])
            assert ir.is_valid_moments([ixx, iyy, izz]) == pybullet_valid, (ixx, iyy, izz)
            p.removeBody(body, physicsClientId=client)
    finally:
        p.disconnect(client)


def test_valid_inertias_are_kept_exactly():
    tensor = np.array([[0.2, 0.01, 0.0], [0.01, 0.3, 0.0], [0.0, 0.0, 0.4]])
    inertial = Inertial(2.0, np.array([0.1, 0, 0]), tensor)
    assert ir.repair_link_inertial(inertial) == (inertial, "")


def test_when_no_valid_tensor_is_near_drakes_plausible_sphere_is_used():
    # every moment negative: the nearest valid tensor is zero; Drake's rule: a solid sphere of
    # water density with the link's mass, I = 2/5 m r^2 with 4/3 pi r^3 * 1000 = m
    repaired, note = ir.repair_link_inertial(Inertial(2.0, np.zeros(3), -np.eye(3)))
    radius = (3 * 2.0 / (4 * math.pi * 1000.0)) ** (1 / 3)
    np.testing.assert_allclose(repaired.inertia, np.eye(3) * 0.4 * 2.0 * radius ** 2)
    assert "water-density solid sphere of 2 kg" in note


def urdf(body: str) -> str:
    return f'<robot name="r">{body}</robot>'


def inertial(mass, moments=(0.01, 0.01, 0.01), xyz="0 0 0"):
    ixx, iyy, izz = moments
    return (f'<inertial><origin xyz="{xyz}"/><mass value="{mass}"/><inertia ixx="{ixx}" ixy="0" '
            f'ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>')


def load(text, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        robot = sim_node.WorldModel().loadRobot(text, **kw)
    return robot, [w.message for w in caught if isinstance(w.message, sim_node.URDFWarning)]


def test_negative_mass_and_massless_inertia_are_read_as_massless_links(tmp_path):
    path = tmp_path / "r.urdf"
    path.write_text(urdf(f'<link name="world"/><link name="a">{inertial(-1)}</link>'
                         f'<link name="b">{inertial(0, (1, 1, 1))}</link><link name="c">'
                         f'{inertial(1)}</link>'
                         '<joint name="w" type="fixed"><parent link="world"/><child link="a"/></joint>'
                         '<joint name="f" type="fixed"><parent link="a"/><child link="b"/></joint>'
                         '<joint name="j" type="continuous"><parent link="b"/><child link="c"/>'
                         '<origin xyz="0.5 0 0"/></joint>'))
    robot, caught = load(str(path))
    notes = {w.element: w for w in caught}
    assert notes["link 'a' <inertial> <inertia>"].problem.startswith("negative mass -1 kg")
    assert notes["link 'a' <inertial> <inertia>"].line == 1 and str(path) in str(
        notes["link 'a' <inertial> <inertia>"])
    assert "zero mass with a non-zero inertia" in notes["link 'b' <inertial> <inertia>"].problem
    assert robot.link("a").getMass().getMass() == 0 and robot.link("b").getMass().getMass() == 0
    assert not np.any(robot.link("b").getMass().getInertia())


def test_a_massless_moving_leaf_gets_a_small_sphere_and_a_massless_link_carrying_mass_does_not():
    text = urdf(f'<link name="world"/><link name="virtual"/><link name="arm">{inertial(3.0)}'
                '</link><link name="tip"/>'
                '<joint name="j1" type="revolute"><parent link="world"/><child link="virtual"/>'
                '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
                '<joint name="j2" type="revolute"><parent link="virtual"/><child link="arm"/>'
                '<axis xyz="0 1 0"/><origin xyz="0 0 0.1"/>'
                '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
                '<joint name="j3" type="continuous"><parent link="arm"/><child link="tip"/>'
                '<origin xyz="0.3 0 0"/></joint>')
    robot, caught = load(text)
    assert [w.element for w in caught] == ["link 'tip'"]
    assert "0.003 kg" in caught[0].problem and "0.1 % of the robot's mass" in caught[0].problem
    assert robot.link("virtual").getMass().getMass() == 0.0           # carries 'arm'
    tip = robot.link("tip").getMass()
    radius = (3 * 0.003 / (4 * math.pi * 1000.0)) ** (1 / 3)
    np.testing.assert_allclose(tip.getInertia(), (np.eye(3) * 0.4 * 0.003 * radius ** 2).ravel())
    robot.setConfig(np.array([0.3, -0.2, 1.0]))
    assert np.linalg.eigvalsh(robot.getMassMatrix())[0] > 0


def test_a_floating_rod_gets_its_vanishing_moment_raised():
    # PyBullet's random_urdfs: mass 0.1, inertia (1, 1, 0): free to spin about z at no cost
    text = urdf(f'<link name="blob">{inertial(0.1, (1, 1, 0))}<collision><geometry><box '
                'size="0.1 0.1 0.1"/></geometry></collision></link>')
    robot, caught = load(text)
    assert len(caught) == 1 and "nearly vanish" in caught[0].problem
    np.testing.assert_allclose(np.linalg.eigvalsh(robot.link("blob").getMass().inertiaMatrix()),
                               [1e-4, 1 + 1e-4, 1 + 1e-4], rtol=1e-12)   # isotropic: stays valid
    assert robot.urdf.inertia_repairs["blob"][0].inertia[2, 2] == 0
    M = robot.getMassMatrix()
    assert np.linalg.cond(M) < 1e6


def test_point_mass_bodies_get_a_water_sphere():
    text = urdf(f'<link name="world"/><link name="bob">{inertial(2.0, (0, 0, 0), "0 0 0")}</link>'
                '<joint name="j" type="continuous"><parent link="world"/><child link="bob"/>'
                '<axis xyz="0 0 1"/></joint>')
    robot, caught = load(text)
    radius = (3 * 2.0 / (4 * math.pi * 1000.0)) ** (1 / 3)
    assert "water-density solid sphere of 2 kg" in caught[0].problem
    np.testing.assert_allclose(robot.getMassMatrix(), [[0.4 * 2.0 * radius ** 2]])


def test_a_massless_base_is_static_as_in_pybullet_and_a_massless_dummy_root_is_not():
    cartpole = urdf(f'<link name="bar">{inertial(0, (0, 0, 0))}</link><link name="cart">'
                    f'{inertial(1)}</link><joint name="s" type="prismatic"><parent link="bar"/>'
                    '<child link="cart"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
                    '</joint>')
    robot, _ = load(cartpole)
    assert not robot.structure.floating and robot.model.nv == 1
    assert load(cartpole, fixed_base=False)[0].structure.floating
    ros_style = urdf(f'<link name="base_link"/><link name="base_inertia">{inertial(5)}</link>'
                     '<joint name="f" type="fixed"><parent link="base_link"/>'
                     '<child link="base_inertia"/></joint>')
    assert load(ros_style)[0].structure.floating


def test_parsing_and_repairing_a_1500_link_chain_needs_no_recursion():
    # every walk of the parser and of the repair is iterative (the builder's is the joint work's)
    n = 1500
    links = "".join(f'<link name="l{i}">{inertial(0.1 if i % 2 else 0.0)}</link>' for i in range(n))
    joints = "".join(f'<joint name="j{i}" type="continuous"><parent link="l{i}"/><child '
                     f'link="l{i + 1}"/><origin xyz="0 0 0.01"/></joint>' for i in range(n - 1))
    urdf = sim_node.model.urdf.parse_urdf(f'<robot name="chain">{links}{joints}</robot>')
    repaired = ir.repair_moving_bodies(urdf, floating=True)
    assert repaired is urdf            # massless links carry mass below them: nothing to repair
    assert ir.total_mass(urdf) == pytest.approx(0.1 * (n // 2))
