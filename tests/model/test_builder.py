"""The model builder: the q/v layout of every joint type, the planar joint's in-plane basis,
limits expanded per DOF, refused mimic couplings, and trees of any depth (iterative walks)."""
import dataclasses

import numpy as np
import pytest

import sim_node
from sim_node.model.builder import JOINT_SIZES, build_robot, planar_basis
from sim_node.model.errors import URDFError, URDFWarning
from sim_node.model.urdf import Mimic, parse_urdf


INERTIAL = ('<inertial><origin xyz="0.1 0.02 -0.05"/><mass value="1.5"/>'
            '<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.04"/></inertial>')


def robot_xml(*joints, root="world"):
    """A chain of links l1, l2, ... from `root`, one joint (type, extra XML) per link."""
    links = [f'<link name="{root}"/>'] + [f'<link name="l{k}">{INERTIAL}</link>'
                                         for k in range(1, len(joints) + 1)]
    body = []
    for k, (jtype, extra) in enumerate(joints, start=1):
        parent = root if k == 1 else f"l{k - 1}"
        body.append(f'<joint name="j{k}" type="{jtype}"><parent link="{parent}"/>'
                    f'<child link="l{k}"/><origin xyz="0.1 0.2 0.3" rpy="0.3 -0.2 0.1"/>'
                    f'{extra}</joint>')
    return f'<robot name="r">{"".join(links + body)}</robot>'


LIMIT = '<limit lower="-1" upper="2" effort="30" velocity="4"/>'


def test_each_joint_type_has_its_coordinates_in_urdf_order():
    xml = robot_xml(("revolute", '<axis xyz="0 0 1"/>' + LIMIT), ("spherical", ""),
                    ("planar", '<axis xyz="0 0 1"/>'), ("floating", ""),
                    ("prismatic", '<axis xyz="1 0 0"/>' + LIMIT), ("continuous", ""))
    st = build_robot(parse_urdf(xml))
    assert st.joint_names == ["j1", "j2", "j3", "j4", "j5", "j6"]
    types = [st.joint_type[n] for n in st.joint_names]
    assert types == ["revolute", "spherical", "planar", "floating", "prismatic", "continuous"]
    sizes = [(st.joint_nq[n], st.joint_nv[n]) for n in st.joint_names]
    assert sizes == [JOINT_SIZES[t] for t in types] == [(1, 1), (4, 3), (3, 3), (7, 6), (1, 1),
                                                        (1, 1)]
    q_start = np.cumsum([0] + [s[0] for s in sizes[:-1]])
    v_start = np.cumsum([0] + [s[1] for s in sizes[:-1]])
    assert [st.joint_q_index[n] for n in st.joint_names] == q_start.tolist()
    assert [st.joint_v_index[n] for n in st.joint_names] == v_start.tolist()
    assert (st.model.nq, st.model.nv) == (17, 15)
    # quaternions: the spherical joint's q, the floating joint's orientation (q index + 3)
    assert st.quaternions == [1, 8 + 3]
    np.testing.assert_array_equal(st.q_default[1:5], [0, 0, 0, 1])
    np.testing.assert_array_equal(st.q_default[8:15], [0, 0, 0, 0, 0, 0, 1])
    # actuation: the spherical joint's three DOFs act on its quaternion, the floating joint's
    # six are unactuated (effort 0), scalar and planar DOFs on their own coordinate
    np.testing.assert_array_equal(st.dof_q, [0, 1, 1, 1, 5, 6, 7, -1, -1, -1, -1, -1, -1, 15, 16])
    np.testing.assert_array_equal(st.effort_limit[7:13], 0.0)
    # a planar joint is three bodies (two massless), the others one each
    assert st.model.nbody == 8
    assert st.model.arrays["mass"][2] == st.model.arrays["mass"][3] == 0.0


def test_limits_expand_per_dof_and_spherical_and_floating_joints_have_none():
    xml = robot_xml(("spherical", LIMIT + '<dynamics damping="0.5" friction="0.7"/>'),
                    ("planar", '<axis xyz="0 0 1"/>' + LIMIT + '<dynamics damping="0.2" friction="0.3"/>'),
                    ("planar", '<axis xyz="0 0 1"/><limit effort="5" velocity="6"/>'),
                    ("floating", LIMIT))
    st = build_robot(parse_urdf(xml))
    lower, upper = st.q_lower, st.q_upper
    assert np.all(np.isinf(lower[0:4])) and np.all(np.isinf(upper[0:4]))      # spherical
    np.testing.assert_array_equal(lower[4:7], -1.0)                             # planar, given
    np.testing.assert_array_equal(upper[4:7], 2.0)
    assert np.all(np.isinf(lower[7:10])) and np.all(np.isinf(upper[7:10]))    # planar, no bounds
    assert np.all(np.isinf(lower[10:17]))                                       # floating
    np.testing.assert_array_equal(st.velocity_limit[:3], np.inf)
    np.testing.assert_array_equal(st.effort_limit[:3], np.inf)
    np.testing.assert_array_equal(st.velocity_limit[3:9], [4, 4, 4, 6, 6, 6])
    np.testing.assert_array_equal(st.effort_limit[3:9], [30, 30, 30, 5, 5, 5])
    np.testing.assert_array_equal(st.effort_limit[9:15], 0.0)
    np.testing.assert_array_equal(st.damping[:6], [0.5] * 3 + [0.2] * 3)
    np.testing.assert_array_equal(st.friction[:6], [0.0] * 3 + [0.3] * 3)      # no dry friction on a ball


@pytest.mark.parametrize("normal, e1, e2", [
    ((0, 0, 1), (1, 0, 0), (0, 1, 0)),
    ((1, 0, 0), (0, 1, 0), (0, 0, 1)),
    ((0, 1, 0), (0, 0, 1), (1, 0, 0)),
    ((0, 0, -1), (1, 0, 0), (0, -1, 0)),
])
def test_planar_basis_follows_the_stated_rule(normal, e1, e2):
    a, b = planar_basis(np.array(normal, dtype=float))
    np.testing.assert_allclose(a, e1, atol=1e-15)
    np.testing.assert_allclose(b, e2, atol=1e-15)


def test_planar_basis_is_orthonormal_and_right_handed_for_any_normal():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = rng.normal(size=3)
        n /= np.linalg.norm(n)
        e1, e2 = planar_basis(n)
        np.testing.assert_allclose(np.column_stack([e1, e2, n]).T @ np.column_stack([e1, e2, n]),
                                   np.eye(3), atol=1e-14)
        assert np.linalg.det(np.column_stack([e1, e2, n])) == pytest.approx(1.0)


def test_a_planar_joint_moves_its_child_in_the_plane_then_turns_it_about_the_normal():
    # the plane normal to z of the joint frame: x, y along the joint frame's x, y; theta about z
    xml = robot_xml(("planar", '<axis xyz="0 0 1"/>'))
    world = sim_node.WorldModel()
    robot = world.loadRobot(xml)
    R0, p0 = robot.link("l1").getTransform()
    robot.setConfig([0.3, -0.2, 0.7])
    R, p = robot.link("l1").getTransform()
    np.testing.assert_allclose(p, p0 + R0 @ [0.3, -0.2, 0.0], atol=1e-15)
    c, s = np.cos(0.7), np.sin(0.7)
    np.testing.assert_allclose(R0.T @ R, [[c, -s, 0], [s, c, 0], [0, 0, 1]], atol=1e-15)


@pytest.mark.parametrize("master, mimic", [("spherical", "revolute"), ("revolute", "planar"),
                                           ("floating", "revolute")])
def test_mimic_couplings_with_multi_dof_joints_are_dropped_with_a_warning(master, mimic):
    # the parser drops a <mimic> it cannot honour (README, "Loading robot files"); the builder
    # still refuses such a coupling in a URDFRobot made by hand
    axis = '<axis xyz="0 0 1"/>'
    xml = robot_xml((master, axis + (LIMIT if master == "revolute" else "")),
                    (mimic, axis + (LIMIT if mimic == "revolute" else "") + '<mimic joint="j1"/>'))
    with pytest.warns(URDFWarning, match="mimic dropped, the joint moves on its own"):
        urdf = parse_urdf(xml)
    assert build_robot(urdf).mimic_joints == {}
    coupled = dataclasses.replace(urdf, joints={
        name: dataclasses.replace(j, mimic=Mimic("j1", 1.0, 0.0)) if name == "j2" else j
        for name, j in urdf.joints.items()})
    with pytest.raises(URDFError, match="only revolute, continuous and prismatic joints can mimic"):
        build_robot(coupled)


def chain_link(k, massless=False):
    if massless:
        return f'<link name="l{k}"/>'
    return (f'<link name="l{k}"><inertial><origin xyz="0.01 0 0.05"/><mass value="0.1"/>'
            f'<inertia ixx="1e-4" ixy="0" ixz="0" iyy="2e-4" iyz="0" izz="3e-4"/></inertial></link>')


def chain_joint(k):
    axis = " ".join("1" if i == k % 3 else "0" for i in range(3))
    return (f'<joint name="j{k}" type="revolute"><parent link="{"world" if k == 0 else f"l{k - 1}"}"/>'
            f'<child link="l{k}"/><origin xyz="0 0.01 0.1" rpy="0 0 0.1"/><axis xyz="{axis}"/>'
            f'<limit lower="-3" upper="3" effort="10" velocity="5"/></joint>')


def chain_xml(n, start=0):
    """Joints j_start .. j_(n-1) of a chain of revolute links (axes cycling through x, y, z)
    from 'world' (start 0) or from a massless l_(start-1)."""
    root = '<link name="world"/>' if start == 0 else chain_link(start - 1, massless=True)
    return (f'<robot name="chain">{root}{"".join(chain_link(k) for k in range(start, n))}'
            f'{"".join(chain_joint(k) for k in range(start, n))}</robot>')


def chain_rnea_by_pinocchio(n, q, v, a, gravity, chunk=100):
    """Pinocchio's RNEA of chain_xml(n), computed in pieces of `chunk` joints: its Data for one
    model grows as nv^3 (second-order derivative tensors, ~64 GB at nv = 1000). Piece c + 1 is
    a model whose free-flyer base is l_(start-1) of piece c, moving as Pinocchio's kinematics of
    piece c say; its base wrench (the first six torques) acts back on piece c's last link as an
    external force."""
    import pinocchio as pin

    starts = list(range(0, n, chunk))
    pieces = []
    base = None     # (placement, local velocity, local acceleration) of the last link so far
    for start in starts:
        end = min(start + chunk, n)
        model = pin.buildModelFromXML(chain_xml(end, start), *([] if start == 0 else
                                                               [pin.JointModelFreeFlyer()]))
        model.gravity.linear[:] = gravity
        qs, vs, as_ = q[start:end], v[start:end], a[start:end]
        if base is not None:
            M, vb, ab = base
            quat = pin.Quaternion(M.rotation).coeffs()             # (x, y, z, w)
            qs = np.concatenate([M.translation, quat, qs])
            vs, as_ = np.concatenate([vb, vs]), np.concatenate([ab, as_])
        data = model.createData()
        pin.forwardKinematics(model, data, qs, vs, as_)
        last = model.njoints - 1
        base = (data.oMi[last].copy(), data.v[last].vector.copy(), data.a[last].vector.copy())
        pieces.append((model, qs, vs, as_, start > 0))
    tau = np.zeros(n)
    wrench = None    # the next piece's base wrench, in the frame of this piece's last link
    for (model, qs, vs, as_, free), start in reversed(list(zip(pieces, starts))):
        data = model.createData()
        fext = pin.StdVec_Force()
        for j in range(model.njoints):
            fext.append(pin.Force.Zero())
        if wrench is not None:
            fext[model.njoints - 1] = pin.Force(-wrench)
        out = pin.rnea(model, data, qs, vs, as_, fext)
        wrench = out[:6] if free else None
        tau[start:start + len(out) - (6 if free else 0)] = out[6:] if free else out
    return tau


def test_a_1000_link_chain_loads_matches_pinocchio_and_simulates():
    # every tree walk of the builder is iterative: no recursion limit
    xml = chain_xml(1000)
    world = sim_node.WorldModel()
    robot = world.loadRobot(xml)
    assert robot.model.nv == 1000 and robot.numLinks() == 1001
    rng = np.random.default_rng(7)
    q, v, a = rng.uniform(-0.3, 0.3, 1000), rng.normal(size=1000), rng.normal(size=1000)
    robot.setConfig(q)
    robot.setVelocity(v)
    g = np.array([0.0, 0.0, -9.81])
    tau = robot.torquesFromAccel(a) + robot.getGravityForces(g)
    ref = chain_rnea_by_pinocchio(1000, q, v, a, g)
    assert np.abs(tau - ref).max() <= 1e-9 * np.abs(ref).max()
    sim = sim_node.Simulator(world)
    sim.simulate(0.005)
    assert sim.getTime() == pytest.approx(0.005)
    assert np.all(np.isfinite(sim.getActualConfig(0)))


def test_the_chained_pinocchio_reference_equals_pinocchio_in_one_piece():
    # the reference above, cut in pieces of 7, against one Pinocchio model of 30 joints
    import pinocchio as pin

    rng = np.random.default_rng(3)
    q, v, a = rng.uniform(-1, 1, 30), rng.normal(size=30), rng.normal(size=30)
    g = np.array([0.3, -1.0, -9.81])
    model = pin.buildModelFromXML(chain_xml(30))
    model.gravity.linear[:] = g
    ref = pin.rnea(model, model.createData(), q, v, a)
    np.testing.assert_allclose(chain_rnea_by_pinocchio(30, q, v, a, g, chunk=7), ref,
                               rtol=0, atol=1e-12 * np.abs(ref).max())
