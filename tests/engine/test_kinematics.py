"""Forward kinematics (every link frame), centre of mass and point Jacobians vs Pinocchio."""
import numpy as np
import pytest
from engine_cases import assert_rel, random_robots
from hypothesis import given

from sim_node.engine import kinematics
from sim_node.engine.integrate import integrate


def check_frames(case, rng):
    data = case.data()
    q, _, _, _ = case.state(rng)
    R, p = kinematics.frames(case.model, data, q)
    for i, name in enumerate(case.structure.link_names):
        R_ref, p_ref = case.twin.frame_placement(q, name)
        assert_rel(R[i], R_ref, what=f"R of {name}")
        assert_rel(p[i], p_ref, rtol=1e-9, what=f"p of {name}") if np.abs(p_ref).max() > 1e-3 \
            else np.testing.assert_allclose(p[i], p_ref, atol=1e-12)


def check_jacobians(case, rng):
    data = case.data()
    q, _, _, _ = case.state(rng)
    for i, name in enumerate(case.structure.link_names):
        point = rng.normal(size=3) * 0.3
        J = kinematics.jacobian(case.model, data, q, i, point)
        assert_rel(J, case.twin.point_jacobian(q, name, point), what=f"J of {name}")


def check_com(case, rng):
    data = case.data()
    q, _, _, _ = case.state(rng)
    com = kinematics.com(case.model, data, q)
    # Pinocchio's COM covers the moving bodies; links welded to the world add their own
    m_moving = case.twin.moving_mass()
    world = case.model.arrays
    m_world = world["link_mass"].sum()
    expected = (case.twin.com(q) * m_moving + world["link_mass"] @ world["link_com_W"])
    expected /= m_moving + m_world
    assert_rel(com, expected, what="COM")
    assert kinematics.total_mass(case.model) == pytest.approx(m_moving + m_world, rel=1e-12)


@given(random_robots())
def test_link_frames_match_pinocchio_on_random_trees(robot):
    check_frames(*robot)


@given(random_robots())
def test_point_jacobians_match_pinocchio_on_random_trees(robot):
    check_jacobians(*robot)


@given(random_robots())
def test_center_of_mass_matches_pinocchio_on_random_trees(robot):
    check_com(*robot)


def test_kinematics_match_pinocchio_on_project_robots(project_robot):
    rng = np.random.default_rng(5)
    for _ in range(3):
        check_frames(project_robot, rng)
        check_jacobians(project_robot, rng)
        check_com(project_robot, rng)


@given(random_robots(max_dof=10))
def test_jacobian_predicts_point_velocity(robot):
    # finite differences of the point position along the curve q (+) eps v (the configuration
    # integration, checked against Pinocchio in test_integrate)
    case, rng = robot
    data = case.data()
    q, v, _, _ = case.state(rng)
    link = len(case.structure.link_names) - 1
    point = np.array([0.1, -0.2, 0.3])

    def position(qq):
        R, p = kinematics.frames(case.model, data, qq)
        return R[link] @ point + p[link]

    h = 1e-6
    fd = (position(integrate(case.model, q, v, h))
          - position(integrate(case.model, q, v, -h))) / (2 * h)
    J = kinematics.jacobian(case.model, data, q, link, point)
    np.testing.assert_allclose(J[3:] @ v, fd, atol=1e-6 * max(1, np.abs(fd).max()))
