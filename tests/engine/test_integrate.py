"""Configuration integration q (+) v dt against Pinocchio's integrate (SE(3) exponential for
free joints, SO(3) for spherical joints, anywhere in the tree)."""
import numpy as np
from engine_cases import random_robots
from hypothesis import given, strategies as st

from sim_node.engine.integrate import integrate


@given(random_robots(max_dof=12), st.floats(-2.0, 2.0))
def test_integrate_matches_pinocchio(robot, dt):
    case, rng = robot
    q, v, _, _ = case.state(rng)
    ours = integrate(case.model, q, v, dt)
    ref = case.twin.pin.integrate(case.twin.model, case.twin.q(q), case.twin.v(v) * dt)
    mapped = case.twin.q(ours)
    for k in case.twin.quaternions:     # q and -q are the same rotation
        mapped[k:k + 4] *= np.sign(np.dot(mapped[k:k + 4], ref[k:k + 4]))
    for k in case.structure.quaternions:
        assert abs(np.linalg.norm(ours[k:k + 4]) - 1.0) < 1e-14
    np.testing.assert_allclose(mapped, ref, rtol=0, atol=1e-12 * max(1.0, np.abs(ref).max()))
