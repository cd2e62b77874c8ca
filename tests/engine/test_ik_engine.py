"""IK residual, Jacobian and solver (engine/ik.pyx).

Claims: every goal kind's Jacobian equals central finite differences of its residual along
q (+) h e_k (h = 1e-6) on pybullet_data's kuka_iiwa (fixed base) and example-robot-data's solo12
(floating base, quaternion coordinates); the rotation rows are the rotation vector of
R_L R_T^T (scipy's as_rotvec as the reference, also within 1e-5 rad of a half turn); the
solver reaches reachable targets within tolerance and never leaves the joint limits."""
import importlib.metadata
import os
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import sim_node
from sim_node.engine import ik, kinematics
from sim_node.engine.integrate import integrate

pybullet_data = pytest.importorskip("pybullet_data")
KUKA = Path(pybullet_data.getDataPath()) / "kuka_iiwa" / "model.urdf"


def solo12_path():
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")
    return Path(dist.locate_file("cmeel.prefix/share/example-robot-data/robots/solo_description/"
                                 "robots/solo12.urdf"))


def load(which):
    world = sim_node.WorldModel()
    if which == "kuka":
        return world.loadRobot(str(KUKA), fixed_base=True)
    return world.loadRobot(str(solo12_path()), fixed_base=False)


def goal(link, dest=-1, pos=0, rot=0, p_local=(0, 0, 0), p_dest=(0, 0, 0), direction=(1, 0, 0),
         R=np.eye(3), a_local=(0, 0, 1), a_dest=(0, 0, 1)):
    row = np.zeros(ik.GOAL_COLS)
    row[0:4] = link, dest, pos, rot
    row[4:7], row[7:10], row[10:13] = p_local, p_dest, direction
    row[13:22] = np.asarray(R).reshape(9)
    row[22:25], row[25:28] = a_local, a_dest
    return row


def unit(rng):
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def random_config(robot, rng):
    lo, hi = robot.getJointLimits()
    q = np.where(np.isfinite(lo) & np.isfinite(hi), rng.uniform(np.maximum(lo, -10), np.minimum(hi, 10)),
                 rng.normal(size=lo.shape))
    for k in robot.structure.quaternions:
        q[k:k + 4] = unit4 = rng.normal(size=4)
        q[k:k + 4] /= np.linalg.norm(unit4)
    return q


def kinds(robot, rng):
    """One goal set per kind, on a distal link (and a second link for relative goals)."""
    n = robot.numLinks()
    L = n - 1
    D = 2 if n > 3 else 0
    R = Rotation.random(random_state=rng.integers(1 << 30)).as_matrix()
    p, w = rng.normal(size=3) * 0.1, rng.normal(size=3)
    return {
        "fixed point": [goal(L, pos=3, p_local=p, p_dest=w)],
        "planar": [goal(L, pos=1, p_local=p, p_dest=w, direction=unit(rng))],
        "linear": [goal(L, pos=2, p_local=p, p_dest=w, direction=unit(rng))],
        "fixed rotation": [goal(L, rot=3, R=R)],
        "axis": [goal(L, rot=2, a_local=unit(rng), a_dest=unit(rng))],
        "fixed transform": [goal(L, pos=3, rot=3, p_dest=w, R=R)],
        "point and axis": [goal(L, pos=3, rot=2, p_local=p, p_dest=w, a_local=unit(rng),
                                a_dest=unit(rng))],
        "relative point": [goal(L, D, pos=3, p_local=p, p_dest=rng.normal(size=3) * 0.1)],
        "relative transform": [goal(L, D, pos=3, rot=3, p_dest=w * 0.1, R=R)],
        "two goals": [goal(L, pos=3, p_dest=w), goal(n // 2, rot=3, R=R)],
    }


def central_differences(robot, q, goals, h=1e-6):
    m = robot.model
    nv = m.nv
    cols = []
    for k in range(nv):
        e = np.zeros(nv)
        e[k] = 1.0
        rp = ik.residual(m, robot.data, integrate(m, q, e, h), goals)
        rm = ik.residual(m, robot.data, integrate(m, q, e, -h), goals)
        cols.append((rp - rm) / (2 * h))
    return np.array(cols).T


@pytest.mark.parametrize("which", ["kuka", "solo12"])
def test_jacobian_of_every_goal_kind_matches_central_differences(which):
    robot = load(which)
    rng = np.random.default_rng(13)
    active = np.arange(robot.model.nv)
    for trial in range(4):
        q = random_config(robot, rng)
        for name, rows in kinds(robot, rng).items():
            goals = np.array(rows)
            J = ik.jacobian(robot.model, robot.data, q, goals, active)
            J_fd = central_differences(robot, q, goals)
            np.testing.assert_allclose(J, J_fd, atol=2e-7, rtol=1e-6,
                                       err_msg=f"{which}: {name}, trial {trial}")
            # a subset of active DOFs selects those columns, in the given order
            sub = rng.permutation(robot.model.nv)[: max(1, robot.model.nv // 2)]
            np.testing.assert_allclose(ik.jacobian(robot.model, robot.data, q, goals, sub),
                                       J[:, sub], atol=1e-14)


@pytest.mark.parametrize("which", ["kuka", "solo12"])
def test_residual_rows_are_klampts_definitions_against_numpy(which):
    robot = load(which)
    rng = np.random.default_rng(7)
    q = random_config(robot, rng)
    R_all, p_all = (x.copy() for x in kinematics.frames(robot.model, robot.data, q))
    L, D = robot.numLinks() - 1, 2
    Rg = Rotation.random(random_state=3).as_matrix()
    pl, pw, n = rng.normal(size=3) * 0.1, rng.normal(size=3), unit(rng)
    point_W = R_all[L] @ pl + p_all[L]
    goals = np.array([goal(L, pos=3, p_local=pl, p_dest=pw),
                      goal(L, pos=1, p_local=pl, p_dest=pw, direction=n),
                      goal(L, rot=3, R=Rg),
                      goal(L, D, pos=3, rot=3, p_local=pl, p_dest=pw, R=Rg)])
    r = ik.residual(robot.model, robot.data, q, goals)
    np.testing.assert_allclose(r[0:3], point_W - pw, atol=1e-12)
    np.testing.assert_allclose(r[3], (point_W - pw) @ n, atol=1e-12)
    np.testing.assert_allclose(r[4:7], Rotation.from_matrix(R_all[L] @ Rg.T).as_rotvec(), atol=1e-10)
    np.testing.assert_allclose(r[7:10], point_W - (R_all[D] @ pw + p_all[D]), atol=1e-12)
    np.testing.assert_allclose(r[10:13], Rotation.from_matrix(R_all[L] @ (R_all[D] @ Rg).T).as_rotvec(),
                               atol=1e-10)


@pytest.mark.parametrize("angle", [0.0, 1e-9, 1e-5, 1.0, np.pi - 1e-3, np.pi - 1e-5, np.pi - 1e-8])
def test_rotation_rows_near_zero_and_half_turn(angle):
    robot = load("kuka")
    q = np.zeros(robot.model.nq)
    R_all, _ = kinematics.frames(robot.model, robot.data, q)
    L = robot.numLinks() - 1
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    # target so that R_L R_T^T = exp(angle axis)
    Rg = (Rotation.from_rotvec(angle * axis).as_matrix().T @ R_all[L])
    r = ik.residual(robot.model, robot.data, q, np.array([goal(L, rot=3, R=Rg)]))
    np.testing.assert_allclose(r, angle * axis, atol=1e-7)
    J = ik.jacobian(robot.model, robot.data, q, np.array([goal(L, rot=3, R=Rg)]), np.arange(7))
    if angle < np.pi - 1e-4:     # the rotation vector jumps across the half turn
        np.testing.assert_allclose(J, central_differences(robot, q, np.array([goal(L, rot=3, R=Rg)])),
                                   atol=1e-6)


def fk_targets(robot, rng, link):
    q_true = random_config(robot, rng)
    R_all, p_all = kinematics.frames(robot.model, robot.data, q_true)
    return q_true, R_all[link].copy(), p_all[link].copy()


def test_solver_reaches_fk_targets_within_tolerance_and_limits():
    robot = load("kuka")
    rng = np.random.default_rng(5)
    lo, hi = robot.getJointLimits()
    L = robot.link("lbr_iiwa_link_7").getIndex()
    active = np.arange(7)
    solved_count = 0
    for _ in range(20):
        _, R, p = fk_targets(robot, rng, L)
        goals = np.array([goal(L, pos=3, rot=3, p_dest=p, R=R)])
        q = np.zeros(7)
        solved, iters, r = ik.solve(robot.model, robot.data, q, goals, active, lo, hi, None, 200,
                                    1e-6)
        assert np.all(q >= lo) and np.all(q <= hi)
        np.testing.assert_allclose(r, ik.residual(robot.model, robot.data, q, goals), atol=1e-14)
        if solved:
            solved_count += 1
            assert np.max(np.abs(r)) <= 1e-6
            R_all, p_all = kinematics.frames(robot.model, robot.data, q)
            assert np.linalg.norm(p_all[L] - p) < 1e-5
            assert Rotation.from_matrix(R_all[L] @ R.T).magnitude() < 1e-5
    assert solved_count >= 15        # a single local solve from zero; restarts are the model's


def test_solver_on_floating_base_keeps_unit_quaternion():
    robot = load("solo12")
    rng = np.random.default_rng(2)
    nq, nv = robot.model.nq, robot.model.nv
    lo, hi = robot.getJointLimits()
    L = robot.numLinks() - 1
    _, R, p = fk_targets(robot, rng, L)
    q = robot.getConfig()
    goals = np.array([goal(L, pos=3, rot=3, p_dest=p, R=R)])
    solved, _, r = ik.solve(robot.model, robot.data, q, goals, np.arange(nv), lo, hi, None, 200,
                            1e-8)
    assert solved and np.max(np.abs(r)) <= 1e-8
    assert abs(np.linalg.norm(q[3:7]) - 1.0) < 1e-12
    assert q.shape == (nq,)


def test_unreachable_target_stops_within_limits_and_reports_failure():
    robot = load("kuka")
    lo, hi = robot.getJointLimits()
    L = robot.numLinks() - 1
    goals = np.array([goal(L, pos=3, p_dest=(5.0, 0.0, 0.5))])
    q = np.zeros(7)
    solved, iters, r = ik.solve(robot.model, robot.data, q, goals, np.arange(7), lo, hi, None,
                                500, 1e-4)
    assert not solved
    assert np.all(q >= lo) and np.all(q <= hi)
    # the arm points at the target: the error is the distance beyond reach
    _, p_all = kinematics.frames(robot.model, robot.data, q)
    assert np.linalg.norm(r) == pytest.approx(np.linalg.norm(p_all[L] - (5.0, 0.0, 0.5)))


def test_joint_limits_clamp_and_frozen_dofs():
    robot = load("kuka")
    lo, hi = robot.getJointLimits()
    lo2, hi2 = lo.copy(), hi.copy()
    lo2[1], hi2[1] = 0.2, 0.3       # a narrow box for joint 2
    rng = np.random.default_rng(11)
    L = robot.numLinks() - 1
    _, R, p = fk_targets(robot, rng, L)
    q = np.zeros(7)
    ik.solve(robot.model, robot.data, q, np.array([goal(L, pos=3, p_dest=p)]), np.arange(7),
             lo2, hi2, None, 300, 1e-6)
    assert lo2[1] <= q[1] <= hi2[1]
    assert np.all(q >= lo2) and np.all(q <= hi2)


def test_bias_pulls_the_null_space_without_spoiling_the_solution():
    robot = load("kuka")
    lo, hi = robot.getJointLimits()
    L = robot.numLinks() - 1
    rng = np.random.default_rng(3)
    _, _, p = fk_targets(robot, rng, L)
    goals = np.array([goal(L, pos=3, p_dest=p)])      # 3 rows, 7 DOFs: a 4-D null space
    bias = np.clip(rng.normal(size=7), lo, hi)
    q_plain, q_bias = np.zeros(7), np.zeros(7)
    s1, _, _ = ik.solve(robot.model, robot.data, q_plain, goals, np.arange(7), lo, hi, None, 300, 1e-6)
    s2, _, r = ik.solve(robot.model, robot.data, q_bias, goals, np.arange(7), lo, hi, bias, 300, 1e-6)
    assert s1 and s2 and np.max(np.abs(r)) <= 1e-6
    assert np.linalg.norm(q_bias - bias) < np.linalg.norm(q_plain - bias)


def test_engine_face_rejects_bad_shapes_and_indices():
    robot = load("kuka")
    m, d = robot.model, robot.data
    q = np.zeros(7)
    good = np.array([goal(robot.numLinks() - 1, pos=3)])
    with pytest.raises(ValueError):
        ik.residual(m, d, q, good[:, :10])
    with pytest.raises(IndexError):
        ik.residual(m, d, q, np.array([goal(robot.numLinks())]))
    with pytest.raises(ValueError):
        ik.residual(m, d, q, np.array([goal(1, pos=4)]))
    with pytest.raises(ValueError):
        ik.residual(m, d, q, np.array([goal(1, pos=3, p_dest=(np.nan, 0, 0))]))
    with pytest.raises(IndexError):
        ik.jacobian(m, d, q, good, [0, 7])
    with pytest.raises(IndexError):
        ik.jacobian(m, d, q, good, [1, 1])
    with pytest.raises(ValueError):
        ik.jacobian(m, d, q, good, [])
    with pytest.raises(ValueError):
        ik.residual(m, d, np.zeros(6), good)
