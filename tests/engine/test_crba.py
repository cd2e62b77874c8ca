"""The mass matrix B(q) (CRBA) against Pinocchio, and its structure."""
import numpy as np
from engine_cases import assert_rel, random_robots
from hypothesis import given

from sim_node.engine import crba


def check(case, rng):
    data = case.data()
    q, _, _, _ = case.state(rng)
    M = crba.mass_matrix(case.model, data, q).copy()
    assert_rel(M, case.twin.mass_matrix(q), what="B(q)")
    return M


@given(random_robots())
def test_mass_matrix_matches_pinocchio_on_random_trees(robot):
    check(*robot)


def test_mass_matrix_matches_pinocchio_on_project_robots(project_robot):
    rng = np.random.default_rng(0)
    for _ in range(5):
        check(project_robot, rng)


@given(random_robots())
def test_mass_matrix_is_symmetric_positive_definite(robot):
    M = check(*robot)
    assert np.array_equal(M, M.T)
    assert np.linalg.eigvalsh(M)[0] > 0
