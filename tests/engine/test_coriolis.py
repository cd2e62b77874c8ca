"""The Coriolis matrix against Pinocchio; C qd = Coriolis forces; dB/dt - 2C skew-symmetric."""
import numpy as np
from engine_cases import assert_rel, random_robots
from hypothesis import given
from transforms3d.axangles import axangle2mat
from transforms3d.quaternions import mat2quat, quat2mat

from sim_node.engine import coriolis, crba, rnea


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


def _step(structure, q, v, eps):
    """A point at parameter eps on a smooth curve with q(0) = q and dq/deps = v."""
    out = q.copy()
    start = 0
    if structure.floating:
        R = quat2mat([q[6], q[3], q[4], q[5]])
        out[:3] = q[:3] + eps * R @ v[:3]
        w = v[3:6]
        angle = np.linalg.norm(w) * eps
        dR = axangle2mat(w / np.linalg.norm(w), angle) if angle != 0 else np.eye(3)
        qw, qx, qy, qz = mat2quat(R @ dR)
        out[3:7] = [qx, qy, qz, qw]
        start = 7
    out[start:] = q[start:] + eps * v[6 if structure.floating else 0:]
    return out


@given(random_robots(max_dof=15))
def test_mass_matrix_derivative_minus_twice_coriolis_is_skew_symmetric(robot):
    case, rng = robot
    data = case.data()
    q, v, _, _ = case.state(rng)
    h = 1e-5
    M_plus = crba.mass_matrix(case.model, data, _step(case.structure, q, v, h)).copy()
    M_minus = crba.mass_matrix(case.model, data, _step(case.structure, q, v, -h)).copy()
    M_dot = (M_plus - M_minus) / (2 * h)
    C = coriolis.coriolis(case.model, data, q, v).copy()
    N = M_dot - 2 * C
    scale = max(np.abs(M_dot).max(), np.abs(C).max())
    # central differences: error O(h^2) relative, plus rounding ~1e-16 / h
    assert np.abs(N + N.T).max() <= 1e-6 * scale + 1e-9
