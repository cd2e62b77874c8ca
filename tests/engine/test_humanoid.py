"""pybullet_data's humanoid.urdf (eight spherical joints, four revolute, a floating base) loads,
and every dynamics kernel matches a Pinocchio model of it built joint by joint with
JointModelSpherical (Pinocchio's URDF parser reads no spherical joint)."""
from pathlib import Path

import numpy as np
import pytest
from engine_cases import GRAVITY, assert_rel, make_case

from sim_node.engine import aba, coriolis, crba, kinematics, rnea

pybullet_data = pytest.importorskip("pybullet_data")

HUMANOID = Path(pybullet_data.getDataPath()) / "humanoid" / "humanoid.urdf"


@pytest.fixture(scope="module")
def humanoid():
    # the file ends with a NUL byte after </robot>; the XML is read without it
    return make_case(HUMANOID.read_text().rstrip("\0"))


def test_humanoid_has_its_spherical_joints_as_ball_joints(humanoid):
    st = humanoid.structure
    types = [st.joint_type[n] for n in st.joint_names]
    assert st.floating and types.count("spherical") == 8 and types.count("revolute") == 4
    assert (humanoid.model.nq, humanoid.model.nv) == (7 + 8 * 4 + 4, 6 + 8 * 3 + 4)
    assert humanoid.twin.model.nq == humanoid.model.nq


def test_humanoid_dynamics_match_pinocchio(humanoid):
    case, twin = humanoid, humanoid.twin
    m = case.model
    data = case.data()
    rng = np.random.default_rng(11)
    for _ in range(5):
        q, v, a, tau = case.state(rng)
        assert_rel(crba.mass_matrix(m, data, q), twin.mass_matrix(q), what="B(q)")
        assert_rel(rnea.inverse_dynamics(m, data, q, v, a, GRAVITY), twin.rnea(q, v, a, GRAVITY),
                   what="RNEA")
        assert_rel(rnea.generalized_gravity(m, data, q, GRAVITY), twin.gravity(q, GRAVITY),
                   what="G(q)")
        assert_rel(coriolis.coriolis(m, data, q, v), twin.coriolis_matrix(q, v), what="C(q, v)")
        assert_rel(aba.forward_dynamics(m, data, q, v, tau, GRAVITY),
                   twin.aba(q, v, tau, GRAVITY), what="ABA")
        R, p = kinematics.frames(m, data, q)
        for i, name in enumerate(case.structure.link_names):
            R_ref, p_ref = twin.frame_placement(q, name)
            assert_rel(R[i], R_ref, what=f"R of {name}")
            assert_rel(p[i], p_ref, what=f"p of {name}")
            point = rng.normal(size=3) * 0.2
            assert_rel(kinematics.jacobian(m, data, q, i, point),
                       twin.point_jacobian(q, name, point), what=f"J of {name}")
