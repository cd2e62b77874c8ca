"""The batch forms return exactly (bit for bit) what the single-state functions return."""
import numpy as np
import pytest
from engine_cases import GRAVITY, random_robots
from hypothesis import given

from sim_node.engine import aba, batched, coriolis, crba, kinematics, ltdl, rnea


@given(random_robots(max_dof=15))
def test_batch_forms_equal_single_state_calls(robot):
    case, rng = robot
    m, data = case.model, case.data()
    states = [case.state(rng) for _ in range(4)]
    Q, V, A, T = (np.array([s[k] for s in states]) for k in range(4))
    link = len(case.structure.link_names) - 1
    point = np.array([0.1, 0.2, -0.1])
    results = {
        "rnea": (batched.rnea(m, Q, V, A, GRAVITY),
                 [rnea.inverse_dynamics(m, data, *s[:3], GRAVITY).copy() for s in states]),
        "aba": (batched.aba(m, Q, V, T, GRAVITY),
                [aba.forward_dynamics(m, data, s[0], s[1], s[3], GRAVITY).copy() for s in states]),
        "crba": (batched.crba(m, Q), [crba.mass_matrix(m, data, s[0]).copy() for s in states]),
        "minv": (batched.minv(m, Q), [ltdl.mass_matrix_inverse(m, data, s[0]).copy() for s in states]),
        "gravity": (batched.gravity(m, Q, GRAVITY),
                    [rnea.generalized_gravity(m, data, s[0], GRAVITY).copy() for s in states]),
        "coriolis_forces": (batched.coriolis_forces(m, Q, V),
                            [rnea.coriolis_forces(m, data, s[0], s[1]).copy() for s in states]),
        "coriolis_matrix": (batched.coriolis_matrix(m, Q, V),
                            [coriolis.coriolis(m, data, s[0], s[1]).copy() for s in states]),
        "com": (batched.com(m, Q), [kinematics.com(m, data, s[0]).copy() for s in states]),
        "jacobian": (batched.jacobian(m, Q, link, point),
                     [kinematics.jacobian(m, data, s[0], link, point).copy() for s in states]),
    }
    for name, (batch, single) in results.items():
        assert np.array_equal(batch, np.array(single)), name
    R, p = batched.frames(m, Q)
    for k, s in enumerate(states):
        R1, p1 = kinematics.frames(m, data, s[0])
        assert np.array_equal(R[k], R1) and np.array_equal(p[k], p1)


def test_batch_forms_validate_shapes():
    from engine_cases import make_case
    from random_robots import random_urdf

    case = make_case(random_urdf(np.random.default_rng(0), 3, world_root=True))
    m = case.model
    with pytest.raises(ValueError, match=r"V: expected shape \(2, 3\)"):
        batched.rnea(m, np.zeros((2, 3)), np.zeros((3, 3)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"Q: expected shape \(N, 3\)"):
        batched.crba(m, np.zeros((2, 4)))
    with pytest.raises(ValueError, match="NaN"):
        batched.crba(m, np.full((2, 3), np.nan))
