"""Inverse dynamics (RNEA), generalized gravity and Coriolis forces against Pinocchio."""
import numpy as np
from engine_cases import GRAVITY, assert_rel, random_robots
from hypothesis import given

from sim_node.engine import rnea


def check(case, rng):
    data = case.data()
    m = case.model
    q, v, a, _ = case.state(rng)
    g = rng.normal(size=3) * 5
    assert_rel(rnea.inverse_dynamics(m, data, q, v, a, g), case.twin.rnea(q, v, a, g),
               what="RNEA")
    assert_rel(rnea.inverse_dynamics(m, data, q, v, a), case.twin.rnea(q, v, a, np.zeros(3)),
               what="RNEA without gravity")
    assert_rel(rnea.generalized_gravity(m, data, q, GRAVITY), case.twin.gravity(q, GRAVITY),
               what="G(q)")
    assert_rel(rnea.coriolis_forces(m, data, q, v),
               case.twin.rnea(q, v, np.zeros(m.nv), np.zeros(3)), what="C(q, qd)")


@given(random_robots())
def test_inverse_dynamics_gravity_and_coriolis_match_pinocchio_on_random_trees(robot):
    check(*robot)


def test_inverse_dynamics_gravity_and_coriolis_match_pinocchio_on_project_robots(project_robot):
    rng = np.random.default_rng(1)
    for _ in range(5):
        check(project_robot, rng)


@given(random_robots(max_dof=12))
def test_inverse_dynamics_is_the_sum_of_its_terms(robot):
    # tau = B qdd + C(q, qd) + G(q), each term from its own algorithm
    from sim_node.engine import crba

    case, rng = robot
    data = case.data()
    q, v, a, _ = case.state(rng)
    M = crba.mass_matrix(case.model, data, q).copy()
    C = rnea.coriolis_forces(case.model, data, q, v).copy()
    G = rnea.generalized_gravity(case.model, data, q, GRAVITY).copy()
    assert_rel(rnea.inverse_dynamics(case.model, data, q, v, a, GRAVITY), M @ a + C + G)
