"""The Coriolis matrix against Pinocchio; C qd = Coriolis forces; dB/dt - 2C skew-symmetric."""
import numpy as np
from engine_cases import assert_rel, random_robots
from hypothesis import given

from sim_node.engine import coriolis, crba, rnea
from sim_node.engine.integrate import integrate


def check(case, rng):
    data = case.data()
    q, v, _, _ = case.state(rng)
    C = coriolis.coriolis(case.model, data, q, v).copy()
    assert_rel(C, case.twin.coriolis_matrix(q, v), what="C(q, qd)")
    return C


@given(random_robots())
def test_coriolis_matrix_matches_pinocchio_on_random_trees(robot):
    check(*robot)


def test_coriolis_matrix_matches_pinocchio_on_project_robots(project_robot):
    rng = np.random.default_rng(3)
    for _ in range(5):
        check(project_robot, rng)


@given(random_robots())
def test_coriolis_matrix_times_velocity_is_the_coriolis_force(robot):
    case, rng = robot
    C = check(case, rng)
    data = case.data()
    q, v, _, _ = case.state(np.random.default_rng(0))
    C = coriolis.coriolis(case.model, data, q, v).copy()
    assert_rel(C @ v, rnea.coriolis_forces(case.model, data, q, v), rtol=1e-9)


@given(random_robots(max_dof=15))
def test_mass_matrix_derivative_minus_twice_coriolis_is_skew_symmetric(robot):
    case, rng = robot
    data = case.data()
    q, v, _, _ = case.state(rng)
    h = 1e-5
    M_plus = crba.mass_matrix(case.model, data, integrate(case.model, q, v, h)).copy()
    M_minus = crba.mass_matrix(case.model, data, integrate(case.model, q, v, -h)).copy()
    M_dot = (M_plus - M_minus) / (2 * h)
    C = coriolis.coriolis(case.model, data, q, v).copy()
    N = M_dot - 2 * C
    scale = max(np.abs(M_dot).max(), np.abs(C).max())
    # central differences: error O(h^2) relative, plus rounding ~1e-16 / h
    assert np.abs(N + N.T).max() <= 1e-6 * scale + 1e-9
