"""The inverse mass matrix (sparse LTDL factorisation) against Pinocchio and B B^-1 = I."""
import numpy as np
import pytest
from engine_cases import assert_rel, random_robots
from hypothesis import given

from sim_node.engine import crba, ltdl


def check(case, rng):
    data = case.data()
    q, _, _, _ = case.state(rng)
    Minv = ltdl.mass_matrix_inverse(case.model, data, q).copy()
    M_ref = case.twin.mass_matrix(q)
    Minv_ref = np.linalg.inv(M_ref)
    if case.twin.G.shape[0] == case.twin.G.shape[1]:     # no mimic: Pinocchio's own algorithm
        pin = case.twin.pin
        Mi = pin.computeMinverse(case.twin.model, case.twin.data, case.twin.q(q))
        Mi = np.triu(Mi) + np.triu(Mi, 1).T
        Minv_ref = case.twin.G.T @ Mi @ case.twin.G
    # relative to the conditioning of B: the inverse amplifies rounding by cond(B)
    assert_rel(Minv, Minv_ref, rtol=1e-9 * max(1.0, np.linalg.cond(M_ref) / 1e3),
               what="B^-1")
    M = crba.mass_matrix(case.model, data, q)
    assert np.abs(Minv @ M - np.eye(len(M))).max() < 1e-9 * np.linalg.cond(M)


@given(random_robots())
def test_inverse_mass_matrix_matches_pinocchio_on_random_trees(robot):
    check(*robot)


def test_inverse_mass_matrix_matches_pinocchio_on_project_robots(project_robot):
    rng = np.random.default_rng(4)
    for _ in range(5):
        check(project_robot, rng)


def test_singular_mass_matrix_is_reported():
    from sim_node.engine.model import Data
    from sim_node.model.builder import build_robot
    from sim_node.model.urdf import parse_urdf

    urdf = ('<robot name="r"><link name="world"/><link name="massless"/>'
            '<joint name="j" type="continuous"><parent link="world"/><child link="massless"/>'
            '</joint></robot>')
    model = build_robot(parse_urdf(urdf)).model
    with pytest.raises(ValueError, match="singular"):
        ltdl.mass_matrix_inverse(model, Data(model), np.zeros(1))
