"""Forward dynamics (ABA) against Pinocchio; ABA inverts RNEA."""
import numpy as np
import pytest
from engine_cases import GRAVITY, assert_rel, random_robots
from hypothesis import given

from sim_node.engine import aba, rnea


def check(case, rng):
    data = case.data()
    q, v, _, tau = case.state(rng)
    assert_rel(aba.forward_dynamics(case.model, data, q, v, tau, GRAVITY),
               case.twin.aba(q, v, tau, GRAVITY), rtol=1e-9, what="ABA")


@given(random_robots())
def test_forward_dynamics_matches_pinocchio_on_random_trees(robot):
    check(*robot)


def test_forward_dynamics_matches_pinocchio_on_project_robots(project_robot):
    rng = np.random.default_rng(2)
    for _ in range(5):
        check(project_robot, rng)


@given(random_robots())
def test_aba_inverts_rnea(robot):
    case, rng = robot
    data = case.data()
    q, v, a, _ = case.state(rng)
    tau = rnea.inverse_dynamics(case.model, data, q, v, a, GRAVITY).copy()
    assert_rel(aba.forward_dynamics(case.model, data, q, v, tau, GRAVITY), a, rtol=1e-8)


def test_forward_dynamics_rejects_bad_input():
    from engine_cases import make_case
    from random_robots import random_urdf

    case = make_case(random_urdf(np.random.default_rng(3), 4))
    data = case.data()
    q, v, _, tau = case.state(np.random.default_rng(4))
    with pytest.raises(ValueError, match="tau: expected length"):
        aba.forward_dynamics(case.model, data, q, v, tau[:-1])
    bad = tau.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError, match="tau: contains NaN"):
        aba.forward_dynamics(case.model, data, q, v, bad)
